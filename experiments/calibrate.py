"""Link rates calibrated to the switch (`BW=auto`, scenario `bw_mbps = "auto"`): the highest rate at which the links,
not the emulator's switch, bind a run.

A probe all-reduce on unlimited links measures what the switch process spends per bit its workers send: its CPU
seconds over the bits that crossed the workers' uplinks (`ExperimentResult.wire`, `Bound.switch_busy`), and the same
for the worker processes together (`Bound.host_busy` times the hosts' CPUs). The probe need not saturate anything:
the cost per bit is what counts. With every one of n workers sending at link rate b, the switch then needs n·b·cost
of a CPU; the chosen rate is the highest of the 1-2-5 series at which that stays at or below `SWITCH_SHARE` (60 %) of
one CPU — and the workers' need at or below the same share of the CPUs the hosts have, or the hosts, not the links,
would bind the run (`Calibration.limit` says which of the two set the rate). A run at that rate leaves both a margin
below the bound verdict's 80 %, so the links bind first. A scenario with several protocols takes the lowest of their
rates (one network, one rate: the comparison stays on equal links).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from typing import Callable

from experiments.config import ExperimentConfig
from experiments.session import ExperimentNetwork

__all__ = ["PROBE_SIZE", "SWITCH_SHARE", "Calibration", "calibrate", "common_rate", "choose_rate", "nice_floor"]

SWITCH_SHARE = 0.6
"""The share of a CPU the switch may use at full offered load on the calibrated links."""
PROBE_SIZE = 262_144
"""Elements each worker all-reduces in the probe (1 MiB of float32: thousands of packets, a few seconds)."""
MIN_RATE = 0.1


def nice_floor(x: float) -> float:
    """The largest 1-2-5 series value (… 0.5, 1, 2, 5, 10, 20 …) not above x (at least MIN_RATE)."""
    if x <= MIN_RATE:
        return MIN_RATE
    decade = 10 ** math.floor(math.log10(x))
    best = MIN_RATE
    for d in (decade / 10, decade):
        for m in (1, 2, 5):
            v = round(m * d, 6)
            if v <= x + 1e-9:
                best = max(best, v)
    return best


def choose_rate(cpu_s: float, uplink_bits: float, workers: int, cpus: float = 1.0,
                share: float = SWITCH_SHARE) -> float:
    """Mbit/s per link at which `workers` saturated uplinks keep a process (or processes with `cpus` CPUs) at `share`
    of their CPU, given a probe in which they spent cpu_s for uplink_bits."""
    if cpu_s <= 0 or uplink_bits <= 0:
        raise ValueError("the probe measured no CPU time or no traffic: nothing to calibrate from")
    return nice_floor(share * cpus * uplink_bits / cpu_s / workers / 1e6)


@dataclass(frozen=True)
class Calibration:
    """One probe and the rate it gives."""

    protocol: str
    workers: int
    target: str
    size: int
    elapsed_s: float
    switch_cpu_s: float
    uplink_bits: float
    hosts_cpu_s: float
    host_cpus: int
    available: float
    """The share of the machine's CPUs the run had: 1 less what processes outside it used during the probe (a busy
    machine leaves the switch and the hosts less, and the rate follows)."""
    switch_mbps: float
    """The rate the switch's cost allows."""
    hosts_mbps: float
    """The rate the workers' cost allows."""

    @property
    def bw_mbps(self) -> float:
        return min(self.switch_mbps, self.hosts_mbps)

    @property
    def limit(self) -> str:
        """What set the rate: "switch" or "hosts"."""
        return "switch" if self.switch_mbps <= self.hosts_mbps else "hosts"

    @property
    def service_mbps(self) -> float:
        """Uplink Mbit/s the switch would serve with a whole CPU."""
        return self.uplink_bits / self.switch_cpu_s / 1e6

    def describe(self) -> str:
        return (f"{self.protocol}, {self.workers} workers, {self.target}: a probe of {self.size} elements on unlimited "
                f"links took {self.elapsed_s:.2f} s, the workers sent {self.uplink_bits / 1e6:.1f} Mbit; the switch "
                f"used {self.switch_cpu_s:.2f} CPU s ({self.service_mbps:.0f} Mbit/s per CPU: links up to "
                f"{self.switch_mbps:g} Mbit/s keep it <= {100 * SWITCH_SHARE:.0f} % busy), the workers "
                f"{self.hosts_cpu_s:.2f} CPU s on {self.host_cpus} CPU(s) (links up to {self.hosts_mbps:g} Mbit/s): "
                f"{self.bw_mbps:g} Mbit/s, set by the {self.limit}"
                + (f" (the machine was shared: {100 * self.available:.0f} % of its CPUs left to the run)"
                   if self.available < 0.95 else ""))


def calibrate(cfg: ExperimentConfig, size: int = PROBE_SIZE,
              open_network: Callable[[ExperimentConfig], ExperimentNetwork] | None = None) -> Calibration:
    """Probe cfg's protocol, workers and target on unlimited links (a network of its own) and choose the rate."""
    probe = replace(cfg, bw=None, size=size, loss=0.0, fault_plan=None, trace=None, pcap=False,
                    kill_switch_after_s=None, kill_rank_after=None, restart_switch_after_s=None, straggler_ms=0.0)
    net = (open_network or (lambda c: ExperimentNetwork(c).__enter__()))(probe)
    try:
        result = net.run(probe)
    finally:
        net.close()
    if not result.correct or result.bound is None:
        raise RuntimeError(f"the calibration probe ({probe.protocol}, {probe.workers} workers) failed:\n"
                           f"{result.table()}")
    cpus = result.cpu_layout.host_cpus
    switch_cpu = result.bound.switch_busy * result.elapsed_s
    hosts_cpu = result.bound.host_busy * result.elapsed_s * cpus
    bits = result.wire[1] * 8.0
    available = max(0.1, 1.0 - result.bound.outside.cpus / (os.cpu_count() or 1))
    return Calibration(probe.protocol, probe.workers, probe.target.value, size, result.elapsed_s, switch_cpu, bits,
                       hosts_cpu, cpus, available, choose_rate(switch_cpu, bits, probe.workers, available),
                       choose_rate(hosts_cpu, bits, probe.workers, cpus * available))


def common_rate(cfgs: list[ExperimentConfig], log: Callable[[str], None] = print) -> tuple[float, list[Calibration]]:
    """One rate for several protocols on one network: each probed (`calibrate`, logged), the lowest rate taken, so
    the comparison stays on equal links."""
    cals = []
    for cfg in cfgs:
        cal = calibrate(cfg)
        log(f"calibration: {cal.describe()}")
        cals.append(cal)
    return min(c.bw_mbps for c in cals), cals
