"""The embedded switch's per-packet cost on an in-network protocol's real traffic: what virtual time pays.

A job of `workers` ranks runs once on the packet simulator (topo.sim, 100 Gbit/s links) with the switch's ingress
recorded; the recorded frames are then replayed, in order, into a fresh switch holding the same program and the
same control-plane state (the same network built again), `sw.process(port, frame)` in a loop with nothing else
timed. The switch is deterministic, so the replay does exactly the work the job's switch did: first
contributions, additions, completions, multicast results, a PS's traffic. The figure is frames/s (and µs per
frame) over the replay, the median of `repeats` replays (each on a newly built network).

The program is compiled by our compiler or by p4c-bm2-ss (with the defines the protocol names for that many
workers, as the simulator compiles it); the protocol's controller installs the job from the matching P4Info.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from perf.engine import EngineResult
from worker.atp.plugin import ATP
from worker.protocols import PROTOCOLS
from worker.switchml.plugin import SWITCHML

__all__ = ["JOB_PROGRAMS", "JOB_TITLES", "Recording", "bench_job_replay", "job_program", "record"]

JOB_PROGRAMS = {f"{spec.name}_job": spec.name for spec in (SWITCHML, ATP)}
"""In-process rows: the replayed job's name in the report → the protocol whose program and traffic it is."""
JOB_TITLES = {key: f"{PROTOCOLS[name].program}.p4, a job's traffic replayed" for key, name in JOB_PROGRAMS.items()}


@dataclasses.dataclass(frozen=True)
class _Built:
    program: dict[str, Any]
    p4info: Any


def job_program(protocol: str, workers: int, compiler: str, work_dir: Path) -> _Built:
    """The protocol's program for `workers` ranks, compiled by `compiler` (ours | p4c)."""
    from controller.local import load_p4info

    spec = PROTOCOLS[protocol]
    defines = dict(spec.scale_defines(workers)) if spec.scale_defines else {}
    if compiler == "ours":
        from compiler import compile_file

        res = compile_file(spec.p4_source, defines=defines)
        return _Built(res.json, res.p4info)
    work_dir.mkdir(parents=True, exist_ok=True)
    out, info = work_dir / f"{protocol}.json", work_dir / f"{protocol}.p4info.txt"
    argv = ["p4c-bm2-ss", *[a for k, v in defines.items() for a in ("-D", f"{k}={v}")],
            "-I", str(Path(spec.p4_source).parent), "-o", str(out), "--p4runtime-files", str(info),
            str(spec.p4_source)]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({r.returncode}): {(r.stderr or r.stdout).strip()[-2000:]}")
    return _Built(json.loads(out.read_text()), load_p4info(info))


def _network(protocol: str, built: _Built, workers: int) -> Any:
    from topo.inprocess import make_jobs
    from topo.sim import LinkSpec, SimNetwork
    from worker.job import PoolRange

    spec = PROTOCOLS[protocol]
    per = spec.codec.from_program_json(built.program).num_elems
    jobs = make_jobs(1, workers, per, PoolRange(0, 64), ps=spec.needs_ps)
    return SimNetwork(built.program, jobs, p4info=built.p4info, protocol=spec, seed=1, link=LinkSpec(100e9, 1e-6))


@dataclasses.dataclass(frozen=True)
class Recording:
    """One verified all-reduce's switch traffic: the frames in (port, bytes), in order, and the frames out."""

    protocol: str
    built: _Built
    workers: int
    ins: list[tuple[int, bytes]]
    outs: list[tuple[int, bytes]]

    def fresh_switch(self) -> Any:
        """A switch in the state the recorded one started in: the same network built again."""
        return _network(self.protocol, self.built, self.workers).sw


def record(protocol: str, built: _Built, workers: int, size: int) -> Recording:
    """Run one all-reduce of `size` int32 elements per rank on the simulator, check every rank's result against
    the exact sum, and keep the switch's ingress and egress."""
    net = _network(protocol, built, workers)
    net.trace = []
    rng = np.random.default_rng(7)
    inputs = [rng.integers(-1000, 1000, size, dtype=np.int32) for _ in range(workers)]
    runs = net.allreduce({1: inputs}, "int32")[1].runs
    want = np.sum(inputs, axis=0, dtype=np.int64)
    if len(runs) != workers or not all(np.array_equal(np.asarray(r.array, dtype=np.int64), want) for r in runs):
        raise RuntimeError(f"{protocol}: the recorded all-reduce gave a wrong result")
    return Recording(protocol, built, workers, [(p, f) for _t, kind, p, f in net.trace if kind == "in"],
                     [(p, f) for _t, kind, p, f in net.trace if kind == "out"])


def bench_job_replay(key: str, compiler: str = "ours", *, workers: int = 4, size: int = 65536, repeats: int = 3,
                     work_dir: Path | None = None) -> EngineResult:
    """Record one verified all-reduce of `size` int32 elements per rank on the simulator, then replay its switch
    ingress `repeats` times into fresh networks; the median frames/s."""
    from perf.family import JsonShape

    protocol = JOB_PROGRAMS[key]
    with tempfile.TemporaryDirectory(prefix="jobreplay-") as tmp:
        built = job_program(protocol, workers, compiler, work_dir or Path(tmp))
    rec = record(protocol, built, workers, size)
    frames = rec.ins
    rates, cpu, wall = [], 0.0, 0.0
    for _ in range(repeats):
        process = rec.fresh_switch().process
        c0, t0 = time.process_time(), time.perf_counter()
        for port, f in frames:
            process(port, f)
        dt = time.perf_counter() - t0
        cpu += time.process_time() - c0
        wall += dt
        rates.append(len(frames) / dt)
    return EngineResult(key, "in-process", statistics.median(rates), tuple(rates), len(frames) * repeats, wall,
                        cpu / wall if wall else 0.0,
                        f"replay of a {workers}-worker {protocol} all-reduce's {len(frames)} switch ingress frames "
                        f"({size} int32 per rank), {repeats} replays", compiler, str(JsonShape.of(built.program)))
