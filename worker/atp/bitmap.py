"""ATP's contribution bitmaps: the bit of `bitmap0` a worker stands for, and the workers a packet's bitmaps name.

atp.p4's `bitmap0` (workers) and `bitmap1` (racks) are 32 bits wide. In a job of at most 32 workers a worker's bit is
its rank, job-wide, so the PS tells every contribution apart whichever switch merged it. A wider job — two levels,
at most 32 racks of at most 32 workers — gives each worker the bit of its place in its rack (its index among the
rack's workers by rank), and `bitmap1` says which racks. A packet of one rack then names its workers exactly, and so
does a completed second-level aggregate (it merges complete rack aggregates only). A second-level aggregate flushed
by a RESEND may hold complete racks and one rack's partial aggregate, which the bitmaps cannot tell apart:
`Contributions.ranks` returns None, and the PS leaves those contributions to the retransmissions, which reach it
rack by rack or worker by worker (the flush freed the aggregator).
"""

from __future__ import annotations

from worker.atp.header import RESEND
from worker.job import JobConfig

__all__ = ["BITS", "Contributions"]

BITS = 32
"""Width of bitmap0 and bitmap1 (workers per first-level switch, racks per second-level one)."""


class Contributions:
    """A job's map between its workers' ranks and the bits of ATP packets."""

    def __init__(self, job: JobConfig) -> None:
        self.wide = job.num_workers > BITS
        """Bits are places in racks (more workers than bitmap0 has bits), not ranks."""
        self.racks: dict[int, list[int]] = {}
        """Rack -> its workers' ranks, in order of place."""
        for w in job.workers:
            self.racks.setdefault(w.rack, []).append(w.rank)
        self.all = (1 << job.num_workers) - 1
        if self.wide:
            big = {r: len(ranks) for r, ranks in self.racks.items() if len(ranks) > BITS}
            if big:
                rack, n = next(iter(big.items()))
                raise ValueError(f"job {job.job_id}: rack {rack} has {n} workers, but an ATP packet carries a "
                                 f"{BITS}-bit worker bitmap: at most {BITS} per rack (first-level switch)")
        self._place = {rank: i for ranks in self.racks.values() for i, rank in enumerate(ranks)}
        self._full = {r: sum(1 << rank for rank in ranks) for r, ranks in self.racks.items()}

    def bit(self, rank: int) -> int:
        """The bit of bitmap0 that stands for `rank`."""
        return self._place[rank] if self.wide else rank

    def ranks(self, bitmap0: int, bitmap1: int, flags: int) -> int | None:
        """The contributions a packet carries, as a mask of ranks (bit r: rank r); None when its bitmaps cannot
        name them (a wide job's flushed multi-rack aggregate, see the module)."""
        if not self.wide:
            return bitmap0 & self.all
        racks = [r for r in self.racks if bitmap1 >> r & 1]
        if len(racks) == 1:
            ranks = self.racks[racks[0]]
            return sum(1 << rank for i, rank in enumerate(ranks) if bitmap0 >> i & 1)
        if racks and flags & RESEND:
            return None
        return sum(self._full[r] for r in racks)
