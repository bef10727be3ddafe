"""Run a scenario file (`make experiment SCENARIO=experiments/scenarios/<name>.toml`) and write its results.

    python -m experiments.sweep experiments/scenarios/size-sweep.toml [--results results] [--list]
    python -m experiments.sweep [experiments/scenarios/size-sweep.toml] --resume results/size-sweep-<time>

The scenario's points (`experiments.scenario`) are run in Mininet with a progress bar: one network per worker count (the
network's shape), inside it every point and repetition, repetitions interleaved (rep 1 of every point, then rep 2 …)
so that load changes on the shared machine spread over all algorithms. Each run is one all-reduce by every worker
(`experiments.session.ExperimentNetwork.run`), counted only if every worker verified its result. Writes
`results/<name>-<UTC timestamp>/` (never an existing directory): `runs.csv` (a row per run, on disk as each run
finishes), `scenario.toml` (a copy of the input), `arguments.json` (the scenario's name and file, a calibrated rate),
`summary.md` and the plots (`experiments.report`).

Ctrl-C stops the sweep cleanly (the network torn down, exit status 130) and prints the command that resumes it:
`--resume DIR` runs the points DIR/runs.csv has no verified row for (experiments.resume: the key, failed runs
retried) into the same directory, refusing a scenario other than DIR's, and writes the summary and plots of every
row, old and new.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Callable, Collection, Iterable
from dataclasses import fields, replace
from pathlib import Path

from tqdm import tqdm

from experiments.rows import CSV_FIELDS, SETUP_ATTEMPTS, CsvLog, Row, results_dir
from experiments.config import ROOT, ExperimentConfig
from experiments.interrupt import interrupted, stopping_cleanly
from experiments.resume import (SWEEP_DEFAULTS, SWEEP_KEY, ResumeError, add_resume_argument, made_with, read_rows,
                                remember, reopen, resolve, resolved, run_name, sweep_key)
from experiments.session import ExperimentNetwork
from experiments.scenario import Scenario, ScenarioError, load_scenario
from topo.star import host_ip
from topo.target import Target
from worker.arguments import Parser, fail
from worker.protocols import DEFAULT_PROTOCOL, PROTOCOLS, program_paths

__all__ = ["run_scenario", "open_network", "main"]

PROG = "python -m experiments.sweep"


def background_commands(mbps: float, timeout_s: float) -> list[str]:
    """A UDP flow of mbps Mbit/s from h1 to h2 through the switch (iperf3), for at most timeout_s seconds."""
    if not mbps:
        return []
    if shutil.which("iperf3") is None:
        raise RuntimeError("background traffic needs iperf3 (apt-get install iperf3; `make setup` does it as root)")
    t = max(1, int(timeout_s))
    return ["h2: exec iperf3 -s -1 -p 5201 >/dev/null 2>&1",
            f"h1: sleep 0.3; exec iperf3 -c {host_ip(2)} -p 5201 -u -b {mbps:g}M -t {t} >/dev/null 2>&1"]


def run_scenario(sc: Scenario, out: Path, *, program_json: Path, p4info: Path, progress: bool = True,
                 log: Callable[[str], None] = print, done: Collection[tuple[str, ...]] | None = None) -> list[Row]:
    """Run every point of sc `repetitions` times; rows are appended to out/runs.csv as they finish. A link rate of
    "auto" must have been resolved (`calibrated`). `done` (a resume): the keys (experiments.resume.sweep_key) of
    the runs out/runs.csv already holds, which are skipped; its rows are appended to, not replaced."""
    if sc.bw_mbps == "auto":
        raise ValueError(f"{sc.name}: bw_mbps = \"auto\": calibrate the rate first (experiments.sweep.calibrated)")
    rows: list[Row] = []
    points = sc.runs()
    skip = set(done or ())
    todo = {(p, rep) for rep in range(1, sc.repetitions + 1) for p in points if sweep_key(p, rep, sc) not in skip}
    log_rows = CsvLog(out / "runs.csv", CSV_FIELDS, resume=done is not None)
    bar = tqdm(total=len(todo), desc=sc.name, unit="run", disable=not progress, file=sys.stderr)

    def record(row: Row) -> None:
        rows.append(row)
        log_rows.append(row.csv_row())
        bar.set_postfix_str(f"{row.protocol} n={row.workers} size={row.size} {'ok' if row.verified else 'FAILED'}")
        bar.update()

    base = ExperimentConfig(target=Target(sc.target), program_json=program_json, p4info=p4info,
                            pool_size=sc.pool_size, window=sc.window, window_control=sc.window_control, bw=sc.bw_mbps,
                            timeout_s=sc.timeout_s, dtype=sc.dtype, run_dir=Path("/tmp/ina-testbed") / sc.name,
                            cpus=sc.cpus, worker_args=sc.recovery.worker_args())
    groups = []  # one network per (workers, P4 program): a collective's program cannot change under a running network
    given = PROTOCOLS[DEFAULT_PROTOCOL].program  # the given JSON is the default protocol's; the others beside it
    for n in sc.workers:
        for program in dict.fromkeys(PROTOCOLS[a].program for a in sc.protocols):
            mine = [p for p in points if p.workers == n and PROTOCOLS[p.protocol].program == program]
            if not mine:
                continue
            own = program == given
            groups.append((replace(base, workers=n, protocol=mine[0].protocol, program_dir=program_json.parent,
                                   program_json=program_json if own else None, p4info=p4info if own else None),
                           mine))
    try:
        for shape, mine in groups:
            runs = [(rep, p) for rep in range(1, sc.repetitions + 1) for p in mine if (p, rep) in todo]
            if not runs:  # a resume: every run of this network is in runs.csv
                continue
            net = open_network(shape, log)
            if net is None:
                for rep, p in runs:
                    record(Row.failed(p, rep, sc, "network did not come up"))
                continue
            try:
                for rep, p in runs:
                    cfg = replace(shape, protocol=p.protocol, size=p.size, loss=p.loss, straggler_ms=p.straggler_ms,
                                  sparsity=p.sparsity, sparse_overlap=p.overlap, seed=sc.seed + rep)
                    try:
                        result = net.run(cfg, background_commands(p.background_mbps, sc.timeout_s))
                        record(Row.of(p, rep, sc, result))
                    except Exception as exc:  # recorded, the sweep goes on (a Ctrl-C is no Exception: it stops it)
                        record(Row.failed(p, rep, sc, f"{type(exc).__name__}: {exc}"))
            finally:
                net.close()
    finally:
        bar.close()
    return rows


def calibrated(sc: Scenario, program_json: Path, p4info: Path, log: Callable[[str], None] = print) -> Scenario:
    """sc with bw_mbps = "auto" resolved: each protocol probed with the most workers of the sweep (the rate that
    keeps the switch below its share then holds for every point), the lowest rate taken."""
    from experiments.calibrate import common_rate

    if sc.bw_mbps != "auto":
        return sc
    cfgs = []
    given = PROTOCOLS[DEFAULT_PROTOCOL].program
    for protocol in sc.protocols:
        own = PROTOCOLS[protocol].program == given
        cfgs.append(ExperimentConfig(protocol=protocol, workers=max(sc.workers), target=Target(sc.target),
                                     program_dir=program_json.parent, program_json=program_json if own else None,
                                     p4info=p4info if own else None, pool_size=sc.pool_size, window=sc.window,
                                     window_control=sc.window_control, dtype=sc.dtype, timeout_s=sc.timeout_s,
                                     run_dir=Path("/tmp/ina-testbed") / f"{sc.name}-calibration", cpus=sc.cpus))
    rate, cals = common_rate(cfgs, log)
    log(f"calibration: links at {rate:g} Mbit/s")
    return replace(sc, bw_mbps=rate, calibration=tuple(c.describe() for c in cals))


def open_network(cfg: ExperimentConfig, log: Callable[[str], None] = print) -> ExperimentNetwork | None:
    """A started network (the caller closes it), or None after SETUP_ATTEMPTS failures."""
    for attempt in range(1, SETUP_ATTEMPTS + 1):
        net = ExperimentNetwork(cfg)
        try:
            return net.__enter__()
        except Exception as exc:  # Mininet or the switch did not come up: retried, then the runs are failed
            log(f"workers={cfg.workers}: network setup attempt {attempt} failed: {exc}")
    return None


def _parser() -> argparse.ArgumentParser:
    p = Parser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("scenario", type=Path, nargs="?", default=None,
                   help="scenario file (experiments/scenarios/*.toml); with --resume, default: the directory's own")
    p.add_argument("--results", type=Path, default=ROOT / "results", help="where result directories go")
    json_path, p4info = program_paths(ROOT / "out", str(PROTOCOLS[DEFAULT_PROTOCOL].program))
    p.add_argument("--json", dest="program_json", type=Path, default=json_path)
    p.add_argument("--p4info", type=Path, default=p4info)
    p.add_argument("--list", action="store_true", help="print the runs the scenario would make and exit")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--cluster", metavar="ADDRESS", default=None,
                   help='engine = "sim": run the points on the Dask scheduler at ADDRESS (tcp://host:8786)')
    add_resume_argument(p)
    return p


def _moved_scenario(path: Path) -> Path:
    """A scenario named by its path before the files moved to experiments/scenarios/ (experiments/<name>.toml)."""
    moved = ROOT / "experiments" / "scenarios" / path.name
    if not path.exists() and path.parent.name == "experiments" and moved.is_file():
        print(f"note: {path} is now {moved.relative_to(ROOT)}", file=sys.stderr)
        return moved
    return path


def resumed_scenario(out: Path, given: Path | None = None) -> Scenario:
    """The scenario results directory `out` was made with: its scenario.toml, named as out/arguments.json (or the
    directory's name) says. ResumeError if `given` is another scenario (any setting but the file's path differs)."""
    if not (out / "scenario.toml").is_file():
        raise ResumeError(f"--resume {out}: no scenario.toml there: not a sweep's results directory")
    made = made_with(out)
    name = made.get("scenario") or run_name(out)
    if not name:
        raise ResumeError(f"--resume {out}: its arguments.json does not name the scenario, nor does the directory")
    sc = replace(load_scenario(out / "scenario.toml"), name=name)
    if given is None:
        return sc
    other = load_scenario(given)
    if other.name != name:
        differ = f"{given} is scenario {other.name}"
    else:
        differ = f"{given} differs in " + "; ".join(
            f"{f.name} ({getattr(sc, f.name)!r} there, {getattr(other, f.name)!r} here)"
            for f in fields(Scenario) if f.name != "path" and getattr(sc, f.name) != getattr(other, f.name))
    if other != replace(sc, path=other.path):
        raise ResumeError(f"refusing to resume {out}: it was made with scenario {name} "
                          f"({made.get('file', out / 'scenario.toml')}), and {differ}. Resume it with the same "
                          f"scenario, or without one ({out / 'scenario.toml'} is used)")
    return replace(sc, path=given)


def main(argv: Iterable[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    try:
        if args.resume is not None:
            sc = resumed_scenario(args.resume, None if args.scenario is None else _moved_scenario(args.scenario))
        elif args.scenario is None:
            return fail(PROG, "give a scenario file (experiments/scenarios/*.toml), or --resume DIR")
        else:
            args.scenario = _moved_scenario(args.scenario)
            sc = load_scenario(args.scenario)
    except (ScenarioError, ResumeError) as exc:
        return fail(PROG, str(exc))
    for path in (args.program_json, args.p4info):
        if not path.is_file():
            return fail(PROG, f"{path} not found: run `make build` first")
    if args.cluster is not None and sc.engine != "sim":
        return fail(PROG, f'--cluster: {sc.path} runs on Mininet (one network at a time, as root); only engine = "sim" '
                    "points go to a cluster")
    try:
        Target.explain(sc.target)
    except ValueError as exc:
        return fail(PROG, f"{sc.path}: network.target: {exc}")
    if args.list:
        for p in sc.runs():
            print(p)
        print(f"{len(sc.runs())} points x {sc.repetitions} repetitions")
        return 0
    if sc.engine == "mininet" and os.geteuid() != 0:
        print("error: Mininet needs root: run `sudo make experiment`", file=sys.stderr)
        return 2
    with stopping_cleanly():
        return _sweep(sc, args, argv)


def verified(key: tuple[str, ...], rows: list[dict[str, str]]) -> bool:
    """A sweep's run is done when its row says it verified (a failed run is run again by a resume)."""
    return all(r.get("verified") == "1" for r in rows)


def _sweep(sc: Scenario, args: argparse.Namespace, argv: list[str]) -> int:
    """main's work once the arguments are checked: a new results directory, or the resumed one."""
    from experiments.report import write_report

    total = len(sc.runs()) * sc.repetitions
    old: list[Row] = []
    done = None
    if args.resume is not None:
        out = args.resume
        try:
            kept = reopen(out / "runs.csv", CSV_FIELDS, SWEEP_KEY, verified,
                          normalize=lambda d: Row.from_csv(d).csv_row(), defaults=SWEEP_DEFAULTS)
        except ResumeError as exc:
            return fail(PROG, str(exc))
        old, done = [Row.from_csv(d) for d in kept.rows], kept.done
        if not made_with(out):  # made before arguments.json existed
            remember(out, "experiments.sweep", {"scenario": sc.name, "file": str(sc.path)})
        got = resolved(out)
        if sc.bw_mbps == "auto" and "bw_mbps" in got:  # the rate the runs so far had
            sc = replace(sc, bw_mbps=got["bw_mbps"], calibration=tuple(got.get("calibration", ())))
        elif sc.bw_mbps == "auto" and old and old[0].bw_mbps:  # a directory made before the rate was kept
            sc = replace(sc, bw_mbps=old[0].bw_mbps)
        again = (f"; {kept.retried} failed {'run' if kept.retried == 1 else 'runs'} to run again (rows moved to "
                 "retried.csv)") if kept.retried else ""
        print(f"{sc.name}: resuming {out}: {len(done)} of {total} runs done{again}", file=sys.stderr)
    else:
        out = results_dir(args.results, sc.name)
        shutil.copy(sc.path, out / "scenario.toml")
        remember(out, "experiments.sweep", {"scenario": sc.name, "file": str(sc.path)})
        print(f"{sc.name}: {len(sc.runs())} points x {sc.repetitions} repetitions -> {out}", file=sys.stderr)
    if sc.engine == "sim":
        print(f"engine: the packet simulator (virtual time; links {sc.bw_mbps:g} Mbit/s), as the scenario's "
              'network.engine = "sim" says', file=sys.stderr)
    else:
        what = "real BMv2 (simple_switch_grpc)" if sc.target == "bmv2" else "embedded (python -m switch)"
        print(f"switch: {what}, as the scenario's network.target = \"{sc.target}\" says", file=sys.stderr)
    try:
        if sc.bw_mbps == "auto":
            try:
                sc = calibrated(sc, args.program_json, args.p4info, lambda m: print(m, file=sys.stderr))
            except Exception as exc:  # the probe's network or run failed: nothing to calibrate from
                print(f"error: calibrating the link rate: {exc}", file=sys.stderr)
                return 1
            resolve(out, "bw_mbps", sc.bw_mbps)
            resolve(out, "calibration", list(sc.calibration))
        if sc.engine == "sim":
            from experiments import simulate

            rows = old + simulate.run_scenario(sc, out, progress=not args.no_progress, done=done,
                                               cluster=args.cluster, log=lambda m: print(m, file=sys.stderr))
        else:
            rows = old + run_scenario(sc, out, program_json=args.program_json, p4info=args.p4info,
                                      progress=not args.no_progress, done=done)
        summary = write_report(sc, rows, out)
    except KeyboardInterrupt:
        recorded = len(read_rows(out / "runs.csv")[1])
        return interrupted("experiments.sweep", argv, out, f"{recorded} of {total} runs of {sc.name} recorded")
    print(summary)
    bad = [r for r in rows if not r.verified]
    if bad:
        print(f"{len(bad)} of {len(rows)} runs failed verification or did not run; see {out / 'runs.csv'}",
              file=sys.stderr)
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
