"""The host baselines on the packet simulator (topo.sim.hosts over topo.sim.tcp): exact sums through the switch's P4
program, the segments their steps imply, valid TCP frames, losses repaired deterministically, the link's rate."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from functools import cache
from typing import Any

import numpy as np
import pytest
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

from controller.local import load_p4info
from tests.paths import ROOT
from topo.inprocess import EngineCache, JobRun, make_jobs
from topo.sim import LinkSpec, SimNetwork
from topo.sim.hosts import host_allreduce
from switch.faults import ByteMatch, FaultPlan, FaultRule
from topo.sim.tcp import HEADER_BYTES, MSS, Nic, TcpAddress, TcpConnection
from worker.host.schedule import Step, chunk_bounds
from worker.job import PoolRange
from worker.protocols import PROTOCOLS
from worker.verify import rank_input, verify_float_sum, wrapping_sum

OUT = ROOT / "out"
ENGINES = EngineCache()


@cache
def switchml() -> tuple[dict[str, Any], Any]:
    return json.loads((OUT / "switchml.json").read_text()), load_p4info(OUT / "switchml.p4info.txt")


def run(protocol: Any, n: int, size: int, *, dtype: str = "int32", rate: float = 1e9, loss: float = 0.0,
        seed: int = 1, faults: FaultPlan | None = None) -> tuple[SimNetwork, JobRun, list[np.ndarray]]:
    program, p4info = switchml()
    spec = PROTOCOLS[protocol] if isinstance(protocol, str) else protocol
    net = SimNetwork(program, make_jobs(1, n, 64, PoolRange(0, 8)), p4info=p4info, protocol=spec, loss=loss,
                     seed=seed, link=LinkSpec(rate, 1e-6, overhead_bytes=0), engine=ENGINES.get(program),
                     faults=faults)
    inputs = [rank_input(size, seed, r, dtype) for r in range(n)]
    return net, host_allreduce(net, {1: inputs}, dtype=dtype, time_limit=60)[1], inputs


def segments(steps: list[Step], size: int, n: int, itemsize: int = 4) -> int:
    """Data segments a rank's steps send: the header to each peer, then ceil(chunk bytes / MSS) per chunk sent."""
    b = chunk_bounds(size, n)
    peers = {p for s in steps for p, _ in (*s.sends, *s.recvs)}
    return len(peers) + sum(math.ceil((b[k + 1] - b[k]) * itemsize / MSS) for s in steps for _, k in s.sends)


@pytest.mark.parametrize("protocol", ["ring", "ps"])
@pytest.mark.parametrize("n", [3, 4])
def test_host_baselines_sum_exactly_with_the_segments_their_steps_imply(protocol: str, n: int) -> None:
    size = 3000 + n  # uneven chunks, short last segments
    net, job, inputs = run(protocol, n, size)
    ref = wrapping_sum(inputs)
    for r, (res, host) in enumerate(zip(job.runs, job.windows)):
        assert np.array_equal(res.array, ref), f"rank {r}"
        tcp = [c.stats for c in host.conns.values()]
        assert sum(s.data_segments for s in tcp) == segments(PROTOCOLS[protocol].host_steps(r, n), size, n)
        assert res.stats.retransmissions == 0 and res.stats.packets_sent == sum(s.segments for s in tcp)
    assert job.counters.get("aggregated", 0) == 0  # L2 forwarding only: no job on the switch
    ups = [p for p in net.report().ports if p.up]
    assert sum(p.frames for p in ups) == sum(r.stats.packets_sent for r in job.runs)  # every segment crossed


def test_a_host_baseline_runs_through_host_allreduce_only() -> None:
    net = run("ring", 2, 10)[0]
    with pytest.raises(ValueError, match="ring is a host baseline.*host_allreduce"):
        net.allreduce({1: [np.zeros(10, np.int32)] * 2}, dtype="int32")


def test_float32_results_are_the_float_sum_on_every_rank() -> None:
    _, job, inputs = run("ps", 4, 2000, dtype="float32")
    assert all(verify_float_sum(r.array, inputs, "float32").ok for r in job.runs)
    assert len({r.array.tobytes() for r in job.runs}) == 1


def test_a_lossy_run_is_exact_resends_and_replays_from_its_seed() -> None:
    net, job, inputs = run("ring", 4, 20000, rate=100e6, loss=0.02, seed=5)
    ref = wrapping_sum(inputs)
    assert all(np.array_equal(r.array, ref) for r in job.runs)
    assert sum(r.stats.retransmissions for r in job.runs) > 0 and net.dropped > 0
    again = run("ring", 4, 20000, rate=100e6, loss=0.02, seed=5)[1]
    assert [r.stats for r in again.runs] == [r.stats for r in job.runs]
    other = run("ring", 4, 20000, rate=100e6, loss=0.02, seed=6)[1]
    assert [r.stats for r in other.runs] != [r.stats for r in job.runs]


def test_no_timer_is_lost_among_many() -> None:
    """Many RTOs, loss probes and delayed ACKs: each fires at the instant it was set for (SimNetwork once compared
    SimPy's env.now, off by an ulp, with it and dropped the timer: seed 4 at 5 % loss then stopped with nothing
    armed; with SACK that loss takes few RTOs, so 10 %)."""
    program, p4info = switchml()
    net = SimNetwork(program, make_jobs(1, 4, 64, PoolRange(0, 8)), p4info=p4info, protocol=PROTOCOLS["ring"],
                     loss=0.1, seed=4, link=LinkSpec(10e6, 1e-6), engine=ENGINES.get(program))
    inputs = [rank_input(65536, 4, r, "int32") for r in range(4)]
    job = host_allreduce(net, {1: inputs}, dtype="int32", time_limit=60)[1]
    assert all(np.array_equal(r.array, wrapping_sum(inputs)) for r in job.runs)
    assert sum(r.stats.tcp_timeouts for r in job.runs) > 20


def test_frames_are_linux_sized_tcp_with_valid_checksums() -> None:
    a, b = TcpAddress("00:00:00:00:00:01", "10.0.0.1", 40001), TcpAddress("00:00:00:00:00:02", "10.0.0.2", 50001)
    conn = TcpConnection(a, b, isn=7, peer_isn=9)
    frames = conn.send(bytes(range(256)) * 7, now=0.0)  # 1792 bytes: a full segment and a short one
    assert [len(f) for f in frames] == [HEADER_BYTES + MSS, HEADER_BYTES + 1792 - MSS]
    for f in frames:
        pkt = Ether(f)
        ip, tcp = pkt[IP], pkt[TCP]
        assert ip.flags == "DF" and ip.proto == 6 and tcp.dataofs == 8 and tcp.flags.A
        assert ("Timestamp", (0, 0)) in tcp.options
        ip.chksum = tcp.chksum = None  # scapy computes them again
        assert bytes(pkt) == f
    peer = TcpConnection(b, a, isn=9, peer_isn=7)
    out, got = peer.on_frame(frames[0], 0.001)
    assert got == (bytes(range(256)) * 7)[:MSS] and len(out) == 1 and len(out[0]) == HEADER_BYTES  # a quick ACK


def test_one_transfer_runs_at_the_link_rate() -> None:
    """1 MiB from rank 0 to rank 1 over 10 Mbit/s: its frames' bytes over the rate, within 2 %."""
    spec = replace(PROTOCOLS["ring"], name="one-way", host_steps=lambda r, n: [
        Step(((1, 0),), (), False) if r == 0 else Step((), ((0, 0),), False)])
    net, job, _ = run(spec, 2, 1 << 19, rate=10e6)  # chunk 0 is half of 2 MiB
    data = 1 << 20
    wire = data + math.ceil(data / MSS) * HEADER_BYTES
    elapsed = job.runs[1].stats.elapsed
    assert wire * 8 / 10e6 <= elapsed < 1.02 * wire * 8 / 10e6
    assert net.report().busiest.name == "h1->s"


ONE_WAY = replace(PROTOCOLS["ring"], name="one-way", host_steps=lambda r, n: [
    Step(((1, 0),), (), False) if r == 0 else Step((), ((0, 0),), False)])


def pair() -> tuple[TcpConnection, TcpConnection]:
    a, b = TcpAddress("00:00:00:00:00:01", "10.0.0.1", 40001), TcpAddress("00:00:00:00:00:02", "10.0.0.2", 50001)
    return TcpConnection(a, b, isn=7, peer_isn=9), TcpConnection(b, a, isn=9, peer_isn=7)


def test_duplicate_acks_carry_the_sack_blocks_of_what_arrived_beyond_the_holes() -> None:
    sender, receiver = pair()
    frames = sender.send(bytes(8 * MSS), now=0.0)
    acks = [receiver.on_frame(frames[i], 0.001 * i)[0][-1] for i in (0, 2, 3, 5)]  # segments 1 and 4 lost
    first = Ether(acks[0])[TCP]
    assert len(acks[0]) == HEADER_BYTES and not [o for o in first.options if o[0] == "SAck"]
    seq = lambda k: 7 + 1 + k * MSS  # noqa: E731  (the sender's sequence number of segment k)
    sacks = [dict(Ether(f)[TCP].options)["SAck"] for f in acks[1:]]
    assert sacks == [(seq(2), seq(3)), (seq(2), seq(4)), (seq(5), seq(6), seq(2), seq(4))]  # the latest block first
    assert [Ether(f)[TCP].ack for f in acks[1:]] == [seq(1)] * 3  # duplicate ACKs: the first hole
    assert [len(f) for f in acks[1:]] == [HEADER_BYTES + 12, HEADER_BYTES + 12, HEADER_BYTES + 20]  # 4 + 8 a block
    for f in acks:
        pkt = Ether(f)
        pkt[IP].chksum = pkt[TCP].chksum = None
        assert bytes(pkt) == f
    for f in acks:
        sender.on_frame(f, 0.01)
    assert sender.sacked_out == 3 and sender.lost_out == 2  # RACK: 1 and 4 were sent before delivered segments


def drop_full_segments(port: int, nth: set[int]) -> FaultPlan:
    """Drop these full data segments (1500-byte IP packets, counted from 1) as they enter the switch from `port`."""
    full = ByteMatch(16, (1500).to_bytes(2, "big"), b"\xff\xff")
    return FaultPlan([FaultRule("drop", "in", frozenset({port}), (full,), frozenset(nth))])


def one_way(segments: int, drop: set[int]) -> tuple[float, Any, Any]:
    """rank 0 sends `segments` full segments to rank 1 at 10 Mbit/s, losing `drop`: (elapsed, sender's, receiver's
    connection)."""
    port = make_jobs(1, 2, 64, PoolRange(0, 8))[0].worker(0).switch_port
    _, job, _ = run(ONE_WAY, 2, segments * MSS // 2, rate=10e6, faults=drop_full_segments(port, drop))
    return job.runs[1].stats.elapsed, job.windows[0].conns[1], job.windows[1].conns[0]


def test_a_mid_window_loss_is_repaired_by_sack_and_rack_without_a_timeout() -> None:
    clean = one_way(40, set())[0]
    elapsed, conn, _ = one_way(40, {20})
    assert conn.stats.retransmissions == 1 and conn.stats.timeouts == 0 and conn.stats.fast_retransmits == 1
    assert elapsed - clean < 0.02  # about an RTT and a segment, not a 200 ms RTO


def test_a_tail_loss_is_repaired_by_a_loss_probe_before_the_rto() -> None:
    clean = one_way(30, set())[0]
    elapsed, conn, _ = one_way(30, {29, 30})  # the last two: no later segment is SACKed, only a probe can tell
    assert conn.stats.loss_probes == 1 and conn.stats.timeouts == 0 and conn.stats.retransmissions == 2
    assert elapsed - clean < 0.05  # the probe after 2 srtt, then RACK repairs the other: the RTO is 200 ms
    # the last alone: 13 quick ACKs (the header and 12 segments), then one per two segments acknowledge the first 28
    # before the 29th leaves, so one segment is in flight and the probe waits 2 srtt + 200 ms (Linux's rule)
    clean = one_way(29, set())[0]
    elapsed, conn, receiver = one_way(29, {29})
    assert receiver.stats.acks == 13 + (28 - 12) // 2 + 1
    assert conn.stats.loss_probes == 1 and conn.stats.timeouts == 0 and elapsed - clean > 0.2


def test_a_lossy_run_with_sack_is_exact_and_deterministic() -> None:
    _, job, inputs = run("ps", 4, 30000, rate=10e6, loss=0.02, seed=3)
    assert all(np.array_equal(r.array, wrapping_sum(inputs)) for r in job.runs)
    tcp = [c.stats for h in job.windows for c in h.conns.values()]
    assert sum(s.fast_retransmits for s in tcp) > 0
    again = run("ps", 4, 30000, rate=10e6, loss=0.02, seed=3)[1]
    assert [c.stats for h in again.windows for c in h.conns.values()] == tcp


def test_the_rto_follows_linux_estimator() -> None:
    """tcp_rtt_estimator + __tcp_set_rto: srtt + the highest deviation (4 mdev) of the last window, at least 200 ms;
    a falling RTT moves the deviation by 1/32, not 1/4; a rising one raises the RTO at once."""
    conn = pair()[0]
    conn.send(bytes(4 * MSS), now=0.0)  # nxt = 4: the estimator's window ends when una passes it
    conn._sample_rtt(0.010)  # the first sample: mdev 2 RTT, the variance term max(20 ms, 200 ms)
    assert (conn.srtt, conn.mdev, conn.rttvar, conn.rto) == (0.010, 0.020, 0.2, 0.21)
    conn._sample_rtt(0.300)  # up by 290 ms: srtt += 290/8, mdev += 290 - 20/4
    assert conn.srtt == pytest.approx(0.04625) and conn.mdev == pytest.approx(0.305)
    assert conn.rttvar == pytest.approx(0.305) and conn.rto == pytest.approx(0.352)  # 46.25 + 305, up to a jiffy
    conn._sample_rtt(0.010)  # down by 36.25 ms: (36.25 - 305/4) < 0, so the deviation decays by a quarter of it
    assert conn.mdev == pytest.approx(0.305 + (0.03625 - 0.305 / 4))
    assert conn.rttvar == pytest.approx(0.305)  # the window's highest holds until una passes it
    rfc6298 = 0.875 * 0.04625 + 0.125 * 0.010 + 4 * (0.75 * 0.305 / 4 + 0.25 * 0.03625)
    assert conn.rto > rfc6298


def test_a_duplicate_refreshes_the_timestamp_echoed() -> None:
    """RFC 7323 (Linux's tcp_replace_ts_recent): a segment at or before the last ACK sent updates TS.Recent, so the
    ACK of a resend the receiver already had echoes the resend's time, not the original's."""
    sender, receiver = pair()
    seg = sender.send(bytes(MSS), now=0.0)[0]
    receiver.on_frame(seg, 0.001)
    resend = sender._send_segment(0, 1.0)  # the RTO's resend (its ACK was lost)
    ack = receiver.on_frame(resend, 1.001)[0][-1]
    assert dict(Ether(ack)[TCP].options)["Timestamp"][1] == 1000  # the resend's TSval (ms)


def test_an_rto_does_not_resend_what_is_still_in_the_hosts_queue() -> None:
    """skb_still_in_host_queue: at 100 kbit/s the first segment is still queued when the 210 ms RTO fires; the
    timeout happens (loss state, window 1) but nothing goes out again, and the timer is rearmed, doubled."""
    a, b = TcpAddress("00:00:00:00:00:01", "10.0.0.1", 40001), TcpAddress("00:00:00:00:00:02", "10.0.0.2", 50001)
    conn = TcpConnection(a, b, nic=Nic(100e3), srtt=0.01)
    assert len(conn.send(bytes(3 * MSS), now=0.0)) == 3  # 121 ms per frame: the first leaves the queue at 0
    conn._leaves[0] = 0.5  # as if behind another connection's frames
    while conn.rto_at is not None and conn.rto_at < 0.21:  # the loss probe first: the last segment is queued too
        assert conn.on_timer(conn.rto_at) == []
    assert conn.rto_at == pytest.approx(0.21) and conn.on_timer(0.21) == []
    assert conn.stats.timeouts == 1 and conn.stats.retransmissions == 0 and conn.cwnd == 1
    assert conn.rto_at == pytest.approx(0.21 + 0.42)


def two_way_acks(protocol: str) -> tuple[int, int]:
    """(pure ACKs rank 1 sends, data segments it receives) in a 2-rank run of 40 segments each way and step."""
    _, job, _ = run(protocol, 2, 40 * MSS // 2)
    return job.windows[1].conns[0].stats.acks, job.windows[0].conns[1].stats.data_segments


def test_data_both_ways_ends_quick_acks() -> None:
    """Linux's pingpong mode: a connection that sends data soon after receiving some acknowledges every second
    segment from the start (ps: both ranks push to each other), where a one-way receiver quick-acks its first ones
    (one_way: rank 1 only receives)."""
    clean, _, receiver = one_way(40, set())
    assert receiver.stats.acks == 13 + (40 - 12) // 2
    acks, received = two_way_acks("ps")
    assert received == 1 + 2 * 40 and acks <= received // 2 + 2  # the header, the push and the pull
