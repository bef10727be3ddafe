"""esa.p4 packet by packet: a higher-priority job's packet evicts a lower-priority partial aggregate, which leaves in
that packet for the victim's PS (bytes on the wire, registers after); equal or higher owners keep their aggregator
(ATP's collision); an aggregate frees its aggregator at completion, the PS's ACK is still multicast."""

from __future__ import annotations

import pytest


def ramp(n: int, scale: int, offset: int = 0) -> list[int]:
    return [scale * (i - n // 2) + offset for i in range(n)]


def two_jobs(esa, low: int, high: int):
    """Job 1 (priority `low`) on ports 1..3 with its PS on port 9, job 2 (priority `high`) on ports 4..6 with its PS
    on port 11."""
    ps2 = esa.host(0, 11)
    esa.l2(ps2.mac, ps2.port)
    j1 = [esa.host(r, r + 1) for r in range(3)]
    j2 = [esa.host(r, r + 4) for r in range(3)]
    esa.add_job(1, j1, mgid=5, priority=low)
    esa.add_job(2, j2, mgid=6, priority=high, ps=ps2)
    return j1, j2, ps2


def test_a_higher_priority_packet_takes_the_aggregator_and_carries_the_partial_to_its_ps(esa):
    j1, j2, ps2 = two_jobs(esa, low=10, high=20)
    n = esa.num_elems
    v = [ramp(n, 3, r) for r in range(3)]
    u = [ramp(n, -5, 100 * r) for r in range(3)]
    for r in (0, 1):
        assert esa.send(j1[r], esa.data(j1[r], 1, seq=5, agtr=4, values=v[r], fan_in0=3)) == []
    assert esa.owner(4) == (1, 5) and esa.reg("priority", 4) == 10
    out = esa.send(j2[0], esa.data(j2[0], 2, seq=8, agtr=4, values=u[0], fan_in0=3, ps=ps2))
    # the eviction: job 1's partial aggregate to job 1's PS, in job 2's packet
    assert [port for port, _ in out] == [esa.PS.port]
    pkt, a = esa.parse(out[0][1])
    assert (pkt.dst, pkt["IP"].dst) == (esa.PS.mac, esa.PS.ip)
    assert pkt["IP"].chksum == pkt["IP"].__class__(bytes(pkt["IP"])).chksum  # rewritten, still valid
    assert (a.job_id, a.seq, a.agtr, a.bitmap0, a.bitmap1, a.flags) == (1, 5, 4, 0b011, 1, esa.COLLISION)
    assert a.values == esa.sat_sums(v[0], v[1])
    # job 2's contribution starts its aggregate there
    assert esa.owner(4) == (2, 8) and esa.values(4) == u[0] and esa.reg("priority", 4) == 20
    assert (esa.reg("bitmap", 4), esa.reg("count", 4), esa.reg("flags", 4)) == (0b001, 1, 0)
    assert esa.counts(1)["atp_evicted"] == 1 and esa.counts(2)["atp_aggregated"] == 1
    # job 1's last worker cannot take it back: its packet reaches its PS on its own
    out = esa.send(j1[2], esa.data(j1[2], 1, seq=5, agtr=4, values=v[2], fan_in0=3))
    _, a = esa.parse(out[0][1])
    assert [p for p, _ in out] == [esa.PS.port] and (a.bitmap0, a.flags, a.values) == (0b100, esa.COLLISION, v[2])
    # job 2 completes: to its own PS, and the aggregator is free at once
    esa.send(j2[1], esa.data(j2[1], 2, seq=8, agtr=4, values=u[1], fan_in0=3, ps=ps2))
    out = esa.send(j2[2], esa.data(j2[2], 2, seq=8, agtr=4, values=u[2], fan_in0=3, ps=ps2))
    pkt, a = esa.parse(out[0][1])
    assert [p for p, _ in out] == [ps2.port] and pkt.dst == ps2.mac and a.values == esa.sat_sums(*u)
    assert (a.job_id, a.seq, a.bitmap0) == (2, 8, 0b111)
    assert esa.owner(4) == (0, 0) and esa.reg("priority", 4) == 0 and esa.reg("count", 4) == 0
    for job in (1, 2):
        esa.assert_ingress_invariant(job)


@pytest.mark.parametrize("high", [10, 5])
def test_an_owner_of_equal_or_higher_priority_keeps_its_aggregator(esa, high):
    j1, j2, ps2 = two_jobs(esa, low=10, high=high)
    n = esa.num_elems
    esa.send(j1[0], esa.data(j1[0], 1, seq=5, agtr=4, values=[1] * n, fan_in0=3))
    out = esa.send(j2[0], esa.data(j2[0], 2, seq=8, agtr=4, values=[7] * n, fan_in0=3, ps=ps2))
    pkt, a = esa.parse(out[0][1])
    assert [p for p, _ in out] == [ps2.port] and (a.job_id, a.flags, a.values) == (2, esa.COLLISION, [7] * n)
    assert esa.owner(4) == (1, 5) and esa.values(4) == [1] * n and esa.counts(1)["atp_evicted"] == 0


def test_a_packet_that_completes_alone_or_a_resend_never_evicts(esa):
    j1, j2, ps2 = two_jobs(esa, low=1, high=200)
    n = esa.num_elems
    esa.send(j1[0], esa.data(j1[0], 1, seq=5, agtr=4, values=[1] * n, fan_in0=3))
    single = esa.send(j2[0], esa.data(j2[0], 2, seq=8, agtr=4, values=[2] * n, fan_in0=1, ps=ps2))
    resend = esa.send(j2[1], esa.data(j2[1], 2, seq=9, agtr=4, values=[3] * n, fan_in0=3, ps=ps2,
                                      flags=esa.RESEND))
    assert [p for p, _ in single + resend] == [ps2.port, ps2.port]
    assert esa.owner(4) == (1, 5) and esa.counts(1)["atp_evicted"] == 0


def test_without_the_victims_server_the_packet_collides_as_in_atp(esa):
    j1, j2, ps2 = two_jobs(esa, low=1, high=200)
    esa.sw.tables["AtpIngress.esa_servers"].delete((1,))
    n = esa.num_elems
    esa.send(j1[0], esa.data(j1[0], 1, seq=5, agtr=4, values=[1] * n, fan_in0=3))
    out = esa.send(j2[0], esa.data(j2[0], 2, seq=8, agtr=4, values=[2] * n, fan_in0=3, ps=ps2))
    _, a = esa.parse(out[0][1])
    assert [p for p, _ in out] == [ps2.port] and (a.job_id, a.flags) == (2, esa.COLLISION)
    assert esa.owner(4) == (1, 5)


def test_a_complete_aggregate_is_freed_at_once_and_the_ack_still_reaches_every_worker(esa):
    ws = [esa.host(r) for r in range(2)]
    esa.add_job(1, ws, mgid=5, priority=3)
    n = esa.num_elems
    esa.send(ws[0], esa.data(ws[0], 1, seq=9, agtr=2, values=[1] * n, fan_in0=2))
    out = esa.send(ws[1], esa.data(ws[1], 1, seq=9, agtr=2, values=[1] * n, fan_in0=2))
    assert [p for p, _ in out] == [esa.PS.port] and esa.owner(2) == (0, 0)
    out = esa.send(esa.PS.port, esa.ack(1, seq=9, agtr=2, values=[2] * n, bitmap0=0b11))
    assert [p for p, _ in out] == [w.port for w in ws]
    c = esa.counts(1)
    assert c["atp_completed"] == 1 and c["atp_acks"] == 1 and c["atp_freed"] == 0 and c["atp_acks_sent"] == 2
    esa.assert_ingress_invariant(1)


def test_a_victims_late_contribution_finds_its_ps_even_once_the_aggregator_is_free(esa):
    """Its partial is at the PS: aggregated here, in a free aggregator, it would wait for contributions that are
    already there. The PS's ACK for it clears the aggregator's memory of it."""
    j1, j2, ps2 = two_jobs(esa, low=1, high=2)
    n = esa.num_elems
    esa.send(j1[0], esa.data(j1[0], 1, seq=5, agtr=4, values=[1] * n, fan_in0=3))
    for r in (0, 1):
        esa.send(j2[r], esa.data(j2[r], 2, seq=8, agtr=4, values=[2] * n, fan_in0=2, ps=ps2))
    assert esa.owner(4) == (0, 0) and esa.reg("evicted_owner", 4) == (1 << 32) | 5
    for r in (1, 2):
        out = esa.send(j1[r], esa.data(j1[r], 1, seq=5, agtr=4, values=[1] * n, fan_in0=3))
        _, a = esa.parse(out[0][1])
        assert [p for p, _ in out] == [esa.PS.port] and (a.bitmap0, a.flags) == (1 << r, esa.COLLISION)
    assert esa.owner(4) == (0, 0) and esa.counts(1)["atp_collisions"] == 2
    esa.send(esa.PS.port, esa.ack(1, seq=5, agtr=4, values=[3] * n, bitmap0=0b111))
    assert esa.reg("evicted_owner", 4) == 0
    esa.assert_ingress_invariant(1)
