"""`make multitenant` on the packet simulator (`python -m experiments.multitenant --engine sim`): J jobs sharing one
switch's memory at the field's link rates, in virtual time.

The same comparison as the emulator's (`experiments.multitenant`): each protocol spends `cells` int32 cells as its
spec says (`ProtocolSpec.pool_size`: SwitchML a static partition per job, ATP one pool every job hashes into, what
collides going to the PS), the jobs beyond the partitions wait in waves, and every job is one all-reduce of
`size` float32 elements per worker. Here each protocol's jobs run on a `topo.sim.SimNetwork` star (the protocol's
P4 program on the embedded engine, its controller, its ranks and PS) with links of `bw` Mbit/s, 1 µs of propagation,
1 MiB drop-tail queues with ECN marking at 100 KiB and a line-rate switch, the loss on every switch port. A
repetition is deterministic given its seed (seed + rep), and every job's result is verified.
"""

from __future__ import annotations

import math
from dataclasses import replace
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from experiments.tenancy import EQUAL_PRIORITY, JobRow, pools_for, rep_key
from experiments.simulate import check_results, sim_bound, sim_program
from switch.faults import FaultPlan
from topo.inprocess import JobRun, make_jobs
from topo.sim import LinkSpec, SimNetwork, SimReport
from worker.driver import WindowOptions
from worker.job import JobConfig, PoolRange
from worker.protocols import PROTOCOLS, protocol_of_program
from worker.verify import rank_input

__all__ = ["run_multitenant_sim"]

BUFFER_BYTES = 1 << 20
ECN_BYTES = 100 * 1024


def run_multitenant_sim(*, jobs: int, workers: int, size: int, cells: int, window: int | None, loss: float,
                        reps: int, bw: float, program_dir: Path, seed: int = 1, partitions: int | None = None,
                        ps_per_job: bool = False, protocols: Sequence[str] | None = None,
                        done: Collection[tuple[str, ...]] = (), record: Callable[[list[JobRow]], None] | None = None,
                        straggler_ms: float = 0.0, equal_priorities: bool = False,
                        straggler_jobs: int | None = None, release_us: int | None = None) -> list[JobRow]:
    """Every job of every repetition, as `experiments.multitenant.run_multitenant` gives them (`wait_s`: the waves
    before a job's; `srtt_ms`: the largest smoothed RTT its workers measured). `record` gets each repetition's rows;
    the repetitions whose key (`rep_key`) is in `done` are skipped (a resume). `ps_per_job`: a protocol with a PS
    gives each job its own PS host and link (`make_jobs`), else one serves every job. `straggler_ms`: every job's
    last rank (`straggler_jobs`: of jobs 1..K only) starts that late; `equal_priorities`: every job's file gives it
    the same priority (ESA); `release_us`: every job's file gives it that timeout (release.p4)."""
    rows: list[JobRow] = []
    link = LinkSpec(bw * 1e6, 1e-6, BUFFER_BYTES, ECN_BYTES)
    for proto, pool in pools_for(cells, jobs, program_dir, partitions, protocols).items():
        spec = PROTOCOLS[proto]
        at_once = spec.jobs_at_once(jobs, partitions)
        program_json, p4info = sim_program(str(spec.program), workers)
        per = protocol_of_program(program_json)[2]
        ranges = [PoolRange(0 if spec.shared_pool else j * pool, pool) for j in range(at_once)]
        width = spec.window_width(pool, window)
        for rep in range(1, reps + 1):
            if rep_key(proto, rep) in done:
                continue
            run_seed = seed + rep
            jobs_ = make_jobs(at_once, workers, per, ranges, ps=spec.needs_ps, ps_per_job=ps_per_job)
            if equal_priorities:
                jobs_ = [replace(j, priority=EQUAL_PRIORITY) for j in jobs_]
            if release_us is not None:
                jobs_ = [replace(j, release_us=release_us) for j in jobs_]
            net = SimNetwork(program_json, jobs_, p4info=p4info,
                             protocol=spec, faults=FaultPlan(seed=run_seed), loss=loss, seed=run_seed,
                             options=WindowOptions(window=window), link=link)
            first, wait = len(rows), 0.0
            for wave in range(jobs // at_once):
                inputs = {j + 1: [rank_input(size, run_seed + wave * at_once + j, r, "float32") for r in range(workers)]
                          for j in range(at_once)}
                late = {(j + 1, workers - 1): straggler_ms * 1e-3 for j in range(at_once)
                        if straggler_jobs is None or wave * at_once + j < straggler_jobs} if straggler_ms else None
                runs = net.allreduce(inputs, "float32", start_at=late)
                report = net.report()
                for job in net.jobs:
                    ps_port = job.ps.switch_port if job.ps is not None else None
                    ps_bytes = sum(p.bytes for p in report.ports if p.host == ps_port) if ps_port is not None else 0
                    ok = all(v.ok for v in check_results(net, job.job_id, runs[job.job_id].runs,
                                                         inputs[job.job_id], "float32"))
                    rows.append(_job_row(
                        runs[job.job_id], job, report, ok, wait, protocol=proto, rep=rep,
                        job=wave * at_once + job.job_id, size_elems=size, pool_slots=pool, window_packets=width,
                        ps_link_busy=ps_bytes * 8 / (bw * 1e6 * report.sim_s)
                        if ps_port is not None and report.sim_s else None))
                wait = max(r.completion_s for r in rows[-at_once:])  # the next wave starts when this one is done
            if record is not None:
                record(rows[first:])
    return rows


def _job_row(run: JobRun, config: JobConfig, report: SimReport, ok: bool, wait: float, **given: Any) -> JobRow:
    """One job's row of one wave: what its run measured, and the fields `given` (protocol, memory, numbering)."""
    stats = [w.stats for w in run.windows]
    done = wait + max(s.elapsed for s in stats)
    retx = sum(s.retransmissions for s in stats)
    ports = {w.switch_port for w in config.workers}
    links = [p for p in report.ports if p.host in ports and p.up]
    rtts = [s.srtt for s in stats if s.srtt]
    ps = run.ps.stats if run.ps is not None else None
    return JobRow(**given, workers=config.num_workers, verified=ok, completion_s=done,
                  goodput_elems_per_s=stats[0].elements / done if ok and done > 0 else 0.0, retransmissions=retx,
                  in_switch_fraction=ps.switch_fraction if ps is not None else 1.0,
                  collisions=ps.collisions if ps is not None else 0,
                  raw_sequences=ps.raw_sequences if ps is not None else 0,
                  wire_frames=sum(p.frames for p in links), wire_bytes=sum(p.bytes for p in links),
                  bound=sim_bound(report, sum(s.packets_sent for s in stats), retx).verdict,
                  srtt_ms=max(rtts) * 1e3 if rtts else None, wait_s=wait)


def describe(bw: float) -> str:
    """The model in words, for the summary."""
    rate = f"{bw / 1000:g} Gbit/s" if bw >= 1000 and math.isclose(bw % 1000, 0) else f"{bw:g} Mbit/s"
    return (f"Packet simulator (virtual time): a star, {rate} links, 1 µs, {BUFFER_BYTES >> 10} KiB drop-tail queues, "
            f"ECN at {ECN_BYTES >> 10} KiB, line-rate switch, free hosts; every job verified")
