"""Block floating point: exponents, saturation-free sums and the documented error bound."""

from __future__ import annotations

import numpy as np
import pytest

from worker.switchml.quantize import (
    EXP_MAX,
    EXP_MIN,
    INT32_MAX,
    QuantizationError,
    block_exponents,
    check_finite_range,
    dequantize,
    error_bound,
    quantize,
    scale_factor,
)


def test_local_exponent_is_smallest_power_above_max() -> None:
    blocks = np.array([[0.75, -0.1], [1.0, 0.0], [-3.0, 2.0], [0.0, 0.0], [2.0**-140, 0.0], [2.0**126 * 1.5, 1]],
                      dtype=np.float32)
    assert block_exponents(blocks).tolist() == [0, 1, 2, EXP_MIN, EXP_MIN, 127]
    for row, e in zip(blocks, block_exponents(blocks)):
        assert 2.0 ** int(e) >= np.max(np.abs(row.astype(np.float64)))


def test_scale_factor_exact() -> None:
    assert scale_factor(0, 1) == float(INT32_MAX)
    assert scale_factor(3, 4) == (INT32_MAX // 4) / 8
    assert scale_factor(np.array([0, -1]), 2).tolist() == [INT32_MAX // 2, 2 * (INT32_MAX // 2)]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 8, 32])
def test_worst_case_sum_never_wraps(n: int) -> None:
    """n workers all sending the block maximum just below 2^e sum to at most INT32_MAX (SwitchML's unfloored
    INT32_MAX / (n 2^e) overflows for even n)."""
    x = np.full(4, np.nextafter(np.float32(1.0), np.float32(0)), dtype=np.float32)
    q = quantize(x, 0, n).astype(np.int64)
    assert q.max() <= INT32_MAX // n
    assert n * int(q.max()) <= INT32_MAX
    assert quantize(-x, 0, n).min() >= -(INT32_MAX // n)


def test_saturates_defensively_when_exponent_too_small() -> None:
    q = quantize(np.array([4.0, -4.0], dtype=np.float32), 0, 2)
    assert q.tolist() == [INT32_MAX // 2, -(INT32_MAX // 2)]


def test_rejects_unrepresentable_inputs() -> None:
    with pytest.raises(QuantizationError, match="only finite"):
        check_finite_range(np.array([1.0, np.nan], dtype=np.float32))
    with pytest.raises(QuantizationError, match="element 1"):
        check_finite_range(np.array([1.0, -np.inf], dtype=np.float32))
    with pytest.raises(QuantizationError, match=r"2\^127"):
        check_finite_range(np.array([0.0, np.float32(2.0**127)], dtype=np.float32))
    check_finite_range(np.array([np.nextafter(np.float32(2.0**127), np.float32(0))], dtype=np.float32))


def _random_case(rng: np.random.Generator, n: int, kind: str) -> np.ndarray:
    shape = (n, 6, 16)
    if kind == "normal":
        return rng.standard_normal(shape).astype(np.float32)
    if kind == "wide":  # magnitudes across the whole float32 range, mixed signs
        mant = rng.uniform(-2, 2, shape)
        return np.ldexp(mant, rng.integers(-149, 126, shape)).astype(np.float32)
    if kind == "denormal":
        return (rng.standard_normal(shape) * 1e-42).astype(np.float32)
    if kind == "huge":
        return (rng.uniform(-1, 1, shape) * 1.7e38).astype(np.float32)
    if kind == "sparse":
        x = rng.standard_normal(shape).astype(np.float32)
        x[rng.random(shape) < 0.7] = 0
        x[:, 0] = 0  # an all-zero block
        return x
    if kind == "negative":
        return -np.abs(rng.standard_normal(shape) * 1e3).astype(np.float32)
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["normal", "wide", "denormal", "huge", "sparse", "negative"])
@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_error_bound_holds(kind: str, n: int) -> None:
    rng = np.random.default_rng([n, len(kind)])
    for _ in range(20):
        x = _random_case(rng, n, kind)  # (workers, blocks, elems)
        if kind == "huge":
            x /= n  # keep the exact sum inside float32's range, as the bound requires
        e = np.max(np.stack([block_exponents(w) for w in x]), axis=0)
        s = np.sum(np.stack([quantize(w, e, n).astype(np.int64) for w in x]), axis=0)
        assert np.all(np.abs(s) <= INT32_MAX)  # the switch's int32 sum does not wrap
        result = dequantize(s.astype(np.int32), e, n)
        assert result.dtype == np.float32
        exact = np.sum(x.astype(np.float64), axis=0)
        bound = error_bound(exact, e, n)
        err = np.abs(result.astype(np.float64) - exact)
        assert np.all(err <= bound), (kind, n, float(np.max(err / bound)))


def test_bound_is_not_vacuous() -> None:
    """For unit-scale data the bound is ~n * 2^-31 relative: a one-ulp-of-int32 error would not pass unnoticed."""
    n = 4
    e = np.array([1])
    bound = error_bound(np.zeros((1, 4)), e, n)
    assert np.all(bound < 2.0 * n / scale_factor(1, n))
    # a result off by one quantization step per worker (n/f) exceeds the bound
    assert n / scale_factor(1, n) > bound[0, 0]


def test_zero_block_round_trips_to_zero() -> None:
    x = np.zeros((1, 8), dtype=np.float32)
    e = block_exponents(x)
    assert e.tolist() == [EXP_MIN]
    assert dequantize(quantize(x, e, 3), e, 3).tolist() == [[0.0] * 8]


def test_exponent_range_constants() -> None:
    assert (EXP_MIN, EXP_MAX) == (-128, 127)
