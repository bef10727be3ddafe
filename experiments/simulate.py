"""A scenario's runs on the packet simulator (`engine = "sim"`): the same points, rows and report as the emulator's.

    rows = run_scenario(sc, out)                  # every point x repetition, rows appended to out/runs.csv
    row = run_point(sc, point, rep)               # one run, anywhere (a Dask worker runs exactly this)

Each run builds a `topo.sim.SimNetwork` for the point: the protocol's P4 program (compiled with a worker bitmap
wide enough for the point's workers when the program takes `INA_MAX_WORKERS`), one job of `workers` ranks on a
star whose links have the scenario's rate and the [sim] section's delay, queues, ECN threshold, switch service time
and host cost; the point's loss is the fault plan's drop rule at every switch port, both directions, as the
emulator's; the straggler (the last rank) starts `straggler_ms` late; the point's sparsity zeroes 64-element blocks
of every rank's input, its overlap shares their draw among the ranks (`point_inputs`), as the emulator's workers'
`--sparsity` and `--sparse-overlap` do. A host baseline (ring, PS) runs its steps over the simulator's TCP model
(`topo.sim.hosts`) on the program's L2 forwarding, no job installed; its row's retransmissions are resent TCP
segments and its packets every segment sent, ACKs included, as the emulator counts them. A run is deterministic given
its seed (the scenario's seed + rep seeds the inputs, the switch's random() and the controller's choices).

With `[network] topology = "two-tier"` the job's workers are spread over `racks` rack switches under the PS's rack
switch (`topo.sim.fabric`, programmed as Mininet's `make twolevel` network: ATP on `levels` levels), the racks'
uplinks at `uplink_mbps`; with `topology = "leaf-spine"` over `racks` leaves which, with the PS's leaf, are linked to
each of `spines` spines (`topo.leafspine`); the loss is a drop rule on every host-facing port of every switch, both
directions, as `make twolevel --loss` sets it; the row's wire figures count the workers' links.

Every run is verified (`check_results`): int32 sums exactly, element by element, against a streamed reference; float32
with the protocol's own error model (a host baseline's: float32 summation's bound), on every element while the
reference fits in `FULL_CHECK_ELEMENTS` values, else on an evenly spaced sample of whole packets (the verdict says
how many).

With `[sim] dask = true` (or `--cluster`), points are fanned out over a Dask cluster (`distributed`): a local one of
a process per CPU, or the scheduler at `cluster`. Each point is independent and seeded, so the rows are the serial
run's; they are written in the serial order.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, replace
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from controller.client import ControllerError
from controller.local import load_p4info
from controller.programs import CONTROLLERS
from experiments.bound import Bound
from experiments.resume import sweep_key
from experiments.rows import CSV_FIELDS, CsvLog, Row, agreed_digest, start_offsets
from experiments.scenario import RunPoint, Scenario
from switch.faults import FaultPlan
from topo.inprocess import EngineCache, make_jobs
from topo.sim import LinkSpec, SimNetwork, SimReport
from topo.sim.links import HTB_CBURST
from topo.sim.hosts import host_allreduce
from worker.driver import WindowOptions
from worker.job import PoolRange
from worker.protocols import PROTOCOLS, program_paths, protocol_of_program
from worker.stats import RunResult
from worker.verify import Verdict, check_exact, rank_input, result_digest, verify_float_sum, wrapping_sum

__all__ = ["FULL_CHECK_ELEMENTS", "check_results", "point_inputs", "run_point", "run_scenario", "sim_bound",
           "sim_program"]

ROOT = Path(__file__).resolve().parents[1]
HOST_SAMPLE_BLOCK = 256
"""Elements per sampled block of a host baseline's float32 result (it has no packets of a fixed size)."""
FULL_CHECK_ELEMENTS = 1 << 25
"""Float32 results are checked on every element while workers x elements stays below this (the protocols' error
models hold every rank's input in float64: 256 MiB here); beyond it, on a sample of whole packets."""


@lru_cache(maxsize=8)
def sim_program(program: str, workers: int) -> tuple[dict[str, Any], Any]:
    """(BMv2 JSON, P4Info message) of `program` for a job of `workers`: `make build`'s out/<program>.json while the
    default build holds them, else the program compiled by our compiler with the defines its protocol names for that
    many workers (`ProtocolSpec.scale_defines`: SwitchML's worker bitmap, ATP's L2 table). Cached in this process."""
    spec = next(s for s in PROTOCOLS.values() if s.program == program)
    defines = dict(spec.scale_defines(workers)) if spec.scale_defines else {}
    if not defines:
        json_path, p4info = program_paths(ROOT / "out", program)
        if not json_path.is_file():
            raise FileNotFoundError(f"{json_path} not found: run `make build` first")
        return json.loads(json_path.read_text()), load_p4info(p4info)
    from compiler import compile_file
    from compiler.diagnostics import CompileError

    flags = " ".join(f"-D {k}={v}" for k, v in defines.items())
    try:
        res = compile_file(spec.p4_source, defines=defines)
    except CompileError as exc:
        raise ValueError(f"{program}.p4 does not compile for {workers} workers ({flags}): {exc}") from None
    return res.json, res.p4info


def check_results(net: SimNetwork, job_id: int, runs: Sequence[RunResult], inputs: Sequence[np.ndarray],
                  dtype: str) -> list[Verdict]:
    """Each rank's verdict on its result (see the module): ranks whose results are identical share one check."""
    verdicts: list[Verdict] = []
    checked: list[tuple[RunResult, Verdict]] = []
    reference = None
    for r, run in enumerate(runs):
        v = next((v for c, v in checked if c.array.shape == run.array.shape and np.array_equal(c.array, run.array)
                  and _same(c.exponents, run.exponents)), None)
        if v is None:
            if dtype == "int32":
                reference = wrapping_sum(inputs) if reference is None else reference
                v = check_exact(run.array, reference)
            elif len(inputs) * inputs[0].size <= FULL_CHECK_ELEMENTS:
                v = _verify(net, job_id, r, run, list(inputs), dtype)
            else:
                v = _sampled(net, job_id, r, run, inputs, dtype)
            checked.append((run, v))
        verdicts.append(v)
    return verdicts


def _verify(net: SimNetwork, job_id: int, r: int, run: RunResult, inputs: list[np.ndarray], dtype: str) -> Verdict:
    """The protocol's check of one rank's result (a host baseline, which has no rank core: float32 summation)."""
    rank = net.ranks.get((job_id, r))
    return rank.verify(run, inputs, dtype) if rank is not None else verify_float_sum(run.array, inputs, dtype)


def _same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))


def _sampled(net: SimNetwork, job_id: int, r: int, run: RunResult, inputs: Sequence[np.ndarray], dtype: str) -> Verdict:
    """The protocol's check on an evenly spaced sample of whole packets (blocks of the program's elements)."""
    per = net.codec.num_elems if net.codec is not None else HOST_SAMPLE_BLOCK
    blocks = inputs[0].size // per
    k = max(1, min(blocks, FULL_CHECK_ELEMENTS // (len(inputs) * per)))
    chosen = np.unique(np.linspace(0, blocks - 1, k).astype(np.int64))
    idx = (chosen[:, None] * per + np.arange(per)).ravel()
    exps = run.exponents[chosen] if run.exponents is not None and run.exponents.size == blocks else run.exponents
    sub = RunResult(array=run.array.ravel()[idx], stats=run.stats, exponents=exps)
    v = _verify(net, job_id, r, sub, [x[idx] for x in inputs], dtype)
    return replace(v, message=f"{v.message} (a sample of {chosen.size} of {blocks} packets)")


def sim_bound(report: SimReport, sent: int, retransmitted: int, **extra: Any) -> Bound:
    """What bound a simulated run (experiments.bound), from its report: the busiest port's and the switch's and
    hosts' busy shares, the resent share of the `sent` packets, queue drops; `extra`: Bound's other fields."""
    busiest = report.busiest
    return Bound(link_busy=busiest.busy if busiest else None, switch_busy=report.switch_busy,
                 host_busy=report.host_busy, retransmitted=retransmitted / sent if sent else 0.0,
                 queue_drops=report.drops, **extra)


def point_inputs(sc: Scenario, point: RunPoint, seed: int) -> list[np.ndarray]:
    """Every rank's input of a run of `point` seeded by `seed`: the emulator's workers' (`python -m worker --seed
    --sparsity --sparse-overlap`), so that the engines and the protocols see identical tensors."""
    return [rank_input(point.size, seed, r, sc.dtype, point.sparsity, overlap=point.overlap)
            for r in range(point.workers)]


def run_point(sc: Scenario, point: RunPoint, rep: int, starts: Sequence[float] | None = None) -> Row:
    """One simulated run of `point` (a failed setup or run is a Row with its error; never raises for one run).
    `starts`: when each rank starts, in seconds (an emulator's run's `Row.starts()`, its straggler's delay included),
    instead of all at once and the straggler `straggler_ms` late."""
    seed = sc.seed + rep
    try:
        return _run(sc, point, rep, seed, starts)
    except (ValueError, RuntimeError, TimeoutError, FileNotFoundError, ControllerError) as exc:
        return replace(Row.failed(point, rep, sc, f"{type(exc).__name__}: {exc}"), engine="sim")


def _run(sc: Scenario, point: RunPoint, rep: int, seed: int, starts: Sequence[float] | None = None) -> Row:
    spec = PROTOCOLS[point.protocol]
    program_json, p4info = sim_program(str(spec.program), point.workers)
    m = sc.sim
    link = LinkSpec(float(sc.bw_mbps) * 1e6, m.delay_us * 1e-6,
                    None if m.buffer_kib is None else int(m.buffer_kib * 1024),
                    None if m.ecn_kib is None else int(m.ecn_kib * 1024), m.overhead_bytes,
                    HTB_CBURST if m.shaper == "htb" else None)
    options = replace(sc.recovery.window_options(sc.window), adapt_window=sc.window_control == "adaptive")
    if sc.topology != "star":
        net, hosts = _fabric(sc, point, spec, program_json, p4info, seed, link, options)
    else:
        jobs = make_jobs(1, point.workers, protocol_of_program(program_json)[2], PoolRange(0, sc.pool_size),
                         ps=spec.needs_ps)
        net = SimNetwork(program_json, jobs, p4info=p4info, protocol=spec, faults=FaultPlan(seed=seed),
                         loss=point.loss, seed=seed, options=options, link=link, service_s=m.service_ns * 1e-9,
                         host_cost_s=m.host_cost_ns * 1e-9, host_cpus=m.host_cpus, compute_s=m.compute_ms * 1e-3)
        hosts = {w.switch_port for w in jobs[0].workers}  # the star's hosts are keyed by their switch port
    inputs = point_inputs(sc, point, seed)
    if starts is not None:
        if len(starts) != point.workers:
            raise ValueError(f"{len(starts)} start times for {point.workers} workers")
        straggle = {(1, r): float(t) for r, t in enumerate(starts)}
    else:
        straggle = {(1, point.workers - 1): point.straggler_ms * 1e-3} if point.straggler_ms else None
    began = [(straggle or {}).get((1, r), 0.0) for r in range(point.workers)]
    allreduce = partial(host_allreduce, net) if spec.host_steps is not None else net.allreduce
    job = allreduce({1: inputs}, dtype=sc.dtype, start_at=straggle, time_limit=sc.timeout_s)[1]
    verdicts = check_results(net, 1, job.runs, inputs, sc.dtype)
    rep_ = net.report()
    stats = [w.stats for w in job.windows]
    elapsed = max(s.elapsed for s in stats)
    sent = sum(s.packets_sent for s in stats)
    retx = sum(s.retransmissions for s in stats)
    timeouts = sum(getattr(s, "tcp_timeouts", 0) for s in stats)  # a host baseline's TCP RTOs
    worker_links = [p for p in rep_.ports if p.host in hosts]
    wire_frames = sum(p.frames for p in worker_links if p.up)
    wire_bytes = sum(p.bytes for p in worker_links if p.up)
    busiest = rep_.busiest
    most = max((p.bytes for p in worker_links), default=0)
    bound = sim_bound(rep_, sent, retx, tcp_timeouts=timeouts, efficiency=point.size * 4 / most if most else None)
    ratios = [v.max_error_over_bound for v in verdicts]
    ok = all(v.ok for v in verdicts)
    bad = [f"rank {r}: {v.message}" for r, v in enumerate(verdicts) if not v.ok]
    prefix = CONTROLLERS[str(spec.program)].COUNTER_PREFIX
    return Row(**asdict(point), rep=rep, seed=seed, dtype=sc.dtype, bw_mbps=float(sc.bw_mbps), verified=ok,
               elapsed_s=elapsed, goodput_elems_per_s=point.size / elapsed if ok and elapsed > 0 else 0.0,
               link_utilisation=(point.size * 32 / elapsed) / (float(sc.bw_mbps) * 1e6) if ok and elapsed else None,
               retransmissions=retx, wire_frames=wire_frames, wire_bytes=wire_bytes,
               max_error_over_bound=max(ratios) if ratios else None,
               switch_aggregated=job.counters.get(f"{prefix}aggregated", 0),
               link_busy_fraction=None if busiest is None else round(busiest.busy, 4),
               switch_cpu_fraction=round(rep_.switch_busy, 4), host_cpu_fraction=round(rep_.host_busy, 4),
               retransmitted_fraction=round(bound.retransmitted, 4), queue_drops=rep_.drops, tcp_timeouts=timeouts,
               efficiency=None if bound.efficiency is None else round(bound.efficiency, 4), bound=bound.verdict,
               engine="sim", wall_s=round(rep_.wall_s, 3), sim_events=rep_.events,
               bottleneck="" if busiest is None else f"{busiest.name} {100 * busiest.busy:.0f} %",
               result_digest=agreed_digest(result_digest(r.array) for r in job.runs),
               start_offsets_ms=start_offsets([{"rank": r, "started_s": t} for r, t in enumerate(began)]),
               error="; ".join(bad)[:500])


def _fabric(sc: Scenario, point: RunPoint, spec: Any, program_json: dict[str, Any], p4info: Any, seed: int,
            link: LinkSpec, options: WindowOptions) -> tuple[SimNetwork, set[int]]:
    """The point's network of several switches (topo.sim.fabric) and its worker hosts' keys; engines reused within
    the process (loading one costs ~1 s, and a network has up to 33, leaf-spine up to 97)."""
    from topo.leafspine import LeafSpineFabric
    from topo.sim.fabric import FabricSimNetwork, fabric_job
    from topo.twotier import TwoTierFabric

    m = sc.sim
    fabric = (LeafSpineFabric(point.workers, racks=sc.racks, spines=sc.spines, levels=sc.levels, ps=spec.needs_ps)
              if sc.topology == "leaf-spine" else
              TwoTierFabric(point.workers, racks=sc.racks, levels=sc.levels, ps=spec.needs_ps))
    job = fabric_job(fabric, protocol_of_program(program_json)[2], PoolRange(0, sc.pool_size))
    uplink = link if sc.uplink_mbps is None else replace(link, rate_bps=sc.uplink_mbps * 1e6)
    net = FabricSimNetwork(program_json, fabric, [job], p4info=p4info, protocol=spec, loss=point.loss, seed=seed,
                            options=options, link=link, uplink=uplink, service_s=m.service_ns * 1e-9,
                            host_cost_s=m.host_cost_ns * 1e-9, host_cpus=m.host_cpus, compute_s=m.compute_ms * 1e-3,
                            engines=_ENGINES.many(program_json, len(fabric.switches)))
    return net, set(range(1, fabric.workers + 1))


_ENGINES = EngineCache()
"""The networks' engines, one per switch, reused point after point (each network clears them)."""


def run_scenario(sc: Scenario, out: Path, *, progress: bool = True, done: Collection[tuple[str, ...]] | None = None,
                 cluster: str | None = None, log: Callable[[str], None] = print,
                 starts: Mapping[tuple[RunPoint, int], Sequence[float]] | None = None) -> list[Row]:
    """Every point of sc `repetitions` times on the simulator; rows appended to out/runs.csv as they finish (in the
    serial order). `done`: keys of runs already in out/runs.csv (a resume). With sc.sim.dask or `cluster`, over
    Dask (see the module). `starts[(point, rep)]`: that run's ranks' start times (`run_point`)."""
    given = starts or {}
    skip = set(done or ())
    todo = [(p, rep) for rep in range(1, sc.repetitions + 1) for p in sc.runs() if sweep_key(p, rep, sc) not in skip]
    log_rows = CsvLog(out / "runs.csv", CSV_FIELDS, resume=done is not None)
    bar = tqdm(total=len(todo), desc=sc.name, unit="run", disable=not progress, file=sys.stderr)
    rows: list[Row] = []

    def record(row: Row) -> None:
        rows.append(row)
        log_rows.append(row.csv_row())
        bar.set_postfix_str(f"{row.protocol} n={row.workers} size={row.size} {'ok' if row.verified else 'FAILED'}")
        bar.update()

    try:
        if sc.sim.dask or cluster is not None:
            for row in _over_dask(sc, todo, cluster, log, given):
                record(row)
        else:
            for p, rep in todo:
                record(run_point(sc, p, rep, given.get((p, rep))))
    finally:
        bar.close()
    return rows


def _over_dask(sc: Scenario, todo: list[tuple[RunPoint, int]], cluster: str | None,
               log: Callable[[str], None], starts: Mapping[tuple[RunPoint, int], Sequence[float]]) -> Any:
    """The rows of `todo` computed on a Dask cluster, yielded in `todo`'s order as they become available."""
    from distributed import Client, LocalCluster

    local = None
    if cluster is None:
        local = LocalCluster(n_workers=max(1, min(len(todo), os.cpu_count() or 1)), threads_per_worker=1,
                             processes=True, dashboard_address=None)
        cluster = local.scheduler_address
    try:
        with Client(cluster) as client:
            log(f"dask: {len(todo)} runs on {cluster} ({len(client.scheduler_info()['workers'])} workers)")
            futures = [client.submit(run_point, sc, p, rep, starts.get((p, rep)), pure=False) for p, rep in todo]
            for f in futures:
                yield f.result()
    finally:
        if local is not None:
            local.close()
