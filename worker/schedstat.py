"""How long a process ran and how long it waited for a CPU, from the scheduler's own counts.

`/proc/PID/task/TID/schedstat` holds, per thread, nanoseconds on a CPU and nanoseconds runnable but waiting on a run
queue (Documentation/scheduler/sched-stats.rst). Waiting is what a busy machine does to a run: a process that was
ready to work while another held the CPU. /proc's utime and stime tick at 10 ms and say nothing about waiting.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

__all__ = ["SchedTimes", "sched_times"]


class SchedTimes(NamedTuple):
    """Seconds on a CPU and seconds waiting for one, summed over a process's threads; subtract two readings."""

    cpu_s: float = 0.0
    wait_s: float = 0.0

    def __sub__(self, other: tuple[float, ...]) -> SchedTimes:  # type: ignore[override]
        return SchedTimes(self.cpu_s - other[0], self.wait_s - other[1])

    def __add__(self, other: tuple[float, ...]) -> SchedTimes:  # type: ignore[override]
        return SchedTimes(self.cpu_s + other[0], self.wait_s + other[1])


def sched_times(pid: int | str = "self") -> SchedTimes:
    """The live threads of `pid` (threads that ended are not counted); zeros if the process is gone or the kernel
    keeps no schedstat (CONFIG_SCHED_INFO off)."""
    run = wait = 0
    for stat in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        try:
            fields = stat.read_text().split()
            run, wait = run + int(fields[0]), wait + int(fields[1])
        except (OSError, ValueError, IndexError):  # the thread ended meanwhile
            pass
    return SchedTimes(run / 1e9, wait / 1e9)
