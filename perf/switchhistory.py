"""The switch benchmark's figures over its history (`results/bench/switch-history.csv`, one row per repetition's
ratio, every `make bench-switch` run appended): what the docs quote instead of one day's run.

    python -m perf.switchhistory [results/bench/switch-history.csv] [--last N]

Prints, per compiler and rate (loss-free, overload), the family's minimum and median ratio of each run (each
program's median over the run's repetitions, then over the programs), and their median and range over the last N
runs; then each program's ratios over those runs (median, range, repetitions).
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from pathlib import Path
from typing import Sequence

PACKET_MODES = ("loss-free", "overload")


def load(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def runs_of(rows: list[dict[str, str]]) -> list[tuple[str, str]]:
    """The runs in the history, oldest first: (date, commit)."""
    return list(dict.fromkeys((r["date"], r["commit"]) for r in rows))


def family_by_run(rows: list[dict[str, str]], runs: list[tuple[str, str]]) -> dict[tuple[str, str], list[tuple]]:
    """(compiler, mode) -> per run: (date, commit, minimum, its program, median, programs)."""
    out: dict[tuple[str, str], list[tuple]] = {}
    for run in runs:
        per: dict[tuple[str, str, str], list[float]] = {}
        for r in rows:
            if (r["date"], r["commit"]) == run and r.get("mode") in PACKET_MODES:
                per.setdefault((r["compiler"], r["mode"], r["program"]), []).append(float(r["ratio"]))
        groups: dict[tuple[str, str], list[tuple[float, str]]] = {}
        for (comp, mode, prog), values in per.items():
            groups.setdefault((comp, mode), []).append((statistics.median(values), prog))
        for key, values in groups.items():
            values.sort()
            out.setdefault(key, []).append((run[0], run[1], values[0][0], values[0][1],
                                            statistics.median(v for v, _p in values), len(values)))
    return out


def summary(rows: list[dict[str, str]], last: int = 10) -> str:
    """Markdown: the family's headline per run and over the runs, then each program's ratios over the runs."""
    runs = runs_of(rows)[-last:]
    keep = set(runs)
    rows = [r for r in rows if (r["date"], r["commit"]) in keep]
    lines = [f"Over the last {len(runs)} run{'s' if len(runs) != 1 else ''} of `make bench-switch` "
             f"({runs[0][0]} to {runs[-1][0]})." if runs else "No runs in the history.", ""]
    fam = family_by_run(rows, runs)
    if fam:
        lines += ["| JSON by | rate | family minimum: median (range) | family median: median (range) | runs |",
                  "|---|---|---:|---:|---:|"]
        for (comp, mode), per in sorted(fam.items()):
            mins, meds = [p[2] for p in per], [p[4] for p in per]
            lines.append(f"| {comp} | {mode} | **{statistics.median(mins):.2f}** ({min(mins):.2f}–{max(mins):.2f}) | "
                         f"**{statistics.median(meds):.2f}** ({min(meds):.2f}–{max(meds):.2f}) | {len(per)} |")
        lines += ["", "| run | commit | JSON by | rate | minimum (program) | median |", "|---|---|---|---|---:|---:|"]
        for (comp, mode), per in sorted(fam.items()):
            for date, commit, mn, prog, med, _n in per:
                lines.append(f"| {date} | {commit} | {comp} | {mode} | {mn:.2f} ({prog}) | {med:.2f} |")
    progs: dict[tuple[str, str, str], list[float]] = {}
    for r in rows:
        progs.setdefault((r["program"], r.get("compiler", ""), r.get("mode", "")), []).append(float(r["ratio"]))
    if progs:
        lines += ["", "| program | JSON by | rate | median | range | repetitions |", "|---|---|---|---:|---:|---:|"]
        for (prog, comp, mode), values in progs.items():
            lines.append(f"| {prog} | {comp} | {mode} | **{statistics.median(values):.2f}** | "
                         f"{min(values):.2f}–{max(values):.2f} | {len(values)} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m perf.switchhistory", description=__doc__.split("\n\n")[0])
    p.add_argument("history", nargs="?", type=Path, default=Path("results/bench/switch-history.csv"))
    p.add_argument("--last", type=int, default=10, help="runs to summarise, newest (default %(default)s)")
    args = p.parse_args(argv)
    if not args.history.is_file():
        print(f"error: {args.history} not found (every `make bench-switch` run appends to it)", file=sys.stderr)
        return 2
    sys.stdout.write(summary(load(args.history), args.last))
    return 0


if __name__ == "__main__":
    sys.exit(main())
