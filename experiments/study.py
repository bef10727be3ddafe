"""What every study's command line shares (`make multitenant`, `make twolevel`, `make train`): the common flags,
the root check, and writing its results directory (runs.csv, summary.md, a plot)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from experiments.rows import results_dir, write_rows
from topo.target import Target
from worker.arguments import Parser, at_least

__all__ = ["add_study_arguments", "finish", "needs_root", "study_parser"]

ROOT = Path(__file__).resolve().parents[1]


def study_parser(module: str, doc: str | None) -> argparse.ArgumentParser:
    """A study's parser: `python -m <module>`, described by the first paragraph of its docstring."""
    return Parser(prog=f"python -m {module}", description=(doc or "").split("\n\n")[0])


def add_study_arguments(p: argparse.ArgumentParser, *, reps: int = 3) -> None:
    """--reps, --seed, --target, --program-dir, --results."""
    p.add_argument("--reps", type=at_least(1), default=reps, help="repetitions of each configuration (default %(default)s)")
    p.add_argument("--seed", type=at_least(0), default=1)
    p.add_argument("--target", choices=[t.value for t in Target], default=None,
                   help="switch target (default: $TARGET, else bmv2 if installed, else embedded)")
    p.add_argument("--program-dir", type=Path, default=ROOT / "out")
    p.add_argument("--results", type=Path, default=ROOT / "results")


def needs_root(make_target: str) -> bool:
    """True (after a one-line error) when this process cannot run Mininet."""
    if os.geteuid() != 0:
        print(f"error: Mininet needs root: run `sudo make {make_target}`", file=sys.stderr)
        return True
    return False


def finish(results: Path, name: str, rows: Sequence[Any], text: str,
           plot: Callable[[Sequence[Any], Path], None], out: Path | None = None) -> Path:
    """results/<name>-<UTC time>/ with runs.csv (the rows), summary.md (text) and <name>.png; prints the summary.
    `out`: the study's directory, made when it started, whose runs.csv it wrote as the runs finished."""
    if out is None:
        out = results_dir(results, name)
        write_rows(rows, out / "runs.csv")
    (out / "summary.md").write_text(text)
    plot(rows, out / f"{name}.png")
    print(text)
    print(f"results in {out}")
    return out
