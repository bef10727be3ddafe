"""Verify mode: deterministic per-rank inputs, the reference sum over all ranks, and the checks every protocol's own
error model builds on.

Every worker can generate every rank's input (seeded by (seed, rank)), so each one computes the float64 reference
(int32: the exact two's complement wrapping sum, `verify_exact`) locally and checks its own result against its
protocol's bound (`against_bound`): float32 summation (`verify_float_sum`, the host baselines), fixed point
(`verify_fixed_point`, ATP), block floating point (`worker.switchml.verify`).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

__all__ = ["rank_input", "result_digest", "Verdict", "check_exact", "verify_exact", "wrapping_sum", "verify_float_sum",
           "verify_fixed_point", "float_sum_bound", "against_bound"]


INPUT_CHUNK = 1 << 20


SPARSE_BLOCK = 64
"""Elements per block of `rank_input`'s zero blocks: SwitchML's and omnireduce.p4's default packet."""


_NO_RANK = 2**32 - 1
"""The rank in the seeds of `rank_input`'s streams that every rank shares (no job has 2^32 ranks)."""


def rank_input(size: int, seed: int, rank: int, dtype: str, sparsity: float = 0.0,
               block: int = SPARSE_BLOCK, overlap: float = 0.0) -> np.ndarray:
    """The input of rank `rank`: float32 ~ N(0, (rank+1)^2), or int32 uniform over the whole int32 range; with
    `sparsity`, each block of `block` elements is all zero with that probability, drawn for each rank independently
    (its own stream, so the non-zero values are those of the dense input).

    `overlap`: the probability that a block's zero/non-zero draw is one every rank shares (from streams seeded by
    `seed`, not the rank) instead of the rank's own, so that the ranks' zero blocks coincide as real gradients' do.
    Each rank's marginal sparsity stays `sparsity`; at overlap 1 every rank has the same zero blocks; at overlap 0
    (the default) the input is exactly the one without it (the shared streams are not drawn)."""
    if dtype not in ("float32", "int32"):
        raise ValueError(f"dtype must be float32 or int32, got {dtype!r}")
    if not 0.0 <= sparsity <= 1.0 or block < 1:
        raise ValueError(f"sparsity must be within 0..1 and block >= 1, got {sparsity!r} and {block!r}")
    if not 0.0 <= overlap <= 1.0:
        raise ValueError(f"overlap must be within 0..1, got {overlap!r}")
    rng = np.random.default_rng([seed, rank])
    out = np.empty(size, dtype=np.float32 if dtype == "float32" else np.int32)
    # generated in chunks (the same stream as one call): the float64/int64 temporaries stay bounded
    for start in range(0, size, INPUT_CHUNK):
        n = min(INPUT_CHUNK, size - start)
        if dtype == "float32":
            out[start:start + n] = rng.standard_normal(n) * (rank + 1)
        else:
            out[start:start + n] = rng.integers(-(2**31), 2**31, size=n, dtype=np.int64)
    if sparsity:
        nb = -(-size // block)
        zero = np.random.default_rng([seed, rank, 1]).random(nb) < sparsity
        if overlap:  # keyed by a rank no job has: (seed, 2) and (seed, 3) are rank 2 and rank 3 value streams
            shared = np.random.default_rng([seed, _NO_RANK, 2]).random(nb) < sparsity
            use_shared = np.random.default_rng([seed, _NO_RANK, 3]).random(nb) < overlap
            zero = np.where(use_shared, shared, zero)
        out.reshape(-1)[np.repeat(zero, block)[:size]] = 0
    return out


@dataclass(frozen=True, slots=True)
class Verdict:
    """Outcome of a verification."""

    ok: bool
    max_error: float
    max_error_over_bound: float
    """max |result - reference| / bound (<= 1 when ok); 0 for int32."""
    message: str


def float_sum_bound(inputs: list[np.ndarray]) -> np.ndarray:
    """Per-element bound on the error of any float32 summation order of n inputs against their exact sum:
    gamma_(n-1) * sum |x_i| with gamma_k = k u / (1 - k u), u = 2^-24 (recursive summation, Higham §4.2), plus 2^-149
    per addition for subnormal results."""
    n = len(inputs)
    u = 2.0 ** -24
    gamma = (n - 1) * u / (1 - (n - 1) * u)
    abs_sum = np.sum(np.stack([np.abs(x.astype(np.float64)) for x in inputs]), axis=0)
    return gamma * abs_sum + (n - 1) * 2.0 ** -149


def verify_float_sum(result: np.ndarray, inputs: list[np.ndarray], dtype: str) -> Verdict:
    """Check a host-based all-reduce (float32 additions, no quantization; int32 wrapping sums exact)."""
    if dtype == "int32":
        return verify_exact(result, inputs)
    if result.size != inputs[0].size:
        return Verdict(False, float("inf"), float("inf"), f"result has {result.size} elements, expected "
                                                          f"{inputs[0].size}")
    ref64 = np.sum(np.stack([x.astype(np.float64) for x in inputs]), axis=0)
    return against_bound(result, ref64, float_sum_bound(inputs), "float32 summation")


def against_bound(result: np.ndarray, ref64: np.ndarray, bound: np.ndarray, what: str) -> Verdict:
    size = ref64.size
    err = np.abs(result.ravel().astype(np.float64) - ref64)
    ratio = np.divide(err, bound, out=np.zeros_like(err), where=bound > 0)
    ratio[(bound == 0) & (err > 0)] = np.inf
    worst = int(np.argmax(ratio)) if size else 0
    max_err = float(err.max()) if size else 0.0
    max_ratio = float(ratio[worst]) if size else 0.0
    if size and not np.all(err <= bound):
        bad = int(np.count_nonzero(err > bound))
        return Verdict(False, max_err, max_ratio,
                       f"{bad} of {size} elements outside the {what} error bound; worst index {worst}: got "
                       f"{float(result.ravel()[worst])!r}, reference {ref64[worst]!r}, error {err[worst]:.3g} > "
                       f"bound {bound[worst]:.3g}")
    return Verdict(True, max_err, max_ratio,
                   f"max error {max_err:.3g}, at most {max_ratio:.3f} of the {what} bound")


def wrapping_sum(inputs: Iterable[np.ndarray]) -> np.ndarray:
    """The two's complement wrapping int32 sum of the inputs, added one at a time (memory: one int64 tensor, however
    many inputs)."""
    acc: np.ndarray | None = None
    for x in inputs:
        acc = x.ravel().astype(np.int64) if acc is None else acc + x.ravel()
    if acc is None:
        raise ValueError("no inputs to sum")
    return acc.astype(np.uint32).view(np.int32)


def result_digest(result: np.ndarray) -> str:
    """The first 16 hex digits of the SHA-256 of a result's little-endian bytes (C order): equal digests on two
    engines mean bit-identical tensors."""
    data = np.ascontiguousarray(result).astype(result.dtype.newbyteorder("<"), copy=False)
    return hashlib.sha256(data.tobytes()).hexdigest()[:16]


def check_exact(result: np.ndarray, reference: np.ndarray) -> Verdict:
    """Check int32 sums against their reference (`wrapping_sum`), element by element."""
    size = reference.size
    if result.size != size:
        return Verdict(False, float("inf"), float("inf"), f"result has {result.size} elements, expected {size}")
    wrong = np.flatnonzero(result.ravel() != reference)
    if wrong.size:
        i = int(wrong[0])
        return Verdict(False, float(abs(int(result.ravel()[i]) - int(reference[i]))), 0.0,
                       f"{wrong.size} of {size} int32 sums wrong; first at index {i}: got {int(result.ravel()[i])},"
                       f" expected {int(reference[i])}")
    return Verdict(True, 0.0, 0.0, f"all {size} int32 sums exact")


def verify_exact(result: np.ndarray, inputs: list[np.ndarray]) -> Verdict:
    """Check int32 sums: exactly the two's complement wrapping sum of the inputs (one per rank)."""
    return check_exact(result, wrapping_sum(inputs))


def verify_fixed_point(result: np.ndarray, inputs: list[np.ndarray], dtype: str, scale_bits: int) -> Verdict:
    """Check an ATP result (worker.atp.worker): int32 exact (wrapping); float32 within n * 2^-(scale_bits+1) + 2^-24 |sum|
    (fixed point), plus the float32 summation bound (blocks resent raw)."""
    if dtype == "int32":
        return verify_exact(result, inputs)
    if result.size != inputs[0].size:
        return Verdict(False, float("inf"), float("inf"), f"result has {result.size} elements, expected "
                                                          f"{inputs[0].size}")
    ref64 = np.sum(np.stack([x.astype(np.float64) for x in inputs]), axis=0)
    n = len(inputs)
    bound = n * math.ldexp(0.5, -scale_bits) * (1 + 2.0**-20) + 2.0**-24 * np.abs(ref64) + float_sum_bound(inputs)
    return against_bound(result, ref64, bound, f"fixed-point (2^{scale_bits})")
