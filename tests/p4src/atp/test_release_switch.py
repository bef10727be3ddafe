"""release.p4 packet by packet: a partial aggregate past its job's timeout is released, by the next packet of another
(job, seq) that finds it, to its PS (bytes on the wire, registers after); before its deadline, or with no timeout, it
keeps its aggregator (ATP's collision); its late contributions go on to its PS until the PS's ACK passes."""

from __future__ import annotations

import pytest

US = 1000  # ns


def ramp(n: int, scale: int, offset: int = 0) -> list[int]:
    return [scale * (i - n // 2) + offset for i in range(n)]


def two_jobs(release, timeout1: int, timeout2: int = 0):
    """Job 1 (timeout `timeout1` us) on ports 1..3 with its PS on port 9, job 2 on ports 4..6 with its PS on port 11;
    equal priorities, as release.p4's controller installs them."""
    ps2 = release.host(0, 11)
    release.l2(ps2.mac, ps2.port)
    j1 = [release.host(r, r + 1) for r in range(3)]
    j2 = [release.host(r, r + 4) for r in range(3)]
    release.add_job(1, j1, mgid=5, timeout_us=timeout1)
    release.add_job(2, j2, mgid=6, ps=ps2, timeout_us=timeout2)
    return j1, j2, ps2


def test_a_partial_aggregate_past_its_deadline_leaves_for_its_ps_in_the_next_packet(release):
    sw = release
    j1, j2, ps2 = two_jobs(sw, timeout1=100, timeout2=40)
    n = sw.num_elems
    v = [ramp(n, 3, r) for r in range(3)]
    u = [ramp(n, -5, 100 * r) for r in range(3)]
    sw.now_ns = 1_000 * US
    assert sw.send(j1[0], sw.data(j1[0], 1, seq=5, agtr=4, values=v[0], fan_in0=3)) == []
    sw.now_ns = 1_050 * US  # a later contribution does not move the deadline
    assert sw.send(j1[1], sw.data(j1[1], 1, seq=5, agtr=4, values=v[1], fan_in0=3)) == []
    assert sw.reg("deadline", 4) == 1_100 and sw.owner(4) == (1, 5)
    # before the deadline: job 2 collides, as in ATP
    sw.now_ns = 1_099 * US
    out = sw.send(j2[0], sw.data(j2[0], 2, seq=8, agtr=4, values=u[0], fan_in0=3, ps=ps2))
    _, a = sw.parse(out[0][1])
    assert [p for p, _ in out] == [ps2.port] and (a.job_id, a.flags, a.values) == (2, sw.COLLISION, u[0])
    assert sw.owner(4) == (1, 5) and sw.counts(1)["atp_expired"] == 0
    # at the deadline: job 2's next packet for that aggregator takes it and carries job 1's partial to job 1's PS
    sw.now_ns = 1_100 * US
    out = sw.send(j2[1], sw.data(j2[1], 2, seq=9, agtr=4, values=u[1], fan_in0=3, ps=ps2))
    assert [port for port, _ in out] == [sw.PS.port]
    pkt, a = sw.parse(out[0][1])
    assert (pkt.dst, pkt["IP"].dst) == (sw.PS.mac, sw.PS.ip)
    assert pkt["IP"].chksum == pkt["IP"].__class__(bytes(pkt["IP"])).chksum
    assert (a.job_id, a.seq, a.agtr, a.bitmap0, a.flags) == (1, 5, 4, 0b011, sw.COLLISION)
    assert a.values == sw.sat_sums(v[0], v[1])
    assert sw.owner(4) == (2, 9) and sw.values(4) == u[1] and sw.reg("deadline", 4) == 1_100 + 40
    assert (sw.reg("bitmap", 4), sw.reg("count", 4)) == (0b010, 1)
    c = sw.counts(1)
    assert c["atp_expired"] == c["atp_evicted"] == 1 and sw.counts(2)["atp_aggregated"] == 1
    for job in (1, 2):
        sw.assert_ingress_invariant(job)


def test_a_job_without_a_timeout_keeps_its_aggregator(release):
    sw = release
    j1, j2, ps2 = two_jobs(sw, timeout1=0)
    n = sw.num_elems
    sw.send(j1[0], sw.data(j1[0], 1, seq=5, agtr=4, values=[1] * n, fan_in0=3))
    assert sw.reg("deadline", 4) == 0
    sw.now_ns = 10**12
    out = sw.send(j2[0], sw.data(j2[0], 2, seq=8, agtr=4, values=[2] * n, fan_in0=3, ps=ps2))
    _, a = sw.parse(out[0][1])
    assert (a.job_id, a.flags) == (2, sw.COLLISION) and sw.owner(4) == (1, 5) and sw.counts(1)["atp_expired"] == 0


def test_the_jobs_own_next_sequence_releases_it_too_but_a_resend_or_a_lone_packet_does_not(release):
    sw = release
    j1, _, _ = two_jobs(sw, timeout1=10)
    n = sw.num_elems
    sw.send(j1[0], sw.data(j1[0], 1, seq=5, agtr=4, values=[1] * n, fan_in0=3))
    sw.now_ns = 20 * US
    sw.send(j1[1], sw.data(j1[1], 1, seq=6, agtr=4, values=[2] * n, fan_in0=3, flags=sw.RESEND))
    sw.send(j1[1], sw.data(j1[1], 1, seq=7, agtr=4, values=[2] * n, fan_in0=1))
    assert sw.owner(4) == (1, 5)
    out = sw.send(j1[1], sw.data(j1[1], 1, seq=6, agtr=4, values=[3] * n, fan_in0=3))
    _, a = sw.parse(out[0][1])
    assert (a.seq, a.bitmap0, a.values) == (5, 0b001, [1] * n) and sw.owner(4) == (1, 6)


def test_late_contributions_go_on_to_the_ps_until_its_ack_passes(release):
    sw = release
    j1, j2, ps2 = two_jobs(sw, timeout1=10)
    n = sw.num_elems
    for r in (0, 1):
        sw.send(j1[r], sw.data(j1[r], 1, seq=5, agtr=4, values=[r + 1] * n, fan_in0=3))
    sw.now_ns = 10 * US
    sw.send(j2[0], sw.data(j2[0], 2, seq=8, agtr=4, values=[7] * n, fan_in0=1 + 1, ps=ps2))
    sw.send(j2[1], sw.data(j2[1], 2, seq=8, agtr=4, values=[7] * n, fan_in0=2, ps=ps2))
    assert sw.owner(4) == (0, 0) and sw.reg("evicted_owner", 4) == (1 << 32) | 5  # job 2 done: free
    # job 1's straggler finds the aggregator free and still goes on to its PS, unaggregated
    out = sw.send(j1[2], sw.data(j1[2], 1, seq=5, agtr=4, values=[3] * n, fan_in0=3))
    _, a = sw.parse(out[0][1])
    assert [p for p, _ in out] == [sw.PS.port] and (a.bitmap0, a.flags, a.values) == (0b100, sw.COLLISION, [3] * n)
    assert sw.owner(4) == (0, 0)
    # the PS's ACK for (1, 5) reaches every worker and clears the memory; the aggregator serves anyone again
    out = sw.send(sw.PS.port, sw.ack(1, seq=5, agtr=4, values=[6] * n, bitmap0=0b111))
    assert [p for p, _ in out] == [w.port for w in j1] and sw.reg("evicted_owner", 4) == 0
    assert sw.send(j1[0], sw.data(j1[0], 1, seq=6, agtr=4, values=[1] * n, fan_in0=3)) == []
    assert sw.owner(4) == (1, 6)
    for job in (1, 2):
        sw.assert_ingress_invariant(job)


@pytest.mark.parametrize("program", ["atp", "esa"])
def test_the_other_programs_take_no_timeout(atp_factory, program):
    sw = atp_factory(16, 64, program=program)
    assert "AtpIngress.atp_deadline" not in sw.sw.registers and "AtpIngress.atp_expired" not in sw.sw.counters
