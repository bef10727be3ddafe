"""What an experiment measured: each worker's report, the switches' counters, the links' traffic and the bound
(`ExperimentResult`, whose `table()` `make run` prints), and what a fault plan did (`fault_report`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.programs import CONTROLLERS
from experiments.bound import Bound
from experiments.config import ExperimentConfig
from topo.cpus import CpuLayout
from worker.launch import WorkerOutcome

__all__ = ["ExperimentResult", "fault_report"]


@dataclass
class ExperimentResult:
    """Outcome of an experiment: per-worker reports and the switch's counters for the job."""

    config: ExperimentConfig
    workers: list[WorkerOutcome]
    counters: dict[str, tuple[int, int]]
    switch_log: Path
    ps: dict[str, Any] | None = None
    """ATP: the parameter server's statistics for the job (worker.atp.ps.PsStats fields)."""
    links: dict[str, tuple[int, int]] = field(default_factory=dict)
    """(packets, bytes) that crossed each metered group of links during the run, both directions (the PS's link;
    two-tier: the racks' uplinks); every job of a run shares the same figures."""
    switch_counters: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)
    """The job's counters per switch (a network of several switches; `counters` is their sum)."""
    missing_ranks: list[int] = field(default_factory=list)
    """After a failed run: the ranks absent from every partial aggregate left in the switches (and, for ATP, at
    the PS) — the workers that died or never sent."""
    cpu_layout: CpuLayout = field(default_factory=CpuLayout)
    """Where the switch and host processes ran."""
    wire: tuple[int, int] = (0, 0)
    """(frames, bytes) the job's worker hosts sent into the network during the run, as their switch ports received
    them: the same measure for every protocol (INA packets and their retransmissions; TCP segments, ACKs and ARP)."""
    bound: Bound | None = None
    """What bound the run (experiments.bound): the links', the switch's and the hosts' use, and the verdict."""

    @property
    def correct(self) -> bool:
        return bool(self.workers) and all(w.ok for w in self.workers)

    @property
    def elapsed_s(self) -> float:
        """Time of the slowest worker's all-reduce."""
        return max((float(w.report.get("elapsed_s", 0.0)) for w in self.workers), default=0.0)

    @property
    def goodput(self) -> float:
        """Tensor elements all-reduced per second (the slowest worker's view)."""
        return self.config.size / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def retransmissions(self) -> int:
        return sum(int(w.report.get("retransmissions", 0)) for w in self.workers)

    @property
    def link_utilisation(self) -> float | None:
        """Goodput in bits of tensor per second over the link rate (None without --bw)."""
        if self.config.bw is None:
            return None
        return self.goodput * 32 / (self.config.bw * 1e6)

    def table(self) -> str:
        """The human-readable summary printed by `make run`."""
        c = self.config
        rate = f", links {c.bw:g} Mbit/s" if c.bw is not None else ""
        shape = "" if c.topo == "star" else f", {c.fabric().describe()}"
        shape += f", fault plan {c.fault_plan}" if c.fault_plan is not None else ""
        lines = [f"{c.protocol} all-reduce of {c.size} {c.dtype} elements, {c.workers} workers, loss {c.loss:g}{rate}, "
                 f"target {c.target.value}, seed {c.seed}{shape}",
                 f"CPUs: {self.cpu_layout.describe()}",
                 "",
                 f"{'rank':>4}  {'correct':^7}  {'elements':>9}  {'time s':>8}  {'goodput elem/s':>14}  "
                 f"{'packets':>8}  {'retx':>6}  {'max err/bound':>13}"]
        failures: dict[str, list[int]] = {}  # one message, every rank that gave it (a restart fails them all alike)
        for w in self.workers:
            r = w.report
            ratio = r.get("max_error_over_bound")
            lines.append(f"{w.rank:>4}  {'✓' if w.ok else '✗':^7}  {r.get('elements', 0):>9}  "
                         f"{float(r.get('elapsed_s', 0)):>8.3f}  {float(r.get('goodput_elems_per_s', 0)):>14.0f}  "
                         f"{r.get('packets_sent', 0):>8}  {r.get('retransmissions', 0):>6}  "
                         f"{'-' if ratio is None else f'{ratio:.3f}':>13}")
            if not w.ok:
                message = f"exit {w.exit_code}: {(r.get('error') or w.stderr or 'no output').strip()}"
                failures.setdefault(message, []).append(w.rank)
        for message, ranks in failures.items():
            lines.append(f"      rank{'s' if len(ranks) > 1 else ''} {', '.join(map(str, ranks))}: {message}")
        lines += ["", f"{'all':>4}  {'✓' if self.correct else '✗':^7}  {c.size:>9}  {self.elapsed_s:>8.3f}  "
                      f"{self.goodput:>14.0f}  {'':>8}  {self.retransmissions:>6}"]
        if self.missing_ranks:
            lines.append(f"\nmissing: rank{'s' if len(self.missing_ranks) > 1 else ''} "
                         f"{', '.join(map(str, self.missing_ranks))} (absent from every partial aggregate left in "
                         f"the switch{' and at the PS' if self.ps is not None else ''})")
        if self.link_utilisation is not None:
            lines.append(f"\ngoodput {self.goodput * 32 / 1e6:.1f} Mbit/s of tensor data = "
                         f"{100 * self.link_utilisation:.1f} % of the {c.bw:g} Mbit/s link rate")
        if self.ps is not None:
            p = self.ps
            lines += ["", f"where contributions were aggregated: {100 * float(p.get('switch_fraction', 0)):.1f} % in "
                          f"the switch, {100 - 100 * float(p.get('switch_fraction', 0)):.1f} % at the PS "
                          f"({p.get('contributions_in_switch', 0)} / {p.get('contributions_at_ps', 0)}); PS: "
                          f"{p.get('completed', 0)} sequences, {p.get('collisions', 0)} collisions, "
                          f"{p.get('raw_sequences', 0)} raw resends, {p.get('duplicates', 0)} duplicates"]
        if self.bound is not None:
            lines += ["", self.bound.describe()]
        if self.links:
            lines += ["", "link traffic (both directions): " + ", ".join(
                f"{name} {p} packets / {b / 1e6:.2f} MB" for name, (p, b) in self.links.items())]
        prefix = CONTROLLERS[c.program].COUNTER_PREFIX
        blocks = self.switch_counters if len(self.switch_counters) > 1 else {"": self.counters}
        shown = [(sw, cs) for sw, cs in blocks.items() if any(p for p, _ in cs.values())]
        lines += [""] if shown else []
        for sw, cs in shown:
            lines.append(f"switch {sw + ' ' if sw else ''}counters (packets): " + ", ".join(
                f"{name.removeprefix(prefix)}={p}" for name, (p, _) in cs.items() if p))
        return "\n".join(lines)


def fault_report(cfg: ExperimentConfig, switch_log: Path) -> str:
    """What a fault plan asked for (its rules by name, a restart) and what the switch injected (its log's last
    `faults injected:` line, written when it stops)."""
    compiled, restart = cfg.compiled_fault_plan()
    asked = [r["name"] for r in compiled["rules"]] + [f"reset {e['reset_register']} at frame {e['at_frame']}"
                                                      for e in compiled["events"]]
    asked += [f"restart the switch {restart:g} s into the all-reduce"] if restart is not None else []
    injected = "not reported (the switch log has no `faults injected:` line)"
    try:
        found = [ln for ln in switch_log.read_text().splitlines() if ln.startswith("faults injected:")]
        injected = found[-1].removeprefix("faults injected:").strip() if found else injected
    except OSError:
        pass
    return f"fault plan {cfg.fault_plan} asks: {'; '.join(asked) or 'nothing'}\nfaults the switch injected: {injected}"
