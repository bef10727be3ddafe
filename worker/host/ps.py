"""Sharded parameter server, co-located with the workers (BytePS's co-located mode): rank k serves shard k.

Push: every rank sends chunk k of its tensor to rank k (all at once); rank k adds the n contributions of its shard
in rank order. Pull: rank k sends the summed shard k to every rank, which stores it. Every rank sends and receives
2(n-1)/n of the tensor, like the ring, but in one all-to-all round each way instead of n-1 neighbour steps: fewer,
larger transfers, with the n-to-1 incast of a parameter server on every shard. No quantization: float32 adds.
"""

from __future__ import annotations

import numpy as np

from worker.host.base import HostCollective, add_into, chunk_bounds

__all__ = ["ShardedPS"]


class ShardedPS(HostCollective):
    """One rank of a sharded push/pull parameter-server all-reduce."""

    name = "ps"
    description = "host-based sharded parameter server over TCP (push/pull, shard k on rank k, as BytePS co-located)"

    @staticmethod
    def peers_needed(rank: int, n: int) -> set[int]:
        """The ranks this rank exchanges data with: all others."""
        return set(range(n)) - {rank}

    def _reduce(self, flat: np.ndarray) -> None:
        n, r = self.n, self.rank
        b = chunk_bounds(flat.size, n)
        mine = flat[b[r]:b[r + 1]]
        others = [p for p in range(n) if p != r]
        pushed = {p: np.empty(mine.size, dtype=flat.dtype) for p in others}
        self.links.exchange([(p, memoryview(flat[b[p]:b[p + 1]])) for p in others],
                            [(p, memoryview(pushed[p])) for p in others])
        total = np.zeros(mine.size, dtype=flat.dtype)
        for p in range(n):  # rank order, so the float32 rounding does not depend on arrival order
            add_into(total, mine if p == r else pushed[p])
        mine[:] = total
        self.links.exchange([(p, memoryview(mine)) for p in others],
                            [(p, memoryview(flat[b[p]:b[p + 1]])) for p in others])
