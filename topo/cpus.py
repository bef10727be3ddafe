"""Where an experiment's processes run: `CpuLayout`, the switches' CPUs and the hosts' CPUs.

On one machine the switch processes and the hosts' processes (workers, parameter server, background traffic) share
the CPUs. With the `split` layout each switch process gets a CPU of its own and the hosts' processes run on the
others (when there are at least twice as many CPUs as switch processes), as in a real network, where the switch is a
box of its own: a worker woken by its results then no longer preempts the switch (with 4 workers on 2 CPUs, shared,
the switch waited for a CPU a fifth of the time while 0.3 of the 2 CPUs stayed idle). `shared` leaves placement
to the kernel's scheduler. Processes are confined with `taskset` (util-linux), which the command line then shows.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["CPU_LAYOUTS", "CpuLayout"]

CPU_LAYOUTS = ("split", "shared")


@dataclass(frozen=True)
class CpuLayout:
    """The CPUs of the switch processes and of the hosts' processes; empty: any CPU (the scheduler decides)."""

    switches: tuple[int, ...] = ()
    hosts: tuple[int, ...] = ()

    @classmethod
    def plan(cls, mode: str, switches: int = 1, available: Iterable[int] | None = None) -> CpuLayout:
        """The layout `mode` gives `switches` switch processes on the `available` CPUs (default: the CPUs this
        process may use). `split` needs at least twice as many CPUs as switches (one each, and as many left for the
        hosts); with fewer it is `shared`."""
        if mode not in CPU_LAYOUTS:
            raise ValueError(f"unknown CPU layout {mode!r}; choose one of {', '.join(CPU_LAYOUTS)}")
        if switches < 1:
            raise ValueError(f"switches must be >= 1, got {switches}")
        cpus = sorted(os.sched_getaffinity(0) if available is None else set(available))
        if mode == "shared" or len(cpus) < 2 * switches:
            return cls()
        return cls(tuple(cpus[:switches]), tuple(cpus[switches:]))

    @property
    def split(self) -> bool:
        return bool(self.switches)

    @property
    def host_cpus(self) -> int:
        """CPUs the hosts' processes may use: the layout's, or every CPU of the machine when shared."""
        return len(self.hosts) or os.cpu_count() or 1

    def switch_argv(self, argv: Sequence[str], index: int = 0) -> list[str]:
        """argv confined to the CPU of switch process `index` (unchanged when shared)."""
        if not self.switches:
            return list(argv)
        return _taskset([self.switches[index % len(self.switches)]], argv)

    def host_argv(self, argv: Sequence[str]) -> list[str]:
        """argv confined to the hosts' CPUs (unchanged when shared)."""
        return _taskset(self.hosts, argv) if self.hosts else list(argv)

    def describe(self) -> str:
        """One line for result tables: 'switch on CPU 0, hosts on CPU 1' or 'shared (the scheduler places every
        process)'."""
        if not self.switches:
            return "shared (the scheduler places every process)"
        return f"switch{'es' if len(self.switches) > 1 else ''} on {_cpu_list(self.switches)}, hosts on " \
               f"{_cpu_list(self.hosts)}"


def _taskset(cpus: Iterable[int], argv: Sequence[str]) -> list[str]:
    return ["taskset", "-c", ",".join(map(str, cpus)), *argv]


def _cpu_list(cpus: Sequence[int]) -> str:
    return f"CPU{'s' if len(cpus) > 1 else ''} {', '.join(map(str, cpus))}"
