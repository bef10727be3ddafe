"""The packet loop on in-memory ports: batching, CPU port, PacketOut injection from another thread, pcap files,
trace formatting. A small stand-in pipeline (not the engine) makes the loop's own behaviour observable."""

from __future__ import annotations

import io
import re
import threading
import time

import pytest

from switch.ports import MemoryPort, PacketLoop, PcapWriter, PortError, read_pcap
from switch.trace import Trace, format_line

CPU = 64


class RecordingPipeline:
    """Engine stand-in with the contract's receive/drain/lock: frame byte 0 names the egress port."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.loaded = True
        self.pending: list[tuple[int, bytes]] = []
        self.received: list[tuple[int, bytes]] = []
        self.drains = 0
        self.receive_threads: set[int] = set()

    def receive(self, port: int, frame: bytes) -> None:
        assert self.lock._is_owned()  # the loop must hold sw.lock
        self.receive_threads.add(threading.get_ident())
        self.received.append((port, frame))
        if frame[0] == 0xEE:
            raise ValueError("engine bug")
        self.pending.append((frame[0], frame))

    def drain(self) -> list[tuple[int, bytes]]:
        self.drains += 1
        out, self.pending = self.pending, []
        return out


def _run_until(loop: PacketLoop, cond, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "loop did not get there in time"
        loop.run_once(0.05)


def test_frames_go_to_the_port_the_pipeline_chose_in_one_batch() -> None:
    sw = RecordingPipeline()
    p1, p2 = MemoryPort(1), MemoryPort(2)
    loop = PacketLoop(sw, [p1, p2])
    frames = [bytes([2, i]) * 30 for i in range(10)]
    for f in frames:
        p1.feed(f)
    p2.feed(bytes([1, 99]) * 30)
    _run_until(loop, lambda: len(p2.sent) == 10 and len(p1.sent) == 1)
    assert p2.sent == frames  # order kept
    assert p1.sent == [bytes([1, 99]) * 30]
    assert sw.drains == 1  # both ports' frames in one receive batch, one drain
    assert loop.stats["rx"] == 11 and loop.stats["tx"] == 11
    loop.close()


def test_batch_limit_keeps_a_busy_port_from_starving_the_loop() -> None:
    sw = RecordingPipeline()
    p1, p2 = MemoryPort(1), MemoryPort(2)
    loop = PacketLoop(sw, [p1, p2], batch=4)
    for i in range(10):
        p1.feed(bytes([2, i]))
    assert loop.run_once(1.0) == 4
    assert loop.run_once(1.0) == 4
    assert loop.run_once(1.0) == 2
    assert [f[1] for f in p2.sent] == list(range(10))
    loop.close()


def test_cpu_port_frames_become_packet_in_and_unknown_ports_are_dropped() -> None:
    sw = RecordingPipeline()
    p1 = MemoryPort(1)
    got: list[bytes] = []
    loop = PacketLoop(sw, [p1], cpu_port=CPU, packet_in=got.append)
    p1.feed(bytes([CPU]) + b"to-cpu")
    p1.feed(bytes([7]) + b"nowhere")
    _run_until(loop, lambda: loop.stats["rx"] == 2)
    assert got == [bytes([CPU]) + b"to-cpu"]
    assert loop.stats["to_cpu"] == 1 and loop.stats["tx_no_port"] == 1 and p1.sent == []
    loop.close()


def test_packet_out_from_another_thread_runs_on_the_loop_thread() -> None:
    sw = RecordingPipeline()
    p1 = MemoryPort(1)
    loop = PacketLoop(sw, [p1], cpu_port=CPU)
    runner = threading.Thread(target=loop.run)
    runner.start()
    try:
        injector = threading.Thread(target=lambda: [loop.inject(CPU, bytes([1, i])) for i in range(5)])
        injector.start()
        injector.join()
        deadline = time.monotonic() + 5
        while len(p1.sent) < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        loop.stop()
        runner.join(5)
    assert not runner.is_alive()
    assert p1.sent == [bytes([1, i]) for i in range(5)]
    assert [p for p, _ in sw.received] == [CPU] * 5
    assert sw.receive_threads == {runner.ident}
    assert loop.stats["injected"] == 5
    loop.close()


def test_engine_exception_costs_one_packet_and_one_stderr_line(capsys: pytest.CaptureFixture[str]) -> None:
    sw = RecordingPipeline()
    p1, p2 = MemoryPort(1), MemoryPort(2)
    loop = PacketLoop(sw, [p1, p2])
    for f in (b"\xee1", bytes([2]) + b"ok", b"\xee2"):
        p1.feed(f)
    _run_until(loop, lambda: loop.stats["rx"] == 3)
    assert p2.sent == [bytes([2]) + b"ok"]
    assert loop.stats["errors"] == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ValueError: engine bug" in err
    loop.close()


def test_no_pipeline_loaded_drops_without_calling_the_engine() -> None:
    sw = RecordingPipeline()
    sw.loaded = False
    p1, p2 = MemoryPort(1), MemoryPort(2)
    loop = PacketLoop(sw, [p1, p2])
    p1.feed(bytes([2]) + b"x")
    _run_until(loop, lambda: loop.stats["rx"] == 1)
    assert sw.received == [] and p2.sent == [] and loop.stats["dropped_no_pipeline"] == 1
    loop.close()


def test_pcap_files_per_interface_in_bmv2_naming(tmp_path) -> None:
    sw = RecordingPipeline()
    p1, p2 = MemoryPort(1, "veth1"), MemoryPort(2, "veth2")
    loop = PacketLoop(sw, [p1, p2], pcap_dir=str(tmp_path))
    a, b = bytes([2]) + b"A" * 59, bytes([2]) + b"B" * 100
    p1.feed(a)
    p1.feed(b)
    _run_until(loop, lambda: len(p2.sent) == 2)
    assert sorted(x.name for x in tmp_path.iterdir()) == ["veth1_in.pcap", "veth1_out.pcap", "veth2_in.pcap",
                                                          "veth2_out.pcap"]
    assert read_pcap(str(tmp_path / "veth1_in.pcap")) == [a, b]
    assert read_pcap(str(tmp_path / "veth2_out.pcap")) == [a, b]
    assert read_pcap(str(tmp_path / "veth1_out.pcap")) == []
    assert read_pcap(str(tmp_path / "veth2_in.pcap")) == []
    loop.close()


def test_pcap_file_header_and_record_layout(tmp_path) -> None:
    path = str(tmp_path / "x.pcap")
    w = PcapWriter(path)
    w.write(b"\x01\x02\x03", ts=1700000000.25)
    w.close()
    data = open(path, "rb").read()
    # libpcap global header: magic, v2.4, tz 0, sigfigs 0, snaplen 65535, DLT_EN10MB
    assert data[:24] == bytes.fromhex("d4c3b2a1 0200 0400 00000000 00000000 ffff0000 01000000".replace(" ", ""))
    assert data[24:40] == (1700000000).to_bytes(4, "little") + (250000).to_bytes(4, "little") + \
        (3).to_bytes(4, "little") + (3).to_bytes(4, "little")
    assert data[40:] == b"\x01\x02\x03"


def test_pcap_is_readable_by_scapy(tmp_path) -> None:
    from scapy.layers.inet import IP
    from scapy.layers.l2 import Ether
    from scapy.utils import rdpcap

    path = str(tmp_path / "y.pcap")
    w = PcapWriter(path)
    frame = bytes.fromhex("ffffffffffff020000000101080045000014000100004011f9e90a0001010a000202")
    w.write(frame)
    w.close()
    pkts = rdpcap(path)
    assert len(pkts) == 1 and bytes(pkts[0]) == frame
    assert isinstance(pkts[0], Ether) and pkts[0][IP].dst == "10.0.2.2"


def test_cpu_port_or_duplicate_port_refused() -> None:
    with pytest.raises(PortError, match="CPU port"):
        PacketLoop(RecordingPipeline(), [MemoryPort(CPU)], cpu_port=CPU)
    with pytest.raises(PortError, match="given twice"):
        PacketLoop(RecordingPipeline(), [MemoryPort(1, "a"), MemoryPort(1, "b")])


def test_trace_lines_look_like_bmv2() -> None:
    buf = io.StringIO()
    t = Trace(buf)
    t("0.0", "Processing packet received on port 1")
    t("Pipeline 'ingress': start")
    t.flush()
    lines = buf.getvalue().splitlines()
    head = r"^\[\d\d:\d\d:\d\d\.\d{3}\] \[bmv2\] \[D\] \[thread \d+\] "
    assert re.match(head + r"\[0\.0\] \[cxt 0\] Processing packet received on port 1$", lines[0])
    assert re.match(head + r"Pipeline 'ingress': start$", lines[1])
    assert format_line("x", now=0.5, thread_id=7).endswith("[bmv2] [D] [thread 7] x")
    with pytest.raises(TypeError):
        t(1, 2, 3)


def test_loop_with_the_engine_on_basic_forward() -> None:
    from perf.workloads import forward_engine_setup, placeholder_hosts
    from topo.frames import forwarded, udp_frame
    from topo.netns import FIXTURES

    v1model = pytest.importorskip("switch.v1model")
    path = FIXTURES / "basic_forward.json"
    if not path.exists():
        pytest.skip("tests/fixtures/basic_forward.json not written yet")
    sw = v1model.V1Switch()
    sw.load(path.read_text())
    h1, h2 = placeholder_hosts()
    forward_engine_setup(sw, h1, h2)
    p1, p2 = MemoryPort(1), MemoryPort(2)
    loop = PacketLoop(sw, [p1, p2])
    sent = [udp_frame("02:00:00:00:00:fe", h1.mac, h1.ip, h2.ip, 100 + i, 53, bytes(i + 1), ttl=9) for i in range(20)]
    other = udp_frame("02:00:00:00:00:fe", h1.mac, h1.ip, "10.9.9.9", 1, 53, b"no route")  # default action: drop
    for f in sent[:10] + [other] + sent[10:]:
        p1.feed(f)
    back = udp_frame("02:00:00:00:00:fe", h2.mac, h2.ip, h1.ip, 7, 53, b"back")
    p2.feed(back)
    _run_until(loop, lambda: loop.stats["rx"] == 22)
    assert p2.sent == [forwarded(f, h2.mac) for f in sent]
    assert p1.sent == [forwarded(back, h1.mac)]
    assert loop.stats["tx"] == 21 and loop.stats["errors"] == 0
    loop.close()


def test_fault_plan_applies_on_the_way_in_and_out() -> None:
    from switch.faults import FaultPlan

    sw = RecordingPipeline()
    p1, p2 = MemoryPort(1), MemoryPort(2)
    plan = FaultPlan.from_json({"rules": [
        {"action": "drop", "direction": "in", "ports": [1], "nth": [2]},
        {"action": "duplicate", "direction": "out", "ports": [2], "nth": [1]},
        {"action": "delay", "direction": "out", "ports": [2], "nth": [3], "delay": 10}], "max_hold_s": 0.05})
    loop = PacketLoop(sw, [p1, p2], faults=plan)
    frames = [bytes([2, i]) * 30 for i in range(5)]
    for f in frames:
        p1.feed(f)
    _run_until(loop, lambda: len(p2.sent) == 4)
    # in: frame 1 dropped; out: frame 0 twice, frame 3 (the 3rd leaving) held back
    assert [f[1] for f in p2.sent] == [0, 0, 2, 4] and [f[1] for _, f in sw.received] == [0, 2, 3, 4]
    assert plan.held == 1 and 0 < loop._hold_timeout() <= 0.05
    time.sleep(0.06)
    loop.run_once(loop._hold_timeout())  # the held frame is due: released although no other frame came
    assert [f[1] for f in p2.sent] == [0, 0, 2, 4, 3] and plan.stats == {"drop": 1, "duplicate": 1, "delay": 1}


def test_fault_plan_event_resets_a_register_range() -> None:
    from switch.faults import FaultPlan

    class Reg:
        size = 8
        values = [5] * 8

    sw = RecordingPipeline()
    sw.registers = {"I.r": Reg()}
    p1, p2 = MemoryPort(1), MemoryPort(2)
    plan = FaultPlan.from_json({"events": [{"at_frame": 2, "reset_register": "I.r", "first": 2, "count": 3},
                                           {"at_frame": 3, "reset_register": "I.nope"}]})
    loop = PacketLoop(sw, [p1, p2], faults=plan)
    for i in range(3):
        p1.feed(bytes([2, i]) * 30)
    _run_until(loop, lambda: len(p2.sent) == 3)
    assert Reg.values == [5, 5, 0, 0, 0, 5, 5, 5]
    assert plan.stats["register_resets"] == 2 and loop.stats["fault_reset_unknown_register"] == 1
