"""End to end: `python -m switch` as its own process, ports on veth pairs to two namespaces, programmed over
P4Runtime; IPv4 packets forwarded with rewritten MACs and TTL-1; a non-primary client refused; pcap files; clean
SIGTERM exit."""

from __future__ import annotations

import re
from pathlib import Path

import grpc
import pytest

from controller.client import ControllerError, P4RuntimeClient
from perf.workloads import lpm_route
from switch.ports import read_pcap
from topo.frames import forwarded, udp_frame
from perf.traffic import NsProcess
from topo.netns import FIXTURES, SwitchProcess, free_tcp_port, hosts

pytestmark = [pytest.mark.netns, pytest.mark.timeout(120)]

JSON = FIXTURES / "basic_forward.json"
P4INFO = FIXTURES / "basic_forward.p4info.txt"
UDP_DPORT = 5555


def _needs_fixtures() -> None:
    missing = [p.name for p in (JSON, P4INFO) if not p.exists()]
    if missing:
        pytest.skip(f"fixtures not written yet: {', '.join(missing)}")


def test_forwarding_between_namespaces_over_p4runtime(tmp_path: Path) -> None:
    _needs_fixtures()
    pcap_dir = tmp_path / "pcap"
    pcap_dir.mkdir()
    with hosts(2) as (h1, h2):
        addr = f"127.0.0.1:{free_tcp_port()}"
        sw = SwitchProcess(["--no-p4", "-i", f"1@{h1.switch_if}", "-i", f"2@{h2.switch_if}", "--pcap", str(pcap_dir),
                            "--log-console", "--", "--grpc-server-addr", addr])
        try:
            assert f"Adding interface {h1.switch_if} as port 1" in sw.lines
            primary = P4RuntimeClient(addr, election_id=10).connect()
            primary.set_pipeline(P4INFO, JSON)
            primary.insert(*[lpm_route(h.ip, 32, h.mac, h.port) for h in (h1, h2)])

            # h1 → h2: five frames to the router MAC; h2 must see them rewritten, nothing else of ours
            sent = [udp_frame("02:00:00:00:00:fe", h1.mac, h1.ip, h2.ip, 1000 + i, UDP_DPORT, bytes([i]) * (18 + i),
                              ttl=64 - i, ident=i) for i in range(5)]
            expect = [forwarded(f, h2.mac) for f in sent]
            rx2 = NsProcess(h2, "recv", "--match", UDP_DPORT.to_bytes(2, "big").hex(), "--offset", "36",
                            "--idle", "0.7", "--duration", "15", "--keep", "10", wait_ready=True)  # no duplicates
            tx1 = NsProcess(h1, "send", *sum((["--frame", f.hex()] for f in sent), []), "--count", "5")
            assert tx1.result(20)["sent"] == 5
            got = [bytes.fromhex(x) for x in rx2.result(30)["frames"]]
            assert got == expect
            assert all(g[22] == s[22] - 1 for g, s in zip(got, sent))  # TTL
            assert all(g[0:6] == bytes.fromhex("020000000202") and g[6:12] == bytes.fromhex("0200000000fe")
                       for g in got)

            # and back: h2 → h1
            back = udp_frame("02:00:00:00:00:fe", h2.mac, h2.ip, h1.ip, 7, UDP_DPORT, b"reply" * 10)
            rx1 = NsProcess(h1, "recv", "--match", UDP_DPORT.to_bytes(2, "big").hex(), "--offset", "36",
                            "--count", "1", "--duration", "15", "--keep", "2", wait_ready=True)
            assert NsProcess(h2, "send", "--frame", back.hex(), "--count", "1").result(20)["sent"] == 1
            assert [bytes.fromhex(x) for x in rx1.result(30)["frames"]] == [forwarded(back, h1.mac)]

            # a second client with a lower election id is a backup: its Write is refused
            backup = P4RuntimeClient(addr, election_id=5).connect(require_primary=False)
            try:
                assert not backup.is_primary
                backup.fetch_pipeline()
                with pytest.raises(ControllerError) as err:
                    backup.insert(lpm_route("10.0.3.3", 32, "02:00:00:00:03:03", 1))
                assert err.value.code is grpc.StatusCode.PERMISSION_DENIED
            finally:
                backup.close()
            primary.close()
        finally:
            err = sw.stop()
        assert sw.proc.returncode == 0, err
        assert "Traceback" not in err

        # --log-console: BMv2-style per-packet trace lines, one "Processing packet" per frame we sent (at least)
        head = r"^\[\d\d:\d\d:\d\d\.\d{3}\] \[bmv2\] \[D\] \[thread \d+\] \[\d+\.\d+\] \[cxt 0\] "
        received_lines = [x for x in sw.lines if re.match(head + r"Processing packet received on port [12]$", x)]
        assert len(received_lines) >= 6
        for f in expect:
            assert any(re.match(head + f"Transmitting packet of size {len(f)} out of port 2$", x) for x in sw.lines)

        # pcap: what h1 sent arrived on port 1, what h2 got left port 2 (other traffic may be interleaved)
        mine = UDP_DPORT.to_bytes(2, "big")
        p1_in = [f for f in read_pcap(str(pcap_dir / f"{h1.switch_if}_in.pcap")) if f[36:38] == mine]
        p2_out = [f for f in read_pcap(str(pcap_dir / f"{h2.switch_if}_out.pcap")) if f[36:38] == mine]
        p1_out = [f for f in read_pcap(str(pcap_dir / f"{h1.switch_if}_out.pcap")) if f[36:38] == mine]
        assert p1_in == sent
        assert p2_out == expect
        assert p1_out == [forwarded(back, h1.mac)]


def test_cpu_port_packet_in_and_packet_out(tmp_path: Path) -> None:
    _needs_fixtures()
    cpu = 255
    log = tmp_path / "switch.log"
    with hosts(2) as (h1, h2):
        addr = f"127.0.0.1:{free_tcp_port()}"
        sw = SwitchProcess(["--no-p4", "-i", f"1@{h1.switch_if}", "-i", f"2@{h2.switch_if}", "--log-file", str(log),
                            "--", "--grpc-server-addr", addr, "--cpu-port", str(cpu)])
        try:
            c = P4RuntimeClient(addr, election_id=1).connect()
            c.set_pipeline(P4INFO, JSON)
            c.insert(lpm_route("10.0.9.0", 24, "02:00:00:00:09:09", cpu), lpm_route(h2.ip, 32, h2.mac, 2))

            # h1 → 10.0.9.9 is routed to the CPU port: a PacketIn with the forwarded frame (no packet_in header)
            to_cpu = udp_frame("02:00:00:00:00:fe", h1.mac, h1.ip, "10.0.9.9", 1, UDP_DPORT, b"for the controller")
            assert NsProcess(h1, "send", "--frame", to_cpu.hex(), "--count", "1").result(20)["sent"] == 1
            assert c.packet_in(10).payload == forwarded(to_cpu, "02:00:00:00:09:09")

            # a PacketOut enters the pipeline on the CPU port and is routed like any packet: to h2
            rx2 = NsProcess(h2, "recv", "--match", UDP_DPORT.to_bytes(2, "big").hex(), "--offset", "36",
                            "--count", "1", "--duration", "15", "--keep", "2", wait_ready=True)
            out = udp_frame("02:00:00:00:00:fe", "02:00:00:00:09:09", "10.0.9.9", h2.ip, 2, UDP_DPORT, b"from cpu" * 4)
            c.packet_out(out)
            assert [bytes.fromhex(x) for x in rx2.result(30)["frames"]] == [forwarded(out, h2.mac)]
            c.close()
        finally:
            err = sw.stop()
        assert sw.proc.returncode == 0, err
    # --log-file: the trace goes to the file (not stdout); the PacketOut shows as received on the CPU port
    text = log.read_text()
    assert "Processing packet received on port 1" in text
    assert f"Processing packet received on port {cpu}" in text
    assert "Transmitting packet of size" in text and f"out of port {cpu}" in text
    assert not any("[bmv2]" in x for x in sw.lines)
