"""J jobs sharing one switch, every in-network protocol at equal switch memory (`make multitenant`): SwitchML's static
partition of the pool against ATP's pool shared by every job (with a PS fallback), and any plug-in protocol.

    python -m experiments.multitenant [--jobs 3] [--workers 2] [--size 65536] [--cells 6144] [--window W] [--loss 0]
                               [--bw MBIT] [--partitions K] [--ps-per-job] [--reps 3] [--results results]
                               [--program-dir out] [--protocols switchml atp]

Switch memory is counted in int32 value cells, and each protocol's spec says how it spends them
(`ProtocolSpec.pool_size`): SwitchML gives each job `cells / (jobs * 2 * N)` slots (two sets of N elements each,
N = 64), so a job's window is capped by its share; ATP's jobs all hash their windows into one pool of `cells / N`
aggregators (N = 32), and what collides goes to the parameter server. For each protocol one Mininet star
(jobs x workers hosts, plus the PS host of a protocol with one) runs every job at once, `reps` times. Per job it records the
completion time (the slowest worker), whether every worker verified, and where contributions were aggregated (ATP:
the PS counts those that arrived inside a switch aggregate; SwitchML aggregates everything in the switch), the
collisions and the retransmissions. `--partitions K` (fewer than the jobs) gives a static-partition protocol K
partitions instead of one per job: the jobs beyond K wait for a free one, in waves, and their completion time counts
the wait (ATP's evaluation's setting); `--ps-per-job` gives each job of a protocol with a PS a PS host and link of its
own, as ATP runs them;
`--bw` limits the links. The summary says what bound the jobs (each run's bound, the window against the path's
bandwidth-delay product, the PS link's load). Writes `runs.csv` (each repetition's rows on disk as it finishes),
`arguments.json` (the arguments, a calibrated rate), `summary.md` and `multitenant.png` under
results/multitenant-<UTC time>/ and prints the summary. Ctrl-C stops cleanly and prints the command that resumes:
`--resume DIR` (the same arguments, else refused) runs the repetitions DIR/runs.csv lacks or that failed
(experiments.resume) and summarises every row.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable, Collection, Sequence
from dataclasses import fields
from pathlib import Path

from experiments.config import ExperimentConfig
from experiments.interrupt import interrupted, stopping_cleanly
from experiments.resume import (MULTITENANT_KEY, ResumeError, add_resume_argument, check_arguments, read_rows,
                                remember, reopen, resolve, resolved, row_key)
from experiments.rows import CsvLog, from_csv, results_dir, to_csv
from experiments.session import ExperimentNetwork
from experiments.study import add_study_arguments, finish, needs_root, study_parser
from experiments.tenancy import EQUAL_PRIORITY, JobRow, pools_for, rep_key
from topo.target import Target
from worker.arguments import at_least, fail, in_range, link_rate, nonnegative_float, probability
from worker.job import MAX_WORKERS
from worker.protocols import PROTOCOLS, default_windows, in_network

__all__ = ["JobRow", "run_multitenant", "pools_for", "main"]

MODULE = "experiments.multitenant"


def multitenant_configs(*, jobs: int, workers: int, size: int, cells: int, window: int | None, loss: float,
                        program_dir: Path, target: Target, run_dir: Path, seed: int = 1,
                        bw: float | None = None, partitions: int | None = None,
                        ps_per_job: bool = False, protocols: Sequence[str] | None = None,
                        straggler_ms: float = 0.0, equal_priorities: bool = False,
                        straggler_jobs: int | None = None, release_us: int | None = None) -> list[ExperimentConfig]:
    """One experiment per compared protocol, each checked (ValueError naming a bad value); a static-partition
    protocol's network has one job per partition; `straggler_ms`: every job's last rank (`straggler_jobs`: of jobs
    1..K only) joins that late; `equal_priorities`: every job's file gives it the same priority (a switch that
    allocates by priority, ESA, then evicts no job's aggregate for another's); `release_us`: every job's file gives it
    that timeout (a switch that releases lagging partial aggregates, release.p4)."""
    pools = pools_for(cells, jobs, program_dir, partitions, protocols)
    configs = [ExperimentConfig(protocol=proto, workers=workers, jobs=PROTOCOLS[proto].jobs_at_once(jobs, partitions),
                                size=size, loss=loss, target=target, program_dir=program_dir, pool_size=pools[proto],
                                window=window, seed=seed, run_dir=run_dir / proto, timeout_s=300.0, bw=bw,
                                ps_per_job=ps_per_job, straggler_ms=straggler_ms, straggler_jobs=straggler_jobs,
                                job_priority=EQUAL_PRIORITY if equal_priorities else None,
                                job_release_us=release_us)
               for proto in pools]
    for cfg in configs:
        cfg.check()
    return configs


def run_multitenant(*, jobs: int, workers: int, size: int, cells: int, window: int | None, loss: float, reps: int,
                    program_dir: Path, target: Target, run_dir: Path, seed: int = 1,
                    progress: bool = True, bw: float | None = None, partitions: int | None = None,
                    ps_per_job: bool = False, protocols: Sequence[str] | None = None,
                    done: Collection[tuple[str, ...]] = (),
                    record: Callable[[list[JobRow]], None] | None = None, straggler_ms: float = 0.0,
                    equal_priorities: bool = False, straggler_jobs: int | None = None,
                    release_us: int | None = None) -> list[JobRow]:
    """Every job of every repetition. With fewer static partitions than jobs, such a protocol's jobs run in waves of one
    job per partition (a job waits, first come first served, for a partition to free): a job's completion time then
    counts from the start of the repetition, its wait included, as ATP's evaluation counts it. `record` is given each
    repetition's rows as it finishes; the repetitions whose key (`rep_key`) is in `done` are skipped (a resume)."""
    rows: list[JobRow] = []
    for cfg in multitenant_configs(jobs=jobs, workers=workers, size=size, cells=cells, window=window, loss=loss,
                                   program_dir=program_dir, target=target, run_dir=run_dir, seed=seed, bw=bw,
                                   partitions=partitions, ps_per_job=ps_per_job, protocols=protocols,
                                   straggler_ms=straggler_ms, equal_priorities=equal_priorities,
                                   straggler_jobs=straggler_jobs, release_us=release_us):
        proto = cfg.protocol
        todo = [rep for rep in range(1, reps + 1) if rep_key(proto, rep) not in done]
        if not todo:
            continue
        with ExperimentNetwork(cfg) as net:
            for rep in todo:
                first = len(rows)
                waves = jobs // cfg.jobs
                wait = 0.0
                results = []
                for w in range(waves):
                    ran = net.run_jobs(cfg)
                    results += [(w * cfg.jobs + job.job_id, res, wait) for job, res in zip(net.jobs, ran)]
                    wait += max(res.elapsed_s for res in ran)
                for job_id, res, waited in results:
                    ps = res.ps or {}
                    rtts = [float(o.report["srtt_ms"]) for o in res.workers if o.report.get("srtt_ms") is not None]
                    ps_bytes = res.links.get("ps", (0, 0))[1] / (cfg.jobs if cfg.ps_per_job else 1)  # one PS link
                    ps_busy = ps_bytes * 8 / (cfg.bw * 1e6 * res.elapsed_s) \
                        if cfg.bw and res.elapsed_s > 0 and "ps" in res.links else None
                    rows.append(JobRow(
                        protocol=proto, rep=rep, job=job_id, workers=workers, size_elems=size,
                        pool_slots=cfg.pool_size, window_packets=cfg.window_width,
                        verified=res.correct, wire_frames=res.wire[0], wire_bytes=res.wire[1],
                        bound=res.bound.verdict if res.bound else "",
                        completion_s=waited + res.elapsed_s,
                        goodput_elems_per_s=size / (waited + res.elapsed_s) if waited else res.goodput,
                        wait_s=waited,
                        retransmissions=res.retransmissions,
                        in_switch_fraction=float(ps.get("switch_fraction", 0.0 if PROTOCOLS[proto].needs_ps else 1.0)),
                        collisions=int(ps.get("collisions", 0)), raw_sequences=int(ps.get("raw_sequences", 0)),
                        srtt_ms=max(rtts) if rtts else None, ps_link_busy=ps_busy))
                    if progress:
                        r = rows[-1]
                        ok = "✓" if r.verified else "✗"
                        print(f"{proto:>8} rep {rep} job {r.job}: {ok} {r.completion_s:.3f} s, "
                              f"{100 * r.in_switch_fraction:.1f} % in switch, {r.collisions} collisions, "
                              f"bound {r.bound or '-'}", file=sys.stderr)
                if record is not None:
                    record(rows[first:])
    return rows


def secs(t: float) -> str:
    """Seconds for a table: three decimals, or three significant digits below 0.1 s (simulated µs-scale jobs)."""
    return f"{t:.3f}" if t >= 0.1 or t == 0 else f"{t:.3g}"


def jain(values: Sequence[float]) -> float:
    """Jain's fairness index (Σx)² / (n Σx²): 1 when every job gets the same, 1/n when one gets everything."""
    if not values or not any(values):
        return 0.0
    return sum(values) ** 2 / (len(values) * sum(v * v for v in values))


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100), linear between the closest ranks (numpy's default)."""
    xs = sorted(values)
    k = (len(xs) - 1) * q / 100
    lo = int(k)
    return xs[lo] + (xs[min(lo + 1, len(xs) - 1)] - xs[lo]) * (k - lo)


def jct_lines(rows: Sequence[JobRow]) -> list[str]:
    """Per protocol, job completion times over every job of every repetition (mean, median, p99, max) and Jain's
    fairness index of the jobs' goodputs within a repetition (median and lowest over the repetitions); a repetition
    with a job that did not verify counts that job's goodput as 0."""
    out = ["| protocol | jobs x reps | JCT mean s | p50 | p99 | max | Jain's index (median, lowest) | bound |",
           "|---|---|---|---|---|---|---|---|"]
    for proto in dict.fromkeys(r.protocol for r in rows):
        rs = [r for r in rows if r.protocol == proto]
        t = [r.completion_s for r in rs if r.verified]
        if not t:
            continue
        reps = sorted({r.rep for r in rs})
        fair = [jain([r.goodput_elems_per_s if r.verified else 0.0 for r in rs if r.rep == k]) for k in reps]
        bounds = [r.bound or "-" for r in rs]
        out.append(f"| {proto} | {len(t)} of {len(rs)} verified | {secs(statistics.mean(t))} | "
                   f"{secs(percentile(t, 50))} | {secs(percentile(t, 99))} | {secs(max(t))} | "
                   f"{statistics.median(fair):.3f}, {min(fair):.3f} | "
                   + ", ".join(f"{bounds.count(v)} {v}" for v in dict.fromkeys(bounds)) + " |")
    return out


def summary(rows: Sequence[JobRow], *, jobs: int, workers: int, size: int, cells: int, loss: float,
            pools: dict[str, int], machine: dict[str, str], bw: float | None = None,
            partitions: int | None = None, ps_per_job: bool = False, straggler_ms: float = 0.0,
            equal_priorities: bool = False, straggler_jobs: int | None = None, release_us: int | None = None) -> str:
    """summary.md: the method, then per protocol (those of `pools`, in order) and job the median completion time
    (min-max), fraction aggregated in the switch, collisions; and each protocol's mean completion time over the
    first protocol's."""
    compared = list(pools)
    lines = [f"# Multi-tenant in-network aggregation: {' vs '.join(compared)}", ""]
    lines += [f"- {k}: {v}" for k, v in machine.items()]
    waves = (f"{partitions} partitions: a job waits for a free one (first come, first served; its completion time "
             "counts from the start, the wait included)" if partitions and partitions < jobs else "one per job")
    memory = []
    for proto in compared:
        spec = PROTOCOLS.get(proto)
        if spec is not None and spec.shared_pool:
            memory.append(f"{proto} {pools[proto]} slots shared by every job at once"
                          + (", each job's PS on a host (and link) of its own" if ps_per_job and spec.needs_ps
                             else ", one PS host for every job" if spec.needs_ps else ""))
        else:
            memory.append(f"{proto} {pools[proto]} slots per static partition ({waves})")
    which = "every job's" if straggler_jobs is None else f"job{'s 1..' if straggler_jobs > 1 else ' '}{straggler_jobs}'s"
    late = (f", {which} last worker {straggler_ms:g} ms late" if straggler_ms else "") + (
        ", every job of the same priority" if equal_priorities else "") + (
        f", every job's release timeout {release_us} us" if release_us is not None else "")
    lines += [f"- {jobs} jobs x {workers} workers, {size} float32 elements each, loss {loss:g}{late}, links "
              + (f"{bw:g} Mbit/s" if bw else "unlimited") + f", switch memory {cells} int32 cells: "
              + "; ".join(memory), ""]
    lines += ["| protocol | job | correct | completion s (median, min-max) | in switch | collisions | raw resends "
              "| retx |",
              "|---|---|---|---|---|---|---|---|"]
    means: dict[str, list[float]] = {}
    for proto in compared:
        for job in sorted({r.job for r in rows if r.protocol == proto}):
            rs = [r for r in rows if r.protocol == proto and r.job == job]
            t = [r.completion_s for r in rs if r.verified]
            ok = sum(r.verified for r in rs)
            med = f"{secs(statistics.median(t))} ({secs(min(t))}-{secs(max(t))})" if t else "-"
            if t:
                means.setdefault(proto, []).append(statistics.median(t))
            lines.append(f"| {proto} | {job} | {ok}/{len(rs)} | {med} | "
                         f"{100 * statistics.mean(r.in_switch_fraction for r in rs):.1f} % | "
                         f"{statistics.median(r.collisions for r in rs):g} | "
                         f"{statistics.median(r.raw_sequences for r in rs):g} | "
                         f"{statistics.median(r.retransmissions for r in rs):g} |")
    base, others = compared[0], compared[1:]
    if all(p in means for p in compared) and others:
        lines += [""] + [f"Mean job completion time, {p} / {base}: "
                         f"{statistics.mean(means[p]) / statistics.mean(means[base]):.2f}x." for p in others]
        net = {p: [r.completion_s for r in rows if r.protocol == p and r.verified and r.bound == "network"]
               for p in compared}
        if all(net.values()):
            lines += [f"Over the network-bound jobs only ({len(net[p])} {p}, {len(net[base])} {base}): "
                      f"{statistics.mean(net[p]) / statistics.mean(net[base]):.2f}x." for p in others]
        else:
            lines.append("Not a bandwidth comparison: " + "; ".join(
                f"{p}: {len(net[p])} of {sum(r.protocol == p for r in rows)} jobs network-bound" for p in compared)
                + " (the bound column below says what bound the others).")
    lines += why_lines(rows, bw)
    lines += ["", "## Job completion times and fairness", "",
              "Over every job of every repetition (p99 of a few dozen runs is close to their maximum); Jain's index of "
              "the jobs' goodputs in one repetition: 1.0 when every job got the same.", ""] + jct_lines(rows)
    return "\n".join(lines) + "\n"


def why_lines(rows: Sequence[JobRow], bw: float | None) -> list[str]:
    """What the measurements say about the two designs' limits: each protocol's window against the path's
    bandwidth-delay product (its workers' smoothed RTT times the link rate), and the PS link's load for ATP."""
    out = ["", "## What bound the jobs", ""]
    for proto in dict.fromkeys(r.protocol for r in rows):
        rs = [r for r in rows if r.protocol == proto and r.verified]
        if not rs:
            continue
        bounds = [r.bound or "-" for r in rs]
        text = f"- {proto}: " + ", ".join(f"{bounds.count(v)} {v}" for v in dict.fromkeys(bounds))
        rtts = [r.srtt_ms for r in rs if r.srtt_ms is not None]
        if rtts:
            rtt = statistics.median(rtts)
            text += f"; workers' smoothed RTT {rtt:.3g} ms (median of the jobs' largest)"
            if bw:
                bdp = bw * 1e6 * rtt / 1e3 / 8
                text += (f", so a link's bandwidth-delay product is {bdp:,.0f} bytes; window "
                         f"{rs[0].window_packets} packets (pool {rs[0].pool_slots})")
        busy = [r.ps_link_busy for r in rs if r.ps_link_busy is not None]
        if busy:
            text += (f"; the PS's link carried {statistics.median(busy):.2f}x its rate (both directions together, "
                     f"median over the jobs), {statistics.median(r.collisions for r in rs):g} collisions per job sent "
                     f"to the PS (median), {100 * statistics.mean(r.in_switch_fraction for r in rs):.0f} % aggregated "
                     "in the switch")
        out.append(text)
    return out


def plot(rows: Sequence[JobRow], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    jobs = sorted({r.job for r in rows})
    compared = list(dict.fromkeys(r.protocol for r in rows))
    width = 0.76 / max(1, len(compared))
    for k, proto in enumerate(compared):
        xs = [j + (k - (len(compared) - 1) / 2) * width for j in jobs]
        times = [[r.completion_s for r in rows if r.protocol == proto and r.job == j] or [0.0] for j in jobs]
        t = [statistics.median(v) for v in times]
        f = [100 * statistics.mean([r.in_switch_fraction for r in rows if r.protocol == proto and r.job == j] or [0])
             for j in jobs]
        ax1.bar(xs, t, width, label=proto, capsize=4,
                yerr=[[m - min(v) for m, v in zip(t, times)], [max(v) - m for m, v in zip(t, times)]])
        ax2.bar(xs, f, width, label=proto)
    ax1.set(xlabel="job", ylabel="completion time (s; median, bars min–max)", xticks=jobs)
    ax1.set_ylim(bottom=0)
    ax2.set(xlabel="job", ylabel="contributions aggregated in the switch (%)", xticks=jobs, ylim=(0, 105))
    ax1.legend()
    fig.suptitle("Jobs sharing one switch at equal memory")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    p = study_parser("experiments.multitenant", __doc__)
    p.add_argument("--jobs", type=at_least(1), default=3)
    p.add_argument("--workers", type=in_range(1, MAX_WORKERS), default=2, help="workers per job")
    p.add_argument("--size", type=at_least(1), default=65536, help="float32 elements per worker")
    p.add_argument("--cells", type=at_least(1), default=6144, help="switch memory for aggregation, in int32 cells")
    p.add_argument("--window", type=at_least(1), default=None,
                   help="packets in flight per worker, capped by the protocol's pool (default: the protocol's, "
                        + default_windows() + ")")
    p.add_argument("--loss", type=probability(below_one=True), default=0.0)
    p.add_argument("--bw", type=link_rate(zero=True), default=0.0, metavar="MBIT|auto",
                   help="link rate in Mbit/s (default 0: unlimited); auto: the highest rate the switch and the hosts "
                        "keep up with for every protocol compared (experiments.calibrate)")
    p.add_argument("--partitions", type=at_least(1), default=None,
                   help="static partitions of the memory (SwitchML; default: one per job); with fewer, jobs wait "
                        "for a free one (in waves), as in ATP's evaluation")
    p.add_argument("--ps-per-job", action="store_true",
                   help="a protocol with a PS (ATP): a PS host (and link) per job, as ATP runs them (default: one PS "
                        "host for every job)")
    p.add_argument("--straggler-ms", type=nonnegative_float, default=0.0, metavar="MS",
                   help="every job's last worker joins the all-reduce MS later (default 0)")
    p.add_argument("--straggler-jobs", type=at_least(1), default=None, metavar="K",
                   help="with --straggler-ms: only jobs 1..K have the late worker (default: every job)")
    p.add_argument("--release-us", type=in_range(0, 2**32 - 1), default=None, metavar="US",
                   help="every job's file gives it this timeout: release's switch sends a partial aggregate on to "
                        "the PS US microseconds after its first contribution (0: never; default: its controller's)")
    p.add_argument("--equal-priorities", action="store_true",
                   help="every job's file gives it the same priority (esa then preempts no job for another; "
                        "default: the controller's, earlier jobs first)")
    choices = in_network()
    p.add_argument("--protocols", "--policies", nargs="+", type=_policy, choices=choices, default=list(choices),
                   help="the in-network protocols (allocation policies) compared, the first the baseline of the "
                        f"ratios (default: all); '{STATIC}' names the static-partition one "
                        f"({_static() or 'none registered'})")
    p.add_argument("--engine", choices=["mininet", "sim"], default="mininet",
                   help="mininet (real time, root) or sim: the packet simulator in virtual time at --bw (required, "
                        "e.g. 100000 for 100 Gbit/s; experiments.multitenant_sim)")
    add_study_arguments(p)
    add_resume_argument(p)
    argv = list(sys.argv[1:] if argv is None else argv)
    args = p.parse_args(argv)
    run_dir = Path("/tmp/ina-testbed/multitenant")
    if args.engine == "sim":
        if args.bw in ("auto", 0.0):
            return fail(p.prog, "--engine sim needs a link rate, --bw MBIT (e.g. 100000; \"auto\" calibrates the "
                        "emulator to this machine)")
        try:
            pools = pools_for(args.cells, args.jobs, args.program_dir, args.partitions, args.protocols)
        except (ValueError, OSError) as err:
            return fail(p.prog, str(err))
        with stopping_cleanly():
            return _study(args, argv, [], pools, None, "", run_dir, p.prog)
    try:  # every value checked before anything is started or written
        target, why = Target.explain(args.target)
        pools = pools_for(args.cells, args.jobs, args.program_dir, args.partitions, args.protocols)
        configs = multitenant_configs(jobs=args.jobs, workers=args.workers, size=args.size, cells=args.cells,
                                      window=args.window, loss=args.loss, program_dir=args.program_dir,
                                      target=target, run_dir=run_dir, seed=args.seed,
                                      bw=None if args.bw == "auto" else args.bw or None, partitions=args.partitions,
                                      ps_per_job=args.ps_per_job, protocols=args.protocols,
                                      straggler_ms=args.straggler_ms, equal_priorities=args.equal_priorities,
                                      straggler_jobs=args.straggler_jobs, release_us=args.release_us)
    except (ValueError, OSError) as err:
        return fail(p.prog, str(err))
    if needs_root("multitenant"):
        return 2
    with stopping_cleanly():
        return _study(args, argv, configs, pools, target, why, run_dir, p.prog)


STATIC = "static"
"""`--policies` name of the protocol that partitions the memory statically (SwitchML)."""


def _static() -> str | None:
    return next((p for p in in_network() if not PROTOCOLS[p].shared_pool), None)


def _policy(name: str) -> str:
    """A policy's protocol: `static` is the registered static-partition protocol, anything else its own name."""
    return (_static() or name) if name == STATIC else name


COLUMNS = tuple(f.name for f in fields(JobRow))
"""runs.csv's columns."""


def _study(args: argparse.Namespace, argv: list[str], configs: list[ExperimentConfig], pools: dict[str, int],
           target: Target | None, why: str, run_dir: Path, prog: str) -> int:
    """main's work once the arguments are checked: in a new results directory, or the resumed one."""
    from perf.machine import machine_info

    arguments = {k: v for k, v in vars(args).items() if k not in ("results", "resume")}
    old: list[JobRow] = []
    done: set[tuple[str, ...]] = set()
    if args.resume is not None:
        out = args.resume
        try:
            check_arguments(out, MODULE, arguments)
            kept = reopen(out / "runs.csv", COLUMNS, MULTITENANT_KEY,
                          lambda key, rows: len(rows) == args.jobs and all(r["verified"] == "1" for r in rows),
                          normalize=lambda d: to_csv(from_csv(JobRow, d)))
        except ResumeError as exc:
            return fail(prog, str(exc))
        old, done = [from_csv(JobRow, d) for d in kept.rows], kept.done
        again = f", {kept.retried} rows of failed ones moved to retried.csv, run again" if kept.retried else ""
        print(f"resuming {out}: {len(done)} of {len(pools) * args.reps} repetitions done{again}", flush=True)
    else:
        out = results_dir(args.results, "multitenant")
        remember(out, MODULE, arguments)
    log = CsvLog(out / "runs.csv", COLUMNS, resume=args.resume is not None)

    def record(rows: list[JobRow]) -> None:
        for r in rows:
            log.append(to_csv(r))
    machine = machine_info()
    if args.engine == "sim":
        from experiments.multitenant_sim import describe

        machine["engine"] = why = describe(float(args.bw))
    print(why, flush=True)
    try:
        try:
            if args.engine == "sim":
                from experiments.multitenant_sim import run_multitenant_sim

                rows = run_multitenant_sim(jobs=args.jobs, workers=args.workers, size=args.size, cells=args.cells,
                                           window=args.window, loss=args.loss, reps=args.reps, bw=float(args.bw),
                                           program_dir=args.program_dir, seed=args.seed, partitions=args.partitions,
                                           ps_per_job=args.ps_per_job, protocols=args.protocols, done=done,
                                           record=record, straggler_ms=args.straggler_ms,
                                           equal_priorities=args.equal_priorities,
                                           straggler_jobs=args.straggler_jobs, release_us=args.release_us)
            elif args.bw == "auto":
                from experiments.calibrate import common_rate

                rate = resolved(out).get("bw")  # a resume: the rate the runs so far had
                if rate is None:
                    rate, _ = common_rate(configs)
                    resolve(out, "bw", rate)
                args.bw = rate
            if args.engine == "mininet":
                assert target is not None
                rows = run_multitenant(jobs=args.jobs, workers=args.workers, size=args.size, cells=args.cells,
                                       window=args.window, loss=args.loss, reps=args.reps,
                                       program_dir=args.program_dir, target=target, run_dir=run_dir,
                                       seed=args.seed, bw=args.bw or None, partitions=args.partitions,
                                       ps_per_job=args.ps_per_job,
                                       protocols=args.protocols, done=done, record=record,
                                       straggler_ms=args.straggler_ms, equal_priorities=args.equal_priorities,
                                      straggler_jobs=args.straggler_jobs, release_us=args.release_us)
        except Exception as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
    except KeyboardInterrupt:
        reps = {row_key(r, MULTITENANT_KEY) for r in read_rows(out / "runs.csv")[1]}
        return interrupted(MODULE, argv, out, f"{len(reps)} of {len(pools) * args.reps} repetitions (all their jobs) "
                           "recorded")
    order = list(args.protocols)
    rows = sorted(old + rows, key=lambda r: (order.index(r.protocol), r.rep, r.job))
    text = summary(rows, jobs=args.jobs, workers=args.workers, size=args.size, cells=args.cells, loss=args.loss,
                   pools=pools, machine=machine, bw=args.bw or None, partitions=args.partitions,
                   ps_per_job=args.ps_per_job, straggler_ms=args.straggler_ms,
                   equal_priorities=args.equal_priorities, straggler_jobs=args.straggler_jobs,
                   release_us=args.release_us)
    finish(args.results, "multitenant", rows, text, plot, out=out)
    return 0 if all(r.verified for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
