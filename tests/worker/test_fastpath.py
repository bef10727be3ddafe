"""The worker's batched hot path against the per-packet reference: the same bytes on the wire, the same results.

`Float32Plan.packets` / `results` (a batch quantized / dequantized in one numpy pass) against `quantize()` /
`dequantize()` per block and `Codec.encode` of an `InaHeader`; `Codec.decode_batch` against `Codec.decode`;
`Window.on_packets` (one receive at once) against `Window.on_result` (datagram by datagram).
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.worker.ina_fixtures import LAYOUT_JSON
from worker.codec import MalformedPacket, load_program
from worker.driver import WindowOptions
from worker.blocks import to_blocks
from worker.switchml.blocks import Float32Plan, Int32Plan
from worker.switchml.header import MSG_DATA, MSG_RESULT, Codec, InaHeader, astuple_header
from worker.switchml.quantize import EXPONENT_BIAS, INT32_MAX, block_exponents, dequantize, quantize
from worker.switchml.window import Window

CODEC = Codec.from_program_json(LAYOUT_JSON)
N = CODEC.num_elems

floats = st.floats(min_value=-2.0**100, max_value=2.0**100, allow_nan=False, width=32)


def tensor(draw: st.DrawFn, max_blocks: int = 12) -> np.ndarray:
    size = draw(st.integers(1, max_blocks * N))
    scale = draw(st.sampled_from([1e-30, 1e-3, 1.0, 1e6]))
    seed = draw(st.integers(0, 2**32 - 1))
    x = np.random.default_rng(seed).standard_normal(size) * scale
    if draw(st.booleans()):
        x[draw(st.integers(0, size - 1))] = draw(floats)
    return x.astype(np.float32)


@st.composite
def plan_case(draw: st.DrawFn) -> tuple[np.ndarray, int, int, list[int], np.ndarray]:
    x = tensor(draw)
    n = draw(st.integers(1, 32))
    window = draw(st.integers(1, 6))
    blocks = -(-x.size // N)
    if draw(st.booleans()):  # consecutive ascending ids, as a receive usually returns them (the plan's slice path)
        first = draw(st.integers(0, blocks + window - 1))
        ids = list(range(first, min(blocks + window, first + draw(st.integers(1, 10)))))
    else:
        ids = draw(st.lists(st.integers(0, blocks + window - 1), min_size=1, max_size=10, unique=True))
    bumps = np.array(draw(st.lists(st.integers(0, 3), min_size=blocks, max_size=blocks)), dtype=np.int64)
    return x, n, window, ids, bumps


@settings(max_examples=150, deadline=None)
@given(plan_case())
def test_batched_packets_are_the_per_packet_bytes(case: tuple[np.ndarray, int, int, list[int], np.ndarray]) -> None:
    x, n, window, ids, bumps = case
    plan = Float32Plan(x, N, n, window)
    ref_blocks = to_blocks(x, N, np.float32)
    local = block_exponents(ref_blocks)
    agreed = np.minimum(local + bumps, 127)
    for k, e in enumerate(agreed):
        plan._agree(k, int(e) + EXPONENT_BIAS)
    exps, rows = plan.packets(ids)
    assert rows.shape == (len(ids), N)
    for pid, exp, row in zip(ids, exps, rows):
        k = pid - window
        ref_exp = int(local[pid]) + EXPONENT_BIAS if pid < plan.num_blocks else 0
        ref = quantize(ref_blocks[k], int(agreed[k]), n) if k >= 0 else np.zeros(N, np.int32)
        fields = (MSG_DATA, 7, 3 | 0x8000, pid, exp, 0, 2)
        assert exp == ref_exp
        assert CODEC.encode_fields(fields, row) == CODEC.encode(InaHeader(*fields), ref)
        single_exp, single = plan.packet(pid)
        assert single_exp == ref_exp and single.dtype == np.int32 and single.tolist() == ref.tolist()


@settings(max_examples=150, deadline=None)
@given(plan_case(), st.integers(0, 2**32 - 1))
def test_batched_results_equal_dequantize(case: tuple[np.ndarray, int, int, list[int], np.ndarray],
                                          seed: int) -> None:
    x, n, window, ids, bumps = case
    batch, single = Float32Plan(x, N, n, window), Float32Plan(x, N, n, window)
    local = block_exponents(to_blocks(x, N, np.float32))
    agreed = np.minimum(local + bumps, 127)
    for k, e in enumerate(agreed):
        batch._agree(k, int(e) + EXPONENT_BIAS)
        single._agree(k, int(e) + EXPONENT_BIAS)
    m = INT32_MAX // n
    sums = np.random.default_rng(seed).integers(-n * m, n * m + 1, size=(len(ids), N)).astype(np.int64)
    sums = sums.clip(-(2**31), 2**31 - 1).astype(np.int32)
    wire_exps = [int(agreed[p]) + EXPONENT_BIAS if p < batch.num_blocks else 0 for p in ids]
    batch.results(ids, wire_exps, sums.astype(">i4"))
    for pid, e, s in zip(ids, wire_exps, sums):
        single.result(pid, e, s)
    for pid, s in zip(ids, sums):
        k = pid - window
        if k >= 0:
            ref = dequantize(s, int(agreed[k]), n)
            assert batch.out[k].tobytes() == ref.tobytes() == single.out[k].tobytes()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 255), st.integers(0, 2**16 - 1), st.integers(0, 2**32 - 1),
                          st.integers(0, 255), st.sampled_from([0, CODEC.packet_len - 1, CODEC.packet_len + 3])),
                max_size=12),
       st.integers(0, 2**32 - 1), st.booleans())
def test_decode_batch_matches_decode(items: list[tuple[int, int, int, int, int]], seed: int, unaligned: bool) -> None:
    codec = CODEC
    if unaligned:  # a layout struct cannot express: the bit-packing path
        prog = dict(load_program(LAYOUT_JSON))
        prog["header_types"] = [dict(t) for t in prog["header_types"]]
        ina = next(t for t in prog["header_types"] if t["name"] == "ina_h")
        ina["fields"] = [["msg_type", 4, False], ["version", 4, False], *ina["fields"][1:]]
        codec = Codec.from_program_json(prog)
    rng = np.random.default_rng(seed)
    datagrams = []
    for job, pool, pid, exp, bad_len in items:
        values = rng.integers(-(2**31), 2**31, size=N).astype(np.int32)
        data = codec.encode(InaHeader(MSG_RESULT & 15, job, pool, pid, exp, 0, 1), values)
        datagrams.append(data if not bad_len else data.ljust(bad_len, b"\0")[:bad_len])
    headers, values, malformed = codec.decode_batch(datagrams)
    expected = []
    for d in datagrams:
        try:
            expected.append(codec.decode(d))
        except MalformedPacket:
            continue
    assert malformed == len(datagrams) - len(expected)
    assert headers == [astuple_header(h) for h, _ in expected]
    assert values.shape == (len(expected), N)
    assert all(v.tolist() == e.tolist() for v, (_, e) in zip(values, expected))


def _simulate(plan_of: object, seed: int, batch_max: int, window: int, adapt: bool = False) -> None:
    """Two windows on the same plan, fed the same results one by one and in receive batches: equal bytes out."""
    opts = WindowOptions(window=window, timeout=1.0, max_timeout=1.0, adapt_window=adapt)
    wins = [Window(plan=plan_of(), job_id=5, rank=1, slots=list(range(100, 100 + window)),  # type: ignore[operator]
                   first_set=[i & 1 for i in range(window)], options=opts) for _ in range(2)]
    one, many = wins
    enc = [CODEC.encode_fields(o.fields, o.values) for o in one.start(0.0)]
    assert enc == [CODEC.encode_fields(o.fields, o.values) for o in many.start(0.0)]
    rng = np.random.default_rng(seed)
    outstanding = {CODEC.decode(d)[0].packet_id: CODEC.decode(d)[0] for d in enc}
    now = 0.0
    while not one.done:
        assert outstanding, "nothing in flight but the run is not done"
        pids = list(outstanding)
        rng.shuffle(pids)
        answered = pids[:int(rng.integers(1, batch_max + 1))]
        now += 0.001
        datagrams = []
        for pid in answered:
            h = outstanding.pop(pid)
            exp = min(255, h.exponent + int(rng.integers(0, 2))) if h.exponent else 0
            sums = rng.integers(-(2**31), 2**31, size=N).astype(np.int32)
            datagrams.append(CODEC.encode(InaHeader(MSG_RESULT, 5, h.pool_index, pid, exp, 0, 0), sums))
        datagrams.append(datagrams[0])  # a duplicate: ignored by both
        outs_one = [o for d in datagrams for o in one.on_result(*CODEC.decode(d), now)]
        headers, values, bad = CODEC.decode_batch(datagrams)
        outs_many = many.on_packets(headers, values, now)
        sent = [CODEC.encode_fields(o.fields, o.values) for o in outs_one]
        assert sent == [CODEC.encode_fields(o.fields, o.values) for o in outs_many]
        for d in sent:
            h = CODEC.decode(d)[0]
            outstanding[h.packet_id] = h
    assert many.done and one.stats.as_dict() == many.stats.as_dict()
    a, b = one.plan.output(), many.plan.output()  # type: ignore[attr-defined]
    assert a.tobytes() == b.tobytes()


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40 * N), st.integers(1, 8), st.integers(1, 6), st.integers(0, 2**32 - 1), st.booleans(),
       st.booleans())
def test_window_batches_send_what_one_by_one_sends(size: int, batch_max: int, window: int, seed: int,
                                                   as_float: bool, adapt: bool) -> None:
    rng = np.random.default_rng(seed)
    if as_float:
        x = (rng.standard_normal(size) * 10.0 ** int(rng.integers(-5, 5))).astype(np.float32)
        _simulate(lambda: Float32Plan(x, N, 3, window), seed, batch_max, window, adapt)
    else:
        xi = rng.integers(-(2**31), 2**31, size=size).astype(np.int32)
        _simulate(lambda: Int32Plan(xi, N), seed, batch_max, window, adapt)


def test_float32_plan_keeps_a_view_of_a_float32_input() -> None:
    x = np.arange(16 * N, dtype=np.float32)
    plan = Float32Plan(x, N, 4, 2)
    assert np.shares_memory(plan.blocks, x)
    padded = Float32Plan(x[:-1], N, 4, 2)  # not a multiple of N: a padded copy
    assert not np.shares_memory(padded.blocks, x) and padded.blocks[-1, -1] == 0
