"""The packet simulator (topo.sim): its link model's arithmetic, and the same switch program and protocol cores as the
in-process network giving the same results, counters and frames, at the times the links allow."""

from __future__ import annotations

import json
import struct
from functools import cache
from typing import Any

import numpy as np
import pytest

from switch.faults import FaultPlan
from tests.paths import ROOT
from topo.frames import ipv4_checksum, udp_frame
from topo.inprocess import InProcessNetwork, make_jobs
from topo.sim import LinkSpec, Port, SimNetwork
from topo.sim.links import HTB_CBURST, mark_ce
from topo.sim.tcp import Nic
from worker.job import PoolRange
from worker.verify import rank_input

OUT = ROOT / "out"


@cache
def program(name: str) -> dict[str, Any]:
    return json.loads((OUT / f"{name}.json").read_text())


def frame(size: int, tos: int = 0) -> bytes:
    f = bytearray(udp_frame("00:00:00:00:00:02", "00:00:00:00:00:01", "10.0.0.1", "10.0.0.2", 1, 2,
                            bytes(size - 42)))
    if tos:
        f[15] = tos
        f[24:26] = b"\0\0"
        f[24:26] = struct.pack("!H", ipv4_checksum(bytes(f[14:34])))
    return bytes(f)


# ---------------------------------------------------------------------------------------------------- links


def test_a_port_serialises_queues_and_delays_frames_in_order() -> None:
    port = Port("p", LinkSpec(rate_bps=1e9, delay_s=5e-6, overhead_bytes=24))
    ser = (1000 + 24) * 8 / 1e9
    arrivals = [port.send(frame(1000), 0.0)[0] for _ in range(3)]  # type: ignore[index]
    assert arrivals == pytest.approx([ser + 5e-6, 2 * ser + 5e-6, 3 * ser + 5e-6])
    assert port.queued(0.0) == 2 * 1024 and port.max_queue == 2 * 1024
    assert port.queued(2 * ser) == 0  # the third frame's transmission has started
    later = port.send(frame(1000), 1.0)
    assert later is not None and later[0] == pytest.approx(1.0 + ser + 5e-6)  # an idle wire: no queueing
    assert port.frames == 4 and port.bytes == 4000 and port.busy_s == pytest.approx(4 * ser)


def test_a_full_queue_drops_the_frame_at_its_tail() -> None:
    port = Port("p", LinkSpec(rate_bps=1e9, buffer_bytes=2 * 1024, overhead_bytes=24))
    sent = [port.send(frame(1000), 0.0) for _ in range(4)]
    # the first goes on the wire at once, two wait (2 x 1024 B fill the buffer), the fourth is dropped
    assert [s is not None for s in sent] == [True, True, True, False]
    assert port.drops == 1 and port.frames == 3


def test_ecn_marks_ect_frames_above_the_threshold_with_a_valid_checksum() -> None:
    port = Port("p", LinkSpec(rate_bps=1e9, ecn_bytes=1000, overhead_bytes=0))
    ect = frame(1000, tos=0x02)  # ECT(0)
    port.send(ect, 0.0)  # on the wire at once
    port.send(ect, 0.0)  # waits: 1000 B queued behind it... (the queue was empty when it came)
    out = port.send(ect, 0.0)  # finds 1000 B waiting: marked
    plain = port.send(frame(1000), 0.0)  # not ECN-capable: passes unmarked, counted as congested
    assert out is not None and out[1][15] & 3 == 3 and ipv4_checksum(out[1][14:34]) == 0
    assert plain is not None and plain[1][15] & 3 == 0
    assert port.marks == 1 and port.congested == 1
    assert mark_ce(frame(100)) is None and mark_ce(b"\x00" * 20) is None


def test_an_htb_shaped_link_spaces_frames_at_its_rate_but_delivers_without_serialisation() -> None:
    """Mininet's links: htb's 1,600 B ceil bucket lets a frame out while it holds tokens (going negative by that
    frame), refills at the rate, and the veth delivers at once."""
    rate, size = 2e6, 1514
    port = Port("p", LinkSpec(rate_bps=rate, delay_s=0.0, overhead_bytes=0, burst_bytes=HTB_CBURST))
    ser, credit = size * 8 / rate, HTB_CBURST * 8 / rate
    arrivals = [port.send(frame(size), 0.0)[0] for _ in range(4)]  # type: ignore[index]
    # a full bucket: the first two leave at once (the second finds 86 B of tokens), then one per frame time
    assert arrivals == pytest.approx([0.0, 0.0, 2 * ser - credit, 3 * ser - credit])
    assert port.busy_s == pytest.approx(4 * ser)
    nic = Nic(rate, 0, HTB_CBURST)  # the TCP model's view of its own link: the same departures
    assert [nic.enqueue(size, 0.0) for _ in range(4)] == pytest.approx(arrivals)
    # after an idle spell longer than the bucket, a frame leaves at once again; a wire would add its serialisation
    later = port.send(frame(size), 1.0)
    assert later is not None and later[0] == pytest.approx(1.0)
    wire = Port("w", LinkSpec(rate_bps=rate, delay_s=0.0, overhead_bytes=0))
    assert wire.send(frame(size), 1.0)[0] == pytest.approx(1.0 + ser)  # type: ignore[index]


def test_a_link_refuses_impossible_parameters() -> None:
    with pytest.raises(ValueError, match="rate"):
        LinkSpec(rate_bps=0)
    with pytest.raises(ValueError, match="delay"):
        LinkSpec(rate_bps=1e9, delay_s=-1)
    with pytest.raises(ValueError, match="burst"):
        LinkSpec(rate_bps=1e9, burst_bytes=-1)


# ---------------------------------------------------------------------------------------------------- networks


def inputs(n: int, size: int, dtype: str, seed: int = 1) -> dict[int, list[np.ndarray]]:
    return {1: [rank_input(size, seed, r, dtype) for r in range(n)]}


def sim(name: str, n: int, *, link: LinkSpec, ps: bool = False, **kw: Any) -> SimNetwork:
    jobs = make_jobs(1, n, 64 if name == "switchml" else 32, PoolRange(0, 32), ps=ps)
    return SimNetwork(program(name), jobs, p4info=OUT / f"{name}.p4info.txt", link=link, **kw)


@pytest.mark.parametrize("name", ["switchml", "atp"])
def test_the_same_results_counters_and_frames_as_the_in_process_network(name: str) -> None:
    ps = name == "atp"
    data = inputs(4, 64 * 40 + 7, "int32")
    net = sim(name, 4, link=LinkSpec(10e9, 2e-6), ps=ps, seed=5)
    runs = net.allreduce(data, "int32")
    ref = InProcessNetwork(program(name), make_jobs(1, 4, 64 if name == "switchml" else 32, PoolRange(0, 32), ps=ps),
                           p4info=OUT / f"{name}.p4info.txt", seed=5)
    expected = ref.allreduce(data, "int32")
    assert all(v.ok for v in net.verify(1, runs[1], data[1], "int32"))
    for a, b in zip(runs[1].results, expected[1].results):
        np.testing.assert_array_equal(a, b)
    assert runs[1].counters == expected[1].counters and net.frames == ref.frames
    assert sum(w.stats.retransmissions for w in runs[1].windows) == 0


def test_a_network_bound_run_takes_the_time_its_links_need() -> None:
    rate, delay = 10e9, 1e-6
    net = sim("switchml", 4, link=LinkSpec(rate, delay), seed=1)
    size = 64 * 256  # 256 packets per worker
    runs = net.allreduce(inputs(4, size, "int32"), "int32")
    wire = 42 + 8 + 4 * 64  # headers, INA header and payload: the switch's frames are as long as the workers'
    up = next(p for p in net.report().ports if p.name == "h1->s")
    per_frame = up.bytes / up.frames
    ser = (per_frame + 24) * 8 / rate
    # the uplink sends 256 frames back to back; the last result follows one serialisation and two delays later
    expected = 256 * ser + ser + 2 * delay
    assert max(w.stats.elapsed for w in runs[1].windows) == pytest.approx(expected, rel=0.01)
    assert up.busy == pytest.approx(256 * ser / net.report().sim_s, rel=0.01) and up.busy > 0.95
    assert per_frame >= wire - 8


def test_a_seeded_lossy_run_replays_exactly_and_another_seed_differs() -> None:
    def run(seed: int) -> tuple[float, int, list[np.ndarray]]:
        net = sim("switchml", 4, link=LinkSpec(10e9, 1e-6), seed=seed, loss=0.02, faults=FaultPlan(seed=seed))
        data = inputs(4, 64 * 60, "float32")
        r = net.allreduce(data, "float32")[1]
        assert all(v.ok for v in net.verify(1, r, data[1], "float32"))
        return (max(w.stats.elapsed for w in r.windows), sum(w.stats.retransmissions for w in r.windows),
                r.results)

    a, b, c = run(3), run(3), run(4)
    assert a[0] == b[0] and a[1] == b[1] > 0
    assert all(np.array_equal(x, y) for x, y in zip(a[2], b[2]))
    assert (a[0], a[1]) != (c[0], c[1])


def test_a_straggler_and_compute_time_delay_the_run() -> None:
    net = sim("switchml", 3, link=LinkSpec(10e9, 1e-6), compute_s=1e-3)
    data = inputs(3, 64 * 8, "int32")
    r = net.allreduce(data, "int32", start_at={(1, 2): 5e-3})[1]
    assert all(v.ok for v in net.verify(1, r, data[1], "int32"))
    # every worker starts after 1 ms of compute; the last one 5 ms later: the others wait for it
    assert net.report().sim_s == pytest.approx(6e-3, rel=0.01)
    assert r.windows[0].stats.elapsed == pytest.approx(5e-3, rel=0.02)


def test_a_slow_switch_paces_the_run_at_its_service_time() -> None:
    net = sim("switchml", 4, link=LinkSpec(100e9, 1e-6), service_s=2e-6)
    data = inputs(4, 64 * 100, "int32")
    net.allreduce(data, "int32")
    rep = net.report()
    # 400 packets at 2 µs each: the switch, not the 100 Gbit/s links, set the pace
    assert rep.sim_s == pytest.approx(400 * 2e-6, rel=0.03) and rep.switch_busy > 0.95
    assert rep.busiest is not None and rep.busiest.busy < 0.2


def test_hosts_sharing_a_cpu_wait_for_each_other() -> None:
    """host_cost_s per frame: on a CPU each the hosts' work overlaps; on one shared CPU (the emulator's hosts) it adds
    up, and that CPU is busy for all of it. A timer that came due while the CPU was busy fires at once."""
    data = inputs(4, 64 * 100, "int32")
    own = sim("switchml", 4, link=LinkSpec(100e9, 1e-6), host_cost_s=1e-6)
    r = own.allreduce(data, "int32")[1]
    assert all(v.ok for v in own.verify(1, r, data[1], "int32"))
    one = sim("switchml", 4, link=LinkSpec(100e9, 1e-6), host_cost_s=1e-6, host_cpus=1)
    r = one.allreduce(data, "int32")[1]
    assert all(v.ok for v in one.verify(1, r, data[1], "int32"))
    # each worker sends and receives 100 frames (200 us of CPU): in parallel ~200 us, shared ~800 us
    assert own.report().sim_s == pytest.approx(200e-6, rel=0.1) and own.report().host_busy > 0.9
    assert one.report().sim_s == pytest.approx(800e-6, rel=0.1) and one.report().host_busy > 0.95
    with pytest.raises(ValueError, match="host_cpus must be >= 1"):
        sim("switchml", 2, link=LinkSpec(1e9, 1e-6), host_cpus=0)


def test_small_buffers_drop_and_the_protocol_recovers() -> None:
    net = sim("switchml", 4, link=LinkSpec(10e9, 1e-6, buffer_bytes=1500), service_s=1e-6, seed=2)
    data = inputs(4, 64 * 64, "int32")
    r = net.allreduce(data, "int32")[1]
    assert all(v.ok for v in net.verify(1, r, data[1], "int32"))
    assert net.report().drops > 0 and sum(w.stats.retransmissions for w in r.windows) > 0


def test_delayed_frames_go_through_the_switch_in_turn_and_the_run_verifies() -> None:
    from switch.faults import FaultRule

    # held until 1,000 more frames pass on the port, which never happens: each goes at max_hold_s (the release path)
    plan = FaultPlan([FaultRule(action="delay", direction="in", probability=0.05, delay=1000)], seed=8,
                     max_hold_s=2e-4)
    net = sim("switchml", 4, link=LinkSpec(10e9, 1e-6), service_s=1e-6, faults=plan, seed=8)
    net.trace = []
    data = inputs(4, 64 * 50, "int32")
    r = net.allreduce(data, "int32")[1]
    assert all(v.ok for v in net.verify(1, r, data[1], "int32"))
    assert plan.stats["delay"] > 0
    # the switch took every frame, released ones included, one at a time: one service time apart at least
    taken = [t for t, way, _, _ in net.trace if way == "in"]
    assert len(taken) >= r.counters["ina_received"]
    assert min(b - a for a, b in zip(taken, taken[1:])) >= 1e-6 - 1e-12


def test_ports_report_their_switch_port_and_direction() -> None:
    net = sim("switchml", 2, link=LinkSpec(10e9, 1e-6))
    net.allreduce(inputs(2, 64 * 4, "int32"), "int32")
    got = {(p.name, p.port, p.up, p.frames) for p in net.report().ports}
    assert got == {("h1->s", 1, True, 4), ("h2->s", 2, True, 4), ("s->h1", 1, False, 4), ("s->h2", 2, False, 4)}


def test_the_parameter_server_port_follows_the_workers_past_it() -> None:
    from topo.inprocess import PS_PORT

    assert make_jobs(1, 4, 32, PoolRange(0, 8), ps=True)[0].ps.switch_port == PS_PORT  # type: ignore[union-attr]
    assert make_jobs(2, 60, 32, PoolRange(0, 8), ps=True)[0].ps.switch_port == 121  # type: ignore[union-attr]


def test_a_ps_per_job_serves_its_own_job_on_its_own_link() -> None:
    """ATP's jobs as its paper runs them: each job's PS on a host and link of its own, both jobs hashing into one
    pool of 4 aggregators (collisions go to the PS)."""
    from topo.inprocess import PS_PORT

    jobs = make_jobs(2, 3, 32, PoolRange(0, 4), ps=True, ps_per_job=True)
    servers = [j.ps for j in jobs]
    assert [s.switch_port for s in servers] == [PS_PORT, PS_PORT + 1]  # type: ignore[union-attr]
    assert len({s.ip for s in servers}) == len({s.mac for s in servers}) == 2  # type: ignore[union-attr]
    net = SimNetwork(program("atp"), jobs, p4info=OUT / "atp.p4info.txt", link=LinkSpec(10e9, 1e-6), seed=3)
    net.trace = []
    data = {j: [rank_input(32 * 40, 10 * j, r, "int32") for r in range(3)] for j in (1, 2)}
    runs = net.allreduce(data, "int32")
    for jid in (1, 2):
        assert all(v.ok for v in net.verify(jid, runs[jid], data[jid], "int32"))
    assert sorted(net.ps_hosts) == [PS_PORT, PS_PORT + 1]
    for job in jobs:
        host = net.ps_hosts[job.ps.switch_port]  # type: ignore[union-attr]
        assert list(host.cores) == [job.job_id] and runs[job.job_id].ps is host.cores[job.job_id]
        assert host.cores[job.job_id].stats.collisions > 0  # the shared pool sent it contributions to merge
        # every frame the switch sent out of (or took in on) a PS's port was that PS's job's
        seen = {net.codec.decode(f[42:])[0].job_id for _, _, port, f in net.trace if port == job.ps.switch_port}
        assert seen == {job.job_id}
    links = {(p.port, p.up): p.frames for p in net.report().ports}
    assert all(links[PS_PORT + k, up] > 0 for k in (0, 1) for up in (True, False))
