"""The training experiment (`make train`): data-parallel training on N Mininet hosts, once per collective and seed.

    python -m experiments.train [--protocols switchml ring ps] [--workers 4] [--epochs 10] [--bw 10|auto] [--loss 0]
                         [--hidden 32] [--batch 64] [--lr 0.1] [--seeds 1] [--eval-every N] [--target-accuracy A]
                         [--results results] [--json out/switchml.json --p4info out/switchml.p4info.txt]

One network (star, the P4 switch, links at --bw Mbit/s; `auto`: the highest rate at which the switch and hosts keep up,
probed first for each algorithm, the lowest of them used); for each seed and algorithm (interleaved) every host runs
`python -m worker.training --protocol P` (digits data, a numpy MLP 64-hidden-10, its gradient vector all-reduced each
step), the ranks starting together through a barrier. With --target-accuracy the ranks evaluate every --eval-every
steps and stop at the first evaluation that reaches it: the run's time to accuracy (TTA). Each run records what bound
its all-reduces (`experiments.bound`'s rule over the time spent inside them: the busiest worker link's bytes over its
rate, the switch's CPU, the workers' CPU inside the all-reduce). Prints every evaluation per algorithm and writes
`results/train-<UTC time>/`: `history.csv` (every evaluation), `runs.csv` (one row per seed and algorithm: TTA, share of
the time spent communicating, the bound; both on disk as each run finishes), `arguments.json`, `summary.md` (final
accuracy per algorithm, the quantized runs against the float baselines' accuracy within the tolerance, TTA median and
min–max over the seeds, the ratios from runs whose all-reduces were network-bound) and `loss.png` (test loss vs wall
time and vs step, first seed). Ctrl-C stops cleanly and prints the command that resumes: `--resume DIR` (the same
arguments, else refused) runs the (seed, algorithm) pairs DIR/runs.csv has no row for and summarises them all.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from experiments.bound import Bound  # noqa: E402
from experiments.report import IN_NETWORK  # noqa: E402
from experiments.interrupt import interrupted, stopping_cleanly  # noqa: E402
from experiments.resume import (TRAIN_KEY, ResumeError, add_resume_argument, check_arguments, read_rows,  # noqa: E402
                                remember, reopen, resolve, resolved, row_key)
from experiments.rows import CsvLog, results_dir  # noqa: E402
from experiments.config import ROOT, ExperimentConfig  # noqa: E402
from experiments.session import ExperimentNetwork  # noqa: E402
from experiments.study import needs_root, study_parser  # noqa: E402
from perf.machine import machine_info  # noqa: E402
from worker.arguments import at_least, fail, in_range, link_rate, positive_float, probability  # noqa: E402
from worker.job import MAX_WORKERS  # noqa: E402
from worker.protocols import DEFAULT_PROTOCOL, PROTOCOLS, program_paths, protocol_of_program  # noqa: E402
from worker.training.trainer import TrainConfig  # noqa: E402

MODULE = "experiments.train"
ACCURACY_TOLERANCE = 0.02
"""Quantized in-network aggregation must end within 2 accuracy points of the float baselines."""
FIELDS = ("protocol", "seed", "epoch", "step", "train_loss", "test_loss", "test_accuracy", "elapsed_s", "comm_s")
RUN_FIELDS = ("protocol", "seed", "parameters", "steps", "final_accuracy", "tta_s", "tta_comm_s", "comm_share",
              "elapsed_s", "comm_s", "link_busy", "switch_busy", "host_busy", "bound")


@dataclass(frozen=True)
class Training:
    """What every rank of one training run is told (the hyper-parameters all ranks share)."""

    epochs: int
    hidden: int = TrainConfig.hidden
    batch: int = TrainConfig.global_batch
    lr: float = TrainConfig.lr
    eval_every: int = 0
    target_accuracy: float | None = None


@dataclass
class TrainRun:
    """One algorithm, one seed: rank 0's evaluations and what bound the all-reduces."""

    protocol: str
    seed: int
    records: list[dict]
    parameters: int
    bound: Bound | RecordedBound | None

    def row(self, target: float | None) -> dict:
        last = self.records[-1]
        hit = next((r for r in self.records if target is not None and r["test_accuracy"] >= target), None)
        b = self.bound
        return {"protocol": self.protocol, "seed": self.seed, "parameters": self.parameters, "steps": last["step"],
                "final_accuracy": last["test_accuracy"], "tta_s": hit["elapsed_s"] if hit else "",
                "tta_comm_s": hit["comm_s"] if hit else "",
                "comm_share": round(last["comm_s"] / last["elapsed_s"], 4) if last["elapsed_s"] else "",
                "elapsed_s": last["elapsed_s"], "comm_s": last["comm_s"],
                "link_busy": "" if b is None or b.link_busy is None else round(b.link_busy, 4),
                "switch_busy": "" if b is None else round(b.switch_busy, 4),
                "host_busy": "" if b is None else round(b.host_busy, 4), "bound": b.verdict if b else ""}


def run_training(net: ExperimentNetwork, protocol: str, seed: int, tr: Training, loss: float,
                 timeout_s: float) -> TrainRun:
    """Train once with protocol on every host of net (RuntimeError if a rank failed); rank 0's evaluations and the
    bound of the run's all-reduces: the busiest worker link's bytes over its rate times the time inside the
    all-reduce, the switch's CPU over that time, the workers' CPU inside the all-reduces over that time and their
    CPUs."""
    net.reset(loss)
    barrier = net.fresh_barrier()
    hosts = list(range(1, net.cfg.workers + 1))
    ports0, cpu0 = net.network.port_counters(hosts), net.network.switch_cpu_s()

    def argv(rank: int) -> list[str]:
        a = [sys.executable, "-m", "worker.training", "--job", str(net.job_path), "--rank", str(rank), "--protocol",
             protocol, "--epochs", str(tr.epochs), "--hidden", str(tr.hidden), "--batch", str(tr.batch), "--lr",
             str(tr.lr), "--seed", str(seed), "--eval-every", str(tr.eval_every), "--barrier", str(barrier),
             "--program-json", str(net.cfg.program_json)]
        return a + (["--stop-at", str(tr.target_accuracy)] if tr.target_accuracy is not None else [])
    outcomes = net.launch(argv, timeout_s)
    bad = [o for o in outcomes if o.exit_code != 0 or not o.report.get("done")]
    if bad:
        raise RuntimeError(f"{protocol}: " + "; ".join(f"rank {o.rank} exit {o.exit_code}: "
                                                  f"{o.report.get('error') or o.stderr[-300:]}" for o in bad))
    records = [json.loads(line) for line in outcomes[0].stdout.splitlines() if line.startswith("{")]
    records = [r for r in records if "epoch" in r and not r.get("done")]
    ports = {h: c - ports0[h] for h, c in net.network.port_counters(hosts).items()}
    cpu = net.network.switch_cpu_s()
    switch_cpu = max((cpu[sw] - cpu0.get(sw, 0.0) for sw in cpu), default=0.0)
    comm_s = float(outcomes[0].report.get("comm_s", 0.0))
    bound = None
    if comm_s > 0:
        busiest = max(max(c.rx_bytes, c.tx_bytes) for c in ports.values())
        bw = net.cfg.bw
        bound = Bound(link_busy=None if bw is None else busiest * 8 / (bw * 1e6 * comm_s),
                      switch_busy=switch_cpu / comm_s,
                      host_busy=sum(float(o.report.get("comm_cpu_s", 0.0)) for o in outcomes)
                      / (comm_s * net.network.cpu_layout.host_cpus),
                      veth_drops=sum(c.drops for c in ports.values()))
    return TrainRun(protocol, seed, records, int(outcomes[0].report.get("parameters", 0)), bound)


def summary(runs: Sequence[TrainRun], workers: int, bw: float | None, tr: Training, machine: dict[str, str],
            calibration: str = "") -> str:
    first = {r.protocol: r.records for r in runs if r.seed == runs[0].seed}
    params = runs[0].parameters or 75 * tr.hidden + 10
    lines = ["# Training: digits MLP, data-parallel", "", "## Machine", ""]
    lines += [f"- {k}: {v}" for k, v in machine.items()]
    lines += ["", "## Method", "",
              f"- {workers} Mininet hosts, one P4 switch (embedded), links "
              + (f"{bw:g} Mbit/s" if bw else "unlimited") + f"; scikit-learn's digits (1348 train / 449 test "
              f"images), an MLP 64-{tr.hidden}-10 ({params:,} parameters), SGD (lr {tr.lr:g}), global batch "
              f"{tr.batch} split over the hosts; each step's gradient ({params:,} float32 and the loss) is all-reduced "
              "by the named collective; evaluated on the test set "
              + (f"every {tr.eval_every} steps" if tr.eval_every else "after each epoch") + ".",
              "- Bound of a run's all-reduces (`experiments.bound`'s rule over the time spent inside them): the busiest "
              "worker link's bytes over its rate times that time, the switch's CPU time over it, the workers' CPU "
              "time inside the all-reduces over it and the hosts' CPUs."]
    if calibration:
        lines.append(f"- Link rate: {calibration}")
    lines += ["", "## Result (first seed)", "", "| algorithm | steps | final test accuracy | final test loss | time (s) | "
              "of which all-reduce (s) |", "|---|---:|---:|---:|---:|---:|"]
    for protocol, h in first.items():
        last = h[-1]
        lines.append(f"| {protocol} | {last['step']} | {last['test_accuracy']:.4f} | {last['test_loss']:.4f} | "
                     f"{last['elapsed_s']:.2f} | {last['comm_s']:.2f} |")
    if tr.target_accuracy is None:
        floats = [h[-1]["test_accuracy"] for a, h in first.items() if a not in IN_NETWORK]
        for protocol, h in first.items():
            if protocol in IN_NETWORK and floats:
                gap = max(floats) - h[-1]["test_accuracy"]
                verdict = "within" if gap <= ACCURACY_TOLERANCE else "OUTSIDE"
                lines.append(f"\n{protocol} (quantized, block floating point) ends {gap:+.4f} below the best float "
                             f"baseline: {verdict} the {ACCURACY_TOLERANCE:.2f} tolerance.")
    else:
        lines += tta_lines(runs, tr.target_accuracy)
    return "\n".join(lines) + "\n"


def tta_lines(runs: Sequence[TrainRun], target: float) -> list[str]:
    """Time to `target` test accuracy per algorithm over the seeds (median, min–max), the share of it spent
    all-reducing, the bounds; the ratio of medians over the seeds where both runs' all-reduces were network-bound."""
    protocols = list(dict.fromkeys(r.protocol for r in runs))
    seeds = sorted({r.seed for r in runs})
    lines = ["", f"## Time to {target:g} test accuracy over {len(seeds)} seeds", "",
             "| algorithm | reached | TTA s (median, min–max) | steps (median) | all-reduce share of TTA (median) | "
             "bound of the all-reduces |", "|---|---:|---|---:|---:|---|"]
    tta: dict[tuple[str, int], float] = {}
    for p in protocols:
        rs = [r for r in runs if r.protocol == p]
        rows = [r.row(target) for r in rs]
        hit = [(r, row) for r, row in zip(rs, rows) if row["tta_s"] != ""]
        for r, row in hit:
            tta[(p, r.seed)] = float(row["tta_s"])
        bounds = [r.bound.verdict if r.bound else "-" for r in rs]
        counts = ", ".join(f"{bounds.count(v)} {v}" for v in dict.fromkeys(bounds))
        if not hit:
            lines.append(f"| {p} | 0 of {len(rs)} | - | - | - | {counts} |")
            continue
        t = [float(row["tta_s"]) for _, row in hit]
        steps = [int(next(x["step"] for x in r.records if x["test_accuracy"] >= target)) for r, _ in hit]
        share = [float(row["tta_comm_s"]) / float(row["tta_s"]) for _, row in hit]
        lines.append(f"| {p} | {len(hit)} of {len(rs)} | {statistics.median(t):.1f} ({min(t):.1f}–{max(t):.1f}) | "
                     f"{statistics.median(steps):g} | {100 * statistics.median(share):.0f} % | {counts} |")
    ina = [p for p in protocols if p in IN_NETWORK]
    for a in ina:
        for b in (p for p in protocols if p not in IN_NETWORK):
            both = [s for s in seeds if (a, s) in tta and (b, s) in tta and all(
                r.bound is not None and r.bound.verdict == "network" for r in runs
                if r.seed == s and r.protocol in (a, b))]
            if both:
                ratio = statistics.median(tta[(a, s)] / tta[(b, s)] for s in both)
                lines.append(f"\n{a} / {b} time to accuracy: {ratio:.2f}× (median over the {len(both)} seeds whose "
                             "all-reduces were network-bound on both sides).")
            others = [s for s in seeds if s not in both]
            if others:
                lines.append(f"Seeds left out of the {a} / {b} ratio (a run not network-bound or not reaching the "
                             f"target): {', '.join(map(str, others))}.")
    return lines


def plot(runs: Sequence[TrainRun], path: Path) -> None:
    histories = {r.protocol: r.records for r in runs if r.seed == runs[0].seed}
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for protocol, h in histories.items():
        a1.plot([r["elapsed_s"] for r in h], [r["test_loss"] for r in h], marker="o", label=protocol)
        a2.plot([r["step"] for r in h], [r["test_loss"] for r in h], marker="o", label=protocol)
    a1.set_xlabel("wall time (s)")
    a2.set_xlabel("SGD step")
    for a in (a1, a2):
        a.set_ylabel("test loss (cross-entropy)")
        a.grid(True, alpha=0.3)
        a.legend()
    fig.suptitle("digits MLP, data-parallel: test loss (first seed)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)



def main(argv: Sequence[str] | None = None) -> int:
    p = study_parser("experiments.train", __doc__)
    p.add_argument("--protocols", "--algos", dest="protocols", nargs="+", choices=sorted(PROTOCOLS), default=None,
                   help="default: the host baselines and the in-network protocols that run the --json program "
                        "without a parameter server")
    p.add_argument("--workers", type=in_range(1, MAX_WORKERS), default=4)
    p.add_argument("--epochs", type=at_least(1), default=20)
    p.add_argument("--bw", type=link_rate(zero=True), default=10.0, metavar="MBIT|auto",
                   help="link rate in Mbit/s (0: unlimited; auto: calibrated to the switch and hosts)")
    p.add_argument("--loss", type=probability(below_one=True), default=0.0)
    p.add_argument("--hidden", type=at_least(1), default=TrainConfig.hidden, help="hidden units (params: 75 h + 10)")
    p.add_argument("--batch", type=at_least(1), default=TrainConfig.global_batch, help="global batch")
    p.add_argument("--lr", type=positive_float, default=TrainConfig.lr)
    p.add_argument("--seeds", type=at_least(1), default=1, help="seeds 0..N-1 (data split and initial model)")
    p.add_argument("--eval-every", type=at_least(0), default=0, help="evaluate every N steps (0: each epoch)")
    p.add_argument("--target-accuracy", type=probability(), default=None,
                   help="stop each run at this test accuracy and report the time to it")
    p.add_argument("--timeout", type=positive_float, default=300.0, help="bound on one run, seconds")
    p.add_argument("--results", type=Path, default=ROOT / "results")
    json_path, p4info = program_paths(ROOT / "out", str(PROTOCOLS[DEFAULT_PROTOCOL].program))
    p.add_argument("--json", dest="program_json", type=Path, default=json_path)
    p.add_argument("--p4info", type=Path, default=p4info)
    add_resume_argument(p)
    argv = list(sys.argv[1:] if argv is None else argv)
    args = p.parse_args(argv)
    tr = Training(args.epochs, args.hidden, args.batch, args.lr, args.eval_every, args.target_accuracy)
    cfg = ExperimentConfig(workers=args.workers, bw=None if args.bw in ("auto", 0) else args.bw,
                           program_json=args.program_json, p4info=args.p4info, run_dir=Path("/tmp/ina-testbed/train"))
    try:
        cfg.check()
        program = str(protocol_of_program(args.program_json)[0].program)
        if args.protocols is None:
            args.protocols = [n for n, spec in PROTOCOLS.items() if not spec.needs_ps
                              and (not spec.in_network or spec.program == program)]
        other = [n for n in args.protocols if PROTOCOLS[n].in_network and PROTOCOLS[n].program != program]
        if other:
            raise ValueError(f"{args.program_json} is the {program} program, one program for every protocol of the "
                             f"study; {', '.join(other)} {'needs its' if len(other) == 1 else 'need their'} own "
                             "(--json out/<program>.json, in a run of its own)")
        if args.batch < args.workers:
            raise ValueError(f"--batch {args.batch} is smaller than the {args.workers} workers")
        for protocol in args.protocols:
            replace(cfg, protocol=protocol).fabric().check(protocol, PROTOCOLS[protocol].program,
                                                           PROTOCOLS[protocol].in_network)
    except (ValueError, OSError) as err:
        return fail("python -m experiments.train", str(err))
    if needs_root("train"):
        return 2
    with stopping_cleanly():
        return _study(args, argv, cfg, tr)


def _study(args: argparse.Namespace, argv: list[str], cfg: ExperimentConfig, tr: Training) -> int:
    """main's work once the arguments are checked: in a new results directory, or the resumed one."""
    arguments = {k: v for k, v in vars(args).items() if k not in ("results", "resume")}
    old: list[TrainRun] = []
    done: set[tuple[str, ...]] = set()
    if args.resume is not None:
        out = args.resume
        try:
            check_arguments(out, MODULE, arguments)
            kept = reopen(out / "runs.csv", RUN_FIELDS, TRAIN_KEY)
            # evaluations of a run whose row is missing (stopped between the two files) go with it
            history = reopen(out / "history.csv", FIELDS, TRAIN_KEY, lambda key, rows: key in kept.done)
        except ResumeError as exc:
            return fail(f"python -m {MODULE}", str(exc))
        done = kept.done
        old = [recorded_run(row, [h for h in history.rows if row_key(h, TRAIN_KEY) == row_key(row, TRAIN_KEY)])
               for row in kept.rows]
        print(f"resuming {out}: {len(done)} of {args.seeds * len(args.protocols)} runs done", flush=True)
    else:
        out = results_dir(args.results, "train")
        remember(out, MODULE, arguments)
    history_log = CsvLog(out / "history.csv", FIELDS, resume=args.resume is not None)
    runs_log = CsvLog(out / "runs.csv", RUN_FIELDS, resume=args.resume is not None)
    todo = [(seed, protocol) for seed in range(args.seeds) for protocol in args.protocols
            if run_key(protocol, seed) not in done]
    runs: list[TrainRun] = []
    try:
        calibration = ""
        if args.bw == "auto":
            from experiments.calibrate import common_rate

            got = resolved(out)  # a resume: the rate the runs so far had
            if "bw" not in got:
                rate, cals = common_rate([replace(cfg, protocol=protocol) for protocol in args.protocols],
                                         lambda line: print(line, flush=True))
                resolve(out, "bw", rate)
                resolve(out, "calibration", f"auto, {rate:g} Mbit/s (" + "; ".join(c.describe() for c in cals) + ")")
                got = resolved(out)
            cfg = replace(cfg, bw=got["bw"])
            calibration = got["calibration"]
        if todo:
            with ExperimentNetwork(cfg) as net:
                for seed, protocol in todo:
                    which = f", seed {seed}" if args.seeds > 1 else ""
                    print(f"\n{protocol}: training on {args.workers} hosts{which}", flush=True)
                    print(f"{'epoch':>5}  {'step':>5}  {'train loss':>10}  {'test loss':>9}  {'accuracy':>8}  "
                          f"{'time s':>7}  {'all-reduce s':>12}")
                    run = run_training(net, protocol, seed, tr, args.loss, args.timeout)
                    for r in run.records:
                        print(f"{r['epoch']:>5}  {r['step']:>5}  {r['train_loss']:>10.4f}  {r['test_loss']:>9.4f}  "
                              f"{r['test_accuracy']:>8.4f}  {r['elapsed_s']:>7.2f}  {r['comm_s']:>12.2f}")
                    if run.bound is not None:
                        print("all-reduces " + run.bound.describe())
                    for r in run.records:  # the evaluations first: the run's row says it is complete
                        history_log.append({**r, "protocol": run.protocol, "seed": run.seed})
                    runs_log.append(run.row(tr.target_accuracy))
                    runs.append(run)
    except KeyboardInterrupt:
        recorded = len(read_rows(out / "runs.csv")[1])
        return interrupted(MODULE, argv, out, f"{recorded} of {args.seeds * len(args.protocols)} training runs "
                           "recorded")
    order = list(args.protocols)
    runs = sorted(old + runs, key=lambda r: (r.seed, order.index(r.protocol)))
    text = summary(runs, args.workers, cfg.bw, tr, machine_info(), calibration)
    (out / "summary.md").write_text(text)
    plot(runs, out / "loss.png")
    print("\n" + text + f"\nwritten to {out}")
    return 0 if "OUTSIDE" not in text else 1


def run_key(protocol: str, seed: int) -> tuple[str, ...]:
    """The key (experiments.resume.TRAIN_KEY) of the row a training run writes."""
    return row_key({"protocol": protocol, "seed": seed}, TRAIN_KEY)


@dataclass(frozen=True)
class RecordedBound:
    """A resumed run's bound, as its runs.csv row recorded it (the measurements the row keeps and the verdict)."""

    link_busy: float | None
    switch_busy: float
    host_busy: float
    verdict: str

    def describe(self) -> str:
        return f"bound: {self.verdict} (as recorded in runs.csv)"


def recorded_run(row: dict[str, str], history: list[dict[str, str]]) -> TrainRun:
    """A finished run read back from its runs.csv row and its history.csv evaluations (a resume's earlier runs)."""
    def number(text: str) -> float | None:
        return None if text == "" else float(text)

    records = [{"epoch": int(h["epoch"]), "step": int(h["step"]),
                **{k: float(h[k] or 0.0) for k in FIELDS[4:]}} for h in history]
    bound = RecordedBound(number(row["link_busy"]), number(row["switch_busy"]) or 0.0,
                          number(row["host_busy"]) or 0.0, row["bound"]) if row.get("bound") else None
    return TrainRun(row["protocol"], int(row["seed"]), records, int(row["parameters"]), bound)


if __name__ == "__main__":
    sys.exit(main())
