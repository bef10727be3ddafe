"""The all-reduce benchmark's grid: WORKERS x LOSS cells of repeated runs, run and written the same way for this
tree (`experiments.bench.allreduce`) and for another version of the project (`experiments.bench.compare`)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from experiments.rows import SETUP_ATTEMPTS, write_dicts
from experiments.config import ExperimentConfig
from experiments.result import ExperimentResult
from experiments.session import run_experiment

__all__ = ["CSV_FIELDS", "Cell", "RunRow", "ratios_by_repetition", "run_grid", "write_csv"]

CSV_FIELDS = ("workers", "loss", "rep", "size", "verified", "goodput_elems_per_s", "elapsed_s", "max_error_over_bound",
              "packets_sent", "retransmissions", "fast_retransmissions", "timeouts", "worker_cpu_s", "switch_received",
              "switch_drop_sim", "error")


@dataclass
class RunRow:
    """One run of the grid, as written to the CSV."""

    workers: int
    loss: float
    rep: int
    size: int
    verified: bool
    goodput: float
    elapsed_s: float
    max_error_over_bound: float | None
    packets_sent: int
    retransmissions: int
    fast_retransmissions: int
    timeouts: int
    worker_cpu_s: float
    """CPU time of all workers together during their all-reduce."""
    switch_received: int
    switch_drop_sim: int
    error: str = ""

    @classmethod
    def from_result(cls, rep: int, r: ExperimentResult) -> RunRow:
        reports = [w.report for w in r.workers]
        ratios = [float(x["max_error_over_bound"]) for x in reports if x.get("max_error_over_bound") is not None]
        errors = [f"rank {w.rank}: exit {w.exit_code}: {(w.report.get('error') or w.stderr or 'no output').strip()}"
                  for w in r.workers if not w.ok]
        c = r.counters
        return cls(
            workers=r.config.workers, loss=r.config.loss, rep=rep, size=r.config.size, verified=r.correct,
            goodput=r.goodput if r.correct else 0.0, elapsed_s=r.elapsed_s,
            max_error_over_bound=max(ratios) if ratios else None,
            packets_sent=sum(int(x.get("packets_sent", 0)) for x in reports),
            retransmissions=r.retransmissions,
            fast_retransmissions=sum(int(x.get("fast_retransmissions", 0)) for x in reports),
            timeouts=sum(int(x.get("timeouts", 0)) for x in reports),
            worker_cpu_s=sum(float(x.get("cpu_s", 0.0)) for x in reports),
            switch_received=c.get("ina_received", (0, 0))[0],
            switch_drop_sim=c.get("ina_drop_sim_ingress", (0, 0))[0] + c.get("ina_drop_sim_egress", (0, 0))[0],
            error="; ".join(errors)[:500],
        )

    @classmethod
    def from_csv(cls, d: dict[str, str]) -> RunRow:
        """A row as `csv_row` wrote it (columns an older version lacks are zero)."""
        def num(key: str) -> float:
            return float(d[key]) if d.get(key) not in (None, "") else 0.0
        return cls(workers=int(num("workers")), loss=num("loss"), rep=int(num("rep")), size=int(num("size")),
                   verified=bool(num("verified")), goodput=num("goodput_elems_per_s"), elapsed_s=num("elapsed_s"),
                   max_error_over_bound=num("max_error_over_bound") if d.get("max_error_over_bound") else None,
                   packets_sent=int(num("packets_sent")), retransmissions=int(num("retransmissions")),
                   fast_retransmissions=int(num("fast_retransmissions")), timeouts=int(num("timeouts")),
                   worker_cpu_s=num("worker_cpu_s"), switch_received=int(num("switch_received")),
                   switch_drop_sim=int(num("switch_drop_sim")), error=d.get("error") or "")

    def csv_row(self) -> dict[str, object]:
        return {"workers": self.workers, "loss": self.loss, "rep": self.rep, "size": self.size,
                "verified": int(self.verified), "goodput_elems_per_s": round(self.goodput),
                "elapsed_s": round(self.elapsed_s, 6),
                "max_error_over_bound": "" if self.max_error_over_bound is None else self.max_error_over_bound,
                "packets_sent": self.packets_sent, "retransmissions": self.retransmissions,
                "fast_retransmissions": self.fast_retransmissions, "timeouts": self.timeouts,
                "worker_cpu_s": round(self.worker_cpu_s, 6),
                "switch_received": self.switch_received, "switch_drop_sim": self.switch_drop_sim,
                "error": self.error}


@dataclass
class Cell:
    """All runs of one (workers, loss) configuration."""

    workers: int
    loss: float
    runs: list[RunRow] = field(default_factory=list)
    setup_failures: int = 0
    """Runs whose network or switch did not come up (retried; not an all-reduce result)."""

    @property
    def good(self) -> list[RunRow]:
        return [r for r in self.runs if r.verified]

    @property
    def goodputs(self) -> list[float]:
        return [r.goodput for r in self.good]

    @property
    def median(self) -> float | None:
        return statistics.median(self.goodputs) if self.goodputs else None

    def median_of(self, attr: str) -> float | None:
        vals = [getattr(r, attr) for r in self.good]
        return statistics.median(vals) if vals else None


def run_grid(workers: Sequence[int], losses: Sequence[float], reps: int, base: ExperimentConfig,
             log: Callable[[str], None] = print) -> list[Cell]:
    """Run the grid, repetitions interleaved; a run that raises is recorded as unverified with its error."""
    cells = {(n, loss): Cell(n, loss) for n in workers for loss in losses}
    for rep in range(1, reps + 1):
        for (n, loss), cell in cells.items():
            cfg = replace(base, workers=n, loss=loss, seed=base.seed + rep)
            t0 = time.monotonic()
            for attempt in range(1, SETUP_ATTEMPTS + 1):
                try:
                    row = RunRow.from_result(rep, run_experiment(cfg))
                    break
                except Exception as exc:  # the network or switch did not come up: retried, then reported
                    row = RunRow(n, loss, rep, cfg.size, False, 0.0, 0.0, None, 0, 0, 0, 0, 0.0, 0, 0,
                                 error=f"setup failed: {str(exc).strip()}"[:500])
                    cell.setup_failures += 1
                    log(f"workers={n} loss={loss:g} rep={rep}: setup attempt {attempt} failed: {exc}")
                    time.sleep(1.0)
            cell.runs.append(row)
            verdict = "verified" if row.verified else f"NOT VERIFIED ({row.error or 'no detail'})"
            log(f"workers={n} loss={loss:g} rep={rep}: {row.goodput:,.0f} elem/s, {row.retransmissions} retx, "
                f"{verdict} [{time.monotonic() - t0:.1f} s]")
    return list(cells.values())


def write_csv(cells: Sequence[Cell], path: Path) -> None:
    write_dicts(path, CSV_FIELDS, (r.csv_row() for cell in cells for r in cell.runs))


def ratios_by_repetition(base: Cell, other: Cell) -> list[float]:
    """other / base goodput of each repetition verified in both (a 1 % run over the loss-free one made back to back
    on one network; this tree's run over another version's, experiments.bench.compare), in other's order."""
    by_rep = {r.rep: r.goodput for r in base.good if r.goodput > 0}
    return [r.goodput / by_rep[r.rep] for r in other.good if r.rep in by_rep]
