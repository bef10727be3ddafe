"""Run a scenario file (`make experiment SCENARIO=experiments/scenarios/<name>.toml`) and write its results.

    python -m experiments.sweep experiments/scenarios/size-sweep.toml [--results results] [--list]

The scenario's points (`experiments.scenario`) are run in Mininet with a progress bar: one network per worker count (the
network's shape), inside it every point and repetition, repetitions interleaved (rep 1 of every point, then rep 2 …)
so that load changes on the shared machine spread over all algorithms. Each run is one all-reduce by every worker
(`experiments.session.ExperimentNetwork.run`), counted only if every worker verified its result. Writes
`results/<name>-<UTC timestamp>/` (never an existing directory): `runs.csv` (a row per run, appended as the runs
finish), `scenario.toml` (a copy of the input), `summary.md` and the plots (`experiments.report`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from tqdm import tqdm

from experiments.rows import CSV_FIELDS, SETUP_ATTEMPTS, CsvLog, Row, results_dir
from experiments.config import ROOT, ExperimentConfig
from experiments.session import ExperimentNetwork
from experiments.scenario import Scenario, ScenarioError, load_scenario
from topo.star import host_ip
from topo.target import Target
from worker.arguments import Parser, fail
from worker.protocols import DEFAULT_PROTOCOL, PROTOCOLS, program_paths

__all__ = ["run_scenario", "open_network", "main"]


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
                 log: Callable[[str], None] = print) -> list[Row]:
    """Run every point of sc `repetitions` times; rows are appended to out/runs.csv as they finish. A link rate of
    "auto" must have been resolved (`calibrated`)."""
    if sc.bw_mbps == "auto":
        raise ValueError(f"{sc.name}: bw_mbps = \"auto\": calibrate the rate first (experiments.sweep.calibrated)")
    rows: list[Row] = []
    points = sc.runs()
    log_rows = CsvLog(out / "runs.csv", CSV_FIELDS)
    bar = tqdm(total=len(points) * sc.repetitions, desc=sc.name, unit="run", disable=not progress, file=sys.stderr)

    def record(row: Row) -> None:
        rows.append(row)
        log_rows.append(row.csv_row())
        bar.set_postfix_str(f"{row.protocol} n={row.workers} size={row.size} {'ok' if row.verified else 'FAILED'}")
        bar.update()

    base = ExperimentConfig(target=Target(sc.target), program_json=program_json, p4info=p4info,
                            pool_size=sc.pool_size, window=sc.window, window_control=sc.window_control, bw=sc.bw_mbps,
                            timeout_s=sc.timeout_s, dtype=sc.dtype, run_dir=Path("/tmp/ina-testbed") / sc.name,
                            cpus=sc.cpus)
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
            net = open_network(shape, log)
            if net is None:
                for rep in range(1, sc.repetitions + 1):
                    for p in mine:
                        record(Row.failed(p, rep, sc, "network did not come up"))
                continue
            try:
                for rep in range(1, sc.repetitions + 1):
                    for p in mine:
                        cfg = replace(shape, protocol=p.protocol, size=p.size, loss=p.loss, straggler_ms=p.straggler_ms,
                                      seed=sc.seed + rep)
                        try:
                            result = net.run(cfg, background_commands(p.background_mbps, sc.timeout_s))
                            record(Row.of(p, rep, sc, result))
                        except Exception as exc:  # recorded, the sweep goes on
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
    p = Parser(prog="python -m experiments.sweep", description=__doc__.split("\n\n")[0])
    p.add_argument("scenario", type=Path, help="scenario file (experiments/scenarios/*.toml)")
    p.add_argument("--results", type=Path, default=ROOT / "results", help="where result directories go")
    json_path, p4info = program_paths(ROOT / "out", str(PROTOCOLS[DEFAULT_PROTOCOL].program))
    p.add_argument("--json", dest="program_json", type=Path, default=json_path)
    p.add_argument("--p4info", type=Path, default=p4info)
    p.add_argument("--list", action="store_true", help="print the runs the scenario would make and exit")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def _moved_scenario(path: Path) -> Path:
    """A scenario named by its path before the files moved to experiments/scenarios/ (experiments/<name>.toml)."""
    moved = ROOT / "experiments" / "scenarios" / path.name
    if not path.exists() and path.parent.name == "experiments" and moved.is_file():
        print(f"note: {path} is now {moved.relative_to(ROOT)}", file=sys.stderr)
        return moved
    return path


def main(argv: Iterable[str] | None = None) -> int:
    from experiments.report import write_report

    args = _parser().parse_args(None if argv is None else list(argv))
    args.scenario = _moved_scenario(args.scenario)
    try:
        sc = load_scenario(args.scenario)
    except ScenarioError as exc:
        return fail("python -m experiments.sweep", str(exc))
    for path in (args.program_json, args.p4info):
        if not path.is_file():
            return fail("python -m experiments.sweep", f"{path} not found: run `make build` first")
    try:
        Target.explain(sc.target)
    except ValueError as exc:
        return fail("python -m experiments.sweep", f"{args.scenario}: network.target: {exc}")
    if args.list:
        for p in sc.runs():
            print(p)
        print(f"{len(sc.runs())} points x {sc.repetitions} repetitions")
        return 0
    if os.geteuid() != 0:
        print("error: Mininet needs root: run `sudo make experiment`", file=sys.stderr)
        return 2
    out = results_dir(args.results, sc.name)
    shutil.copy(args.scenario, out / "scenario.toml")
    what = "real BMv2 (simple_switch_grpc)" if sc.target == "bmv2" else "embedded (python -m switch)"
    print(f"switch: {what}, as the scenario's network.target = \"{sc.target}\" says", file=sys.stderr)
    print(f"{sc.name}: {len(sc.runs())} points x {sc.repetitions} repetitions -> {out}", file=sys.stderr)
    try:
        sc = calibrated(sc, args.program_json, args.p4info, lambda m: print(m, file=sys.stderr))
    except Exception as exc:  # the probe's network or run failed: nothing to calibrate from
        print(f"error: calibrating the link rate: {exc}", file=sys.stderr)
        return 1
    rows = run_scenario(sc, out, program_json=args.program_json, p4info=args.p4info, progress=not args.no_progress)
    summary = write_report(sc, rows, out)
    print(summary)
    bad = [r for r in rows if not r.verified]
    if bad:
        print(f"{len(bad)} of {len(rows)} runs failed verification or did not run; see {out / 'runs.csv'}",
              file=sys.stderr)
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
