"""Exactly-once soak: thousands of seeded all-reduces per protocol through the real switch program, in process.

    python -m experiments.soak [--runs 1000] [--protocols switchml atp] [--seed 1] [--fuzz 2000] [--program-dir out]
                       [--results results]
    python -m experiments.soak --protocol switchml --seed 1234 --runs 1 --trace run.pcapng   # replay one run

Each run draws its scenario from its seed alone: workers (2-6), tensor size, int32 or float32, window, loss (0-10 %
of frames on every port and direction), duplication (0-5 %), reordering (frames leaving the switch held back behind
up to 3 later ones, and jitter on the way down; on the way up too unless the protocol assumes a FIFO uplink per
worker, as SwitchML states it, see worker/switchml/window.py) and a straggler that joins up to 20 ms late. The faults are a
`switch.faults.FaultPlan` applied at the switch's ports of the in-process network (topo.inprocess) exactly as
`python -m switch --fault-plan` applies them. Every rank's result is checked against the float64/int64 reference
(int32 exact, float32 within the protocol's documented bound), and every contribution must be counted exactly once
(the protocol's `accounting`: SwitchML's `ina_aggregated` counter equals workers × packets; ATP's PS merged workers
× sequences contributions, in switch aggregates or on their own). Every protocol runs in the same switch memory, and
one whose workers notice a switch restart (`restart_error`: SwitchML's epochs) gets the restart case too. Every
registered in-network protocol is soaked, a plug-in too. A run that raises is a crash. Prints runs, faults injected, wrong results,
accounting violations and crashes, with the replay command of every failure; writes summary.md under
results/soak-<UTC time>/ (with --results).
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import time
import traceback
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from switch.faults import FaultPlan, FaultRule
from topo.inprocess import EngineCache, InProcessNetwork, loss_rule, make_jobs
from worker.arguments import Parser, at_least
from worker.driver import WindowOptions
from worker.job import PoolRange
from worker.plugin import ProtocolSpec
from worker.protocols import PROTOCOLS, in_network, program_paths, protocol_of_program
from worker.verify import rank_input

__all__ = ["Scenario", "RunOutcome", "scenario", "run_one", "soak", "main"]

ROOT = Path(__file__).resolve().parents[1]
SOAKED = in_network()
"""The protocols the soak runs: every in-network one."""
CELL_ROWS = 32
"""Switch memory of a soak job, in slots of N values: 16 SwitchML slots (two sets each), 32 ATP aggregators."""


def _network(spec: ProtocolSpec, program: dict[str, Any], p4info: Any, workers: int, jobs: int = 1,
             release_us: int | None = None, **kw: Any) -> tuple[InProcessNetwork, int]:
    """A network of `jobs` jobs of `workers` workers (and the protocol's PS) on one pool, and N; `release_us`: each
    job's (release.p4). Two jobs share half the rows, so that their windows meet on the same aggregators."""
    n_elems = protocol_of_program(program)[2]
    assert jobs == 1 or spec.shared_pool, "jobs share one pool only where the protocol shares it"
    pool = PoolRange(0, CELL_ROWS // spec.sets_per_slot // jobs)
    jobs = make_jobs(jobs, workers, n_elems, pool, ps=spec.needs_ps)
    jobs = [replace(j, release_us=release_us) for j in jobs]
    return InProcessNetwork(program, jobs, p4info=p4info, protocol=spec, **kw), n_elems


@dataclass(frozen=True)
class Scenario:
    """Everything one run does, drawn from its seed."""

    protocol: str
    seed: int
    workers: int
    blocks: int
    extra: int
    """Elements past the last whole packet (0 = none)."""
    dtype: str
    window: int
    loss: float
    dup: float
    reorder: float
    jitter: float
    straggler_ms: float
    release_us: int
    """The jobs' release timeout (release.p4: a lagging partial aggregate goes on to the PS; 0: never)."""
    jobs: int
    """Jobs at once: 2 on a protocol whose jobs share the pool (half its scenarios), so its policy between jobs
    (ATP's collisions, ESA's preemption, release.p4's timeout) meets the faults; job 1's last rank straggles."""
    sparsity: float
    """Probability that a packet's block of a rank's input is all zero (omnireduce.p4 skips or empties those)."""

    def plan(self) -> FaultPlan:
        rules = [loss_rule(self.loss),
                 FaultRule(action="duplicate", direction="any", probability=self.dup, name="duplicate"),
                 FaultRule(action="delay", direction="out" if PROTOCOLS[self.protocol].uplink_in_order else "any",
                           probability=self.reorder, delay=1 + self.seed % 3, name="reorder")]
        return FaultPlan([r for r in rules if r.probability], seed=self.seed)


def scenario(protocol: str, seed: int) -> Scenario:
    """The scenario of a seed (the same on every machine)."""
    rng = random.Random(f"{protocol}:{seed}")
    return Scenario(protocol=protocol, seed=seed, workers=rng.randint(2, 6), blocks=rng.randint(1, 24),
                    extra=rng.choice([0, 0, rng.randint(1, 15)]), dtype=rng.choice(["int32", "float32"]),
                    window=rng.choice([1, 2, 4, 8, 16]), loss=rng.choice([0.0, rng.uniform(0, 0.10)]),
                    dup=rng.choice([0.0, rng.uniform(0, 0.05)]), reorder=rng.choice([0.0, rng.uniform(0, 0.05)]),
                    jitter=rng.choice([0.0, rng.uniform(0, 200e-6)]),
                    straggler_ms=rng.choice([0.0, 0.0, rng.uniform(0, 20)]),
                    release_us=rng.choice([0, 1, 20, 200]),
                    jobs=rng.choice([1, 2]) if PROTOCOLS[protocol].shared_pool else 1,
                    sparsity=rng.choice([0.0, 0.0, 0.5, 0.9, 1.0]))


@dataclass
class RunOutcome:
    """What one run showed."""

    scenario: Scenario
    wrong: list[str] = field(default_factory=list)
    """Ranks whose result failed verification (with the reason)."""
    accounting: str = ""
    """Empty, or how the contribution count differed from workers × packets."""
    crash: str = ""
    faults: Counter[str] = field(default_factory=Counter)
    frames: int = 0
    trace_digest: str = ""
    epoch: int = 0
    """The job's epoch in the switch (ina_epochs; 0: a protocol without epochs)."""

    @property
    def ok(self) -> bool:
        return not self.wrong and not self.accounting and not self.crash

    def replay(self) -> str:
        return f"python -m experiments.soak --protocol {self.scenario.protocol} --seed {self.scenario.seed} --runs 1 " \
               f"--trace soak-trace.pcapng"


def write_trace(path: Path, trace: list[tuple[float, str, int, bytes]]) -> None:
    """A run's frames at the switch's ports: a pcapng file (one comment per frame: "in port 2") for a .pcap/.pcapng
    path, text lines `time direction port hex` otherwise."""
    if path.suffix in (".pcap", ".pcapng"):
        from scapy.layers.l2 import Ether
        from scapy.utils import PcapNgWriter

        with PcapNgWriter(str(path)) as w:
            for t, direction, port, frame in trace:
                pkt = Ether(frame)
                pkt.time, pkt.comment = t, f"{direction} port {port}".encode()
                w.write(pkt)
    else:
        path.write_text("".join(f"{t:.9f} {d} {port} {f.hex()}\n" for t, d, port, f in trace))


def run_one(protocol: str, seed: int, program: dict[str, Any], p4info: Any, *, trace: list | None = None,
            engines: EngineCache | None = None, extra_rules: Sequence[FaultRule] = ()) -> RunOutcome:
    """One seeded run; never raises (a crash is reported in the outcome). `engines` reuses a loaded switch engine
    (cleared before the run: the same packets as a fresh one); `extra_rules` go before the scenario's faults."""
    engine = engines.get(program) if engines is not None else None
    sc = scenario(protocol, seed)
    out = RunOutcome(sc)
    plan = sc.plan()
    plan.rules[:0] = list(extra_rules)
    options = WindowOptions(window=sc.window, timeout=0.02, min_timeout=0.005, max_timeout=0.2, max_retries=200)
    spec = PROTOCOLS[protocol]
    try:
        net, n_elems = _network(spec, program, p4info, sc.workers, jobs=sc.jobs, faults=plan, seed=seed,
                                options=options, jitter=sc.jitter, engine=engine, release_us=sc.release_us)
        out.epoch = net.controller.epochs.get(1, 0)
        net.trace = trace
        size = sc.blocks * n_elems + sc.extra
        inputs = {j: [rank_input(size, seed + 7919 * (j - 1), r, sc.dtype, sc.sparsity, n_elems)
                      for r in range(sc.workers)]
                  for j in range(1, sc.jobs + 1)}
        runs = net.allreduce(inputs, sc.dtype, start_at={(1, sc.workers - 1): sc.straggler_ms / 1e3})
        for job in net.jobs:
            j = job.job_id
            for r, v in enumerate(net.verify(j, runs[j], inputs[j], sc.dtype)):
                if not v.ok:
                    out.wrong.append(f"job {j} rank {r}: {v.message}")
            if spec.accounting is not None and not out.accounting:
                out.accounting = spec.accounting(job, runs[j])
        out.frames = net.frames
    except Exception as e:  # noqa: BLE001 - a crash is a finding, reported with its seed
        out.crash = f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=4)}"
    out.faults = Counter(plan.stats)
    if trace is not None:
        h = hashlib.sha256()
        for t, d, port, f in trace:
            h.update(f"{t:.9f} {d} {port} ".encode() + f)
        out.trace_digest = h.hexdigest()
    return out


def restart_detection(protocol: str, program: dict[str, Any], p4info: Any, seed: int = 1,
                      engines: EngineCache | None = None) -> str:
    """An all-reduce whose switch restarts mid-run and is programmed again: every worker of a protocol that detects
    restarts (its `restart_error`, SwitchML's epochs) must stop with it rather than accept a result mixed from before
    and after. Returns "" when they do, else what happened instead."""
    spec = PROTOCOLS[protocol]
    assert spec.restart_error is not None
    options = WindowOptions(window=8, timeout=0.02, min_timeout=0.005, max_timeout=0.2, max_retries=200)
    engine = engines.get(program) if engines is not None else None
    net, n_elems = _network(spec, program, p4info, 3, seed=seed, options=options, engine=engine)
    before = net.controller.epochs.get(1)
    inputs = [rank_input(256 * n_elems, seed, r, "int32") for r in range(3)]
    net.restart_at(0.001)  # a quarter of the way: 32 windows of 8 packets, ~0.1 ms each
    try:
        run = net.allreduce({1: inputs}, "int32")[1]
    except spec.restart_error:
        after = net.controller.epochs.get(1)
        return "" if after != before else f"{spec.restart_error.__name__} raised, but the job's epoch stayed {before}"
    wrong = [r for r, v in enumerate(net.verify(1, run, inputs, "int32")) if not v.ok]
    return (f"the run ended without noticing the restart (epoch {before} -> {net.controller.epochs.get(1)}); "
            f"{len(wrong)} wrong results")


@dataclass
class SoakReport:
    """Totals of a soak."""

    runs: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    frames: int = 0
    failures: list[RunOutcome] = field(default_factory=list)
    seconds: float = 0.0
    epochs: Counter[int] = field(default_factory=Counter)
    """Runs per epoch the job ran with (protocols with epochs)."""
    restart: dict[str, str] = field(default_factory=dict)
    """The restart-detection case per protocol that has it: "" passed, else what went wrong."""

    @property
    def wrong(self) -> int:
        return sum(1 for f in self.failures if f.wrong)

    @property
    def accounting(self) -> int:
        return sum(1 for f in self.failures if f.accounting)

    @property
    def crashes(self) -> int:
        return sum(1 for f in self.failures if f.crash)

    def text(self) -> str:
        lines = [f"runs: {sum(self.runs.values())} ({', '.join(f'{p} {n}' for p, n in self.runs.items())}), "
                 f"{self.frames} frames, {self.seconds:.1f} s",
                 f"faults injected: {sum(self.faults.values())} "
                 f"({', '.join(f'{k} {v}' for k, v in sorted(self.faults.items())) or 'none'})",
                 f"wrong results: {self.wrong}", f"accounting violations: {self.accounting}",
                 f"crashes: {self.crashes}"]
        if self.epochs:
            lines.insert(2, f"epochs: {len(self.epochs)} distinct ({min(self.epochs)}..{max(self.epochs)}) over "
                            f"{sum(self.epochs.values())} runs with epochs")
        for proto, failed in self.restart.items():
            lines.append(f"restart detection ({proto}): " + ("ok (every worker stopped on the new epoch)"
                                                             if not failed else f"FAILED: {failed}"))
        for f in self.failures[:20]:
            why = "; ".join(f.wrong[:2]) or f.accounting or f.crash.splitlines()[0]
            lines.append(f"  FAILED {f.scenario.protocol} seed {f.scenario.seed}: {why}\n    replay: {f.replay()}")
        return "\n".join(lines)


def soak(protocols: Sequence[str], runs: int, first_seed: int, program_dir: Path, progress: bool = False
         ) -> SoakReport:
    """`runs` seeded runs per protocol, seeds first_seed.. first_seed+runs-1."""
    report = SoakReport()
    engines = EngineCache()
    started = time.monotonic()
    for proto in protocols:
        json_path, p4info = program_paths(program_dir, str(PROTOCOLS[proto].program))
        program = json.loads(json_path.read_text())
        if PROTOCOLS[proto].restart_error is not None:
            report.restart[proto] = restart_detection(proto, program, p4info, first_seed, engines)
        for k in range(runs):
            o = run_one(proto, first_seed + k, program, p4info, engines=engines)
            if o.epoch:
                report.epochs[o.epoch] += 1
            report.runs[proto] += 1
            report.faults.update(o.faults)
            report.frames += o.frames
            if not o.ok:
                report.failures.append(o)
            if progress and (k + 1) % 100 == 0:
                print(f"  {proto}: {k + 1}/{runs} runs, {len(report.failures)} failures", file=sys.stderr)
    report.seconds = time.monotonic() - started
    return report


def main(argv: Sequence[str] | None = None) -> int:
    p = Parser(prog="python -m experiments.soak", description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=at_least(1), default=1000, help="runs per protocol")
    p.add_argument("--protocols", nargs="+", choices=SOAKED, default=list(SOAKED))
    p.add_argument("--protocol", choices=SOAKED, default=None, help="one protocol (replay)")
    p.add_argument("--seed", type=at_least(0), default=1, help="seed of the first run")
    p.add_argument("--program-dir", type=Path, default=ROOT / "out")
    p.add_argument("--trace", type=Path, default=None,
                   help="with --runs 1: write every frame at the switch's ports: FILE.pcapng (Wireshark, scapy, "
                        "python -m worker.scapy_layers; each frame's comment says its direction and port), else text "
                        "lines of time, direction, port, hex")
    p.add_argument("--results", type=Path, default=None, help="write summary.md under RESULTS/soak-<UTC time>/")
    p.add_argument("--fuzz", type=at_least(0), default=0, metavar="N",
                   help="then fuzz (experiments.fuzz): N frames per program, and requests, P4 sources and JSON in proportion")
    p.add_argument("--fuzz-requests", type=at_least(1), default=None, metavar="N", help="P4Runtime requests to fuzz")
    p.add_argument("--fuzz-sources", type=at_least(1), default=None, metavar="N", help="P4 sources to fuzz")
    p.add_argument("--fuzz-jsons", type=at_least(1), default=None, metavar="N", help="BMv2 JSON programs to fuzz")
    args = p.parse_args(argv)
    protocols = [args.protocol] if args.protocol else args.protocols
    for protocol in protocols:
        json_path = program_paths(args.program_dir, str(PROTOCOLS[protocol].program))[0]
        if not json_path.is_file():
            p.error(f"{json_path} not found: run `make build` first")
    if args.trace is not None:
        if args.runs != 1 or len(protocols) != 1:
            p.error("--trace replays one run: give --protocol P --seed S --runs 1")
        json_path, p4info = program_paths(args.program_dir, str(PROTOCOLS[protocols[0]].program))
        trace: list = []
        o = run_one(protocols[0], args.seed, json.loads(json_path.read_text()), p4info, trace=trace)
        write_trace(args.trace, trace)
        print(f"{protocols[0]} seed {args.seed}: {o.scenario}")
        print(f"{'ok' if o.ok else 'FAILED'}; {len(trace)} frames at the switch's ports, sha256 {o.trace_digest}; "
              f"faults {dict(o.faults)}")
        for line in o.wrong + ([o.accounting] if o.accounting else []) + ([o.crash] if o.crash else []):
            print(f"  {line}")
        return 0 if o.ok else 1
    report = soak(protocols, args.runs, args.seed, args.program_dir, progress=True)
    text = report.text()
    print(text)
    failed = bool(report.failures) or any(report.restart.values())
    if args.fuzz:
        from experiments.fuzz import fuzz_all

        fz = fuzz_all(args.program_dir, args.fuzz, args.seed, args.fuzz_requests, args.fuzz_sources, args.fuzz_jsons)
        print(fz.text())
        text += "\n" + fz.text()
        failed |= bool(fz.failures)
    if args.results is not None:
        from experiments.rows import results_dir
        from perf.machine import machine_info

        out = results_dir(args.results, "soak")
        machine = "\n".join(f"- {k}: {v}" for k, v in machine_info().items())
        (out / "summary.md").write_text(f"# Exactly-once soak\n\n{machine}\n\n```\n{text}\n```\n")
        print(f"results in {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
