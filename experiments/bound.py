"""What bound a run: the network, the switch's CPU, the hosts' CPUs, or none of them (latency) — measured on the run,
classified by one stated rule.

A number from this testbed says something about the protocols only when the network was the limit; on two CPUs a
fast link often makes the emulator's switch or the workers the limit instead. Every run records:

- `link_busy`: the busiest worker link's bytes (either direction, Ethernet headers included) over what its rate
  carries in the run's time (None on unlimited veth links, which have no rate);
- `switch_busy`: the busiest switch process's CPU time over the run's time (a switch is one process: 1.0 = a CPU);
- `host_busy`: the host processes' CPU time (the workers', and the parameter servers' while serving) over the run's
  time times the CPUs the hosts may use;
- `veth_drops`: frames the kernel dropped on the switch's interfaces during the run (the emulator's drops, not the
  protocol's simulated loss).

The rule (`verdict`), in this order: a link at least `BUSY` busy → `network`; else a switch process at least `BUSY`
busy → `switch-cpu`; else the hosts' CPUs at least `BUSY` busy → `host-cpu`; else `latency` (round trips, timers,
start-up: nothing was saturated).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BUSY", "VERDICTS", "Bound", "verdict"]

BUSY = 0.8
"""A link or a CPU this busy over the run binds it."""
VERDICTS = ("network", "switch-cpu", "host-cpu", "latency")


@dataclass(frozen=True)
class Bound:
    """What one run used of each resource, as fractions of what it had."""

    link_busy: float | None
    switch_busy: float
    host_busy: float
    veth_drops: int = 0

    @property
    def verdict(self) -> str:
        return verdict(self)

    def describe(self) -> str:
        """One line: the verdict and the measurements behind it."""
        link = "unlimited links" if self.link_busy is None else f"busiest link {100 * self.link_busy:.0f} %"
        drops = f", {self.veth_drops} frames dropped by the kernel on the switch's veths" if self.veth_drops else ""
        return (f"bound: {self.verdict} ({link}, switch CPU {100 * self.switch_busy:.0f} %, hosts' CPUs "
                f"{100 * self.host_busy:.0f} %{drops}; rule: the first of link, switch, hosts at >= "
                f"{100 * BUSY:.0f} %, else latency)")


def verdict(b: Bound) -> str:
    """network, switch-cpu, host-cpu or latency, by the module's rule."""
    if b.link_busy is not None and b.link_busy >= BUSY:
        return "network"
    if b.switch_busy >= BUSY:
        return "switch-cpu"
    if b.host_busy >= BUSY:
        return "host-cpu"
    return "latency"
