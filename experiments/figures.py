"""`make figures`: regenerate the figures and summaries the docs quote (results/readme/), each stamped with the commit
and command that produced it.

    python -m experiments.figures [--only workers-sweep size-sweep] [--list]

Each figure is a scenario file run by `experiments.sweep` (the studies with command lines of their own, multitenant,
twolevel and train, are named with their `make` command and left to it). The run's summary.md and plots are copied
to results/readme/<name>-*, with a first line saying which commit (and whether the tree had uncommitted changes),
which command, which machine and when. A figure the docs quote is then traceable; after a change to the protocols,
`make figures` makes them current again.
"""

from __future__ import annotations

import datetime
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from perf.machine import commit, machine_info
from worker.arguments import Parser

__all__ = ["FIGURES", "Figure", "provenance", "publish"]

ROOT = Path(__file__).resolve().parents[1]
README_RESULTS = ROOT / "results" / "readme"


@dataclass(frozen=True)
class Figure:
    """A scenario whose summary and plots the docs quote: results/readme/<name>-summary.md, <name>-<plot>.png."""

    name: str
    plots: tuple[str, ...] = ("time",)

    @property
    def scenario(self) -> Path:
        return ROOT / "experiments" / "scenarios" / f"{self.name}.toml"


FIGURES = (Figure("workers-sweep", ("time", "goodput")), Figure("size-sweep"), Figure("size-sweep-calibrated"),
           Figure("loss-sweep"), Figure("straggler"), Figure("background"))
"""The scenario figures of the docs (README: workers-sweep; docs/experiments.md: all of them)."""


def provenance(command: str, root: Path = ROOT) -> str:
    """"Produced by `command` at commit <sha> (<date>)[ with uncommitted changes] on <CPU>, <date>"."""
    cpu = machine_info().get("CPU", "an unknown CPU")
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"Produced by `{command}` at commit {commit(root)} on {cpu}, {when}."


def publish(fig: Figure, run_dir: Path, stamp: str, dest: Path = README_RESULTS) -> list[Path]:
    """Copy a sweep's summary.md (stamped) and plots to dest/<name>-*; the paths written."""
    dest.mkdir(parents=True, exist_ok=True)
    summary = (run_dir / "summary.md").read_text()
    title, _, rest = summary.partition("\n")
    out = dest / f"{fig.name}-summary.md"
    out.write_text(f"{title}\n\n{stamp}\n{rest}")
    written = [out]
    for plot in fig.plots:
        src = run_dir / f"{plot}.png"
        if src.exists():
            shutil.copyfile(src, dest / f"{fig.name}-{plot}.png")
            written.append(dest / f"{fig.name}-{plot}.png")
    return written


def _newest_run(results: Path, name: str, before: set[Path]) -> Path:
    runs = sorted(p for p in results.glob(f"{name}-*") if p.is_dir() and p not in before)
    if not runs:
        raise RuntimeError(f"the {name} sweep wrote no results directory under {results}")
    return runs[-1]


def main(argv: Sequence[str] | None = None) -> int:
    p = Parser(prog="python -m experiments.figures", description=__doc__.split("\n\n")[0])
    p.add_argument("--only", nargs="+", choices=[f.name for f in FIGURES], help="these figures only")
    p.add_argument("--results", type=Path, default=ROOT / "results", help="where the sweeps write their runs")
    p.add_argument("--list", action="store_true", help="name the figures and their commands, run nothing")
    args = p.parse_args(argv)
    figures = [f for f in FIGURES if not args.only or f.name in args.only]
    if args.list:
        for f in figures:
            print(f"{f.name}: make experiment SCENARIO={f.scenario.relative_to(ROOT)}")
        print("also quoted: make multitenant, make twolevel, make train (their results/ directories)")
        return 0
    failed = []
    for f in figures:
        command = f"make experiment SCENARIO={f.scenario.relative_to(ROOT)}"
        stamp = provenance(command)
        before = set(args.results.glob(f"{f.name}-*"))
        r = subprocess.run([sys.executable, "-m", "experiments.sweep", str(f.scenario), "--results",
                            str(args.results), "--no-progress"], cwd=ROOT)
        if r.returncode != 0:
            failed.append(f.name)
            continue
        for path in publish(f, _newest_run(args.results, f.name, before), stamp):
            print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    if failed:
        print(f"error: {', '.join(failed)} failed; their results/readme/ files were left as they were", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
