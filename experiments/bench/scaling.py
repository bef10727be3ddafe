"""Scaling sweep of `make bench`: all-reduce time, CPU per element and peak memory vs tensor size and vs workers.

    python -m experiments.bench.scaling [--preset default|full] [--sizes ...] [--size-workers 2] [--workers ...]
                           [--workers-size 262144] [--reps 1] [--out results/bench/scaling]

Two sweeps on the embedded switch in Mininet, each run one `experiments.session.ExperimentNetwork.run` (the workers are
`python -m worker --verify` processes, started together through their barrier): tensor sizes at `size_workers`
workers, and worker counts at `workers_size` elements. One network per worker count serves all of its runs
(`experiments.sweep.open_network`, as `make experiment` does). Besides time and goodput a run records the CPU time of the
workers during their all-reduce (their own report) and of the switch process over the run (/proc/PID/stat), each per
element of the tensor, and the peak resident memory of the switch (VmHWM) and of the largest worker (its VmHWM at the
end of its all-reduce, before --verify builds its reference arrays). Writes `<out>.csv` (a row per run), `<out>.md`
and `<out>.png` (time and CPU per element vs size and vs workers).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from experiments.bench.allreduce import add_run_arguments, run_arguments_error
from experiments.rows import write_dicts
from experiments.config import ROOT, ExperimentConfig
from experiments.result import ExperimentResult
from perf.machine import load_average, machine_info, proc_cpu_seconds, proc_peak_rss_kb
from topo.cpus import CpuLayout
from topo.target import Target
from worker.protocols import DEFAULT_PROTOCOL, PROTOCOLS, program_paths

__all__ = ["ScalePoint", "ScaleRow", "PRESETS", "scaling_points", "run_scaling", "write_csv", "write_plot",
           "summary_table", "write_markdown", "main"]

PRESETS: dict[str, dict[str, Sequence[int] | int]] = {
    "default": {"sizes": (65_536, 1_048_576, 16_777_216), "size_workers": 2, "workers": (2, 4, 8, 16),
                "workers_size": 262_144, "reps": 2},
    "full": {"sizes": (65_536, 262_144, 1_048_576, 4_194_304, 16_777_216), "size_workers": 2,
             "workers": (2, 4, 6, 8, 12, 16), "workers_size": 262_144, "reps": 3},
}
"""`default` keeps `make bench` bounded on a 2-core machine (~5 minutes); `full` (BENCH_SCALING=full) is finer and
repeated."""

SWITCH_POOL = 8192
"""Slots of the switch program the sweep runs (`make bench` compiles switchml.p4 with -D INA_POOL_SIZE=8192), so
that the switch's memory is that of a full-size pool."""


@dataclass(frozen=True)
class ScalePoint:
    """One configuration of the sweep: which sweep it belongs to ("size" or "workers"), workers, elements."""

    sweep: str
    workers: int
    size: int


@dataclass(frozen=True)
class ScaleRow(ScalePoint):
    """One run, as written to the CSV."""

    rep: int = 0
    verified: bool = False
    elapsed_s: float = 0.0
    goodput_elems_per_s: float = 0.0
    packets_sent: int = 0
    retransmissions: int = 0
    worker_cpu_s: float = 0.0
    """All workers together, during their all-reduce."""
    switch_cpu_s: float = 0.0
    """The switch process over the run (its idle time costs none)."""
    worker_cpu_ns_per_elem: float = 0.0
    switch_cpu_ns_per_elem: float = 0.0
    switch_peak_rss_mb: float = 0.0
    worker_peak_rss_mb: float = 0.0
    """The largest worker's peak, up to the end of its all-reduce."""
    tensor_mb: float = 0.0
    """One worker's float32 tensor."""
    error: str = ""

    @property
    def cpu_ns_per_elem(self) -> float:
        return self.worker_cpu_ns_per_elem + self.switch_cpu_ns_per_elem

    @classmethod
    def of(cls, point: ScalePoint, rep: int, r: ExperimentResult, switch_cpu_s: float, switch_rss_kb: int
           ) -> ScaleRow:
        reports = [w.report for w in r.workers]
        errors = [f"rank {w.rank}: exit {w.exit_code}: {(w.report.get('error') or w.stderr or 'no output').strip()}"
                  for w in r.workers if not w.ok]
        worker_cpu = sum(float(x.get("cpu_s", 0.0)) for x in reports)
        return cls(**asdict(point), rep=rep, verified=r.correct, elapsed_s=round(r.elapsed_s, 6),
                   goodput_elems_per_s=round(r.goodput) if r.correct else 0.0,
                   packets_sent=sum(int(x.get("packets_sent", 0)) for x in reports),
                   retransmissions=r.retransmissions, worker_cpu_s=round(worker_cpu, 6),
                   switch_cpu_s=round(switch_cpu_s, 3),
                   worker_cpu_ns_per_elem=round(worker_cpu / point.size * 1e9, 1),
                   switch_cpu_ns_per_elem=round(switch_cpu_s / point.size * 1e9, 1),
                   switch_peak_rss_mb=round(switch_rss_kb / 1024, 1),
                   worker_peak_rss_mb=round(max(int(x.get("peak_rss_kb", 0)) for x in reports) / 1024, 1),
                   tensor_mb=round(point.size * 4 / 2**20, 2), error="; ".join(errors)[:500])

    @classmethod
    def failed(cls, point: ScalePoint, rep: int, error: str) -> ScaleRow:
        return cls(**asdict(point), rep=rep, tensor_mb=round(point.size * 4 / 2**20, 2), error=error[:500])


CSV_FIELDS = tuple(f.name for f in fields(ScaleRow))


def scaling_points(sizes: Sequence[int], size_workers: int, workers: Sequence[int], workers_size: int
                   ) -> list[ScalePoint]:
    """The size sweep (sizes at size_workers workers), then the worker sweep (workers at workers_size elements)."""
    return ([ScalePoint("size", size_workers, s) for s in sizes]
            + [ScalePoint("workers", n, workers_size) for n in workers])


def run_scaling(points: Sequence[ScalePoint], reps: int, base: ExperimentConfig,
                log: Callable[[str], None] = print) -> list[ScaleRow]:
    """Run every point reps times, one network per worker count, repetitions interleaved within it."""
    from experiments.sweep import open_network

    rows: list[ScaleRow] = []
    for n in dict.fromkeys(p.workers for p in points):
        mine = [p for p in points if p.workers == n]
        net = open_network(replace(base, workers=n), log)
        if net is None:
            rows += [ScaleRow.failed(p, rep, "network did not come up") for rep in range(1, reps + 1) for p in mine]
            continue
        try:
            for rep in range(1, reps + 1):
                for p in mine:
                    cfg = replace(base, workers=n, size=p.size, seed=base.seed + rep)
                    t0 = time.monotonic()
                    try:
                        proc = net.switch.process
                        assert proc is not None
                        cpu0 = proc_cpu_seconds(proc.pid)
                        result = net.run(cfg)
                        row = ScaleRow.of(p, rep, result, proc_cpu_seconds(proc.pid) - cpu0, proc_peak_rss_kb(proc.pid))
                    except Exception as exc:  # recorded, the sweep goes on
                        row = ScaleRow.failed(p, rep, f"{type(exc).__name__}: {exc}")
                    rows.append(row)
                    log(f"{p.sweep} sweep: workers={n} size={p.size:,} rep={rep}: {row.elapsed_s:.3f} s, "
                        f"{row.goodput_elems_per_s:,.0f} elem/s, CPU {row.cpu_ns_per_elem:,.0f} ns/elem, switch RSS "
                        f"{row.switch_peak_rss_mb} MB, worker RSS {row.worker_peak_rss_mb} MB"
                        f"{'' if row.verified else ' NOT VERIFIED: ' + row.error} [{time.monotonic() - t0:.1f} s]")
        finally:
            net.close()
    return rows


def write_csv(rows: Sequence[ScaleRow], path: Path) -> None:
    write_dicts(path, CSV_FIELDS, (asdict(r) for r in rows))


def _median(rows: Sequence[ScaleRow], attr: str) -> float | None:
    vals = [float(getattr(r, attr)) for r in rows if r.verified]
    return statistics.median(vals) if vals else None


def _groups(rows: Sequence[ScaleRow], sweep: str) -> list[tuple[ScalePoint, list[ScaleRow]]]:
    points = dict.fromkeys(ScalePoint(r.sweep, r.workers, r.size) for r in rows if r.sweep == sweep)
    return [(p, [r for r in rows if (r.sweep, r.workers, r.size) == (p.sweep, p.workers, p.size)]) for p in points]


def summary_table(rows: Sequence[ScaleRow]) -> str:
    """The Markdown table of the report (medians of the verified runs of each point)."""
    def fmt(x: float | None, spec: str) -> str:
        return "–" if x is None else format(x, spec)

    lines = ["| sweep | workers | elements | verified runs | time (s) | goodput (elem/s) | worker CPU (ns/elem) | "
             "switch CPU (ns/elem) | total CPU (ns/elem) | switch peak RSS (MB) | worker peak RSS (MB) | "
             "worker RSS / tensor |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for sweep in ("size", "workers"):
        for p, mine in _groups(rows, sweep):
            good = [r for r in mine if r.verified]
            total = statistics.median([r.cpu_ns_per_elem for r in good]) if good else None
            rss = _median(mine, "worker_peak_rss_mb")
            tensor = p.size * 4 / 2**20
            lines.append(
                f"| {sweep} | {p.workers} | {p.size:,} | {len(good)}/{len(mine)} | {fmt(_median(mine, 'elapsed_s'), '.3f')} "
                f"| {fmt(_median(mine, 'goodput_elems_per_s'), ',.0f')} "
                f"| {fmt(_median(mine, 'worker_cpu_ns_per_elem'), ',.0f')} "
                f"| {fmt(_median(mine, 'switch_cpu_ns_per_elem'), ',.0f')} | {fmt(total, ',.0f')} "
                f"| {fmt(_median(mine, 'switch_peak_rss_mb'), '.0f')} | {fmt(rss, '.0f')} "
                f"| {fmt(None if rss is None else rss / tensor, '.2f')} |")
    return "\n".join(lines)


def write_plot(rows: Sequence[ScaleRow], path: Path) -> None:
    """2 x 2 panels: time and CPU per element (worker, switch) vs size, and vs workers; medians of verified runs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(9.6, 6.4), dpi=110)
    for col, (sweep, xlabel) in enumerate((("size", "tensor elements (float32)"), ("workers", "workers"))):
        groups = [(p, mine) for p, mine in _groups(rows, sweep) if any(r.verified for r in mine)]
        ax_t, ax_c = axes[0][col], axes[1][col]
        if not groups:
            ax_t.set_visible(False)
            ax_c.set_visible(False)
            continue
        xs = [p.size if sweep == "size" else p.workers for p, _ in groups]
        ax_t.plot(xs, [_median(m, "elapsed_s") for _, m in groups], marker="o")
        ax_t.set_ylabel("all-reduce time (s)")
        for attr, label in (("worker_cpu_ns_per_elem", "workers (all)"), ("switch_cpu_ns_per_elem", "switch")):
            ax_c.plot(xs, [_median(m, attr) for _, m in groups], marker="o", label=label)
        ax_c.set_ylabel("CPU time per element (ns)")
        ax_c.set_ylim(bottom=0)
        ax_c.legend(fontsize=8)
        fixed = groups[0][0]
        title = (f"vs size, {fixed.workers} workers" if sweep == "size" else f"vs workers, {fixed.size:,} elements")
        ax_t.set_title(title, fontsize=10)
        for ax in (ax_t, ax_c):
            ax.set_xlabel(xlabel)
            ax.grid(alpha=0.3)
            if sweep == "size":
                ax.set_xscale("log", base=2)
            else:
                ax.set_xticks(xs)
        if sweep == "size":
            ax_t.set_yscale("log")
    fig.suptitle("all-reduce scaling, embedded switch in Mininet (median of verified runs)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def write_markdown(rows: Sequence[ScaleRow], path: Path, info: dict[str, str], base: ExperimentConfig, reps: int,
                   wall_s: float) -> None:
    failed = [r for r in rows if not r.verified]
    text = [
        "# All-reduce scaling",
        "",
        f"Produced by `make bench` (`python -m experiments.bench.scaling --out {path.with_suffix('')}`); one row per run in "
        f"`{path.with_suffix('.csv').name}`, plot in `{path.with_suffix('.png').name}`.",
        "",
        "## Machine",
        "",
        *[f"- {k}: {v}" for k, v in info.items()],
        f"- load average at end: {load_average()}",
        "- every figure here is absolute for this machine (shared with other users' processes; with more "
        "workers than cores the processes take turns)",
        f"- CPU layout (`--cpus {base.cpus}`, topo.cpus): {CpuLayout.plan(base.cpus).describe()}",
        "",
        "## Method",
        "",
        f"- Each run: one all-reduce of float32 tensors by N `python -m worker --verify` processes through the "
        f"embedded switch in Mininet, `p4src/switchml.p4` compiled with {SWITCH_POOL} slots x 64 elements "
        f"(the job uses {base.pool_size} of them, window {base.window_width}). One network per worker count serves "
        f"its runs. {reps} repetition(s) per point; medians of the verified runs. Whole sweep: {wall_s:.0f} s.",
        "- *time*: the slowest worker's, first packet to last result. *worker CPU*: CPU time of all workers during "
        "their all-reduce; *switch CPU*: CPU time of the switch process over the run (/proc/PID/stat); both "
        "divided by the tensor's elements.",
        "- *switch peak RSS*: VmHWM of the switch process (its pool's registers included); *worker peak RSS*: the "
        "largest worker's VmHWM at the end of its all-reduce (Python and numpy included, before verification "
        "allocates the reference); *worker RSS / tensor*: that over one worker's tensor (float32 bytes).",
        "",
        "## Results",
        "",
        summary_table(rows),
        "",
    ]
    if failed:
        text += ["### Runs that failed", ""]
        text += [f"- {r.sweep} sweep, workers={r.workers} size={r.size} rep={r.rep}: {r.error or 'not verified'}"
                 for r in failed]
        text.append("")
    path.write_text("\n".join(text))


def add_arguments(p: argparse.ArgumentParser, prefix: str = "") -> None:
    """The sweep's knobs (prefixed, e.g. "scaling-", when another command line hosts them)."""
    p.add_argument(f"--{prefix}preset", choices=sorted(PRESETS), default="default",
                   help="default: bounded for `make bench`; full: more sizes and worker counts, 3 repetitions")
    p.add_argument(f"--{prefix}sizes", type=int, nargs="*", default=None,
                   help="size sweep: tensor elements (none: no size sweep)")
    p.add_argument(f"--{prefix}size-workers", type=int, default=None, help="size sweep: workers")
    p.add_argument(f"--{prefix}workers", type=int, nargs="*", default=None,
                   help="worker sweep: worker counts (none: no worker sweep)")
    p.add_argument(f"--{prefix}workers-size", type=int, default=None, help="worker sweep: tensor elements")
    p.add_argument(f"--{prefix}reps", type=int, default=None, help="repetitions per point")


def resolve(args: argparse.Namespace, prefix: str = "") -> tuple[list[ScalePoint], int]:
    """(points, repetitions) from the preset and the explicit knobs that override it."""
    key = prefix.replace("-", "_")
    preset = PRESETS[getattr(args, f"{key}preset")]

    def pick(name: str) -> object:
        value = getattr(args, f"{key}{name}")
        return preset[name] if value is None else value

    sizes, workers = pick("sizes"), pick("workers")
    assert isinstance(sizes, Sequence) and isinstance(workers, Sequence)
    points = scaling_points(list(sizes), int(pick("size_workers")), list(workers),  # type: ignore[call-overload]
                            int(pick("workers_size")))  # type: ignore[call-overload]
    return points, int(pick("reps"))  # type: ignore[call-overload]


def run_and_write(points: Sequence[ScalePoint], reps: int, base: ExperimentConfig, out: Path,
                  info: dict[str, str]) -> list[ScaleRow]:
    """Run the sweep and write <out>.csv, .png, .md."""
    t0 = time.monotonic()
    rows = run_scaling(points, reps, base)
    wall = time.monotonic() - t0
    out.parent.mkdir(parents=True, exist_ok=True)
    write_csv(rows, out.with_suffix(".csv"))
    write_plot(rows, out.with_suffix(".png"))
    write_markdown(rows, out.with_suffix(".md"), info, base, reps, wall)
    return rows


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m experiments.bench.scaling", description=__doc__.split("\n\n")[0])
    add_arguments(p)
    add_run_arguments(p, ROOT / "results" / "bench" / "scaling",
                      *program_paths(ROOT / "out", f"{PROTOCOLS[DEFAULT_PROTOCOL].program}-pool{SWITCH_POOL}"), timeout=300.0)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    error = run_arguments_error(args, "make bench")
    if error is not None:
        print(f"error: {error}", file=sys.stderr)
        return 2
    points, reps = resolve(args)
    base = ExperimentConfig(target=Target.EMBEDDED, program_json=args.program_json, p4info=args.p4info,
                            timeout_s=args.timeout, cpus=args.cpus)
    rows = run_and_write(points, reps, base, args.out, machine_info())
    print()
    print(summary_table(rows))
    return 0 if all(r.verified for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
