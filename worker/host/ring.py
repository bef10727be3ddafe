"""Ring all-reduce (reduce-scatter then all-gather over the ring of ranks, as NCCL's and Gloo's ring algorithm).

Rank r sends to r+1 and receives from r-1 (mod n). In reduce-scatter step s (0 <= s < n-1) it sends chunk (r-s) and
adds the chunk (r-s-1) it receives into its own; after n-1 steps it holds the complete sum of chunk (r+1). In
all-gather step s it sends chunk (r+1-s) and stores the chunk (r-s) it receives. Every rank therefore sends
2(n-1)/n of the tensor, the least any host-based all-reduce can (against 1x of the tensor per worker with
in-network aggregation). Each step sends and receives at once, so neighbours never wait on each other's buffers.
"""

from __future__ import annotations

import numpy as np

from worker.host.base import HostCollective, add_into, chunk_bounds

__all__ = ["Ring"]


class Ring(HostCollective):
    """One rank of a ring all-reduce."""

    name = "ring"
    description = "host-based ring all-reduce over TCP (reduce-scatter + all-gather, as NCCL/Gloo)"

    @staticmethod
    def peers_needed(rank: int, n: int) -> set[int]:
        """The ranks this rank exchanges data with: its two neighbours."""
        return {(rank + 1) % n, (rank - 1) % n} - {rank}

    def _reduce(self, flat: np.ndarray) -> None:
        n, r = self.n, self.rank
        right, left = (r + 1) % n, (r - 1) % n
        b = chunk_bounds(flat.size, n)

        def chunk(k: int) -> np.ndarray:
            return flat[b[k]:b[k + 1]]

        scratch = np.empty(max(b[k + 1] - b[k] for k in range(n)), dtype=flat.dtype)
        for s in range(n - 1):
            out, into = chunk((r - s) % n), chunk((r - s - 1) % n)
            tmp = scratch[:into.size]
            self.links.exchange([(right, memoryview(out))], [(left, memoryview(tmp))])
            add_into(into, tmp)
        for s in range(n - 1):
            out, into = chunk((r + 1 - s) % n), chunk((r - s) % n)
            self.links.exchange([(right, memoryview(out))], [(left, memoryview(into))])
