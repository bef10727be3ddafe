"""atp.p4 packet by packet: allocation, aggregation to the PS, collisions, duplicates, resend flush, ACK free and
multicast, ECN, overflow, two-level merge, isolation between jobs, malformed and unknown senders."""

from __future__ import annotations


def ramp(n: int, scale: int, offset: int = 0) -> list[int]:
    return [scale * (i - n // 2) + offset for i in range(n)]


def test_first_packet_allocates_and_last_goes_to_the_ps(atp):
    ws = [atp.host(r) for r in range(3)]
    atp.add_job(1, ws, mgid=5)
    n = atp.num_elems
    vecs = [ramp(n, 7, r) for r in range(3)]
    assert atp.send(ws[0], atp.data(ws[0], 1, seq=1, agtr=4, values=vecs[0], fan_in0=3)) == []
    assert atp.owner(4) == (1, 1)
    assert atp.reg("bitmap", 4) == 0b001 and atp.reg("count", 4) == 1
    assert atp.values(4) == vecs[0]
    assert atp.send(ws[1], atp.data(ws[1], 1, seq=1, agtr=4, values=vecs[1], fan_in0=3)) == []
    out = atp.send(ws[2], atp.data(ws[2], 1, seq=1, agtr=4, values=vecs[2], fan_in0=3))
    assert [port for port, _ in out] == [atp.PS.port]
    pkt, a = atp.parse(out[0][1])
    assert a.values == atp.sat_sums(*vecs)
    assert (a.bitmap0, a.bitmap1, a.seq, a.agtr, a.job_id, a.flags) == (0b111, 1, 1, 4, 1, 0)
    assert pkt.dst == atp.PS.mac and pkt["IP"].dst == atp.PS.ip and pkt["UDP"].chksum == 0
    # the aggregator stays owned (complete) until the PS's ACK
    assert atp.owner(4) == (1, 1) and atp.reg("count", 4) == 3
    c = atp.counts(1)
    assert c["atp_received"] == 3 and c["atp_aggregated"] == 3 and c["atp_completed"] == 1
    atp.assert_ingress_invariant(1)


def test_ack_frees_the_aggregator_and_is_multicast_to_every_worker(atp):
    ws = [atp.host(r) for r in range(2)]
    atp.add_job(1, ws, mgid=5)
    n = atp.num_elems
    for w in ws:
        atp.send(w, atp.data(w, 1, seq=9, agtr=2, values=[1] * n, fan_in0=2))
    assert atp.owner(2) == (1, 9)
    result = [2] * n
    out = atp.send(atp.PS.port, atp.ack(1, seq=9, agtr=2, values=result, bitmap0=0b11, agtr_next=17))
    assert [p for p, _ in out] == [w.port for w in ws]
    for (port, frame), w in zip(out, ws):
        pkt, a = atp.parse(frame)
        assert (pkt.src, pkt.dst, pkt["IP"].src, pkt["IP"].dst) == ("00:00:0a:00:00:fe", w.mac, "10.0.0.254", w.ip)
        assert (pkt["UDP"].sport, pkt["UDP"].dport, pkt["UDP"].chksum, pkt["IP"].ttl) == (48865, w.udp_port, 0, 64)
        assert pkt["IP"].chksum == pkt["IP"].__class__(bytes(pkt["IP"])).chksum  # valid header checksum
        assert a.flags & atp.ACK and a.values == result and a.agtr_next == 17 and a.seq == 9
    assert atp.owner(2) == (0, 0) and atp.reg("bitmap", 2) == 0 and atp.reg("count", 2) == 0
    c = atp.counts(1)
    assert c["atp_acks"] == 1 and c["atp_freed"] == 1 and c["atp_acks_sent"] == 2
    # a second ACK (the PS answering a late retransmission) is multicast again but frees nothing
    atp.send(ws[0], atp.data(ws[0], 1, seq=11, agtr=2, values=[3] * n, fan_in0=2))
    out = atp.send(atp.PS.port, atp.ack(1, seq=9, agtr=2, values=result, bitmap0=0b11))
    assert len(out) == 2 and atp.owner(2) == (1, 11) and atp.counts(1)["atp_freed"] == 1


def test_ack_from_a_port_that_is_not_the_ps_is_dropped(atp):
    ws = [atp.host(r) for r in range(2)]
    atp.add_job(1, ws, mgid=5)
    atp.send(ws[0], atp.data(ws[0], 1, seq=1, agtr=0, values=[1] * atp.num_elems, fan_in0=2))
    assert atp.send(ws[1], atp.ack(1, seq=1, agtr=0, values=[0] * atp.num_elems, bitmap0=3)) == []
    assert atp.owner(0) == (1, 1)
    assert atp.counts(1)["atp_drop_unknown"] == 1


def test_a_retransmitted_contribution_is_never_counted_twice(atp):
    ws = [atp.host(r) for r in range(3)]
    atp.add_job(1, ws, mgid=5)
    n = atp.num_elems
    a, b, c = ramp(n, 3), ramp(n, -5, 2), ramp(n, 11, -1)
    atp.send(ws[0], atp.data(ws[0], 1, seq=1, agtr=7, values=a, fan_in0=3))
    assert atp.send(ws[0], atp.data(ws[0], 1, seq=1, agtr=7, values=a, fan_in0=3)) == []
    assert atp.values(7) == a and atp.reg("count", 7) == 1
    atp.send(ws[1], atp.data(ws[1], 1, seq=1, agtr=7, values=b, fan_in0=3))
    out = atp.send(ws[2], atp.data(ws[2], 1, seq=1, agtr=7, values=c, fan_in0=3))
    assert atp.parse(out[0][1])[1].values == atp.sat_sums(a, b, c)
    # a duplicate after completion (lost ACK) carries the stored aggregate to the PS again, unchanged
    out = atp.send(ws[1], atp.data(ws[1], 1, seq=1, agtr=7, values=b, fan_in0=3))
    again = atp.parse(out[0][1])[1]
    assert again.values == atp.sat_sums(a, b, c) and again.bitmap0 == 0b111
    assert atp.values(7) == atp.sat_sums(a, b, c)
    cnt = atp.counts(1)
    assert cnt["atp_aggregated"] == 3 and cnt["atp_duplicates"] == 2 and cnt["atp_completed"] == 2
    atp.assert_ingress_invariant(1)


def test_resend_flushes_the_partial_aggregate_and_frees_it(atp):
    ws = [atp.host(r) for r in range(3)]
    atp.add_job(1, ws, mgid=5)
    n = atp.num_elems
    a, b = ramp(n, 2), ramp(n, 9, 4)
    atp.send(ws[0], atp.data(ws[0], 1, seq=3, agtr=1, values=a, fan_in0=3))
    out = atp.send(ws[1], atp.data(ws[1], 1, seq=3, agtr=1, values=b, fan_in0=3, flags=atp.RESEND))
    assert [p for p, _ in out] == [atp.PS.port]
    flushed = atp.parse(out[0][1])[1]
    assert flushed.values == atp.sat_sums(a, b) and flushed.bitmap0 == 0b011 and flushed.flags & atp.RESEND
    assert atp.owner(1) == (0, 0) and atp.reg("bitmap", 1) == 0 and atp.reg("count", 1) == 0
    # a resend whose own contribution was in carries only the stored aggregate
    atp.send(ws[0], atp.data(ws[0], 1, seq=4, agtr=1, values=a, fan_in0=3))
    out = atp.send(ws[0], atp.data(ws[0], 1, seq=4, agtr=1, values=a, fan_in0=3, flags=atp.RESEND))
    assert atp.parse(out[0][1])[1].values == a and atp.parse(out[0][1])[1].bitmap0 == 0b001
    # a resend to an aggregator nobody of (job, seq) owns goes to the PS raw, allocating nothing
    out = atp.send(ws[2], atp.data(ws[2], 1, seq=3, agtr=1, values=b, fan_in0=3, flags=atp.RESEND))
    raw = atp.parse(out[0][1])[1]
    assert raw.values == b and raw.bitmap0 == 0b100 and not raw.flags & atp.COLLISION
    assert atp.owner(1) == (0, 0)
    c = atp.counts(1)
    assert c["atp_flushed"] == 2 and c["atp_resend_to_ps"] == 1
    atp.assert_ingress_invariant(1)


def test_collision_goes_to_the_ps_raw_and_leaves_the_owner_untouched(atp):
    job1 = [atp.host(r) for r in range(2)]
    job2 = [atp.host(r, port=r + 5) for r in range(2)]
    atp.add_job(1, job1, mgid=5)
    atp.add_job(2, job2, mgid=6)
    n = atp.num_elems
    a = ramp(n, 5)
    atp.send(job1[0], atp.data(job1[0], 1, seq=1, agtr=3, values=a, fan_in0=2))
    other = ramp(n, -77, 1)
    out = atp.send(job2[0], atp.data(job2[0], 2, seq=1, agtr=3, values=other, fan_in0=2))
    assert [p for p, _ in out] == [atp.PS.port]
    coll = atp.parse(out[0][1])[1]
    assert coll.flags & atp.COLLISION and coll.values == other and coll.bitmap0 == 0b01 and coll.job_id == 2
    # job 1's aggregator is exactly as job 1 left it, and still completes with job 1's data only
    assert atp.owner(3) == (1, 1) and atp.values(3) == a and atp.reg("bitmap", 3) == 1
    # the same job's next sequence number collides too (a different owner id)
    out = atp.send(job1[1], atp.data(job1[1], 1, seq=2, agtr=3, values=a, fan_in0=2))
    assert atp.parse(out[0][1])[1].flags & atp.COLLISION
    out = atp.send(job1[1], atp.data(job1[1], 1, seq=1, agtr=3, values=a, fan_in0=2))
    assert atp.parse(out[0][1])[1].values == atp.sat_sums(a, a)
    assert atp.counts(2)["atp_collisions"] == 1 and atp.counts(1)["atp_collisions"] == 1
    # an ACK of job 2 for that aggregator does not free job 1's ownership
    atp.send(atp.PS.port, atp.ack(2, seq=1, agtr=3, values=[0] * n, bitmap0=3))
    assert atp.owner(3) == (1, 1)


def test_a_spoofed_sender_cannot_touch_a_job(atp):
    ws = [atp.host(r) for r in range(2)]
    atp.add_job(1, ws, mgid=5)
    intruder = atp.host(3, port=4)
    n = atp.num_elems
    atp.send(ws[0], atp.data(ws[0], 1, seq=1, agtr=0, values=[1] * n, fan_in0=2))
    # claims rank 1 in its bitmap, from an unregistered port/address
    assert atp.send(intruder, atp.data(intruder, 1, seq=1, agtr=0, values=[99] * n, fan_in0=2, bitmap0=2)) == []
    # a registered worker of the job on the wrong port is unknown too
    moved = type(ws[1])(ws[1].rank, 4, ws[1].mac, ws[1].ip, ws[1].udp_port)
    assert atp.send(moved, atp.data(moved, 1, seq=1, agtr=0, values=[99] * n, fan_in0=2)) == []
    assert atp.values(0) == [1] * n and atp.reg("bitmap", 0) == 1
    # a worker's claimed bitmap is ignored: the switch uses its rank bit
    out = atp.send(ws[1], atp.data(ws[1], 1, seq=1, agtr=0, values=[2] * n, fan_in0=2, bitmap0=0xFFFFFFFF))
    assert atp.parse(out[0][1])[1].bitmap0 == 0b11
    assert atp.counts(1)["atp_drop_unknown"] == 2
    atp.assert_ingress_invariant(1)


def test_saturating_adds_flag_overflow(atp):
    ws = [atp.host(r) for r in range(2)]
    atp.add_job(1, ws, mgid=5)
    n = atp.num_elems
    a = [atp.INT32_MAX - 5] + [-(2**31) + 3] + [1] * (n - 2)
    b = [10] + [-10] + [2] * (n - 2)
    atp.send(ws[0], atp.data(ws[0], 1, seq=1, agtr=0, values=a, fan_in0=2))
    out = atp.send(ws[1], atp.data(ws[1], 1, seq=1, agtr=0, values=b, fan_in0=2))
    agg = atp.parse(out[0][1])[1]
    assert agg.values[:3] == [atp.INT32_MAX, atp.INT32_MIN, 3]
    assert agg.flags & atp.OVERFLOW
    # no overflow, no flag
    atp.send(ws[0], atp.data(ws[0], 1, seq=2, agtr=1, values=[5] * n, fan_in0=2))
    out = atp.send(ws[1], atp.data(ws[1], 1, seq=2, agtr=1, values=[-7] * n, fan_in0=2))
    assert not atp.parse(out[0][1])[1].flags & atp.OVERFLOW


def test_raw_packets_pass_unaggregated(atp):
    ws = [atp.host(r) for r in range(2)]
    atp.add_job(1, ws, mgid=5)
    n = atp.num_elems
    out = atp.send(ws[0], atp.data(ws[0], 1, seq=1, agtr=0, values=[7] * n, fan_in0=2, flags=atp.RAW | atp.FLOAT))
    assert atp.parse(out[0][1])[1].values == [7] * n
    assert atp.owner(0) == (0, 0) and atp.counts(1)["atp_raw_to_ps"] == 1


def test_ecn_marks_packets_at_or_above_the_threshold(atp):
    ws = [atp.host(r) for r in range(1)]
    atp.add_job(1, ws, mgid=5)
    n = atp.num_elems
    out = atp.send(ws[0], atp.data(ws[0], 1, seq=1, agtr=0, values=[1] * n, fan_in0=1))
    assert not atp.parse(out[0][1])[1].flags & atp.ECN  # default threshold: off
    atp.set_ecn_threshold(0)  # every queue depth is >= 0: every ATP packet is marked
    out = atp.send(ws[0], atp.data(ws[0], 1, seq=2, agtr=1, values=[1] * n, fan_in0=1))
    assert atp.parse(out[0][1])[1].flags & atp.ECN
    out = atp.send(atp.PS.port, atp.ack(1, seq=2, agtr=1, values=[1] * n, bitmap0=1))
    assert atp.parse(out[0][1])[1].flags & atp.ECN
    assert atp.counts(1)["atp_ecn_marked"] == 2


def test_ecn_is_sticky_in_the_aggregator(atp):
    ws = [atp.host(r) for r in range(2)]
    atp.add_job(1, ws, mgid=5)
    n = atp.num_elems
    atp.send(ws[0], atp.data(ws[0], 1, seq=1, agtr=0, values=[1] * n, fan_in0=2, flags=atp.ECN))
    out = atp.send(ws[1], atp.data(ws[1], 1, seq=1, agtr=0, values=[1] * n, fan_in0=2))
    assert atp.parse(out[0][1])[1].flags & atp.ECN


def test_two_level_merge(atp_factory):
    """Two racks of two workers: each first-level switch sends its rack's aggregate up with its rack bit; the
    second-level switch merges racks and sends the total to the PS; the ACK comes down through both."""
    edges = [atp_factory(16, 64, ps_port=10) for _ in range(2)]
    core = atp_factory(16, 64)
    racks = [[edges[0].host(0), edges[0].host(1)], [edges[1].host(2, port=1), edges[1].host(3, port=2)]]
    n = 16
    for k, (sw, ws) in enumerate(zip(edges, racks)):
        sw.add_job(4, ws, mgid=40, level=0, rack=k, ack_port=sw.UPLINK)
    core.add_job(4, [], mgid=41, level=1, replicas=[(1, 256), (2, 257)])
    vecs = [ramp(n, r + 1, r) for r in range(4)]
    to_core = []
    for k, (sw, ws) in enumerate(zip(edges, racks)):
        outs = [sw.send(w, sw.data(w, 4, seq=1, agtr=5, values=vecs[w.rank], fan_in0=2, fan_in1=2)) for w in ws]
        assert outs[0] == [] and [p for p, _ in outs[1]] == [sw.UPLINK]
        _, a = sw.parse(outs[1][0][1])
        assert a.bitmap1 == 1 << k and a.bitmap0 == sum(1 << w.rank for w in ws)
        to_core.append(outs[1][0][1])
    assert core.send(1, to_core[0]) == []
    assert core.reg("racks", 5) == 0b01 and core.reg("bitmap", 5) == 0b0011
    # the same rack aggregate again (a first-level duplicate) is not merged twice
    assert core.send(1, to_core[0]) == []
    out = core.send(2, to_core[1])
    assert [p for p, _ in out] == [core.PS.port]
    _, total = core.parse(out[0][1])
    assert total.values == core.sat_sums(*vecs) and total.bitmap0 == 0b1111 and total.bitmap1 == 0b11
    c = core.counts(4)
    assert c["atp_aggregated"] == 2 and c["atp_duplicates"] == 1 and c["atp_completed"] == 1
    # ACK: the core frees its aggregator and replicates it to both racks unchanged; each edge frees and delivers
    down = core.send(core.PS.port, core.ack(4, seq=1, agtr=5, values=total.values, bitmap0=0b1111))
    assert [p for p, _ in down] == [1, 2] and core.owner(5) == (0, 0)
    for (port, frame), sw, ws in zip(down, edges, racks):
        assert sw.owner(5) == (4, 1)
        got = sw.send(sw.UPLINK, frame)
        assert [p for p, _ in got] == [w.port for w in ws] and sw.owner(5) == (0, 0)
        assert all(sw.parse(f)[1].values == total.values for _, f in got)


def test_collision_from_a_rack_passes_the_second_level_unaggregated(atp_factory):
    """A worker's packet that collided in its rack carries one rank: the second level sends it on to the PS as it
    is (counted as a collision), and the rack aggregate that follows is still merged."""
    edge, core = atp_factory(16, 64, ps_port=10), atp_factory(16, 64)
    ws = [edge.host(0), edge.host(1)]
    edge.add_job(4, ws, mgid=40, level=0, rack=0, ack_port=edge.UPLINK)
    core.add_job(4, [], mgid=41, level=1, replicas=[(1, 256), (2, 257)])
    n = 16
    # aggregator 5 of the edge is busy with job 4's sequence 1: sequence 2 collides there
    edge.send(ws[0], edge.data(ws[0], 4, seq=1, agtr=5, values=[1] * n, fan_in0=2, fan_in1=2))
    (port, collided), = edge.send(ws[1], edge.data(ws[1], 4, seq=2, agtr=5, values=[7] * n, fan_in0=2, fan_in1=2))
    assert port == edge.UPLINK and edge.parse(collided)[1].flags & 0x08
    out = core.send(1, collided)
    assert [p for p, _ in out] == [core.PS.port]
    _, a = core.parse(out[0][1])
    assert a.values == [7] * n and a.bitmap0 == 0b10 and a.flags & 0x08
    assert core.owner(5) == (0, 0) and core.counts(4)["atp_collisions"] == 1
    # rack 0's sequence 1 completes in the edge and is merged by the core as before
    (_, agg), = edge.send(ws[1], edge.data(ws[1], 4, seq=1, agtr=5, values=[2] * n, fan_in0=2, fan_in1=2))
    assert core.send(1, agg) == [] and core.reg("racks", 5) == 0b01 and core.owner(5) == (4, 1)
    core.assert_ingress_invariant(4)


def test_transit_and_malformed(atp):
    ws = [atp.host(r) for r in range(2)]
    n = atp.num_elems
    # no atp_jobs entry: forwarded unchanged to the destination MAC
    frame = atp.data(ws[0], 9, seq=1, agtr=0, values=[1] * n, fan_in0=2)
    out = atp.send(ws[0], frame)
    assert [p for p, _ in out] == [atp.PS.port] and atp.parse(out[0][1])[1].values == [1] * n
    assert atp.counts(9)["atp_transit"] == 1
    atp.add_job(1, ws, mgid=5)
    # wrong UDP length, truncated, aggregator index outside the pool
    good = atp.atp_bytes(1, 1, 0, [1] * n, fan_in0=2)
    assert atp.send(ws[0], atp.frame(ws[0], atp.PS.mac, atp.PS.ip, good[:-4])) == []
    assert atp.send(ws[0], atp.frame(ws[0], atp.PS.mac, atp.PS.ip, good[:10])) == []
    assert atp.send(ws[0], atp.data(ws[0], 1, seq=1, agtr=64, values=[1] * n, fan_in0=2)) == []
    assert atp.counts(1)["atp_drop_malformed"] == 2 and atp.counts(atp.NO_JOB)["atp_drop_malformed"] == 1
    assert atp.reg("bitmap", 0) == 0
    atp.assert_ingress_invariant(1)
