"""Ring all-reduce (reduce-scatter then all-gather over the ring of ranks, as NCCL's and Gloo's ring algorithm).

Rank r sends to r+1 and receives from r-1 (mod n). In reduce-scatter step s (0 <= s < n-1) it sends chunk (r-s) and
adds the chunk (r-s-1) it receives into its own; after n-1 steps it holds the complete sum of chunk (r+1). In
all-gather step s it sends chunk (r+1-s) and stores the chunk (r-s) it receives. Every rank therefore sends
2(n-1)/n of the tensor, the least any host-based all-reduce can (against 1x of the tensor per worker with
in-network aggregation). Each step sends and receives at once, so neighbours never wait on each other's buffers.
"""

from __future__ import annotations

from worker.host.base import HostCollective
from worker.host.schedule import Step, ring_steps

__all__ = ["Ring"]


class Ring(HostCollective):
    """One rank of a ring all-reduce."""

    name = "ring"
    description = "host-based ring all-reduce over TCP (reduce-scatter + all-gather, as NCCL/Gloo)"

    @staticmethod
    def steps(rank: int, n: int) -> list[Step]:
        """2(n-1) steps with its two neighbours (`schedule.ring_steps`)."""
        return ring_steps(rank, n)
