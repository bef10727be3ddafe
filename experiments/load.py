"""The machine's load from outside a run: CPU time that processes other than the run's used while it ran.

A run's own processes are this one (the runner), its children (workers and parameter servers, counted when reaped,
start-up included) and the switch processes (read by the caller from their schedstat). Everything else the
machine's CPUs did in user or system time (/proc/stat) is someone else's: a build beside the run, another user's
job. The hypervisor's steal is reported beside it: CPU time the machine did not get at all. Interrupt and softirq
time is left out (the kernel forwarding the run's own packets between veths).
"""

from __future__ import annotations

import os
import resource
import time
from pathlib import Path
from typing import NamedTuple

__all__ = ["MachineClock", "OutsideLoad"]

_TICK = os.sysconf("SC_CLK_TCK")


class OutsideLoad(NamedTuple):
    """Over a run: other processes' CPU time and the hypervisor's steal, in CPUs (seconds per second of the run)."""

    others_cpus: float = 0.0
    steal_cpus: float = 0.0

    @property
    def cpus(self) -> float:
        return self.others_cpus + self.steal_cpus

    def describe(self) -> str:
        steal = f", hypervisor steal {self.steal_cpus:.2f}" if self.steal_cpus >= 0.01 else ""
        return f"other processes {self.others_cpus:.2f} CPUs{steal}"


class MachineClock(NamedTuple):
    """One reading: the machine's busy and stolen CPU seconds, this process's and its reaped children's, and the
    wall clock."""

    busy_s: float
    steal_s: float
    ours_s: float
    wall_s: float

    @classmethod
    def now(cls) -> MachineClock:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
        user, nice, system = (int(v) for v in fields[:3])
        steal = int(fields[7]) if len(fields) > 7 else 0
        me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return cls((user + nice + system) / _TICK, steal / _TICK,
                   me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime, time.monotonic())

    def outside(self, since: MachineClock, others_ours_s: float = 0.0) -> OutsideLoad:
        """The load from outside between `since` and this reading; `others_ours_s`: CPU seconds of the run's
        processes that are not this one's reaped children (the switches)."""
        wall = self.wall_s - since.wall_s
        if wall <= 0:
            return OutsideLoad()
        others = (self.busy_s - since.busy_s) - (self.ours_s - since.ours_s) - others_ours_s
        return OutsideLoad(max(0.0, others) / wall, max(0.0, self.steal_s - since.steal_s) / wall)
