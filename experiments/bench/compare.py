"""The all-reduce benchmark against another version of this project (`make bench BENCH_COMPARE=DIR|REV`).

Each repetition runs every (workers, loss) configuration once with this tree (in process, as `experiments.bench.allreduce` does) and
once with the other checkout: its own `python -m experiments.bench.allreduce --reps 1` in a subprocess, from its directory, with
`switchml.p4` compiled by its own compiler into a directory of ours (nothing is written into the checkout). The two
alternate, so load changes of a shared machine fall on both, and which goes first alternates too (this tree in odd
repetitions). Per configuration: both medians, the ratio of the medians and the median of the per-repetition ratios;
each tree runs with its own defaults (window, CPU layout...).
"""

from __future__ import annotations

import csv
import os
import statistics
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from experiments.bench.grid import Cell, RunRow, ratios_by_repetition, run_grid
from experiments.rows import write_dicts
from experiments.config import ExperimentConfig
from perf.checkout import Version
from worker.protocols import DEFAULT_PROTOCOL, PROTOCOLS, program_paths

__all__ = ["Checkout", "Comparison", "run_compared"]

BENCHED = str(PROTOCOLS[DEFAULT_PROTOCOL].program)
"""The program the all-reduce benchmark runs: the default protocol's."""


class CompareError(RuntimeError):
    """The other checkout could not compile its program or run its benchmark; the message says which and why."""


@dataclass(frozen=True)
class Checkout:
    """Another version of this project on disk (its own experiments/ or topo/, worker/, switch/, compiler/;
    `perf.checkout`): today's layout, or an older one whose benchmark was `topo.bench`."""

    path: Path
    label: str = ""
    """How the report names it (default: the path)."""

    def __post_init__(self) -> None:
        if self.bench_module is None or not (self.path / self.source).exists():
            raise CompareError(f"{self.path} is not a checkout of this project (no experiments/bench/allreduce.py "
                               "or topo/bench.py, or no p4src/switchml.p4)")

    @property
    def source(self) -> str:
        """Its SwitchML program, relative to its root."""
        return f"p4src/{BENCHED}.p4"

    @property
    def bench_module(self) -> str | None:
        """Its all-reduce benchmark: `experiments.bench.allreduce`, or `topo.bench` before the house moved."""
        for module in ("experiments.bench.allreduce", "topo.bench"):
            if (self.path / (module.replace(".", "/") + ".py")).exists():
                return module
        return None

    @classmethod
    def of(cls, version: Version) -> Checkout:
        """The checkout of a `perf.checkout.Version`."""
        return cls(version.path, version.label)

    def describe(self) -> str:
        """The label, else the path."""
        return self.label or str(self.path)

    def _run(self, argv: Sequence[str], timeout: float) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": str(self.path)}
        return subprocess.run([sys.executable, *argv], cwd=self.path, env=env, capture_output=True, text=True,
                              timeout=timeout)

    def compile(self, out: Path) -> tuple[Path, Path]:
        """Its p4src/switchml.p4 compiled by its own compiler into out/ (JSON, P4Info)."""
        out.mkdir(parents=True, exist_ok=True)
        json_path, p4info = program_paths(out, BENCHED)
        r = self._run(["-m", "compiler", "-I", "p4src", "-o", str(json_path), "--p4runtime-files", str(p4info),
                       self.source], timeout=300)
        if r.returncode != 0:
            raise CompareError(f"{self.path}: compiling {self.source} failed: {r.stderr.strip()[-500:]}")
        return json_path, p4info

    def bench(self, workers: Sequence[int], losses: Sequence[float], size: int, timeout: float,
              program: tuple[Path, Path], out: Path) -> list[RunRow]:
        """One repetition of its `experiments.bench.allreduce` over the grid; its runs as RunRows (from its CSV)."""
        argv = ["-m", str(self.bench_module), "--workers", *map(str, workers), "--loss", *map(str, losses), "--reps", "1",
                "--size", str(size), "--timeout", str(timeout), "--json", str(program[0]), "--p4info",
                str(program[1]), "--out", str(out)]
        bound = (timeout + 60) * len(workers) * len(losses) + 120
        r = self._run(argv, timeout=bound)
        csv_path = out.with_suffix(".csv")
        if not csv_path.exists():
            raise CompareError(f"{self.path}: {self.bench_module} wrote no {csv_path.name} (exit {r.returncode}): "
                               f"{r.stderr.strip()[-500:]}")
        with open(csv_path, newline="") as f:
            return [RunRow.from_csv(d) for d in csv.DictReader(f)]


@dataclass
class Comparison:
    """This tree's cells and the other checkout's, repetition by repetition."""

    other: str
    """The other checkout, described."""
    ours: list[Cell]
    theirs: list[Cell]

    def rows(self) -> list[tuple[int, float, float | None, float | None, float | None, list[float]]]:
        """(workers, loss, our median, their median, ratio of the medians, per-repetition ratios)."""
        out = []
        for a, b in zip(self.ours, self.theirs):
            per_rep = ratios_by_repetition(b, a)
            ratio = a.median / b.median if a.median and b.median else None
            out.append((a.workers, a.loss, a.median, b.median, ratio, per_rep))
        return out

    def table(self) -> str:
        """Markdown: one line per configuration."""
        lines = ["| workers | loss | this tree (median elem/s) | other (median elem/s) | ratio of the medians | "
                 "median of the per-repetition ratios | per repetition |",
                 "|---:|---:|---:|---:|---:|---:|---|"]
        for n, loss, mine, theirs, ratio, per_rep in self.rows():
            def fmt(x: float | None, spec: str) -> str:
                return "–" if x is None else format(x, spec)
            lines.append(f"| {n} | {loss * 100:g} % | {fmt(mine, ',.0f')} | {fmt(theirs, ',.0f')} | "
                         f"**{fmt(ratio, '.2f')}×** | {fmt(statistics.median(per_rep) if per_rep else None, '.2f')}× "
                         f"| {', '.join(f'{x:.2f}' for x in per_rep)} |")
        return "\n".join(lines)

    def write_csv(self, path: Path) -> None:
        """One line per configuration and repetition: both goodputs and their ratio."""
        def lines() -> Iterator[dict[str, object]]:
            for a, b in zip(self.ours, self.theirs):
                theirs_by_rep = {r.rep: r for r in b.runs}
                for r in a.runs:
                    o = theirs_by_rep.get(r.rep)
                    ok = r.verified and o is not None and o.verified and o.goodput > 0
                    yield {"workers": r.workers, "loss": r.loss, "rep": r.rep,
                           "this_goodput": round(r.goodput) if r.verified else "",
                           "other_goodput": round(o.goodput) if o is not None and o.verified else "",
                           "ratio": round(r.goodput / o.goodput, 4) if ok and o is not None else ""}

        write_dicts(path, ("workers", "loss", "rep", "this_goodput", "other_goodput", "ratio"), lines())


def run_compared(workers: Sequence[int], losses: Sequence[float], reps: int, base: ExperimentConfig,
                 other: Checkout, work_dir: Path, log: Callable[[str], None] = print) -> Comparison:
    """reps repetitions of the grid, each by this tree and by `other` (this tree first in odd repetitions, `other` in
    even ones); both trees' cells."""
    program = other.compile(work_dir / "other-program")
    ours = {(n, loss): Cell(n, loss) for n in workers for loss in losses}
    theirs = {(n, loss): Cell(n, loss) for n in workers for loss in losses}

    def run_ours(rep: int) -> None:
        for cell in run_grid(workers, losses, 1, replace(base, seed=base.seed + rep - 1), log):
            mine = ours[(cell.workers, cell.loss)]
            mine.runs += [replace(r, rep=rep) for r in cell.runs]
            mine.setup_failures += cell.setup_failures

    def run_theirs(rep: int) -> None:
        rows = other.bench(workers, losses, base.size, base.timeout_s, program, work_dir / f"other-rep{rep}")
        for r in rows:
            if (r.workers, r.loss) in theirs:
                theirs[(r.workers, r.loss)].runs.append(replace(r, rep=rep))
                log(f"other: workers={r.workers} loss={r.loss:g} rep={rep}: {r.goodput:,.0f} elem/s"
                    f"{'' if r.verified else ' NOT VERIFIED'}")

    for rep in range(1, reps + 1):
        # the order alternates (this tree first in odd repetitions), so that an effect of running first or second
        # falls on both trees alike; compared with itself in a fixed order, one set of 6 repetitions gave 0.91x
        # without loss (5 of 6 below 1), an alternated set 0.99x
        for run in (run_ours, run_theirs) if rep % 2 else (run_theirs, run_ours):
            run(rep)
    return Comparison(other.describe(), list(ours.values()), list(theirs.values()))
