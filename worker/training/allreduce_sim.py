"""In-process all-reduces over W ranks run in lock step (for tests and quick studies without a network).

`LockstepAllReduce(world, combine)` gives each rank a callable; when all W ranks have called it with their vector,
`combine` turns the W vectors into the sum every rank gets. `float_sum` adds in float32 in rank order (what ring or
a PS compute, up to order); `bfp_sum` is SwitchML's arithmetic: block exponents max'ed over the ranks, int32
quantization, exact integer sum, dequantization (`worker.switchml.quantize`), with the packet's N elements as the block.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from worker.blocks import to_blocks
from worker.switchml.quantize import block_exponents, dequantize, quantize

__all__ = ["LockstepAllReduce", "float_sum", "bfp_sum"]


def float_sum(vectors: list[np.ndarray]) -> np.ndarray:
    out = np.zeros_like(vectors[0], dtype=np.float32)
    for v in vectors:
        out += v.astype(np.float32)
    return out


def bfp_sum(vectors: list[np.ndarray], num_elems: int = 64) -> np.ndarray:
    n = len(vectors)
    blocks = [to_blocks(v.astype(np.float32), num_elems, np.float32) for v in vectors]
    e = np.max(np.stack([block_exponents(b) for b in blocks]), axis=0)
    total = np.zeros(blocks[0].shape, dtype=np.int64)
    for b in blocks:
        total += quantize(b, e, n).astype(np.int64)
    return dequantize(total.astype(np.int32), e, n).ravel()[:vectors[0].size]


class LockstepAllReduce:
    """A barrier-based all-reduce between `world` threads."""

    def __init__(self, world: int, combine: Callable[[list[np.ndarray]], np.ndarray] = float_sum) -> None:
        self.world = world
        self.combine = combine
        self._inputs: list[np.ndarray | None] = [None] * world
        self._result: np.ndarray | None = None
        self._barrier = threading.Barrier(world, action=self._reduce)

    def _reduce(self) -> None:
        self._result = self.combine([x for x in self._inputs if x is not None])

    def for_rank(self, rank: int) -> Callable[[np.ndarray], np.ndarray]:
        def allreduce(v: np.ndarray) -> np.ndarray:
            self._inputs[rank] = v
            self._barrier.wait(timeout=60)
            assert self._result is not None
            out = self._result.copy()
            self._barrier.wait(timeout=60)  # nobody overwrites the inputs before all have read the result
            return out
        return allreduce
