"""All-reduce goodput benchmark (`make bench`): WORKERS x LOSS grid on the embedded switch in Mininet.

    python -m experiments.bench.allreduce [--workers 2 4 8] [--loss 0 0.01] [--reps 5] [--size 262144] [--out results/bench/allreduce]
                         [--json out/switchml.json --p4info out/switchml.p4info.txt] [--compare DIR|REV]

Every run is one `experiments.session.run_experiment` (fresh Mininet star, switch process, controller, one
`python -m worker --verify` per host, started together through the workers' start barrier). A run counts only if every
worker verified its result against the float64 reference and the documented bound; a run that did not is listed as
such and left out of the statistics. Repetitions are interleaved (rep 1 of every configuration, then rep 2, ...) so
that load changes of the shared machine spread over all configurations. Writes `<out>.csv` (one row per run),
`<out>.png` (median goodput with min-max bars) and `<out>.md` (machine, method, table). With `--compare DIR|REV`
every repetition also runs the grid with another version of the project (a checkout directory or a git revision,
experiments.bench.compare), alternating with this tree's, and `<out>.md` gains the ratios (`<out>.compare.csv`: every pair).
`make bench` then runs the scaling sweep, `experiments.bench.scaling`.
"""

from __future__ import annotations

import argparse
import math
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from experiments.bench.grid import Cell, ratios_by_repetition, run_grid, write_csv
from experiments.rows import SETUP_ATTEMPTS
from experiments.config import ROOT, ExperimentConfig
from experiments.session import layout_worker_args
from perf.checkout import CheckoutError, checkout
from perf.machine import load_average, machine_info
from topo.cpus import CPU_LAYOUTS, CpuLayout
from topo.target import Target
from worker.driver import WindowOptions
from worker.protocols import DEFAULT_PROTOCOL, PROTOCOLS, in_network, program_paths, protocol_of_program

if TYPE_CHECKING:
    from experiments.bench.compare import Comparison

BENCH_SIZE = 262_144
"""Default tensor size: 4x `make run`'s, so a run lasts long enough (~0.5 s) to be timed steadily."""
GOAL_ELEMS_PER_S = 250_000
"""Issue 4's goal: 4 workers without loss; at 1 % loss at least 80 % of it."""
LOSS_SHARE_GOAL = 0.85
"""Issue 11's goal: 4 workers at 1 % loss reach at least this share of their loss-free goodput."""


def write_plot(cells: Sequence[Cell], path: Path, size: int) -> None:
    """Median goodput vs workers, one line per loss, min-max bars, the goal as a marker."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    for loss in sorted({c.loss for c in cells}):
        row = sorted((c for c in cells if c.loss == loss and c.median is not None), key=lambda c: c.workers)
        if not row:
            continue
        xs = [c.workers for c in row]
        med = [c.median / 1e3 for c in row]  # type: ignore[operator]
        lo = [m - min(c.goodputs) / 1e3 for m, c in zip(med, row)]
        hi = [max(c.goodputs) / 1e3 - m for m, c in zip(med, row)]
        ax.errorbar(xs, med, yerr=[lo, hi], marker="o", capsize=4, label=f"loss {loss * 100:g} %")
    ax.axhline(GOAL_ELEMS_PER_S / 1e3, color="grey", ls="--", lw=1)
    ax.annotate("goal, 4 workers, no loss", (min(c.workers for c in cells), GOAL_ELEMS_PER_S / 1e3),
                textcoords="offset points", xytext=(2, 4), fontsize=8, color="grey")
    ax.set_xticks(sorted({c.workers for c in cells}))
    ax.set_xlabel("workers")
    ax.set_ylabel("goodput (k elements/s, verified runs)")
    ax.set_title(f"all-reduce of {size:,} float32, embedded switch (median, min–max)", fontsize=10)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def median_interval(values: Sequence[float], coverage: float = 0.9) -> tuple[float, float, float, float] | None:
    """(median, low, high, confidence) of values: a distribution-free interval for their median, the order statistics
    x(k) and x(n+1-k) with the largest k whose confidence 1 - 2 P(Binomial(n, 1/2) < k) is at least `coverage`
    (5 values at 90 %: their minimum and maximum, 93.75 %); None with too few values for that coverage."""
    xs = sorted(values)
    n = len(xs)
    best = None
    for k in range(1, n // 2 + 1):
        conf = 1 - 2 * sum(math.comb(n, i) for i in range(k)) / 2 ** n
        if conf < coverage:
            break
        best = (k, conf)
    if best is None:
        return None
    k, conf = best
    return statistics.median(xs), xs[k - 1], xs[n - k], conf


def share_goal_line(lossless: Cell, lossy: Cell, goal: float = LOSS_SHARE_GOAL) -> str | None:
    """Issue 11's goal line: the share of the medians, and whether the repetitions' shares settle it."""
    if not lossless.median or lossy.median is None:
        return None
    share = lossy.median / lossless.median
    line = (f"4 workers, 1 % loss as a share of no loss: {share * 100:.0f} % (later goal ≥ {goal * 100:.0f} %: "
            f"{'met' if share >= goal else 'not met'})")
    shares = ratios_by_repetition(lossless, lossy)
    if not shares:
        return line
    line += f"; per repetition {min(shares) * 100:.0f}–{max(shares) * 100:.0f} %"
    iv = median_interval(shares)
    if iv is None:
        return line + f" ({len(shares)} repetitions: too few for a 90 % interval of their median)"
    med, lo, hi, conf = iv
    verdict = ("settles the goal: met" if lo >= goal else "settles the goal: not met" if hi < goal else
               "does not settle the goal")
    return line + (f", median {med * 100:.0f} %, {conf * 100:.0f} % interval of that median {lo * 100:.0f}–"
                   f"{hi * 100:.0f} % ({len(shares)} repetitions): {verdict}")


def _fmt(x: float | None, spec: str = ",.0f") -> str:
    return "–" if x is None else format(x, spec)


def summary_table(cells: Sequence[Cell]) -> str:
    """The Markdown table of the report (README quotes it)."""
    base = {c.workers: c.median for c in cells if c.loss == 0}
    lines = ["| workers | loss | verified runs | goodput median (elem/s) | min – max | vs. no loss | retransmissions "
             "(median, all workers) | time median (s) | worker CPU (median, all workers, s) |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for c in sorted(cells, key=lambda c: (c.workers, c.loss)):
        g = c.goodputs
        spread = f"{min(g):,.0f} – {max(g):,.0f}" if g else "–"
        ratio = (f"{c.median / base[c.workers] * 100:.0f} %" if c.loss and c.median and base.get(c.workers)
                 else "–")
        lines.append(f"| {c.workers} | {c.loss * 100:g} % | {len(c.good)}/{len(c.runs)} | **{_fmt(c.median)}** | "
                     f"{spread} | {ratio} | {_fmt(c.median_of('retransmissions'))} | "
                     f"{_fmt(c.median_of('elapsed_s'), '.3f')} | {_fmt(c.median_of('worker_cpu_s'), '.3f')} |")
    return "\n".join(lines)


def link_bound_table(cells: Sequence[Cell], cfg: ExperimentConfig) -> list[str]:
    """On rate-limited links: each configuration's median time against the time a worker's own frames need on its
    uplink (packets it sent x frame bytes x 8 / the link rate), and its retransmissions as a share of its packets."""
    assert cfg.bw
    _, header, n = protocol_of_program(cfg.program_files[0])
    frame = 14 + 20 + 8 + header.byte_len + 4 * n
    lines = ["### Against the link", "",
             "| workers | loss | link bound (s) | time median (s) | time / bound | retransmitted |",
             "|---:|---:|---:|---:|---:|---:|"]
    for c in sorted(cells, key=lambda c: (c.workers, c.loss)):
        good = c.good
        if not good:
            continue
        per_worker = statistics.median(r.packets_sent / r.workers for r in good)
        bound = per_worker * frame * 8 / (cfg.bw * 1e6)
        time_s = statistics.median(r.elapsed_s for r in good)
        retx = statistics.median(r.retransmissions / r.packets_sent for r in good if r.packets_sent)
        lines.append(f"| {c.workers} | {c.loss * 100:g} % | {bound:.3f} | {time_s:.3f} | {time_s / bound:.2f} | "
                     f"{retx * 100:.1f} % |")
    return lines + [""]


def write_markdown(cells: Sequence[Cell], path: Path, info: dict[str, str], cfg: ExperimentConfig, reps: int,
                   wall_s: float, compared: Comparison | None = None, command: str | None = None) -> None:
    """The benchmark's report; `command` is the command line that ran it (default: `make bench`'s)."""
    failed = [r for c in cells for r in c.runs if not r.verified]
    setup_failures = sum(c.setup_failures for c in cells)
    four_cells = {c.loss: c for c in cells if c.workers == 4}
    four = {loss: c.median for loss, c in four_cells.items()}
    goal = []
    if 0 in four and four[0] is not None and not cfg.bw:  # the goals are for unlimited links
        goal.append(f"4 workers, no loss: {four[0]:,.0f} elem/s (goal ≥ {GOAL_ELEMS_PER_S:,}: "
                    f"{'met' if four[0] >= GOAL_ELEMS_PER_S else 'not met'})")
        lossy = four.get(0.01)
        if lossy is not None:
            ok = lossy >= 0.8 * four[0] and lossy >= 0.8 * GOAL_ELEMS_PER_S
            goal.append(f"4 workers, 1 % loss: {lossy:,.0f} elem/s = {lossy / four[0] * 100:.0f} % of no loss "
                        f"(goal ≥ 80 % of no loss and ≥ {0.8 * GOAL_ELEMS_PER_S:,.0f}: {'met' if ok else 'not met'})")
            share = share_goal_line(four_cells[0], four_cells[0.01])
            if share:
                goal.append(share)
    wo = WindowOptions()
    spec, _, n_elems = protocol_of_program(cfg.program_files[0])
    origin = f"`{command}`" if command else f"`make bench` (`python -m experiments.bench.allreduce --out {path.with_suffix('')}`)"
    text = [
        f"# All-reduce benchmark ({spec.name})",
        "",
        f"Produced by {origin}; one row per run in "
        f"`{path.with_suffix('.csv').name}`, plot in `{path.with_suffix('.png').name}`.",
        "",
        "## Machine",
        "",
        *[f"- {k}: {v}" for k, v in info.items()],
        f"- load average at end: {load_average()}",
        f"- CPU layout (`--cpus {cfg.cpus}`, topo.cpus): {CpuLayout.plan(cfg.cpus).describe()}",
        "- note: the machine is shared with other users' processes, so a load average above the CPU count means "
        "the figures are lower than on an idle machine",
        "",
        "## Method",
        "",
        f"- Each run is `experiments.session.run_experiment` (what `make run` does): a fresh Mininet star with the "
        f"embedded switch (`python -m switch`, one process), `{spec.name}` (`{spec.p4_source.name}`) pushed by the "
        f"controller, N workers (`python -m worker --verify`), each all-reducing {cfg.size:,} float32 elements "
        f"({n_elems} elements per packet, window {cfg.window_width}"
        f"{f' (the default: the job pool, at most {spec.default_window})' if cfg.window is None else ''}, "
        f"pool {cfg.pool_size} slots).",
        "- The workers start the all-reduce together (start barrier after process start-up); a worker's time runs "
        "from its first packet to its last result. *goodput* = elements / time of the slowest worker.",
        "- *worker CPU*: CPU time the worker processes used during their all-reduce, summed over the workers; "
        "the rest of the machine's CPU time over the run went to the switch process and everything else.",
        "- *loss* is the drop probability the switch's P4 drop simulator applies on every worker port in each "
        "direction (so a packet's round trip is lost with probability ≈ 2 × loss).",
        *([f"- Links limited to {cfg.bw:g} Mbit/s (htb, every link, both directions): the network, not a CPU, sets "
           f"the pace. *link bound*: the time a worker's own frames need on its uplink (every packet it sent, "
           f"Ethernet/IPv4/UDP headers included); *time / bound* near 1 means the run was link-bound."]
          if cfg.bw else []),
        "- A run counts only if every worker's result matched the float64 reference within the documented "
        "quantization bound; failed runs are listed below and never enter the medians.",
        f"- {reps} repetitions per configuration, interleaved across configurations; median and min – max of "
        f"the verified runs. Whole benchmark: {wall_s:.0f} s. A run whose network or switch did not come up is "
        f"retried (up to {SETUP_ATTEMPTS} tries; this time: {setup_failures} failed set-ups).",
        f"- Worker defaults: adaptive retransmission timeout (RFC 6298 SRTT + max({wo.min_timeout * 1000:g} ms, 4 "
        f"RTTVAR)), fast retransmit after {wo.fast_retransmit} later packets were answered (at most "
        f"{wo.max_fast_retransmits} times per packet), backoff ×{wo.backoff:g} per retransmission, give-up after "
        f"{wo.max_retries}; receive coalescing "
        + ("off (`--rx-coalesce 0`: with the `split` CPU layout the switch has a CPU of its own, "
           "experiments.session.layout_worker_args)." if layout_worker_args(CpuLayout.plan(cfg.cpus)) else
           f"{wo.rx_coalesce:g} × SRTT (at most {wo.max_rx_coalesce * 1000:g} ms)."),
        "",
        "## Results",
        "",
        summary_table(cells),
        "",
        *([f"- {g}" for g in goal] + [""] if goal else []),
        *(link_bound_table(cells, cfg) if cfg.bw else []),
    ]
    if failed:
        text += ["### Runs that failed verification", ""]
        text += [f"- workers={r.workers} loss={r.loss:g} rep={r.rep}: {r.error or 'not verified'}" for r in failed]
        text.append("")
    if compared is not None:
        text += [f"## Against {compared.other}", "",
                 "The same grid run by the other checkout (its own `python -m experiments.bench.allreduce --reps 1`, its own compiled "
                 f"`{spec.p4_source.name}`, its own defaults), alternating with this tree's runs repetition by repetition, "
                 "this tree first in odd repetitions and the other in even ones (experiments.bench.compare); verified runs only. "
                 "Ratios: this tree / the other.", "",
                 compared.table(), ""]
    path.write_text("\n".join(text))


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m experiments.bench.allreduce", description=__doc__.split("\n\n")[0])
    p.add_argument("--workers", type=int, nargs="+", default=[2, 4, 8])
    p.add_argument("--loss", type=float, nargs="+", default=[0.0, 0.01])
    p.add_argument("--reps", type=int, default=5, help="repetitions per configuration (default 5)")
    p.add_argument("--size", type=int, default=BENCH_SIZE,
                   help=f"float32 elements per worker (default {BENCH_SIZE}: long enough runs to time steadily)")
    p.add_argument("--bw", type=float, default=None, metavar="MBIT",
                   help="limit every link to MBIT Mbit/s (htb): a rate-limited point, where the network sets the pace")
    p.add_argument("--protocol", choices=in_network(), default=DEFAULT_PROTOCOL,
                   help="the in-network protocol benchmarked (default %(default)s; its program: PROGRAM_DIR/<program>"
                        ".json unless --json says)")
    add_run_arguments(p, ROOT / "results" / "bench" / "allreduce", None, None, timeout=60.0)
    p.add_argument("--compare", default=None, metavar="DIR|REV",
                   help="also run the grid with another version of this project, alternating, and report the ratios: "
                        "a checkout directory or a git revision (exported for the run, perf.checkout)")
    return p


def add_run_arguments(p: argparse.ArgumentParser, out: Path, program_json: Path | None, p4info: Path | None,
                      timeout: float) -> None:
    """--out, --json, --p4info and --timeout of a benchmark that runs Mininet experiments (this one, experiments.bench.scaling)."""
    p.add_argument("--out", type=Path, default=out, help="output path without suffix: .csv, .png, .md are written")
    p.add_argument("--json", dest="program_json", type=Path, default=program_json)
    p.add_argument("--p4info", type=Path, default=p4info)
    p.add_argument("--timeout", type=float, default=timeout, help="bound on one run's workers, seconds")
    p.add_argument("--cpus", choices=CPU_LAYOUTS, default=ExperimentConfig.cpus,
                   help="CPU layout of the switch and the hosts (topo.cpus; default %(default)s)")


def run_arguments_error(args: argparse.Namespace, build: str) -> str | None:
    """Why a benchmark of Mininet experiments cannot start (not root, the program not compiled: `build` says how to
    compile it), or None."""
    if os.geteuid() != 0:
        return "Mininet needs root: run `sudo make bench`"
    for path in (args.program_json, args.p4info):
        if not path.exists():
            return f"{path} not found: run `{build}` first"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.program_json is None:
        args.program_json, default_p4info = program_paths(ExperimentConfig().program_dir,
                                                          str(PROTOCOLS[args.protocol].program))
        args.p4info = args.p4info or default_p4info
    error = run_arguments_error(args, "make build")
    if error is None and (args.reps < 1 or any(n < 1 for n in args.workers) or any(not 0 <= x < 1 for x in args.loss)):
        error = "need --reps >= 1, --workers >= 1 and 0 <= --loss < 1"
    if error is not None:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.bw is not None and args.compare is not None:
        print("error: --bw and --compare do not go together (older versions' benchmarks have no --bw)",
              file=sys.stderr)
        return 2
    base = ExperimentConfig(protocol=args.protocol, size=args.size, target=Target.EMBEDDED, program_json=args.program_json,
                            p4info=args.p4info, timeout_s=args.timeout, cpus=args.cpus, bw=args.bw)
    from experiments.bench.compare import Checkout, CompareError, run_compared  # it builds on this module

    info = machine_info()
    t0 = time.monotonic()
    compared = None
    try:
        if args.compare is None:
            cells = run_grid(args.workers, args.loss, args.reps, base)
        else:
            with checkout(args.compare) as version, tempfile.TemporaryDirectory(prefix="bench-compare-") as work:
                compared = run_compared(args.workers, args.loss, args.reps, base, Checkout.of(version), Path(work))
            cells = compared.ours
    except (CheckoutError, CompareError, subprocess.TimeoutExpired) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    wall = time.monotonic() - t0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_csv(cells, args.out.with_suffix(".csv"))
    write_plot(cells, args.out.with_suffix(".png"), args.size)
    write_markdown(cells, args.out.with_suffix(".md"), info, base, args.reps, wall, compared,
                   command=shlex.join(["python", "-m", "experiments.bench.allreduce", *(sys.argv[1:] if argv is None else argv)]))
    print()
    print(summary_table(cells))
    written = [args.out.with_suffix(s) for s in (".csv", ".png", ".md")]
    if compared is not None:
        compared.write_csv(args.out.with_suffix(".compare.csv"))
        written.append(args.out.with_suffix(".compare.csv"))
        print(f"\nagainst {compared.other}:\n{compared.table()}")
    print(f"\nwrote {', '.join(map(str, written))}")
    return 0 if all(r.verified for c in cells for r in c.runs) else 1


if __name__ == "__main__":
    sys.exit(main())
