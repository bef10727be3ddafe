"""switchml.p4: retransmissions (after reduction, from the previous set, to an incomplete set) and slot reuse.

Scenarios follow SwitchML's PTF tests (RetransmitAfterReduction, RetransmitFromPreviousSet, IgnoreRetransmissions).
"""

from __future__ import annotations


def vec(ina, seed: int) -> list[int]:
    return [ina.wrap32(seed * 1_000_003 * (i + 1) - i * 77) for i in range(ina.num_elems)]


def two_workers(ina, job: int = 1):
    w0, w1 = ina.worker(0), ina.worker(1)
    ina.add_job(job, [w0, w1], mgid=10)
    return w0, w1


def test_retransmit_after_reduction_gets_unicast_result(ina):
    w0, w1 = two_workers(ina)
    a, b = vec(ina, 1), vec(ina, 2)
    ina.send(w0, ina.data(w0, 1, 2, 0, a, exponent=131, packet_id=5))
    ina.send(w1, ina.data(w1, 1, 2, 0, b, exponent=129, packet_id=5))   # complete: result multicast (lost, say)

    retx = ina.data(w1, 1, 2, 0, b, exponent=129, packet_id=5, flags=1)
    out = ina.send(w1, retx)
    # only the sender gets it, out of its ingress port, with the stored sums and max exponent
    assert out == [(w1.port, ina.expected_result(retx, w1, ina.sums(a, b), 131))]
    # the retransmission does not add again
    assert ina.values(2, 0) == ina.sums(a, b)
    assert (ina.bitmap(2, 0), ina.countdown(2, 0), ina.exponent(2, 0)) == (0b11, 0, 131)

    retx0 = ina.data(w0, 1, 2, 0, a, exponent=131, packet_id=5, flags=1)
    assert ina.send(w0, retx0) == [(w0.port, ina.expected_result(retx0, w0, ina.sums(a, b), 131))]

    c = ina.counts(1)
    assert (c["ina_received"], c["ina_aggregated"], c["ina_multicast"], c["ina_retx_answered"]) == (4, 2, 1, 2)
    assert c["ina_results_sent"] == 4
    ina.assert_ingress_invariant(1)


def test_retransmit_from_previous_set(ina):
    w0, w1 = two_workers(ina)
    a0, b0, a1, b1 = (vec(ina, s) for s in (3, 4, 5, 6))
    ina.send(w0, ina.data(w0, 1, 6, 0, a0, packet_id=0))
    ina.send(w1, ina.data(w1, 1, 6, 0, b0, packet_id=0))                # set 0 complete
    # w0 got its result and moves on to set 1 of the same slot; w1's result was lost
    assert ina.send(w0, ina.data(w0, 1, 6, 1, a1, packet_id=8)) == []
    assert ina.bitmap(6, 0) == 0b10                                     # w0 lazily cleared in set 0
    assert ina.bitmap(6, 1) == 0b01

    retx = ina.data(w1, 1, 6, 0, b0, packet_id=0, flags=1)
    assert ina.send(w1, retx) == [(w1.port, ina.expected_result(retx, w1, ina.sums(a0, b0), 128))]
    assert ina.bitmap(6, 0) == 0b10 and ina.bitmap(6, 1) == 0b01      # w1 was never in set 1

    last = ina.data(w1, 1, 6, 1, b1, packet_id=8)
    out = ina.send(w1, last)
    assert out == [(w.port, ina.expected_result(last, w, ina.sums(a1, b1), 128)) for w in (w0, w1)]
    assert ina.bitmap(6, 0) == 0 and ina.bitmap(6, 1) == 0b11
    assert ina.values(6, 0) == ina.sums(a0, b0)                         # previous set kept for late retransmissions
    ina.assert_ingress_invariant(1)


def test_retransmission_to_incomplete_set_is_ignored(ina):
    ws = [ina.worker(r) for r in range(3)]
    ina.add_job(1, ws, mgid=10)
    vs = [vec(ina, 10 + r) for r in range(3)]
    first = ina.data(ws[0], 1, 1, 1, vs[0], exponent=140)
    ina.send(ws[0], first)
    for _ in range(3):
        assert ina.send(ws[0], ina.data(ws[0], 1, 1, 1, vs[0], exponent=140, flags=1)) == []
    ina.send(ws[1], ina.data(ws[1], 1, 1, 1, vs[1], exponent=130))
    assert ina.send(ws[1], ina.data(ws[1], 1, 1, 1, vs[1], exponent=130, flags=1)) == []
    # nothing counted twice
    assert (ina.bitmap(1, 1), ina.countdown(1, 1)) == (0b011, 1)
    assert ina.values(1, 1) == ina.sums(vs[0], vs[1])
    assert ina.exponent(1, 1) == 140

    last = ina.data(ws[2], 1, 1, 1, vs[2], exponent=128)
    out = ina.send(ws[2], last)
    assert out == [(w.port, ina.expected_result(last, w, ina.sums(*vs), 140)) for w in ws]
    c = ina.counts(1)
    assert c["ina_drop_retx_incomplete"] == 4
    assert c["ina_aggregated"] == 3
    assert c["ina_multicast"] == 1
    ina.assert_ingress_invariant(1)


def test_slot_reuse_with_lazy_reset(ina):
    """Rounds alternate sets of one slot; the first contribution of a round overwrites the old sums."""
    w0, w1 = two_workers(ina)
    results = []
    for rnd in range(5):
        set_ = rnd % 2
        a, b = vec(ina, 100 + rnd), vec(ina, 200 + rnd)
        if rnd >= 2:   # the set still holds the sums of two rounds ago until the first contribution lands
            assert ina.values(4, set_) == results[rnd - 2]
        assert ina.send(w1, ina.data(w1, 1, 4, set_, b, exponent=128 + rnd, packet_id=rnd)) == []
        assert ina.bitmap(4, set_) == 0b10
        assert ina.values(4, set_) == b
        assert ina.bitmap(4, 1 - set_) == (0b01 if rnd else 0)     # w1's bit cleared in the other set
        last = ina.data(w0, 1, 4, set_, a, exponent=128, packet_id=rnd)
        out = ina.send(w0, last)
        assert out == [(w.port, ina.expected_result(last, w, ina.sums(a, b), 128 + rnd)) for w in (w0, w1)]
        assert ina.bitmap(4, 1 - set_) == 0
        assert (ina.bitmap(4, set_), ina.countdown(4, set_)) == (0b11, 0)
        results.append(ina.sums(a, b))
    c = ina.counts(1)
    assert (c["ina_aggregated"], c["ina_multicast"], c["ina_results_sent"]) == (10, 5, 10)
    ina.assert_ingress_invariant(1)


def test_whole_pool_in_flight(ina):
    """A window over the whole pool: every slot of one set open at once, contributions in different orders."""
    w0, w1 = two_workers(ina)
    for set_ in (0, 1):
        a = {s: vec(ina, 1000 + 2 * s + set_) for s in range(ina.pool_size)}
        b = {s: vec(ina, 3000 + 2 * s + set_) for s in range(ina.pool_size)}
        for s in range(ina.pool_size):
            assert ina.send(w0, ina.data(w0, 1, s, set_, a[s], packet_id=s)) == []
        assert all(ina.bitmap(s, set_) == 0b01 and ina.countdown(s, set_) == 1 for s in range(ina.pool_size))
        for s in reversed(range(ina.pool_size)):
            last = ina.data(w1, 1, s, set_, b[s], packet_id=s)
            assert ina.send(w1, last) == [(w.port, ina.expected_result(last, w, ina.sums(a[s], b[s]), 128))
                                          for w in (w0, w1)]
        assert all(ina.bitmap(s, 1 - set_) == 0 for s in range(ina.pool_size))
    assert ina.counts(1)["ina_multicast"] == 2 * ina.pool_size


def test_job_reset_recipe(ina):
    """The reset documented in p4src/README.md (bitmap and countdown to 0 for the job's slots, both sets) is enough
    for a new run: stale partial sums and completed sets from the old run do not leak into new results."""
    w0, w1 = two_workers(ina)
    old = vec(ina, 50)
    ina.send(w0, ina.data(w0, 1, 2, 0, old))                            # run 1 dies with slot 2 set 0 incomplete
    ina.send(w0, ina.data(w0, 1, 3, 0, old))
    ina.send(w1, ina.data(w1, 1, 3, 0, old))                            # and slot 3 set 0 complete
    # without a reset, run 2's first packet to slot 3 set 0 would look like a retransmission and get run 1's result
    for name in ("SwitchMLIngress.ina_bitmap", "SwitchMLIngress.ina_countdown"):
        for cell in range(2 * ina.pool_size):
            ina.sw.registers[name].write(cell, 0)
    for slot in (2, 3):
        a, b = vec(ina, 60 + slot), vec(ina, 70 + slot)
        assert ina.send(w0, ina.data(w0, 1, slot, 0, a)) == []
        last = ina.data(w1, 1, slot, 0, b)
        assert ina.send(w1, last) == [(w.port, ina.expected_result(last, w, ina.sums(a, b), 128)) for w in (w0, w1)]
