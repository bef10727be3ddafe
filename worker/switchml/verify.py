"""SwitchML's verification: int32 sums exact, float32 within the block floating point bound
(`worker.switchml.quantize.error_bound`) with the exponents the switch must have agreed on."""

from __future__ import annotations

import numpy as np

from worker.blocks import to_blocks
from worker.switchml.quantize import block_exponents, error_bound
from worker.verify import Verdict, against_bound, verify_exact

__all__ = ["verify"]


def verify(result: np.ndarray, inputs: list[np.ndarray], num_elems: int, dtype: str,
           exponents: np.ndarray | None = None) -> Verdict:
    """Check result against the sum of inputs (one per rank)."""
    n = len(inputs)
    size = inputs[0].size
    if dtype == "int32":
        return verify_exact(result, inputs)
    if result.size != size:
        return Verdict(False, float("inf"), float("inf"), f"result has {result.size} elements, expected {size}")
    ref64 = np.sum(np.stack([x.astype(np.float64) for x in inputs]), axis=0)
    exps = np.max(np.stack([block_exponents(to_blocks(x, num_elems, np.float32)) for x in inputs]), axis=0)
    if exponents is not None and exponents.size and not np.array_equal(exponents, exps):
        k = int(np.flatnonzero(exponents != exps)[0])
        return Verdict(False, float("inf"), float("inf"),
                       f"block {k}: switch agreed on exponent {int(exponents[k])}, the maximum over ranks is "
                       f"{int(exps[k])}")
    bound = error_bound(to_blocks(ref64, num_elems, np.float64), exps, n).ravel()[:size]
    return against_bound(result, ref64, bound, "documented")
