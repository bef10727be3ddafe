"""switchml.p4: job isolation, unknown senders, malformed and truncated INA packets, results without a destination."""

from __future__ import annotations

import dataclasses

import pytest


def fill(ina, value: int) -> list[int]:
    return [value + i for i in range(ina.num_elems)]


def assert_untouched(ina, slot: int, set_: int) -> None:
    assert (ina.bitmap(slot, set_), ina.countdown(slot, set_), ina.exponent(slot, set_)) == (0, 0, 0)
    assert ina.values(slot, set_) == [0] * ina.num_elems


def test_two_jobs_groups_isolated(ina):
    j1 = [ina.worker(0, port=1), ina.worker(1, port=2)]
    j2 = [ina.worker(0, port=3), ina.worker(1, port=4), ina.worker(2, port=5)]
    ina.add_job(1, j1, mgid=11, pool_base=0, pool_size=4)
    ina.add_job(2, j2, mgid=12, pool_base=4, pool_size=4)

    # both jobs use their own first slot, rank 0 of each contributes first
    ina.send(j1[0], ina.data(j1[0], 1, 0, 0, fill(ina, 100)))
    ina.send(j2[0], ina.data(j2[0], 2, 4, 0, fill(ina, 1000)))
    assert ina.bitmap(0, 0) == 0b1 and ina.bitmap(4, 0) == 0b1

    last1 = ina.data(j1[1], 1, 0, 0, fill(ina, 200))
    out1 = ina.send(j1[1], last1)
    assert out1 == [(w.port, ina.expected_result(last1, w, ina.sums(fill(ina, 100), fill(ina, 200)), 128))
                    for w in j1]
    assert (ina.bitmap(4, 0), ina.countdown(4, 0)) == (0b1, 2)   # job 2 state untouched

    ina.send(j2[1], ina.data(j2[1], 2, 4, 0, fill(ina, 2000)))
    last2 = ina.data(j2[2], 2, 4, 0, fill(ina, 3000))
    out2 = ina.send(j2[2], last2)
    total2 = ina.sums(fill(ina, 1000), fill(ina, 2000), fill(ina, 3000))
    assert out2 == [(w.port, ina.expected_result(last2, w, total2, 128)) for w in j2]

    c1, c2 = ina.counts(1), ina.counts(2)
    assert (c1["ina_aggregated"], c1["ina_multicast"], c1["ina_results_sent"]) == (2, 1, 2)
    assert (c2["ina_aggregated"], c2["ina_multicast"], c2["ina_results_sent"]) == (3, 1, 3)


def test_slot_outside_the_jobs_pool_range_is_dropped(ina):
    j1 = [ina.worker(0, port=1), ina.worker(1, port=2)]
    j2 = [ina.worker(0, port=3), ina.worker(1, port=4)]
    ina.add_job(1, j1, mgid=11, pool_base=0, pool_size=4)
    ina.add_job(2, j2, mgid=12, pool_base=4, pool_size=4)
    # job 1 writing into job 2's range, and past the end of the switch's pool
    assert ina.send(j1[0], ina.data(j1[0], 1, 4, 0, fill(ina, 1))) == []
    assert ina.send(j1[0], ina.data(j1[0], 1, 7, 1, fill(ina, 1))) == []
    assert ina.send(j2[0], ina.data(j2[0], 2, 3, 0, fill(ina, 1))) == []
    assert ina.send(j2[0], ina.data(j2[0], 2, ina.pool_size, 0, fill(ina, 1))) == []
    assert ina.send(j2[0], ina.data(j2[0], 2, 0x7FFF, 1, fill(ina, 1))) == []
    for slot in range(ina.pool_size):
        assert_untouched(ina, slot, 0)
        assert_untouched(ina, slot, 1)
    assert ina.counts(1)["ina_drop_malformed"] == 2
    assert ina.counts(2)["ina_drop_malformed"] == 3
    ina.assert_ingress_invariant(1)
    ina.assert_ingress_invariant(2)


@pytest.mark.parametrize("what", ["ingress port", "source IP", "UDP source port", "job id", "unknown job",
                                  "rank 32", "rank 257"])
def test_unknown_sender_dropped_and_counted(ina, what):
    w0, w1 = ina.worker(0), ina.worker(1)
    ina.add_job(1, [w0, w1], mgid=10)
    job, port = 1, w0.port
    sender = w0
    if what == "ingress port":
        port = 9
    elif what == "source IP":
        sender = dataclasses.replace(w0, ip="10.0.0.99")
    elif what == "UDP source port":
        sender = dataclasses.replace(w0, udp_port=w0.udp_port + 1)
    elif what == "job id":
        job = 2
        ina.add_job(2, [ina.worker(0, port=5), ina.worker(1, port=6)], mgid=20)
    elif what == "unknown job":
        job = 3
        ina.add_worker(3, w0)        # a worker entry for a job that has no ina_jobs entry
    elif what.startswith("rank "):      # no bit in the 32-bit bitmap (257 would alias bit 1 if truncated)
        sender = ina.worker(int(what[5:]), port=3, host=3)
        port = sender.port
        ina.add_worker(1, sender)
    assert ina.send(port, ina.data(sender, job, 0, 0, fill(ina, 5))) == []
    assert_untouched(ina, 0, 0)
    assert ina.counts(job)["ina_drop_unknown"] == 1
    assert ina.counts(job)["ina_received"] == 1
    assert ina.counts(job)["ina_aggregated"] == 0
    ina.assert_ingress_invariant(job)


def _malformed(ina, w, kind: str) -> tuple[bytes, int]:
    """A malformed INA frame from worker `w` (job 1, slot 0) and the counter index it is charged to."""
    good = ina.data(w, 1, 0, 0, fill(ina, 1))
    header_end = 14 + 20 + 8 + 12
    if kind == "truncated INA header":
        return good[:14 + 20 + 8 + 5], ina.NO_JOB
    if kind == "truncated payload":
        return good[:header_end + 4 * ina.num_elems - 1], 1
    if kind == "header only":
        return good[:header_end], 1
    if kind == "trailing bytes":
        return ina.data(w, 1, 0, 0, [], payload=good[header_end - 12:] + b"\x00" * 4), 1
    if kind == "RESULT message":
        return ina.data(w, 1, 0, 0, fill(ina, 1), msg_type=ina.MSG_RESULT), 1
    if kind == "unknown message type":
        return ina.data(w, 1, 0, 0, fill(ina, 1), msg_type=0), 1
    if kind == "slot beyond pool":
        return ina.data(w, 1, ina.pool_size, 0, fill(ina, 1)), 1
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["truncated INA header", "truncated payload", "header only", "trailing bytes",
                                  "RESULT message", "unknown message type", "slot beyond pool"])
def test_malformed_ina_packet_dropped_and_counted(ina, kind):
    w0, w1 = ina.worker(0), ina.worker(1)
    ina.add_job(1, [w0, w1], mgid=10)
    frame, index = _malformed(ina, w0, kind)
    assert ina.send(w0, frame) == []
    for slot in range(ina.pool_size):
        assert_untouched(ina, slot, 0)
    assert ina.count("ina_drop_malformed", index) == 1
    assert ina.count("ina_received", index) == 1
    assert ina.count("ina_aggregated", index) == 0
    ina.assert_ingress_invariant(index)

    # the switch is not disturbed: a normal reduction still works afterwards
    ina.send(w0, ina.data(w0, 1, 0, 0, fill(ina, 1)))
    last = ina.data(w1, 1, 0, 0, fill(ina, 2))
    assert ina.send(w1, last) == [(w.port, ina.expected_result(last, w, ina.sums(fill(ina, 1), fill(ina, 2)), 128))
                                  for w in (w0, w1)]


def test_result_without_destination_entry_is_dropped(ina):
    """A replica whose (job, rank) has no ina_destinations entry is not sent with the worker's own addresses."""
    w0, w1 = ina.worker(0), ina.worker(1)
    ina.add_job(1, [w0], mgid=10)
    ina.add_worker(1, w1, destination=False)
    ina.sw.tables["SwitchMLIngress.ina_jobs"].modify((1,), "SwitchMLIngress.ina_set_job", [2, 10, 0, ina.pool_size])
    ina.sw.pre.set_group(10, [(w0.port, 0), (w1.port, 1)])
    ina.send(w0, ina.data(w0, 1, 0, 0, fill(ina, 1)))
    last = ina.data(w1, 1, 0, 0, fill(ina, 2))
    out = ina.send(w1, last)
    assert out == [(w0.port, ina.expected_result(last, w0, ina.sums(fill(ina, 1), fill(ina, 2)), 128))]
    assert ina.count("ina_drop_no_destination", 1) == 1
    assert ina.count("ina_results_sent", 1) == 1
