"""Two-level against one-level ATP aggregation on the same two-tier network (`make twolevel`).

    python -m experiments.twolevel [--racks 2] [--workers 4] [--size 65536] [--loss 0] [--bw MBIT] [--window W]
                            [--reps 3] [--results results] [--program-dir out]

One Mininet two-tier network per mode (topo.twotier: `racks` rack switches under the PS rack switch, the workers
spread over the racks): `levels 2` aggregates each rack in its rack switch and the racks in the PS rack switch;
`levels 1` aggregates every worker in the PS rack switch while the rack switches only forward. Each mode runs the
same all-reduce `reps` times. Per run it records the completion time (the slowest worker), goodput, whether every
worker verified, the packets and bytes that crossed the racks' uplinks and the PS's link (both directions, read from
the switch interfaces), where contributions were aggregated, and the retransmissions. Writes `runs.csv`,
`summary.md` and `twolevel.png` under results/twolevel-<UTC time>/ and prints the summary.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from experiments.config import ExperimentConfig
from experiments.session import ExperimentNetwork
from experiments.study import add_study_arguments, finish, needs_root, study_parser
from topo.target import Target
from worker.arguments import at_least, fail, in_range, link_rate, probability
from worker.job import MAX_WORKERS
from worker.protocols import PROTOCOLS

TWO_LEVEL = next(p for p in PROTOCOLS.values() if p.levels > 1)
"""The protocol that aggregates in two levels of switches (ATP)."""

__all__ = ["LevelRow", "run_twolevel", "summary", "main"]

LEVELS = (1, 2)


@dataclass(frozen=True)
class LevelRow:
    """One all-reduce in one mode."""

    levels: int
    rep: int
    racks: int
    workers: int
    size_elems: int
    loss: float
    bw_mbps: float | None
    verified: bool
    completion_s: float
    goodput_elems_per_s: float
    retransmissions: int
    in_switch_fraction: float
    """Fraction of contributions that reached the PS inside a switch aggregate."""
    uplink_frames: int
    uplink_bytes: int
    ps_frames: int
    ps_bytes: int
    bound: str = ""
    """What bound the run (experiments.bound)."""


def twolevel_configs(*, racks: int, workers: int, size: int, loss: float, bw: float | None, window: int | None,
                     program_dir: Path, target: Target, run_dir: Path, seed: int = 1) -> list[ExperimentConfig]:
    """One experiment per number of levels, each checked (ValueError naming a bad value)."""
    configs = [ExperimentConfig(protocol=TWO_LEVEL.name, topo="twotier", racks=racks, levels=levels, workers=workers,
                                size=size, loss=loss, bw=bw, window=window, target=target, program_dir=program_dir,
                                seed=seed, run_dir=run_dir / f"levels{levels}", timeout_s=300.0) for levels in LEVELS]
    for cfg in configs:
        cfg.check()
    return configs


def run_twolevel(*, racks: int, workers: int, size: int, loss: float, bw: float | None, window: int | None, reps: int,
                 program_dir: Path, target: Target, run_dir: Path, seed: int = 1,
                 progress: bool = True) -> list[LevelRow]:
    rows: list[LevelRow] = []
    for cfg in twolevel_configs(racks=racks, workers=workers, size=size, loss=loss, bw=bw, window=window,
                                program_dir=program_dir, target=target, run_dir=run_dir, seed=seed):
        levels = cfg.levels
        with ExperimentNetwork(cfg) as net:
            for rep in range(1, reps + 1):
                res = net.run(cfg)
                up, ps = res.links.get("uplinks", (0, 0)), res.links.get("ps", (0, 0))
                rows.append(LevelRow(
                    levels=levels, rep=rep, racks=racks, workers=workers, size_elems=size, loss=loss, bw_mbps=bw,
                    verified=res.correct, completion_s=res.elapsed_s, goodput_elems_per_s=res.goodput,
                    retransmissions=res.retransmissions,
                    in_switch_fraction=float((res.ps or {}).get("switch_fraction", 0.0)), uplink_frames=up[0],
                    uplink_bytes=up[1], ps_frames=ps[0], ps_bytes=ps[1],
                    bound=res.bound.verdict if res.bound else ""))
                if progress:
                    r = rows[-1]
                    print(f"levels {levels} rep {rep}: {'✓' if r.verified else '✗'} {r.completion_s:.3f} s, "
                          f"uplinks {r.uplink_frames} packets, PS link {r.ps_frames} packets", file=sys.stderr)
    return rows


def summary(rows: Sequence[LevelRow], *, racks: int, workers: int, size: int, loss: float, bw: float | None,
            machine: dict[str, str]) -> str:
    """summary.md: the method, per mode the medians (and ranges) of completion time, goodput and link traffic, and
    the two-level / one-level ratios."""
    lines = ["# Two-level vs one-level ATP aggregation (two-tier network)", ""]
    lines += [f"- {k}: {v}" for k, v in machine.items()]
    rate = f"links {bw:g} Mbit/s" if bw is not None else "unlimited veth links"
    lines += [f"- {racks} racks, {workers} workers, {size} float32 elements, loss {loss:g}, {rate}; one Mininet "
              "network per mode, every switch its own switch process", ""]
    lines += ["| levels | correct | completion s (median, min-max) | goodput elem/s | uplink packets | uplink MB "
              "| PS link packets | in switch | retx |",
              "|---|---|---|---|---|---|---|---|---|"]
    med: dict[int, dict[str, float]] = {}
    for levels in LEVELS:
        rs = [r for r in rows if r.levels == levels]
        if not rs:
            continue
        ok = [r for r in rs if r.verified]
        t = [r.completion_s for r in ok]
        m = med[levels] = {
            "t": statistics.median(t) if t else 0.0,
            "goodput": statistics.median(r.goodput_elems_per_s for r in ok) if ok else 0.0,
            "up": statistics.median(r.uplink_frames for r in rs),
            "up_b": statistics.median(r.uplink_bytes for r in rs),
            "ps": statistics.median(r.ps_frames for r in rs),
        }
        span = f"{m['t']:.3f} ({min(t):.3f}-{max(t):.3f})" if t else "-"
        lines.append(f"| {levels} | {len(ok)}/{len(rs)} | {span} | {m['goodput']:.0f} | {m['up']:.0f} | "
                     f"{m['up_b'] / 1e6:.2f} | {m['ps']:.0f} | "
                     f"{100 * statistics.mean(r.in_switch_fraction for r in rs):.1f} % "
                     f"| {statistics.median(r.retransmissions for r in rs):g} |")
    if all(lv in med and med[lv]["t"] > 0 for lv in LEVELS):
        one, two = med[1], med[2]
        lines += ["", f"Two-level / one-level: completion time {two['t'] / one['t']:.2f}x, uplink packets "
                      f"{two['up'] / max(one['up'], 1):.2f}x, PS link packets {two['ps'] / max(one['ps'], 1):.2f}x."]
    return "\n".join(lines) + "\n"


def plot(rows: Sequence[LevelRow], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import EngFormatter

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    labels = [f"{lv} level{'s' if lv > 1 else ''}" for lv in LEVELS]
    xs = list(range(len(LEVELS)))

    def bars(ax, offset: float, width: float, values: Callable[[LevelRow], float], colour: str, label: str) -> None:
        per_level = [[values(r) for r in rows if r.levels == lv] or [0.0] for lv in LEVELS]
        med = [statistics.median(v) for v in per_level]
        ax.bar([x + offset for x in xs], med, width, color=colour, label=label,
               yerr=[[m - min(v) for m, v in zip(med, per_level)], [max(v) - m for m, v in zip(med, per_level)]],
               capsize=4)

    # one colour per quantity, none shared between the panels
    bars(ax1, 0.0, 0.5, lambda r: r.completion_s, "tab:purple", "completion time")
    ax1.set(ylabel="completion time (s; median, bars min–max)", xticks=xs, xticklabels=labels)
    bars(ax2, -0.2, 0.4, lambda r: r.uplink_frames, "tab:orange", "racks' uplinks")
    bars(ax2, 0.2, 0.4, lambda r: r.ps_frames, "tab:green", "PS link")
    ax2.set(ylabel="frames per all-reduce (both directions)", xticks=xs, xticklabels=labels)
    for ax in (ax1, ax2):
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_formatter(EngFormatter(sep=""))
    ax2.legend()
    fig.suptitle("ATP on a two-tier network: aggregation in the rack switches too, or only above them")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    p = study_parser("experiments.twolevel", __doc__)
    p.add_argument("--racks", type=at_least(1), default=2)
    p.add_argument("--workers", type=in_range(1, MAX_WORKERS), default=4, help="workers, spread over the racks")
    p.add_argument("--size", type=at_least(1), default=65536, help="float32 elements per worker")
    p.add_argument("--loss", type=probability(below_one=True), default=0.0)
    p.add_argument("--bw", type=link_rate(), default=None, metavar="MBIT|auto",
                   help="limit every link (default: unlimited); auto: the highest rate the switch and the hosts keep "
                        "up with, probed for both modes (experiments.calibrate)")
    p.add_argument("--window", type=at_least(1), default=None,
                   help="packets in flight per worker (default: the protocol's)")
    add_study_arguments(p)
    args = p.parse_args(argv)
    run_dir = Path("/tmp/ina-testbed/twolevel")
    try:  # every value checked before anything is started or written
        target, why = Target.explain(args.target)
        twolevel_configs(racks=args.racks, workers=args.workers, size=args.size, loss=args.loss,
                         bw=None if args.bw == "auto" else args.bw, window=args.window, program_dir=args.program_dir,
                         target=target, run_dir=run_dir, seed=args.seed)
    except (ValueError, OSError) as err:
        return fail(p.prog, str(err))
    if needs_root("twolevel"):
        return 2
    from perf.machine import machine_info

    print(why, flush=True)
    machine = machine_info()
    try:
        if args.bw == "auto":
            from experiments.calibrate import common_rate

            args.bw, _ = common_rate(twolevel_configs(
                racks=args.racks, workers=args.workers, size=args.size, loss=args.loss, bw=None, window=args.window,
                program_dir=args.program_dir, target=target, run_dir=run_dir, seed=args.seed))
        rows = run_twolevel(racks=args.racks, workers=args.workers, size=args.size, loss=args.loss, bw=args.bw,
                            window=args.window, reps=args.reps, program_dir=args.program_dir,
                            target=target, run_dir=run_dir, seed=args.seed)
    except Exception as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    text = summary(rows, racks=args.racks, workers=args.workers, size=args.size, loss=args.loss, bw=args.bw,
                   machine=machine)
    finish(args.results, "twolevel", rows, text, plot)
    return 0 if all(r.verified for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
