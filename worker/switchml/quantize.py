"""float32 -> int32 block floating point, as SwitchML, and its error bound.

For one block x (the N elements of one packet) a worker computes its local exponent

    e_local = the smallest e with 2^e > max|x|   (= the exponent frexp() returns; EXP_MIN when max|x| = 0
                                                  or when max|x| < 2^EXP_MIN: clamping e upwards is always safe)

The switch keeps the maximum over the n workers, E. Everyone then scales by

    f = M / 2^E  with  M = floor(INT32_MAX / n)

and sends q = round_half_even(x * f) as int32. Since |x| < 2^E, |x * f| < M, so |q| <= M and the switch's int32 sum of
n contributions can never wrap (SwitchML uses INT32_MAX / (n 2^E) unfloored, which can wrap by one for even n).
The result is r = float32(S / f) with S the integer sum.

Error bound (`error_bound`), per element, against the exact real sum s of the float32 inputs:

    |r - s| <= n * (0.5 + 2^-20) / f  +  2^-23 * |s|  +  2^-149

- n * 0.5 / f: each worker's rounding to an integer;
- the 2^-20 / f slack per worker covers float64 rounding of x * f (x has 24 significant bits and M 31, so the
  product is rounded once by at most 2^-53 * 2^31 = 2^-22) and of S / f and of a float64 reference sum of the inputs;
- 2^-23 * |s| (twice float32's unit roundoff 2^-24, the second half absorbing the quantization error's share)
  covers the final cast of S / f to float32, 2^-149 covers that cast in the subnormal range.
The bound needs s to lie in float32's range (a sum that overflows float32 becomes inf). The exponent field is 8 bits
with bias 128, so E is in [-128, 127]: inputs with |x| >= 2^127 or non-finite inputs are rejected (QuantizationError).
"""

from __future__ import annotations

import numpy as np

from worker.errors import InputError

__all__ = [
    "INT32_MAX",
    "EXP_MIN",
    "EXP_MAX",
    "EXPONENT_BIAS",
    "QuantizationError",
    "check_finite_range",
    "block_exponents",
    "encode_exponent",
    "decode_exponent",
    "scale_factor",
    "quantize",
    "dequantize",
    "error_bound",
]

INT32_MAX = 2**31 - 1
EXPONENT_BIAS = 128
EXP_MIN = -EXPONENT_BIAS
EXP_MAX = 255 - EXPONENT_BIAS
_LIMIT = float(2.0**EXP_MAX)


class QuantizationError(InputError):
    """Input that block floating point with an 8-bit biased exponent cannot represent."""


CHUNK = 1 << 20
"""Elements per pass of the whole-tensor checks: their temporaries stay bounded whatever the tensor's size."""


def check_finite_range(x: np.ndarray) -> None:
    """Raise QuantizationError if x holds NaN/inf or a magnitude >= 2^127."""
    flat = x.ravel()
    for start in range(0, flat.size, CHUNK):
        part = flat[start:start + CHUNK]
        if not np.all(np.isfinite(part)):
            bad = start + int(np.flatnonzero(~np.isfinite(part))[0])
            raise QuantizationError(f"element {bad} is {flat[bad]!r}: only finite values can be all-reduced")
        mag = np.abs(part)
        if float(np.max(mag)) >= _LIMIT:
            bad = start + int(np.argmax(mag))
            raise QuantizationError(
                f"element {bad} = {flat[bad]!r} has magnitude >= 2^{EXP_MAX}, beyond the 8-bit block exponent "
                "(bias 128)"
            )


def block_exponents(blocks: np.ndarray) -> np.ndarray:
    """Local exponent per row of a (B, N) array: smallest e with 2^e > max|row|, clamped to [EXP_MIN, EXP_MAX]."""
    if blocks.ndim != 2:
        raise ValueError("block_exponents expects a (blocks, elements) array")
    if blocks.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    rows = max(1, CHUNK // max(1, blocks.shape[1]))
    m = np.empty(blocks.shape[0], dtype=np.float64)
    for start in range(0, blocks.shape[0], rows):  # exact in any dtype: abs and max do not round
        m[start:start + rows] = np.max(np.abs(blocks[start:start + rows].astype(np.float64, copy=False)), axis=1)
    _, e = np.frexp(m)  # m = mant * 2^e with mant in [0.5, 1): 2^(e-1) <= m < 2^e; frexp(0) gives e = 0
    e = np.where(m == 0, EXP_MIN, e).astype(np.int64)
    if np.any(e > EXP_MAX):
        raise QuantizationError(f"a block maximum is >= 2^{EXP_MAX}, beyond the 8-bit block exponent")
    return np.maximum(e, EXP_MIN)


def encode_exponent(e: int | np.ndarray) -> int | np.ndarray:
    """The biased wire value (e + 128)."""
    return e + EXPONENT_BIAS


def decode_exponent(wire: int | np.ndarray) -> int | np.ndarray:
    """The exponent from its biased wire value."""
    return wire - EXPONENT_BIAS


def scale_factor(e: int | np.ndarray, n: int) -> float | np.ndarray:
    """f = floor(INT32_MAX / n) / 2^e (float64, exact)."""
    if n < 1:
        raise ValueError(f"number of workers must be >= 1, got {n}")
    return np.ldexp(np.float64(INT32_MAX // n), -np.asarray(e, dtype=np.int64))


def quantize(x: np.ndarray, e: int | np.ndarray, n: int) -> np.ndarray:
    """round_half_even(x * f) as int32, saturated to +-floor(INT32_MAX / n) (defensive: never hit when 2^e > max|x|).

    x is a (N,) block with a scalar e, or a (B, N) array with e of shape (B,).
    """
    f = scale_factor(e, n)
    if np.ndim(f):
        f = np.asarray(f)[:, None]
    m = INT32_MAX // n
    q = np.rint(np.asarray(x, dtype=np.float64) * f)
    return np.clip(q, -m, m).astype(np.int32)


def dequantize(sums: np.ndarray, e: int | np.ndarray, n: int) -> np.ndarray:
    """float32(S / f) for the switch's int32 sums S with the agreed exponent e."""
    f = scale_factor(e, n)
    if np.ndim(f):
        f = np.asarray(f)[:, None]
    return (np.asarray(sums, dtype=np.float64) / f).astype(np.float32)


def error_bound(reference: np.ndarray, e: int | np.ndarray, n: int) -> np.ndarray:
    """Per-element bound on |result - exact sum| (see module docstring); reference is the float64 sum.

    reference is (N,) with scalar e or (B, N) with e of shape (B,).
    """
    f = scale_factor(e, n)
    if np.ndim(f):
        f = np.asarray(f)[:, None]
    ref = np.abs(np.asarray(reference, dtype=np.float64))
    return n * (0.5 + 2.0**-20) / f + 2.0**-23 * ref + 2.0**-149
