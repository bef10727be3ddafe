"""What bound a run: the network, a busy machine, the switch's CPU, the hosts' CPUs, the transport's losses and
stalls, or none of them (latency) — measured on the run, classified by one stated rule.

A number from this testbed says something about the protocols only when the network was the limit; on two CPUs a
fast link often makes the emulator's switch or the workers the limit instead, a shared machine takes CPUs away from
both, and a transport that resends can fill a link with copies. Every run records:

- `link_busy`: the busiest worker link's bytes (either direction, Ethernet headers included) over what its rate
  carries in the run's time (None on unlimited veth links, which have no rate);
- `switch_busy`: the busiest switch process's CPU time over the run's time (a switch is one process: 1.0 = a CPU);
- `host_busy`: the host processes' CPU time (the workers', and the parameter servers' while serving) over the run's
  time times the CPUs the hosts may use;
- `switch_wait`, `host_wait`: the time the switch process (the one that waited most) and the host processes (on
  average) were runnable but waiting for a CPU, over the run's time (the scheduler's count, worker.schedstat);
- `outside`: CPU time that processes other than the run's used meanwhile, and the hypervisor's steal
  (experiments.load), in CPUs;
- `retransmitted`: packets sent again over packets sent (an in-network protocol's retransmissions; TCP's
  retransmitted segments for the host baselines), the job's workers together;
- `queue_drops`, `tcp_timeouts`: packets the rate-limiting qdiscs dropped on the job's links, and TCP retransmission
  timeouts in the job's hosts;
- `efficiency`: the tensor's bytes over the busiest worker link's bytes (one direction): how much of what a link
  carried was the payload one copy of the data needs (headers, acknowledgements, resends and, for ring, its two
  passes lower it);
- `veth_drops`: frames the kernel dropped on the switch's interfaces during the run (the emulator's drops, not the
  protocol's simulated loss).

The rule (`verdict`), in this order:
1. a link at least `BUSY` busy → `network`, unless at least `WASTE` of the packets were resends → `retransmissions`
   (the link was full, but of copies: a ratio between two such runs compares waste, not protocols);
2. the switch or the hosts waited at least `WAIT` of the run for a CPU while other processes used at least
   `OUTSIDE` CPUs → `contended` (the machine was shared; the CPU figures below measure the sharing);
3. a switch process at least `BUSY` busy → `switch-cpu`; the hosts' CPUs at least `BUSY` busy → `host-cpu`;
4. at least `STALL` of the packets resent (a loss or a queue drop costs one each), or a TCP retransmission timeout
   → `transport` (the time went to repairing losses: timers, not round trips);
5. else `latency` (round trips, start-up: nothing was saturated, nothing was lost).

Thresholds: `BUSY` 80 % (a resource this busy over a whole run, start-up and tail included, is the one that paced
it). `WAIT` 20 %: alone on this machine the switch and the hosts wait under 10 % of a run (measured: docs/
experiments.md, "Bound verdicts"), beside a busy loop per CPU 35–60 %; a fifth of the run spent waiting is time the
run lost to someone else. `OUTSIDE` 0.25 CPUs: a quiet machine's daemons use a few hundredths; the condition keeps
the run's own processes, which wait for each other when they share a CPU, from reading as a busy machine. `WASTE`
25 %: the shipped loss scenarios (up to 1 % loss) resend under 10 % of their packets; past a quarter, more than a
third of the link's time carries copies of what it already carried. `STALL` 1 %: every loss costs at least one
timeout (1 ms for SwitchML's first, 200 ms for TCP's), tens to thousands of packet times each, so one loss in a
hundred packets is already a visible share of the run.
"""

from __future__ import annotations

from dataclasses import dataclass

from experiments.load import OutsideLoad

__all__ = ["BUSY", "OUTSIDE", "STALL", "VERDICTS", "WAIT", "WASTE", "Bound", "verdict"]

BUSY = 0.8
"""A link or a CPU this busy over the run binds it."""
WAIT = 0.2
"""The share of the run the switch or the hosts spent waiting for a CPU that makes a run `contended`..."""
OUTSIDE = 0.25
"""... while other processes used at least this many CPUs."""
WASTE = 0.25
"""A busy link's run whose resent share of packets is at least this reads `retransmissions`, not `network`."""
STALL = 0.01
"""An unsaturated run whose resent share of packets is at least this reads `transport`."""
VERDICTS = ("network", "retransmissions", "contended", "switch-cpu", "host-cpu", "transport", "latency")


@dataclass(frozen=True)
class Bound:
    """What one run used of each resource, as fractions of what it had, and what its transport lost and resent."""

    link_busy: float | None
    switch_busy: float
    host_busy: float
    veth_drops: int = 0
    switch_wait: float = 0.0
    host_wait: float = 0.0
    outside: OutsideLoad = OutsideLoad()
    retransmitted: float = 0.0
    queue_drops: int = 0
    tcp_timeouts: int = 0
    efficiency: float | None = None

    @property
    def verdict(self) -> str:
        return verdict(self)

    def describe(self) -> str:
        """One line: the verdict and the measurements behind it."""
        link = "unlimited links" if self.link_busy is None else f"busiest link {100 * self.link_busy:.0f} %"
        waited = max(self.switch_wait, self.host_wait)
        wait = (f", waited for a CPU: switch {100 * self.switch_wait:.0f} %, hosts {100 * self.host_wait:.0f} % "
                f"({self.outside.describe()})") if waited >= WAIT / 2 or self.outside.cpus >= OUTSIDE else ""
        transport = f", resent {100 * self.retransmitted:.1f} % of packets" if self.retransmitted else ""
        transport += f", {self.queue_drops} queue drops" if self.queue_drops else ""
        transport += f", {self.tcp_timeouts} TCP timeouts" if self.tcp_timeouts else ""
        eff = f", efficiency {100 * self.efficiency:.0f} %" if self.efficiency is not None else ""
        drops = f", {self.veth_drops} frames dropped by the kernel on the switch's veths" if self.veth_drops else ""
        return (f"bound: {self.verdict} ({link}, switch CPU {100 * self.switch_busy:.0f} %, hosts' CPUs "
                f"{100 * self.host_busy:.0f} %{wait}{transport}{eff}{drops}; rule: experiments/bound.py)")


def verdict(b: Bound) -> str:
    """One of VERDICTS, by the module's rule."""
    if b.link_busy is not None and b.link_busy >= BUSY:
        return "retransmissions" if b.retransmitted >= WASTE else "network"
    if max(b.switch_wait, b.host_wait) >= WAIT and b.outside.cpus >= OUTSIDE:
        return "contended"
    if b.switch_busy >= BUSY:
        return "switch-cpu"
    if b.host_busy >= BUSY:
        return "host-cpu"
    if b.retransmitted >= STALL or b.tcp_timeouts > 0:
        return "transport"
    return "latency"
