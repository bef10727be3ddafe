"""The training experiment (`make train`): data-parallel training on N Mininet hosts, once per collective.

    python -m experiments.train [--protocols switchml ring ps] [--workers 4] [--epochs 10] [--bw 10] [--loss 0]
                         [--results results] [--json out/switchml.json --p4info out/switchml.p4info.txt]

One network (star, the P4 switch, links at --bw Mbit/s); for each algorithm every host runs
`python -m worker.training --protocol P` (digits data, a numpy MLP, its gradient vector all-reduced each step), the ranks
starting together through a barrier. Prints every epoch's loss and accuracy per algorithm and writes
`results/train-<UTC time>/`: `history.csv`, `summary.md` (final accuracy and time per algorithm, and whether the
in-network quantized runs reach the float baselines' accuracy within the tolerance) and `loss.png` (test loss vs
wall time and vs step).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from experiments.report import IN_NETWORK  # noqa: E402
from experiments.rows import results_dir, write_dicts  # noqa: E402
from experiments.run import ROOT, ExperimentConfig, ExperimentNetwork  # noqa: E402
from experiments.study import needs_root, study_parser  # noqa: E402
from perf.machine import machine_info  # noqa: E402
from worker.arguments import at_least, fail, in_range, nonnegative_float, positive_float, probability  # noqa: E402
from worker.job import MAX_WORKERS  # noqa: E402
from worker.protocols import (
    PROTOCOLS,  # noqa: E402
    SWITCHML,
    program_paths,
)

ACCURACY_TOLERANCE = 0.02
"""Quantized in-network aggregation must end within 2 accuracy points of the float baselines."""
FIELDS = ("protocol", "epoch", "step", "train_loss", "test_loss", "test_accuracy", "elapsed_s", "comm_s")


def run_training(net: ExperimentNetwork, protocol: str, epochs: int, loss: float, timeout_s: float) -> list[dict]:
    """Train once with protocol on every host of net; rank 0's per-epoch records (RuntimeError if a rank failed)."""
    net.reset(loss)
    barrier = net.fresh_barrier()
    outcomes = net.launch(lambda rank: [sys.executable, "-m", "worker.training", "--job", str(net.job_path), "--rank",
                                        str(rank), "--protocol", protocol, "--epochs", str(epochs), "--barrier",
                                        str(barrier), "--program-json", str(net.cfg.program_json)], timeout_s)
    bad = [o for o in outcomes if o.exit_code != 0 or not o.report.get("done")]
    if bad:
        raise RuntimeError(f"{protocol}: " + "; ".join(f"rank {o.rank} exit {o.exit_code}: "
                                                  f"{o.report.get('error') or o.stderr[-300:]}" for o in bad))
    records = [json.loads(line) for line in outcomes[0].stdout.splitlines() if line.startswith("{")]
    return [r for r in records if "epoch" in r and not r.get("done")]


def summary(histories: dict[str, list[dict]], workers: int, bw: float | None, machine: dict[str, str]) -> str:
    lines = ["# Training: digits MLP, data-parallel", "", "## Machine", ""]
    lines += [f"- {k}: {v}" for k, v in machine.items()]
    lines += ["", "## Method", "",
              f"- {workers} Mininet hosts, one P4 switch (embedded), links "
              + (f"{bw:g} Mbit/s" if bw else "unlimited") + "; scikit-learn's digits (1348 train / 449 test "
              "images), an MLP 64-32-10, SGD, global batch 64 split over the hosts; each step's gradient (2,410 "
              "float32 and the loss) is all-reduced by the named collective.", "",
              "## Result", "", "| algorithm | epochs | final test accuracy | final test loss | time (s) | "
              "of which all-reduce (s) |", "|---|---:|---:|---:|---:|---:|"]
    for protocol, h in histories.items():
        last = h[-1]
        lines.append(f"| {protocol} | {last['epoch']} | {last['test_accuracy']:.4f} | {last['test_loss']:.4f} | "
                     f"{last['elapsed_s']:.2f} | {last['comm_s']:.2f} |")
    floats = [h[-1]["test_accuracy"] for a, h in histories.items() if a not in IN_NETWORK]
    for protocol, h in histories.items():
        if protocol in IN_NETWORK and floats:
            gap = max(floats) - h[-1]["test_accuracy"]
            verdict = "within" if gap <= ACCURACY_TOLERANCE else "OUTSIDE"
            lines.append(f"\n{protocol} (quantized, block floating point) ends {gap:+.4f} below the best float baseline: "
                         f"{verdict} the {ACCURACY_TOLERANCE:.2f} tolerance.")
    return "\n".join(lines) + "\n"


def plot(histories: dict[str, list[dict]], path: Path) -> None:
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
    fig.suptitle("digits MLP, data-parallel: test loss per epoch")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    p = study_parser("experiments.train", __doc__)
    p.add_argument("--protocols", "--algos", dest="protocols", nargs="+", choices=sorted(PROTOCOLS),
                   default=[p for p in PROTOCOLS if not PROTOCOLS[p].needs_ps])
    p.add_argument("--workers", type=in_range(1, MAX_WORKERS), default=4)
    p.add_argument("--epochs", type=at_least(1), default=20)
    p.add_argument("--bw", type=nonnegative_float, default=10.0, help="link rate in Mbit/s (0: unlimited)")
    p.add_argument("--loss", type=probability(below_one=True), default=0.0)
    p.add_argument("--timeout", type=positive_float, default=300.0, help="bound on one algorithm's training, seconds")
    p.add_argument("--results", type=Path, default=ROOT / "results")
    json_path, p4info = program_paths(ROOT / "out", SWITCHML.program)
    p.add_argument("--json", dest="program_json", type=Path, default=json_path)
    p.add_argument("--p4info", type=Path, default=p4info)
    args = p.parse_args(argv)
    cfg = ExperimentConfig(workers=args.workers, bw=args.bw or None, program_json=args.program_json,
                           p4info=args.p4info, run_dir=Path("/tmp/ina-testbed/train"))
    try:
        cfg.check()
        for protocol in args.protocols:
            replace(cfg, protocol=protocol).fabric().check(protocol, PROTOCOLS[protocol].program,
                                                           PROTOCOLS[protocol].in_network)
    except (ValueError, OSError) as err:
        return fail("python -m experiments.train", str(err))
    if needs_root("train"):
        return 2
    histories: dict[str, list[dict]] = {}
    with ExperimentNetwork(cfg) as net:
        for protocol in args.protocols:
            print(f"\n{protocol}: training on {args.workers} hosts", flush=True)
            print(f"{'epoch':>5}  {'train loss':>10}  {'test loss':>9}  {'accuracy':>8}  {'time s':>7}  "
                  f"{'all-reduce s':>12}")
            h = run_training(net, protocol, args.epochs, args.loss, args.timeout)
            for r in h:
                print(f"{r['epoch']:>5}  {r['train_loss']:>10.4f}  {r['test_loss']:>9.4f}  {r['test_accuracy']:>8.4f}"
                      f"  {r['elapsed_s']:>7.2f}  {r['comm_s']:>12.2f}")
            histories[protocol] = h
    out = results_dir(args.results, "train")
    write_dicts(out / "history.csv", FIELDS, ({**r, "protocol": protocol} for protocol, h in histories.items() for r in h))
    text = summary(histories, args.workers, cfg.bw, machine_info())
    (out / "summary.md").write_text(text)
    plot(histories, out / "loss.png")
    print("\n" + text + f"\nwritten to {out}")
    return 0 if "OUTSIDE" not in text else 1


if __name__ == "__main__":
    sys.exit(main())
