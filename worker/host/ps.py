"""Sharded parameter server, co-located with the workers (BytePS's co-located mode): rank k serves shard k.

Push: every rank sends chunk k of its tensor to rank k (all at once); rank k adds the n contributions of its shard
in rank order. Pull: rank k sends the summed shard k to every rank, which stores it. Every rank sends and receives
2(n-1)/n of the tensor, like the ring, but in one all-to-all round each way instead of n-1 neighbour steps: fewer,
larger transfers, with the n-to-1 incast of a parameter server on every shard. No quantization: float32 adds.
"""

from __future__ import annotations

from worker.host.base import HostCollective
from worker.host.schedule import Step, ps_steps

__all__ = ["ShardedPS"]


class ShardedPS(HostCollective):
    """One rank of a sharded push/pull parameter-server all-reduce."""

    name = "ps"
    description = "host-based sharded parameter server over TCP (push/pull, shard k on rank k, as BytePS co-located)"

    @staticmethod
    def steps(rank: int, n: int) -> list[Step]:
        """Push then pull with every other rank (`schedule.ps_steps`)."""
        return ps_steps(rank, n)
