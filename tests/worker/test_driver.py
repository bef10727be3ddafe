"""The Worker driver and the CLI: fake transport, real UDP sockets on localhost, exit codes and messages."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from tests.paths import ROOT
from tests.worker.ina_fixtures import LAYOUT_JSON, make_job
from tests.worker.ina_refswitch import SwitchModel
from tests.worker.ina_udpswitch import UdpRefSwitch, free_udp_ports, local_job
from worker.codec import CodecError, find_program_json
from worker.driver import WindowOptions
from worker.protocols import PROTOCOLS
from worker.switchml.header import MSG_RESULT, Codec, InaHeader
from worker.switchml.window import SwitchUnreachable
from worker.switchml.worker import SWITCHML_WINDOW, Worker, allreduce
from worker.transport import FakeClock, FakeTransport, UdpTransport
from worker.verify import rank_input
from worker.switchml.verify import verify

REPO = ROOT
OPTS = WindowOptions(window=4, timeout=0.05, max_timeout=0.2, max_retries=4)


def single_worker(codec: Codec, responder=True) -> tuple[Worker, FakeTransport, FakeClock, SwitchModel]:
    job = make_job(1)
    sw = SwitchModel(codec, [job])
    clock = FakeClock()
    me = job.worker(0)
    fake = FakeTransport(clock, (lambda d: [p for _, p in sw.receive((me.ip, me.udp_port), d)]) if responder else None)
    return Worker(job, 0, fake, codec, OPTS, clock=clock), fake, clock, sw


def test_fake_transport_int32_and_float32(codec: Codec) -> None:
    worker, fake, _, _ = single_worker(codec)
    x = np.arange(-50, 50, dtype=np.int32).reshape(10, 10)
    out = worker.allreduce(x)
    assert out.shape == (10, 10) and out.dtype == np.int32 and out.tolist() == x.tolist()
    assert codec.decode(fake.sent[0])[0].packet_id == 0
    y = rank_input(77, 3, 0, "float32")
    run = worker.run(y)
    assert verify(run.array, [y], 8, "float32", run.exponents).ok
    assert run.stats.packets_sent == 10 + 4 and run.stats.retransmissions == 0 and run.stats.elements == 77
    assert worker.allreduce(np.zeros(0, np.float32)).size == 0


def test_fake_transport_gives_up_in_bounded_fake_time(codec: Codec) -> None:
    worker, fake, clock, _ = single_worker(codec, responder=False)
    t0 = time.monotonic()
    with pytest.raises(SwitchUnreachable) as exc:
        worker.allreduce(np.ones(100, np.float32))
    assert time.monotonic() - t0 < 1.0
    assert clock.now == pytest.approx(OPTS.worst_case_wait())
    assert exc.value.packet_id == 0 and exc.value.slot == 0 and exc.value.set == 0
    assert len(fake.sent) == OPTS.window * (OPTS.max_retries + 1)  # each packet: 1 + max_retries, then give up


def test_malformed_and_foreign_datagrams_are_counted_and_ignored(codec: Codec) -> None:
    worker, fake, _, _ = single_worker(codec)
    fake.deliver(b"\x02\x07garbage")
    fake.deliver(codec.encode(InaHeader(MSG_RESULT, job_id=99), np.zeros(8, np.int32)))
    run = worker.run(np.ones(8, np.int32))
    assert run.array.tolist() == [1] * 8
    assert run.stats.malformed == 1 and run.stats.foreign_ignored == 1


def test_codec_must_match_job(codec: Codec) -> None:
    job = make_job(1, num_elems=64)
    with pytest.raises(CodecError, match="num_elems=64 but the compiled program carries 8"):
        Worker(job, 0, FakeTransport(FakeClock()), codec)


def test_threads_over_real_udp_sockets(codec: Codec) -> None:
    n = 3
    job = local_job(n)
    inputs = [rank_input(1000, 4, r, "float32") for r in range(n)]
    results: dict[int, object] = {}
    with UdpRefSwitch(SwitchModel(codec, [job])) as server:

        def run(rank: int) -> None:
            me = job.worker(rank)
            try:
                with UdpTransport((me.ip, me.udp_port), server.address) as tr:
                    results[rank] = Worker(job, rank, tr, codec, OPTS).run(inputs[rank])
            except Exception as exc:  # reported below
                results[rank] = exc

        threads = [threading.Thread(target=run, args=(r,)) for r in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
    for r in range(n):
        res = results[r]
        assert not isinstance(res, Exception), res
        v = verify(res.array, inputs, 8, "float32", res.exponents)
        assert v.ok, v.message
    assert server.model.counters["multicast"] == 125 + 4


def _cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "worker", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout)


def test_cli_verify_over_udp(codec: Codec, tmp_path: Path) -> None:
    n = 2
    job = local_job(n)
    with UdpRefSwitch(SwitchModel(codec, [job])) as server:
        path = tmp_path / "job.json"
        job.save(path)
        common = ["--job", str(path), "--program-json", str(LAYOUT_JSON), "--switch-port", str(server.address[1]),
                  "--size", "3000", "--verify", "--window", "16", "--timeout-ms", "50"]
        procs = [subprocess.Popen([sys.executable, "-m", "worker", *common, "--rank", str(r), "--json",
                                   "--dtype", "int32"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for r in range(n)]
        outs = [p.communicate(timeout=60) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        rep = json.loads(out)
        assert rep["ok"] and rep["verified"] and rep["size"] == 3000 and rep["results"] == 375
        assert rep["verify_message"] == "all 3000 int32 sums exact"


def test_cli_float_text_output(codec: Codec, tmp_path: Path) -> None:
    job = local_job(1)
    with UdpRefSwitch(SwitchModel(codec, [job])) as server:
        path = tmp_path / "job.json"
        job.save(path)
        res = _cli("--job", str(path), "--rank", "0", "--program-json", str(LAYOUT_JSON), "--switch-port",
                   str(server.address[1]), "--size", "1000", "--verify")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("rank 0 (switchml): all-reduced 1000 float32 over 1 workers in ")
    assert "verify ok: max error" in res.stdout


def test_cli_switch_unreachable_exits_2_naming_the_slot(tmp_path: Path) -> None:
    [dead_port] = free_udp_ports(1)
    job = local_job(2)
    path = tmp_path / "job.json"
    job.save(path)
    t0 = time.monotonic()
    res = _cli("--job", str(path), "--rank", "1", "--program-json", str(LAYOUT_JSON), "--switch-port",
               str(dead_port), "--size", "100", "--timeout-ms", "20", "--max-timeout-ms", "40", "--max-retries", "2")
    assert time.monotonic() - t0 < 20
    assert res.returncode == 2
    assert "no result for packet_id 0 (slot 0, set 0) after 3 transmissions" in res.stderr
    assert "no result packet from the switch arrived at all" in res.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--job", "/nonexistent/job.json", "--rank", "0"], "cannot read job file"),
        (["--rank", "0"], "the following arguments are required: --job"),
        (["--job", "{job}", "--rank", "5"], "rank 5 not in job 7"),
        (["--job", "{job}", "--rank", "0", "--window", "0"], "window must be >= 1"),
        (["--job", "{job}", "--rank", "0", "--rx-coalesce", "0.9"], "rx_coalesce must be in [0, 0.5]"),
        (["--job", "{job}", "--rank", "0", "--program-json", "/nonexistent.json"], "cannot read program JSON"),
    ],
)
def test_cli_configuration_errors_exit_3(tmp_path: Path, args: list[str], needle: str) -> None:
    path = tmp_path / "job.json"
    make_job(2).save(path)
    argv = [a.replace("{job}", str(path)) for a in args]
    if "--program-json" not in argv:
        argv += ["--program-json", str(LAYOUT_JSON)]
    res = _cli(*argv)
    assert res.returncode == 3, res.stderr
    assert needle in res.stderr


def test_cli_bind_error_exits_5(tmp_path: Path) -> None:
    path = tmp_path / "job.json"
    make_job(1, ip_prefix="198.51.100").save(path)  # TEST-NET-2: not an address of this host
    res = _cli("--job", str(path), "--rank", "0", "--program-json", str(LAYOUT_JSON))
    assert res.returncode == 5
    assert "cannot bind UDP 198.51.100.1:50000" in res.stderr and "no such address" in res.stderr


def test_one_call_allreduce_over_udp(codec: Codec) -> None:
    job = local_job(1)
    with UdpRefSwitch(SwitchModel(codec, [job])) as server:
        out = allreduce(np.arange(20, dtype=np.int32), job, 0, OPTS, codec=codec, switch_port=server.address[1])
    assert out.tolist() == list(range(20))


def test_find_program_json(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("INA_PROGRAM_JSON", str(LAYOUT_JSON))
    assert find_program_json("switchml") == LAYOUT_JSON
    monkeypatch.delenv("INA_PROGRAM_JSON")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "switchml.json").write_text(LAYOUT_JSON.read_text())
    assert find_program_json("switchml") == tmp_path / "out" / "switchml.json"


def test_missing_program_json_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    import worker.codec as mod

    monkeypatch.delenv("INA_PROGRAM_JSON", raising=False)
    monkeypatch.setattr(mod, "PROGRAM_JSON_CANDIDATES", ("no/such/{program}.json",))
    with pytest.raises(CodecError, match="run `make build` or pass the compiled JSON"):
        find_program_json("switchml")


class _LyingSwitch(SwitchModel):
    """Reference model that corrupts its answers: exponent 0 (below any real one) and element 0 off by one."""

    def _result(self, hdr: InaHeader, cell, rank: int) -> bytes:
        data = bytearray(super()._result(hdr, cell, rank))
        data[8] = 0  # exponent field
        data[15] ^= 1  # lowest byte of element 0
        return bytes(data)


@pytest.mark.parametrize(("dtype", "code", "needle"), [
    ("int32", 1, "verification failed: "),
    ("float32", 4, "switch returned exponent -128 (wire 0) for block 0"),
])
def test_cli_detects_a_wrong_switch(codec: Codec, tmp_path: Path, dtype: str, code: int, needle: str) -> None:
    job = local_job(1)
    path = tmp_path / "job.json"
    job.save(path)
    with UdpRefSwitch(_LyingSwitch(codec, [job])) as server:
        res = _cli("--job", str(path), "--rank", "0", "--program-json", str(LAYOUT_JSON), "--switch-port",
                   str(server.address[1]), "--size", "100", "--verify", "--dtype", dtype)
    assert res.returncode == code, res.stderr
    assert needle in res.stderr
    if dtype == "int32":
        assert "int32 sums wrong; first at index 0" in res.stderr


def test_drive_lets_results_settle_but_never_past_the_next_timer() -> None:
    """drive() hands the core's rx_settle() to the transport, bounded by the time left to the core's next timer."""
    from worker.driver import drive

    class Core:
        stats = type("S", (), {"malformed": 0, "elapsed": 0.0})()
        done = False

        def __init__(self) -> None:
            self.deadline = 0.2

        def start(self, now: float) -> list[bytes]:
            return [b"p"]

        def on_packet(self, hdr: object, values: object, now: float) -> list[bytes]:
            self.done = True
            return []

        def on_timer(self, now: float) -> list[bytes]:
            self.deadline = now + 0.004
            return []

        def next_deadline(self) -> float:
            return self.deadline

        def rx_settle(self) -> float:
            return 0.01

    class Recording(FakeTransport):
        def __init__(self, clock: FakeClock) -> None:
            super().__init__(clock)
            self.waits: list[tuple[float, float]] = []

        def recv(self, timeout: float, settle: float = 0.0) -> list[bytes]:
            self.waits.append((round(timeout, 6), round(settle, 6)))
            if len(self.waits) == 2:
                self.deliver(b"r")
            return super().recv(timeout, settle)

    clock = FakeClock()
    tr = Recording(clock)
    drive(Core(), tr, lambda out: out, lambda data: (data, np.zeros(0)), clock)
    # 0.2 s to the timer: settle 10 ms; then a timer 4 ms away: the settle shrinks to the 4 ms left (and passes)
    assert tr.waits == [(0.2, 0.01), (0.004, 0.004)]
    assert clock.now == pytest.approx(0.2 + 0.004)


@pytest.mark.parametrize("pool, window, in_flight", [(16, None, 16), (100, None, SWITCHML_WINDOW), (16, 3, 3),
                                                     (16, 100, 16), (100, 80, 80)])
def test_default_window_is_the_pool_up_to_switchml_window(codec: Codec, pool: int, window: int | None,
                                                          in_flight: int) -> None:
    """SwitchML's default W is the job's pool, at most SWITCHML_WINDOW: that many distinct packets leave before any
    result; an explicit --window is honoured, capped by the pool."""
    job = make_job(1, size=pool)
    fake = FakeTransport(FakeClock())
    worker = Worker(job, 0, fake, codec, WindowOptions(window=window, max_retries=0), clock=fake.clock)
    with pytest.raises(SwitchUnreachable):
        worker.allreduce(np.ones(8 * 200, np.float32))
    sent = [codec.decode(d)[0] for d in fake.sent]
    assert len(sent) == in_flight == len({(h.slot, h.packet_id) for h in sent})
    assert worker.window_for(200) == in_flight and worker.window_for(2) == 2
    assert PROTOCOLS["switchml"].window_width(pool, window) == in_flight


def test_help_texts_name_each_protocols_default_window() -> None:
    from worker.__main__ import build_parser
    from worker.atp.worker import ATP_WINDOW
    from worker.protocols import default_windows

    assert default_windows() == (f"switchml {SWITCHML_WINDOW}, atp {ATP_WINDOW}, esa {ATP_WINDOW}, "
                                 f"release {ATP_WINDOW}, omnireduce {SWITCHML_WINDOW}")
    assert default_windows() in " ".join(build_parser().format_help().split())
