"""`make figures`: regenerate the figures and summaries the docs quote (results/readme/), each stamped with the commit
and command that produced it.

    python -m experiments.figures [--only workers-sweep size-sweep] [--list] [--resume results/figures-<time>]

Each figure is a scenario file run by `experiments.sweep` (the studies with command lines of their own, multitenant,
twolevel and train, are named with their `make` command and left to it), into results/figures-<UTC time>/<name>-<UTC
time>/. The run's summary.md and plots are copied to results/readme/<name>-*, with a first line saying which commit
(and whether the tree had uncommitted changes), which command, which machine and when. A figure the docs quote is then
traceable; after a change to the protocols, `make figures` makes them current again. Ctrl-C stops the sweep under way
cleanly; `--resume results/figures-<time>` (the same figures, else refused) skips the figures published already and
resumes the interrupted sweep (`experiments.sweep --resume`).
"""

from __future__ import annotations

import datetime
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from experiments.interrupt import MAKE_COMMAND, interrupted, stopping_cleanly
from experiments.resume import ResumeError, add_resume_argument, check_arguments, remember, resolve, resolved, run_name
from experiments.rows import results_dir
from perf.machine import commit, machine_info
from worker.arguments import Parser, fail

__all__ = ["FIGURES", "Figure", "provenance", "publish"]

MODULE = "experiments.figures"

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


def sweep_dir(out: Path, name: str) -> Path | None:
    """The results directory figure `name`'s sweep made under out (out/<name>-<UTC time>), if any."""
    runs = sorted(p for p in out.iterdir() if p.is_dir() and run_name(p) == name) if out.is_dir() else []
    return runs[-1] if runs else None


def sweep_command(fig: Figure, out: Path) -> list[str]:
    """The sweep of a figure, in out: resumed if it has a directory there already (a resumed `make figures`)."""
    run = sweep_dir(out, fig.name)
    where = ["--resume", str(run)] if run is not None else ["--results", str(out)]
    return [sys.executable, "-m", "experiments.sweep", str(fig.scenario), *where, "--no-progress"]


def run_sweep(command: list[str]) -> int:
    """Run a sweep in a process group of its own and wait for it; a Ctrl-C here is passed on to it (once) and waited
    out, so that it tears its network down, then re-raised. (In our process group the terminal's Ctrl-C would reach
    it too, and subprocess.run would SIGKILL it mid-teardown.)"""
    env = {k: v for k, v in os.environ.items() if k != MAKE_COMMAND}  # its hint names its own directory, not make's
    proc = subprocess.Popen(command, cwd=ROOT, process_group=0, env=env)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.send_signal(signal.SIGINT)
        while True:
            try:
                proc.wait()
                break
            except KeyboardInterrupt:  # only if nobody made later ones harmless (experiments.interrupt)
                continue
        raise


def main(argv: Sequence[str] | None = None) -> int:
    p = Parser(prog=f"python -m {MODULE}", description=__doc__.split("\n\n")[0])
    p.add_argument("--only", nargs="+", choices=[f.name for f in FIGURES], help="these figures only")
    p.add_argument("--results", type=Path, default=ROOT / "results",
                   help="where the run's directory (figures-<UTC time>/, a sweep directory per figure) goes")
    p.add_argument("--list", action="store_true", help="name the figures and their commands, run nothing")
    add_resume_argument(p)
    argv = list(sys.argv[1:] if argv is None else argv)
    args = p.parse_args(argv)
    figures = [f for f in FIGURES if not args.only or f.name in args.only]
    if args.list:
        for f in figures:
            print(f"{f.name}: make experiment SCENARIO={f.scenario.relative_to(ROOT)}")
        print("also quoted: make multitenant, make twolevel, make train (their results/ directories)")
        return 0
    arguments = {"only": [f.name for f in figures]}  # the figures this run makes
    if args.resume is not None:
        try:
            check_arguments(args.resume, MODULE, arguments)
        except ResumeError as exc:
            return fail(p.prog, str(exc))
        out = args.resume
    else:
        out = results_dir(args.results, "figures")
        remember(out, MODULE, arguments)
    with stopping_cleanly():
        return _figures(figures, out, argv)


def _figures(figures: list[Figure], out: Path, argv: list[str]) -> int:
    """Each figure not yet published by this run (out/arguments.json keeps which were): its sweep, then publish."""
    failed = []
    published = list(resolved(out).get("published", []))
    try:
        for f in figures:
            if f.name in published:
                print(f"{f.name}: published by this run already", file=sys.stderr)
                continue
            stamp = provenance(f"make experiment SCENARIO={f.scenario.relative_to(ROOT)}")
            if run_sweep(sweep_command(f, out)) != 0:
                failed.append(f.name)
                continue
            run = sweep_dir(out, f.name)
            assert run is not None
            for path in publish(f, run, stamp):
                print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
            published.append(f.name)
            resolve(out, "published", published)
    except KeyboardInterrupt:
        return interrupted(MODULE, argv, out, f"{len(published)} of {len(figures)} figures published and every "
                           "finished run of their sweeps recorded")
    if failed:
        print(f"error: {', '.join(failed)} failed; their results/readme/ files were left as they were (resuming runs "
              "their failed runs again)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
