"""A start barrier for the worker processes of one job, through a shared directory.

Each worker creates `<dir>/ready-<rank>` once it is set up (job loaded, input generated, socket bound) and waits
until all ranks' files exist, so the all-reduce is timed from a common start instead of including the other
processes' Python start-up (hundreds of ms on a loaded machine). A worker that fails before the barrier creates
`<dir>/failed-<rank>` instead (`mark_failed`), which releases the others at once with an error rather than after the
timeout. Mininet hosts share the file system; the runner gives every run a fresh directory.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

__all__ = ["BarrierError", "BarrierTimeout", "PeerFailed", "file_barrier", "mark_failed"]


class BarrierError(RuntimeError):
    """The barrier directory cannot be used."""


class BarrierTimeout(BarrierError):
    """Not every worker reached the barrier in time."""


class PeerFailed(BarrierError):
    """Another worker failed before reaching the barrier."""


def file_barrier(directory: str | Path, rank: int, parties: int, timeout: float, poll: float = 0.002) -> float:
    """Mark rank ready in directory and wait until ranks 0..parties-1 all are; returns the seconds waited."""
    d = Path(directory)
    try:
        d.mkdir(parents=True, exist_ok=True)
        (d / f"ready-{rank}").touch()
    except OSError as exc:
        raise BarrierError(f"start barrier {d}: {exc.strerror or exc}") from None
    wanted = {f"ready-{r}" for r in range(parties)}
    start = time.monotonic()
    while True:
        names = os.listdir(d)
        failed = sorted(int(n.removeprefix("failed-")) for n in names if n.startswith("failed-"))
        if failed:
            raise PeerFailed(f"start barrier {d}: rank(s) {failed} failed before the start (see their errors)")
        missing = wanted.difference(names)
        if not missing:
            return time.monotonic() - start
        waited = time.monotonic() - start
        if waited > timeout:
            ranks = sorted(int(m.removeprefix("ready-")) for m in missing)
            raise BarrierTimeout(f"start barrier {d}: rank(s) {ranks} not ready after {waited:.1f} s "
                                 "(did every worker of the job start?)")
        time.sleep(poll)


def mark_failed(directory: str | Path, rank: int) -> None:
    """Tell the other ranks waiting at the barrier that rank will not come (best effort)."""
    try:
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        (d / f"failed-{rank}").touch()
    except OSError:
        pass
