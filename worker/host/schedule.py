"""A host baseline's communication as data: each rank's steps, which the blocking ranks run over sockets
(`base.HostCollective`) and the packet simulator's hosts over its TCP model (`topo.sim.hosts`, through
`ProtocolSpec.host_steps` and `stream.StreamRank`), so both run one algorithm.

A step sends some chunks of the rank's tensor to peers and receives chunks from peers at the same time; once every
receive is complete it combines them (`Chunks.combine`): `add` sums each received chunk with the rank's own copy
in rank order (so the float32 rounding does not depend on arrival order, and every rank that later stores the chunk
gets the same bits), else the received chunk is stored. Chunk k is elements [k*size//n, (k+1)*size//n)
(`chunk_bounds`). A link carries its messages in the order of the steps, so one byte stream per peer needs no
framing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Chunks", "Step", "Steps", "add_into", "chunk_bounds", "peers_of", "ps_steps", "ring_steps"]


@dataclass(frozen=True)
class Step:
    """One round of a rank: send `sends` and receive `recvs` at once, then combine what was received."""

    sends: tuple[tuple[int, int], ...]
    """(peer, chunk) sent."""
    recvs: tuple[tuple[int, int], ...]
    """(peer, chunk) received, in the order each peer sends them."""
    add: bool
    """Received chunks are summed with this rank's (True) or stored in place of it (False)."""


Steps = Callable[[int, int], Sequence[Step]]
"""(rank, ranks) -> that rank's steps."""


def ring_steps(rank: int, n: int) -> list[Step]:
    """Ring all-reduce: n-1 reduce-scatter steps (send chunk r-s right, add chunk r-s-1 from the left), then n-1
    all-gather steps (send chunk r+1-s right, store chunk r-s from the left)."""
    right, left = (rank + 1) % n, (rank - 1) % n
    scatter = [Step(((right, (rank - s) % n),), ((left, (rank - s - 1) % n),), True) for s in range(n - 1)]
    gather = [Step(((right, (rank + 1 - s) % n),), ((left, (rank - s) % n),), False) for s in range(n - 1)]
    return scatter + gather


def ps_steps(rank: int, n: int) -> list[Step]:
    """Sharded parameter server, shard k on rank k: push (send chunk p to every rank p, add the n contributions of
    chunk `rank`), then pull (send the summed chunk `rank` to every rank, store chunk p from rank p)."""
    others = [p for p in range(n) if p != rank]
    if not others:
        return []
    push = Step(tuple((p, p) for p in others), tuple((p, rank) for p in others), True)
    pull = Step(tuple((p, rank) for p in others), tuple((p, p) for p in others), False)
    return [push, pull]


def peers_of(steps: Sequence[Step]) -> set[int]:
    """The ranks a rank's steps exchange data with (the links it needs)."""
    return {p for s in steps for p, _ in (*s.sends, *s.recvs)}


def chunk_bounds(size: int, n: int) -> list[int]:
    """n+1 boundaries cutting size elements into n nearly equal chunks (chunk k = [b[k], b[k+1]))."""
    return [(k * size) // n for k in range(n + 1)]


def add_into(dst: np.ndarray, src: np.ndarray) -> None:
    """dst += src element-wise: float32 adds, int32 two's complement wrapping adds (no overflow warning)."""
    if dst.dtype == np.int32:
        dst.view(np.uint32)[:] += src.view(np.uint32)
    else:
        np.add(dst, src, out=dst)


class Chunks:
    """A rank's tensor (flat, reduced in place) cut into one chunk per rank, and what a step reads and writes."""

    def __init__(self, flat: np.ndarray, rank: int, n: int) -> None:
        self.flat = flat
        self.rank = rank
        self.bounds = chunk_bounds(flat.size, n)

    def chunk(self, k: int) -> np.ndarray:
        return self.flat[self.bounds[k]:self.bounds[k + 1]]

    def outgoing(self, step: Step) -> list[tuple[int, memoryview]]:
        """(peer, bytes to send) of a step."""
        return [(p, memoryview(self.chunk(k)).cast("B")) for p, k in step.sends]

    def incoming(self, step: Step) -> list[tuple[int, np.ndarray]]:
        """(peer, buffer to fill) of a step: a scratch array to add from, or the chunk itself to store into."""
        return [(p, np.empty_like(self.chunk(k)) if step.add else self.chunk(k)) for p, k in step.recvs]

    def combine(self, step: Step, received: Sequence[tuple[int, np.ndarray]]) -> None:
        """After a step's receives: sum each added chunk with this rank's copy in rank order (stored chunks are in
        place already)."""
        if not step.add:
            return
        by_chunk: dict[int, dict[int, np.ndarray]] = {}
        for (p, k), (_, buf) in zip(step.recvs, received):
            by_chunk.setdefault(k, {})[p] = buf
        for k, parts in by_chunk.items():
            own = self.chunk(k)
            parts[self.rank] = own
            order = sorted(parts)
            acc = parts[order[0]]  # own or a scratch buffer: both may be summed into
            for p in order[1:]:
                add_into(acc, parts[p])
            if acc is not own:
                own[:] = acc
