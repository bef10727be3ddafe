"""switchml.p4: reduction of one set by 1, 2 and 3 workers, exponent max, int32 wraparound, the default build."""

from __future__ import annotations

import pytest

INT32_MAX = 2**31 - 1
INT32_MIN = -(2**31)


def ramp(n: int, scale: int, offset: int = 0) -> list[int]:
    return [scale * (i - n // 2) + offset for i in range(n)]


def test_two_worker_reduction(ina):
    w0, w1 = ina.worker(0), ina.worker(1)
    ina.add_job(1, [w0, w1], mgid=10)
    n = ina.num_elems
    a = ramp(n, 1000, 7)
    b = ramp(n, -3, 123456)
    # exercise wraparound in both directions
    a[0], b[0] = INT32_MAX, 1
    a[1], b[1] = INT32_MIN, -1
    a[2], b[2] = -5, 5

    first = ina.data(w0, 1, slot=3, set_=0, values=a, exponent=130, packet_id=77)
    assert ina.send(w0, first) == []
    assert ina.bitmap(3, 0) == 0b01
    assert ina.countdown(3, 0) == 1
    assert ina.values(3, 0) == a

    last = ina.data(w1, 1, slot=3, set_=0, values=b, exponent=130, packet_id=77)
    out = ina.send(w1, last)
    expected = ina.sums(a, b)
    assert expected[0] == INT32_MIN and expected[1] == INT32_MAX and expected[2] == 0
    assert out == [(w.port, ina.expected_result(last, w, expected, 130)) for w in (w0, w1)]

    assert ina.bitmap(3, 0) == 0b11
    assert ina.countdown(3, 0) == 0
    assert ina.values(3, 0) == expected
    assert ina.exponent(3, 0) == 130
    # the other set and other slots are untouched
    assert ina.bitmap(3, 1) == 0 and ina.bitmap(2, 0) == 0 and ina.bitmap(4, 0) == 0

    c = ina.counts(1)
    assert c["ina_received"] == 2
    assert c["ina_aggregated"] == 2
    assert c["ina_multicast"] == 1
    assert c["ina_results_sent"] == 2
    assert c["ina_retx_answered"] == 0
    assert sum(v for k, v in c.items() if "drop" in k) == 0
    ina.assert_ingress_invariant(1)


def test_three_worker_reduction(ina):
    ws = [ina.worker(r) for r in range(3)]
    ina.add_job(2, ws, mgid=20)
    n = ina.num_elems
    vecs = [ramp(n, 11, 1), ramp(n, -200, 9), [(-1) ** i * 65536 * i for i in range(n)]]

    pkts = [ina.data(w, 2, slot=0, set_=1, values=v, exponent=128) for w, v in zip(ws, vecs)]
    assert ina.send(ws[2], pkts[2]) == []
    assert (ina.bitmap(0, 1), ina.countdown(0, 1)) == (0b100, 2)
    assert ina.send(ws[0], pkts[0]) == []
    assert (ina.bitmap(0, 1), ina.countdown(0, 1)) == (0b101, 1)
    assert ina.values(0, 1) == ina.sums(vecs[2], vecs[0])

    out = ina.send(ws[1], pkts[1])
    total = ina.sums(*vecs)
    assert out == [(w.port, ina.expected_result(pkts[1], w, total, 128)) for w in ws]
    assert (ina.bitmap(0, 1), ina.countdown(0, 1)) == (0b111, 0)
    assert ina.counts(2)["ina_multicast"] == 1
    assert ina.counts(2)["ina_results_sent"] == 3
    ina.assert_ingress_invariant(2)


def test_result_bytes_on_the_wire(ina):
    """One RESULT checked field by field against the brief, independently of the expected-frame builder."""
    import struct

    w0, w1 = ina.worker(0), ina.worker(1, port=7, host=42)
    ina.add_job(9, [w0, w1], mgid=3)
    ina.send(w0, ina.data(w0, 9, 1, 0, [1] * ina.num_elems, exponent=129, packet_id=0xDEADBEEF, flags=0))
    out = dict(ina.send(w1, ina.data(w1, 9, 1, 0, [2] * ina.num_elems, exponent=131, packet_id=0xDEADBEEF,
                                     flags=1)))
    assert sorted(out) == [1, 7]
    frame = out[7]
    assert len(frame) == 14 + 20 + 8 + 12 + 4 * ina.num_elems
    assert frame[0:6] == bytes.fromhex("00000000002a")            # worker 42's MAC
    assert frame[6:12] == bytes.fromhex("00000a0000fe")           # switch MAC
    assert frame[12:14] == b"\x08\x00"
    ip = frame[14:34]
    assert ip[8] == 64                                             # TTL
    assert ip[12:16] == bytes([10, 0, 0, 254]) and ip[16:20] == bytes([10, 0, 0, 42])
    words = struct.unpack("!10H", ip)
    total = sum(words)
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    assert total == 0xFFFF                                         # IPv4 header checksum valid
    sport, dport, length, checksum = struct.unpack("!4H", frame[34:42])
    assert (sport, dport, length, checksum) == (48864, 40042, 8 + 12 + 4 * ina.num_elems, 0)
    msg, job, pool, pid, exp, flags, rank = struct.unpack("!BBHIBBH", frame[42:54])
    assert (msg, job, pool, pid, exp, flags, rank) == (2, 9, 1, 0xDEADBEEF, 131, 1, 1)
    assert struct.unpack(f"!{ina.num_elems}i", frame[54:]) == (3,) * ina.num_elems


def test_exponent_is_max_of_contributions(ina):
    ws = [ina.worker(r) for r in range(3)]
    ina.add_job(1, ws, mgid=10)
    zero = [0] * ina.num_elems
    ina.send(ws[0], ina.data(ws[0], 1, 5, 0, zero, exponent=135))
    assert ina.exponent(5, 0) == 135
    ina.send(ws[1], ina.data(ws[1], 1, 5, 0, zero, exponent=140))
    assert ina.exponent(5, 0) == 140
    last = ina.data(ws[2], 1, 5, 0, zero, exponent=120)
    out = ina.send(ws[2], last)
    assert ina.exponent(5, 0) == 140
    assert out == [(w.port, ina.expected_result(last, w, zero, 140)) for w in ws]

    # the first contribution to a fresh set overwrites the exponent (no max with stale state)
    ina.send(ws[0], ina.data(ws[0], 1, 5, 1, zero, exponent=1))
    assert ina.exponent(5, 1) == 1


def test_single_worker_job_completes_immediately(ina):
    w = ina.worker(0)
    ina.add_job(4, [w], mgid=5)
    v = ramp(ina.num_elems, 3)
    pkt = ina.data(w, 4, 0, 0, v, exponent=128)
    assert ina.send(w, pkt) == [(w.port, ina.expected_result(pkt, w, v, 128))]
    assert (ina.bitmap(0, 0), ina.countdown(0, 0)) == (1, 0)


def test_high_ranks_use_their_bit(ina):
    """Rank 31 maps to bit 31 of the bitmap and to replica id 31."""
    w5, w31 = ina.worker(5, port=1, host=1), ina.worker(31, port=2, host=2)
    ina.add_job(1, [w5, w31], mgid=10)
    one = [1] * ina.num_elems
    ina.send(w31, ina.data(w31, 1, 2, 0, one))
    assert ina.bitmap(2, 0) == 1 << 31
    last = ina.data(w5, 1, 2, 0, one)
    out = ina.send(w5, last)
    assert ina.bitmap(2, 0) == (1 << 31) | (1 << 5)
    assert out == [(w.port, ina.expected_result(last, w, [2] * ina.num_elems, 128)) for w in (w5, w31)]


@pytest.mark.parametrize(("num_elems", "pool_size"), [(64, 256), (128, 4), (32, 1)])
def test_other_builds(ina_factory, num_elems, pool_size):
    """The default build (N = 64, 256 slots) and the extremes: full-size packets, last slot of the pool."""
    ina = ina_factory(num_elems, pool_size)
    w0, w1 = ina.worker(0), ina.worker(1)
    ina.add_job(1, [w0, w1], mgid=10)
    last_slot = pool_size - 1
    a, b = ramp(num_elems, 1 << 20, 5), ramp(num_elems, -(1 << 19), -5)
    ina.send(w0, ina.data(w0, 1, last_slot, 1, a))
    last = ina.data(w1, 1, last_slot, 1, b)
    assert len(last) == 14 + 20 + 8 + 12 + 4 * num_elems
    out = ina.send(w1, last)
    assert out == [(w.port, ina.expected_result(last, w, ina.sums(a, b), 128)) for w in (w0, w1)]
    assert ina.values(last_slot, 1) == ina.sums(a, b)
    # one past the pool is refused
    assert ina.send(w0, ina.data(w0, 1, pool_size, 0, a)) == []
    assert ina.count("ina_drop_malformed", 1) == 1
