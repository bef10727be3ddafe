"""The default experiment: N workers all-reduce a tensor through one P4 switch in Mininet (`make run`).

    python -m experiments.run [--protocol switchml|atp|ring|ps] [--workers 4] [--size 65536] [--loss 0.01] [--bw MBIT]
                              [--dtype float32|int32] [--target embedded|bmv2] [--program-dir out]
                              [--json out/switchml.json --p4info out/switchml.p4info.txt]
                              [--topo star|twotier] [--racks 2] [--levels 1|2] [--ecn-threshold PACKETS]
                              [--fault-plan PLAN] [--kill-rank R:S] [--restart-switch-after S]
                              [--cpus split|shared]

`--protocol` (alias `--protocol`) picks the protocol (`worker.protocols.PROTOCOLS`): in-network aggregation (`switchml`, `atp`) or a
host-based baseline (`ring`, `ps`) whose TCP traffic the same switch forwards as plain L2 (and drops with the same
LOSS). The switch runs the program the collective names (`out/<program>.json` unless --json is given); `atp` adds a
parameter server host (`python -m worker.atp.ps`, the last host) and reports where each contribution was
aggregated: in the switch or at the PS.
`--bw` limits every link to that many Mbit/s (htb; the table then reports goodput as a fraction of the link rate).
`--topo twotier --racks K` spreads the workers over K rack switches under a PS rack switch (topo.twotier), one
switch process per switch; ATP then aggregates on two levels (or one, `--levels 1`), and the table adds the traffic
on the racks' uplinks and on the PS's link and each switch's counters.

Starts the network (topo.fabric) with P4Switch nodes (embedded or BMv2), pushes the program and the job with the
controller to every switch, sets the simulated loss, runs one `python -m worker --verify` per host (they start the
all-reduce together through a start barrier, so its timing excludes process start-up), waits (bounded) and prints a
table: correct ✓/✗, elements, time, goodput, retransmissions, and the switches' counters. `--cpus split` (default)
runs each switch process on a CPU of its own and the hosts' processes on the others (topo.cpus); `shared` lets the
scheduler place them. Exit status 0 only if every worker verified.
LOSS is the probability that the switch drops a packet on each worker port, in each direction.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from controller.base import ProgramController
from controller.programs import CONTROLLERS
from experiments.bound import Bound
from switch.timeline import merge
from topo.cpus import CPU_LAYOUTS, CpuLayout
from topo.fabric import Fabric
from topo.network import Network
from topo.p4switch import P4Switch, log_tail
from topo.target import Target
from topo.topologies import TOPOLOGIES, make_fabric
from worker.arguments import Parser, at_least, existing_file, fail, in_range, link_rate, positive_float, probability
from worker.job import MAX_SLOTS, MAX_WORKERS, JobConfig, PoolRange
from worker.launch import WorkerOutcome, collect, worker_argv
from worker.protocols import DEFAULT_PROTOCOL, PROTOCOLS, default_windows, protocol_of_program

ROOT = Path(__file__).resolve().parents[1]
WINDOW_CONTROLS = ("fixed", "adaptive")
"""An in-network protocol's window: all of it in flight, or sized to the path (ExperimentConfig.window_control)."""


@dataclass(frozen=True)
class ExperimentConfig:
    """Knobs of one all-reduce experiment."""

    protocol: str = DEFAULT_PROTOCOL
    """The protocol the workers run (a name in worker.protocols.PROTOCOLS)."""
    workers: int = 4
    """Workers per job."""
    jobs: int = 1
    """Concurrent jobs (job ids 1..jobs), each with its own `workers` hosts; SwitchML gives each job its own
    `pool_size` slots (a static partition), ATP jobs all hash into one shared pool of `pool_size` aggregators."""
    ps_per_job: bool = False
    """A protocol with a PS: one PS host (and link) per job, as ATP runs them, instead of one for every job."""
    size: int = 65536
    loss: float = 0.0
    bw: float | None = None
    """Link rate in Mbit/s (htb on every link, both directions); None: unlimited veth links."""
    dtype: str = "float32"
    target: Target = Target.EMBEDDED
    program_json: Path | None = None
    """The compiled program (default: program_dir/<the collective's program>.json)."""
    p4info: Path | None = None
    program_dir: Path = ROOT / "out"
    pool_size: int = 64
    window: int | None = None
    """Packets in flight per worker (None: the collective's default, `ProtocolSpec.window_width`)."""
    window_control: str = "fixed"
    """SwitchML: `fixed` keeps every slot of the window in flight (SwitchML's published worker), `adaptive` at most
    rate x (min RTT + 5 ms) packets (worker/cwnd.py, `python -m worker --adaptive-window`)."""
    seed: int = 1
    timeout_s: float = 300.0
    """Bound on the whole run of the workers; stragglers are killed and reported."""
    straggler_ms: float = 0.0
    """Extra compute time of the last rank before it joins the all-reduce (the others wait for it)."""
    kill_switch_after_s: float | None = None
    """Kill the switch process this long after the workers start (fault-injection test)."""
    restart_switch_after_s: float | None = None
    """Kill the switch process this long into the all-reduce and start it again, re-programmed (star only)."""
    kill_rank_after: tuple[int, float] | None = None
    """(rank, seconds): kill that worker process of job 1 this long after the job's all-reduce started (its start
    barrier released; without a barrier: after the processes started) — a crash test."""
    run_dir: Path = Path("/tmp/ina-testbed")
    worker_args: tuple[str, ...] = ()
    barrier: bool = True
    """Workers start the all-reduce together once all are set up (`--barrier`), so their timing excludes the other
    processes' start-up."""
    topo: str = "star"
    """The network: `star` (one switch) or `twotier` (`racks` rack switches under a PS rack switch)."""
    racks: int = 2
    """Two-tier only: rack switches (the workers fill them in order, as evenly as possible)."""
    levels: int = 2
    """Two-tier ATP only: aggregation levels (2: rack switches, then the PS rack switch; 1: the PS rack switch)."""
    ecn_threshold: int | None = None
    """ATP: mark ECN on packets that leave a queue at least this deep (None: marking off)."""
    fault_plan: Path | None = None
    """A protocol-level fault plan (worker.faults, TOML/JSON) for job 1, applied by the embedded switch from its
    start (star only)."""
    pcap: bool = False
    """Every switch writes a pcap per port and direction into run_dir/pcap/ (<iface>_in.pcap, <iface>_out.pcap;
    `python -m worker.scapy_layers PROGRAM.json FILE` decodes one)."""
    trace: Path | None = None
    """Write the run's timeline here (Chrome trace-event JSON, opens in Perfetto): every worker, the PS and every
    embedded switch write theirs into run_dir/trace/, merged into this file once the network is down. The switch
    then runs frames through its pipeline one by one (timings include the recording: read the order, not the
    speed)."""
    cpus: str = "split"
    """CPU layout (topo.cpus): `split` gives each switch process a CPU of its own and the hosts' processes the
    others (with at least twice as many CPUs as switches), `shared` leaves placement to the scheduler."""

    def fabric(self) -> Fabric:
        """The network this config describes."""
        return make_fabric(self.topo, self.workers * self.jobs, ps=PROTOCOLS[self.protocol].needs_ps, bw=self.bw,
                           racks=self.racks, levels=self.levels, ps_hosts=self.jobs if self.ps_per_job else 1)

    @property
    def program(self) -> str:
        """The P4 program the collective needs (p4src/<program>.p4)."""
        return PROTOCOLS[self.protocol].program

    def check(self) -> None:
        """Every value in range and every file there, before anything is started or written (ValueError naming the
        value): the sizes and counts, the network's shape, the protocol on it, the compiled program, the fault plan."""
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"unknown protocol {self.protocol!r}; choose one of {', '.join(sorted(PROTOCOLS))}")
        for name, value, lo in (("size", self.size, 1), ("workers", self.workers, 1), ("jobs", self.jobs, 1),
                                ("pool_size", self.pool_size, 1), ("seed", self.seed, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < lo:
                raise ValueError(f"{name} must be an integer >= {lo}, got {value!r}")
        if self.workers > MAX_WORKERS:
            raise ValueError(f"workers must be at most {MAX_WORKERS} (the switch's worker bitmap), got {self.workers}")
        if self.pool_size > MAX_SLOTS:
            raise ValueError(f"pool_size must be at most {MAX_SLOTS}, got {self.pool_size}")
        if self.window is not None and not 1 <= self.window <= self.pool_size:
            raise ValueError(f"window must be in [1, pool_size = {self.pool_size}], got {self.window}")
        if not 0 <= self.loss < 1:
            raise ValueError(f"loss must be a probability in [0, 1), got {self.loss}")
        if self.bw is not None and not self.bw > 0:
            raise ValueError(f"link rate must be > 0 Mbit/s, got {self.bw}")
        if self.dtype not in ("float32", "int32"):
            raise ValueError(f"dtype must be float32 or int32, got {self.dtype!r}")
        if not self.timeout_s > 0:
            raise ValueError(f"timeout must be > 0 s, got {self.timeout_s}")
        if self.window_control not in WINDOW_CONTROLS:
            raise ValueError(f"window_control must be one of {', '.join(WINDOW_CONTROLS)}, got {self.window_control!r}")
        if self.cpus not in CPU_LAYOUTS:
            raise ValueError(f"cpus must be one of {', '.join(CPU_LAYOUTS)}, got {self.cpus!r}")
        if self.kill_rank_after is not None and not 0 <= self.kill_rank_after[0] < self.workers:
            raise ValueError(f"kill_rank names rank {self.kill_rank_after[0]}; ranks are 0..{self.workers - 1}")
        fabric = self.fabric()
        _check_protocol(fabric, self.protocol)
        for path in self.program_files:
            if not path.is_file():
                raise FileNotFoundError(f"{path} not found: run `make build` first")
        if self.fault_plan is not None:
            self.compiled_fault_plan(fabric)

    def compiled_fault_plan(self, fabric: Fabric | None = None) -> tuple[dict[str, Any], float | None]:
        """(the switch's byte-level plan of `fault_plan` for job 1, the plan's [restart] after_s or None); PlanError
        naming the plan file and key."""
        from worker.faults import PlanError, compile_plan, load_plan

        assert self.fault_plan is not None
        if self.topo != "star":
            raise ValueError("fault plans name the ports of the star's switch: use --topo star")
        plan = load_plan(self.fault_plan)
        restart = plan.get("restart", {})
        if not isinstance(restart, dict) or set(restart) - {"after_s"}:
            raise PlanError(f"{self.fault_plan}: [restart] takes after_s = SECONDS")
        after = restart.get("after_s")
        if after is not None and (isinstance(after, bool) or not isinstance(after, (int, float)) or after <= 0):
            raise PlanError(f"{self.fault_plan}: restart.after_s must be a number of seconds > 0, got {after!r}")
        fabric = fabric or self.fabric()
        job = fabric.job_config(1, list(range(1, self.workers + 1)), num_elems=_num_elems(self.program_files[0]),
                                pool=PoolRange(base=0, size=self.pool_size))
        compiled = compile_plan(plan, job, self.program_files[0], source=str(self.fault_plan))
        return compiled, None if after is None else float(after)

    @property
    def window_width(self) -> int:
        """Packets in flight per worker of an INA collective: `window`, else the collective's default."""
        return PROTOCOLS[self.protocol].window_width(self.pool_size, self.window)

    @property
    def program_files(self) -> tuple[Path, Path]:
        """(BMv2 JSON, P4Info) of the switch's program."""
        return (self.program_json or self.program_dir / f"{self.program}.json",
                self.p4info or self.program_dir / f"{self.program}.p4info.txt")


@dataclass
class ExperimentResult:
    """Outcome of an experiment: per-worker reports and the switch's counters for the job."""

    config: ExperimentConfig
    workers: list[WorkerOutcome]
    counters: dict[str, tuple[int, int]]
    switch_log: Path
    ps: dict[str, Any] | None = None
    """ATP: the parameter server's statistics for the job (worker.atp.ps.PsStats fields)."""
    links: dict[str, tuple[int, int]] = field(default_factory=dict)
    """(packets, bytes) that crossed each metered group of links during the run, both directions (the PS's link;
    two-tier: the racks' uplinks); every job of a run shares the same figures."""
    switch_counters: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)
    """The job's counters per switch (a network of several switches; `counters` is their sum)."""
    missing_ranks: list[int] = field(default_factory=list)
    """After a failed run: the ranks absent from every partial aggregate left in the switches (and, for ATP, at
    the PS) — the workers that died or never sent."""
    cpu_layout: CpuLayout = field(default_factory=CpuLayout)
    """Where the switch and host processes ran."""
    wire: tuple[int, int] = (0, 0)
    """(frames, bytes) the job's worker hosts sent into the network during the run, as their switch ports received
    them: the same measure for every protocol (INA packets and their retransmissions; TCP segments, ACKs and ARP)."""
    bound: Bound | None = None
    """What bound the run (experiments.bound): the links', the switch's and the hosts' use, and the verdict."""

    @property
    def correct(self) -> bool:
        return bool(self.workers) and all(w.ok for w in self.workers)

    @property
    def elapsed_s(self) -> float:
        """Time of the slowest worker's all-reduce."""
        return max((float(w.report.get("elapsed_s", 0.0)) for w in self.workers), default=0.0)

    @property
    def goodput(self) -> float:
        """Tensor elements all-reduced per second (the slowest worker's view)."""
        return self.config.size / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def retransmissions(self) -> int:
        return sum(int(w.report.get("retransmissions", 0)) for w in self.workers)

    @property
    def link_utilisation(self) -> float | None:
        """Goodput in bits of tensor per second over the link rate (None without --bw)."""
        if self.config.bw is None:
            return None
        return self.goodput * 32 / (self.config.bw * 1e6)

    def table(self) -> str:
        """The human-readable summary printed by `make run`."""
        c = self.config
        rate = f", links {c.bw:g} Mbit/s" if c.bw is not None else ""
        shape = "" if c.topo == "star" else f", {c.fabric().describe()}"
        shape += f", fault plan {c.fault_plan}" if c.fault_plan is not None else ""
        lines = [f"{c.protocol} all-reduce of {c.size} {c.dtype} elements, {c.workers} workers, loss {c.loss:g}{rate}, "
                 f"target {c.target.value}, seed {c.seed}{shape}",
                 f"CPUs: {self.cpu_layout.describe()}",
                 "",
                 f"{'rank':>4}  {'correct':^7}  {'elements':>9}  {'time s':>8}  {'goodput elem/s':>14}  "
                 f"{'packets':>8}  {'retx':>6}  {'max err/bound':>13}"]
        failures: dict[str, list[int]] = {}  # one message, every rank that gave it (a restart fails them all alike)
        for w in self.workers:
            r = w.report
            ratio = r.get("max_error_over_bound")
            lines.append(f"{w.rank:>4}  {'✓' if w.ok else '✗':^7}  {r.get('elements', 0):>9}  "
                         f"{float(r.get('elapsed_s', 0)):>8.3f}  {float(r.get('goodput_elems_per_s', 0)):>14.0f}  "
                         f"{r.get('packets_sent', 0):>8}  {r.get('retransmissions', 0):>6}  "
                         f"{'-' if ratio is None else f'{ratio:.3f}':>13}")
            if not w.ok:
                message = f"exit {w.exit_code}: {(r.get('error') or w.stderr or 'no output').strip()}"
                failures.setdefault(message, []).append(w.rank)
        for message, ranks in failures.items():
            lines.append(f"      rank{'s' if len(ranks) > 1 else ''} {', '.join(map(str, ranks))}: {message}")
        lines += ["", f"{'all':>4}  {'✓' if self.correct else '✗':^7}  {c.size:>9}  {self.elapsed_s:>8.3f}  "
                      f"{self.goodput:>14.0f}  {'':>8}  {self.retransmissions:>6}"]
        if self.missing_ranks:
            lines.append(f"\nmissing: rank{'s' if len(self.missing_ranks) > 1 else ''} "
                         f"{', '.join(map(str, self.missing_ranks))} (absent from every partial aggregate left in "
                         f"the switch{' and at the PS' if self.ps is not None else ''})")
        if self.link_utilisation is not None:
            lines.append(f"\ngoodput {self.goodput * 32 / 1e6:.1f} Mbit/s of tensor data = "
                         f"{100 * self.link_utilisation:.1f} % of the {c.bw:g} Mbit/s link rate")
        if self.ps is not None:
            p = self.ps
            lines += ["", f"where contributions were aggregated: {100 * float(p.get('switch_fraction', 0)):.1f} % in "
                          f"the switch, {100 - 100 * float(p.get('switch_fraction', 0)):.1f} % at the PS "
                          f"({p.get('contributions_in_switch', 0)} / {p.get('contributions_at_ps', 0)}); PS: "
                          f"{p.get('completed', 0)} sequences, {p.get('collisions', 0)} collisions, "
                          f"{p.get('raw_sequences', 0)} raw resends, {p.get('duplicates', 0)} duplicates"]
        if self.bound is not None:
            lines += ["", self.bound.describe()]
        if self.links:
            lines += ["", "link traffic (both directions): " + ", ".join(
                f"{name} {p} packets / {b / 1e6:.2f} MB" for name, (p, b) in self.links.items())]
        prefix = CONTROLLERS[c.program].COUNTER_PREFIX
        blocks = self.switch_counters if len(self.switch_counters) > 1 else {"": self.counters}
        shown = [(sw, cs) for sw, cs in blocks.items() if any(p for p, _ in cs.values())]
        lines += [""] if shown else []
        for sw, cs in shown:
            lines.append(f"switch {sw + ' ' if sw else ''}counters (packets): " + ", ".join(
                f"{name.removeprefix(prefix)}={p}" for name, (p, _) in cs.items() if p))
        return "\n".join(lines)


def _check_protocol(fabric: Fabric, protocol: str) -> None:
    spec = PROTOCOLS[protocol]
    fabric.check(protocol, spec.program, spec.in_network)


def _worker_argv(cfg: ExperimentConfig, job_path: Path, rank: int, barrier: Path | None,
                 layout: CpuLayout) -> list[str]:
    delay = cfg.straggler_ms if rank == cfg.workers - 1 and cfg.straggler_ms else 0.0
    trace = ["--trace", str(trace_dir(cfg) / f"{job_path.stem}-rank{rank}.json")] if cfg.trace else []
    return worker_argv(job_path, rank, cfg.protocol, cfg.size, dtype=cfg.dtype, seed=cfg.seed, window=cfg.window,
                       program_json=cfg.program_files[0], barrier=barrier, barrier_timeout=min(cfg.timeout_s, 60.0),
                       delay_ms=delay, extra=[*layout_worker_args(layout),
                                              *(["--adaptive-window"] if cfg.window_control == "adaptive" else []),
                                              *trace, *cfg.worker_args])


def layout_worker_args(layout: CpuLayout) -> list[str]:
    """Worker options that follow from the CPU layout (the experiment's own `worker_args` come after and win).

    Receive coalescing (`WindowOptions.rx_coalesce`) spares a switch that shares the workers' CPUs their wake-ups.
    With a CPU of its own (`split`) there is nothing to spare and the wait only holds results back (measured with
    SwitchML and ATP: README, Benchmarks, "Receive coalescing")."""
    return ["--rx-coalesce", "0"] if layout.split else []


def trace_dir(cfg: ExperimentConfig) -> Path:
    """Where the processes of a traced run write their timelines."""
    return cfg.run_dir / "trace"


def merge_trace(cfg: ExperimentConfig) -> dict[str, Any]:
    """The timelines of a traced run, merged into cfg.trace (switches first, then the PS, then the workers)."""
    assert cfg.trace is not None
    d = trace_dir(cfg)
    files = sorted(d.glob("switch-*.json")) + sorted(d.glob("ps*.json")) + sorted(
        d.glob("job*-rank*.json"), key=lambda p: (p.name.split("-rank")[0], int(p.stem.split("-rank")[1])))
    cfg.trace.parent.mkdir(parents=True, exist_ok=True)
    return merge(files, cfg.trace)


def run_experiment(cfg: ExperimentConfig) -> ExperimentResult:
    """Run one experiment in Mininet and return its outcome (the network is always torn down).

    Experiments in other processes of this machine wait for each other (MININET_LOCK).
    """
    if cfg.trace:
        shutil.rmtree(trace_dir(cfg), ignore_errors=True)
    try:
        with ExperimentNetwork(cfg) as net:
            return net.run(cfg)
    finally:
        if cfg.trace:  # the switches write theirs when they stop: after the network is down
            merge_trace(cfg)


class ExperimentNetwork:
    """A running network (topo.network.Network) with the jobs installed, and the workload on it, for any number
    of runs: the jobs' files, the worker processes, the parameter server, fault injection and the results.

    The network's shape comes from the config it is opened with (workers, link rate, target, program, pool);
    each `run(cfg)` may change what a run is (algorithm, size, dtype, loss, seed, straggler, window) and resets the
    job's switch state first. Holds MININET_LOCK while open.
    """

    def __init__(self, cfg: ExperimentConfig) -> None:
        cfg.check()
        self.cfg = cfg
        self.network: Network | None = None

    def __enter__(self) -> ExperimentNetwork:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> None:
        cfg = self.cfg
        cfg.run_dir.mkdir(parents=True, exist_ok=True)
        self.fabric = fabric = cfg.fabric()
        _check_protocol(fabric, cfg.protocol)
        num_elems = _num_elems(cfg.program_files[0])
        self.jobs = []
        self.job_paths = []
        for j in range(cfg.jobs):
            pool = PoolRange(base=0 if fabric.ps else j * cfg.pool_size, size=cfg.pool_size)
            job = fabric.job_config(j + 1, list(range(j * cfg.workers + 1, (j + 1) * cfg.workers + 1)),
                                    num_elems=num_elems, pool=pool, ps_host=fabric.ps_host_of(j))
            path = cfg.run_dir / ("job.json" if cfg.jobs == 1 else f"job{j + 1}.json")
            job.save(path)
            self.jobs.append(job)
            self.job_paths.append(path)
        self.job, self.job_path = self.jobs[0], self.job_paths[0]
        self._plan_restart: float | None = None
        self.fault_plan = self._compile_faults() if cfg.fault_plan is not None else None
        self.network = Network(fabric, target=cfg.target, program=cfg.program, program_files=cfg.program_files,
                               run_dir=cfg.run_dir, cpus=cfg.cpus, seed=cfg.seed, bw=cfg.bw,
                               fault_plan=self.fault_plan, ecn_threshold=cfg.ecn_threshold,
                               pcap_dir=cfg.run_dir / "pcap" if cfg.pcap else None,
                               trace_dir=trace_dir(cfg) if cfg.trace else None).__enter__()
        self.network.install(self.jobs)

    # the network's parts, for the studies and tests that look inside
    @property
    def net(self) -> Any:
        return self._network.net

    @property
    def switches(self) -> dict[str, P4Switch]:
        return self._network.switches

    @property
    def switch(self) -> P4Switch:
        """The primary switch: the star's, or the PS's in a two-tier network."""
        return self._network.switch

    @property
    def hosts(self) -> list[Any]:
        """Every job's worker hosts, job by job (job j's rank r on hosts[(j-1) * workers + r])."""
        return self._network.hosts

    @property
    def ps_host(self) -> Any:
        return self._network.ps_host

    @property
    def ctls(self) -> dict[str, ProgramController]:
        return self._network.ctls

    @property
    def cpu_layout(self) -> CpuLayout:
        return self._network.cpu_layout

    @property
    def _network(self) -> Network:
        if self.network is None:
            raise RuntimeError("the experiment's network is not running")
        return self.network

    def restart_switch(self) -> None:
        """Kill the (star's) switch process and start it again, re-programmed as a controller would after a crash:
        pipeline, L2 entries, every job (SwitchML: with a new epoch), the simulated loss."""
        if self.cfg.topo != "star":
            raise ValueError("restarting a switch mid-run is supported on the star")
        self._network.restart_switch(self.jobs)

    def _compile_faults(self) -> Path:
        """The switch's byte-level plan (switch.faults) of cfg.fault_plan for job 1, next to the job file."""
        compiled, self._plan_restart = self.cfg.compiled_fault_plan(self.fabric)
        out = self.cfg.run_dir / "faults.json"
        out.write_text(json.dumps(compiled, indent=1))
        return out

    def run(self, cfg: ExperimentConfig, background: Sequence[str] = ()) -> ExperimentResult:
        """One all-reduce by every worker; cfg's network fields must match the network's.

        `background`: items `"hI: command"`, each run on host hI for the duration of the run (e.g. a competing
        iperf3 flow) and killed afterwards.
        """
        changed = [f"{f} {getattr(self.cfg, f)} -> {getattr(cfg, f)}"
                   for f in ("workers", "bw", "target", "program_files", "pool_size", "topo", "racks", "levels",
                             "ecn_threshold", "fault_plan", "cpus", "pcap", "trace")
                   if getattr(cfg, f) != getattr(self.cfg, f)]
        if changed:
            raise ValueError("a run cannot change the network: " + ", ".join(changed))
        return self.run_jobs(cfg, background)[0]

    def run_jobs(self, cfg: ExperimentConfig, background: Sequence[str] = ()) -> list[ExperimentResult]:
        """One all-reduce by every worker of every job, all jobs at once; one result per job."""
        if cfg.jobs != self.cfg.jobs:
            raise ValueError(f"a run cannot change the network: jobs {self.cfg.jobs} -> {cfg.jobs}")
        _check_protocol(self.fabric, cfg.protocol)
        network = self._network
        self.reset(cfg.loss)
        before = [network.counters(j.job_id) for j in self.jobs]
        links_before = network.link_stats()
        w = cfg.workers
        job_hosts = [range(k * w + 1, (k + 1) * w + 1) for k in range(len(self.jobs))]
        ps_hosts = self.fabric.ps_host_list  # each job's traffic crosses its PS's link
        metered = [h for hosts in job_hosts for h in hosts] + ps_hosts
        ports_before, cpu_before = network.port_counters(metered), network.switch_cpu_s()
        barriers = [self.fresh_barrier(f"barrier{j.job_id}") if cfg.barrier else None for j in self.jobs]

        def argv(i: int) -> list[str]:
            return _worker_argv(cfg, self.job_paths[i // w], i % w, barriers[i // w], network.cpu_layout)

        with self.parameter_server(self.job_paths) as ps_stats:
            outcomes = self.launch(argv, cfg.timeout_s, background=background,
                                   kill_switch_after_s=cfg.kill_switch_after_s, kill_rank_after=cfg.kill_rank_after,
                                   restart_switch_after_s=cfg.restart_switch_after_s or self._plan_restart,
                                   barrier=barriers[0])
        links = {name: (p - links_before[name][0], b - links_before[name][1])
                 for name, (p, b) in network.link_stats().items()}
        ports = {h: c - ports_before[h] for h, c in network.port_counters(metered).items()}
        cpu = network.switch_cpu_s()
        switch_cpu = max((cpu[sw] - cpu_before.get(sw, 0.0) for sw in cpu), default=0.0)
        run_s = max((float(o.report.get("elapsed_s", 0.0)) for o in outcomes), default=0.0)
        host_cpus = network.cpu_layout.host_cpus
        # the hosts' processes: the workers and, for ATP, the parameter servers (in serving, start-up left out)
        workers_cpu = sum(float(o.report.get("cpu_s", 0.0)) for o in outcomes) + float(ps_stats.get("cpu_s", 0.0))
        results = []
        for k, job in enumerate(self.jobs):
            per_switch = {sw: {n: (v[0] - before[k][sw].get(n, (0, 0))[0], v[1] - before[k][sw].get(n, (0, 0))[1])
                               for n, v in after.items()}
                          for sw, after in network.counters(job.job_id).items()}
            total: dict[str, tuple[int, int]] = {}
            for counters in per_switch.values():
                for n, (p, b) in counters.items():
                    tp, tb = total.get(n, (0, 0))
                    total[n] = (tp + p, tb + b)
            mine = outcomes[k * w:(k + 1) * w]
            for o in mine:
                o.rank %= w
            ps = ps_stats.get("jobs", {}).get(str(job.job_id)) if network.ps_host is not None else None
            missing: list[int] = []
            if not all(o.ok for o in mine):
                missing = self._missing_ranks(job, ps)
            sent = [ports[h] for h in job_hosts[k]]
            wire = (sum(c.rx_frames for c in sent), sum(c.rx_bytes for c in sent))
            elapsed = max((float(o.report.get("elapsed_s", 0.0)) for o in mine), default=0.0)
            bound = None
            if elapsed > 0:
                mine_ps = self.fabric.ps_host_of(k)
                links_of_job = sent + ([ports[mine_ps]] if mine_ps is not None else [])
                busiest = max(max(c.rx_bytes, c.tx_bytes) for c in links_of_job)
                bound = Bound(link_busy=None if cfg.bw is None else busiest * 8 / (cfg.bw * 1e6 * elapsed),
                              switch_busy=switch_cpu / run_s, host_busy=workers_cpu / (run_s * host_cpus),
                              veth_drops=sum(c.drops for c in links_of_job))
            results.append(ExperimentResult(cfg, mine, total, network.switch.log_path, ps, links, per_switch,
                                            missing, network.cpu_layout, wire, bound))
        return results

    def _missing_ranks(self, job: JobConfig, ps: dict[str, Any] | None) -> list[int]:
        """Ranks absent from every partial aggregate of the job on the running switches and at the PS."""
        found: set[int] | None = None
        sources = self._network.missing_ranks(job)
        sources.append(list(ps.get("missing_ranks", [])) if ps else [])
        for ranks in sources:
            if ranks:
                found = set(ranks) if found is None else found & set(ranks)
        return sorted(found or [])

    @contextlib.contextmanager
    def parameter_server(self, job_files: Sequence[Path] = ()) -> Iterator[dict[str, Any]]:
        """A protocol with a PS: its process on each PS host (serving the jobs whose PS it is) while the block runs;
        the dict yielded is filled with their statistics when they stop (empty without a PS host)."""
        stats: dict[str, Any] = {}
        if self.ps_host is None:
            yield stats
            return
        files = list(job_files or self.job_paths)
        by_host: dict[int, list[Path]] = {}
        for k, f in enumerate(files):
            by_host.setdefault(self.fabric.ps_host_of(k) or 0, []).append(f)
        procs: list[tuple[subprocess.Popen, Path]] = []
        try:
            for host, mine in by_host.items():
                out = self.cfg.run_dir / f"ps-stats-h{host}.json"
                out.unlink(missing_ok=True)
                jobs = [a for f in mine for a in ("--job", str(f))]
                trace = trace_dir(self.cfg) / ("ps.json" if len(by_host) == 1 else f"ps-h{host}.json")
                proc = self._network.net.get(f"h{host}").popen(self.cpu_layout.host_argv(
                    [sys.executable, "-m", str(PROTOCOLS[self.cfg.protocol].ps_module), *jobs,
                     "--program-json", str(self.cfg.program_files[0]), "--stats", str(out),
                     *(["--trace", str(trace)] if self.cfg.trace else [])]),
                    cwd=str(ROOT), text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                procs.append((proc, out))
                assert proc.stdout is not None
                ready = proc.stdout.readline()  # "atp_ps: serving ..." once bound (or nothing if it failed)
                if "serving" not in ready:
                    proc.wait(10)
                    raise RuntimeError(f"the parameter server did not start: {ready.strip()} "
                                       f"{proc.stderr.read().strip() if proc.stderr else ''}")
            yield stats
        finally:
            for proc, out in procs:
                proc.send_signal(signal.SIGTERM)
            for proc, out in procs:
                try:
                    proc.communicate(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.communicate()
                if out.exists():
                    got = json.loads(out.read_text())
                    jobs_stats = {**stats.get("jobs", {}), **got.get("jobs", {})}
                    cpu = float(stats.get("cpu_s", 0.0)) + float(got.get("cpu_s", 0.0))
                    stats.update(got)
                    stats["jobs"], stats["cpu_s"] = jobs_stats, cpu

    def reset(self, loss: float) -> None:
        """Before a run: the jobs' switch state reset and the simulated loss set on every worker port (and the
        PS's)."""
        self._network.reset(self.jobs, loss)

    def fresh_barrier(self, name: str = "barrier") -> Path:
        """An empty start-barrier directory for the next run's processes."""
        barrier = self.cfg.run_dir / name
        shutil.rmtree(barrier, ignore_errors=True)
        barrier.mkdir()
        return barrier

    def launch(self, argv_of_rank: Callable[[int], list[str]], timeout_s: float, *, background: Sequence[str] = (),
               kill_switch_after_s: float | None = None,
               kill_rank_after: tuple[int, float] | None = None, restart_switch_after_s: float | None = None,
               barrier: Path | None = None) -> list[WorkerOutcome]:
        """Run argv_of_rank(r) on host h(r+1) for every rank, bounded by timeout_s; their outcomes by rank (the last
        stdout line that is JSON is a process's report). `background` as in run()."""
        network = self._network
        bg = []
        for spec in background:
            host, command = spec.split(":", 1)
            # sh -c ourselves: Mininet's shell=True reads $SHELL, which CI's environment does not set
            bg.append(network.host(host).popen(network.cpu_layout.host_argv(["sh", "-c", command]),
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        try:
            started = time.monotonic()
            procs = [h.popen(network.cpu_layout.host_argv(argv_of_rank(rank)), cwd=str(ROOT), text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                     for rank, h in enumerate(network.hosts)]
            if kill_switch_after_s is not None:
                time.sleep(kill_switch_after_s)
                network.kill_switch()
            if kill_rank_after is not None or restart_switch_after_s is not None:
                while barrier is not None and time.monotonic() < started + timeout_s and \
                        len(list(barrier.glob("ready-*"))) < self.cfg.workers:
                    time.sleep(0.01)
            if kill_rank_after is not None:
                rank, after = kill_rank_after
                time.sleep(after)
                procs[rank].kill()
            if restart_switch_after_s is not None:
                time.sleep(restart_switch_after_s)
                self.restart_switch()
            deadline = started + timeout_s
            outcomes = [collect(rank, p, deadline, started) for rank, p in enumerate(procs)]
            if kill_rank_after is not None:
                outcomes[kill_rank_after[0]].stderr = "killed by the experiment (kill_rank_after)"
            return outcomes
        finally:
            for p in bg:  # mnexec -d makes each a session leader: kill its whole group (sh and what it started)
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait()

    def close(self) -> None:
        if self.network is not None:
            self.network.close()
            self.network = None


def fault_report(cfg: ExperimentConfig, switch_log: Path) -> str:
    """What a fault plan asked for (its rules by name, a restart) and what the switch injected (its log's last
    `faults injected:` line, written when it stops)."""
    compiled, restart = cfg.compiled_fault_plan()
    asked = [r["name"] for r in compiled["rules"]] + [f"reset {e['reset_register']} at frame {e['at_frame']}"
                                                      for e in compiled["events"]]
    asked += [f"restart the switch {restart:g} s into the all-reduce"] if restart is not None else []
    injected = "not reported (the switch log has no `faults injected:` line)"
    try:
        found = [ln for ln in switch_log.read_text().splitlines() if ln.startswith("faults injected:")]
        injected = found[-1].removeprefix("faults injected:").strip() if found else injected
    except OSError:
        pass
    return f"fault plan {cfg.fault_plan} asks: {'; '.join(asked) or 'nothing'}\nfaults the switch injected: {injected}"


def _num_elems(program_json: Path) -> int:
    """Elements per packet of the program's protocol header (whichever in-network protocol's it declares)."""
    return protocol_of_program(program_json)[2]



def _rank_after(text: str) -> tuple[int, float]:
    rank, sep, after = text.partition(":")
    try:
        return int(rank), float(after if sep else "0")
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not RANK:SECONDS") from None


def _parser() -> argparse.ArgumentParser:
    p = Parser(prog="python -m experiments.run", description=__doc__.split("\n\n")[0])
    d = ExperimentConfig()
    p.add_argument("--protocol", "--algo", dest="protocol", choices=sorted(PROTOCOLS), default=d.protocol,
                   help="the all-reduce: in-network aggregation or a host-based baseline (default %(default)s)")
    p.add_argument("--workers", type=in_range(1, MAX_WORKERS), default=d.workers)
    p.add_argument("--size", type=at_least(1), default=d.size, help="tensor elements per worker")
    p.add_argument("--loss", type=probability(below_one=True), default=d.loss,
                   help="drop probability per port and direction, in [0, 1)")
    p.add_argument("--bw", type=link_rate(), default=None, metavar="MBIT|auto",
                   help="limit every link to MBIT Mbit/s (htb; default: unlimited veth); auto: the highest rate at "
                        "which the switch stays below 60 %% of a CPU with every link full, from a probe run "
                        "(experiments.calibrate)")
    p.add_argument("--dtype", choices=["float32", "int32"], default=d.dtype)
    p.add_argument("--target", choices=[t.value for t in Target], default=None,
                   help="switch target (default: $TARGET, else bmv2 if installed, else embedded)")
    p.add_argument("--program-dir", type=Path, default=d.program_dir,
                   help="where the compiled programs are (<program>.json, <program>.p4info.txt; default %(default)s)")
    p.add_argument("--json", dest="program_json", type=existing_file, default=None,
                   help="the compiled program (default: PROGRAM_DIR/<the collective's program>.json)")
    p.add_argument("--p4info", type=existing_file, default=None)
    p.add_argument("--pool-size", type=in_range(1, MAX_SLOTS), default=d.pool_size, help="slots given to the job")
    p.add_argument("--window", type=at_least(1), default=d.window,
                   help="packets in flight per worker, at most --pool-size (default: the protocol's, "
                        + default_windows() + ")")
    p.add_argument("--window-control", choices=WINDOW_CONTROLS, default=d.window_control,
                   help="switchml: fixed keeps every slot of the window in flight (SwitchML's published worker), "
                        "adaptive at most rate x (min RTT + 5 ms) packets (default %(default)s)")
    p.add_argument("--seed", type=at_least(0), default=d.seed,
                   help="seed of the workers' inputs and of the embedded switch's random() (its loss simulator)")
    p.add_argument("--timeout", type=positive_float, default=d.timeout_s, help="bound on the workers' run, seconds")
    p.add_argument("--run-dir", type=Path, default=d.run_dir, help="job file and switch log go here")
    p.add_argument("--topo", choices=list(TOPOLOGIES), default=d.topo,
                   help="star: one switch; twotier: rack switches under a PS rack switch (default %(default)s)")
    p.add_argument("--racks", type=at_least(1), default=d.racks, help="twotier: rack switches (default %(default)s)")
    p.add_argument("--levels", type=int, choices=(1, 2), default=d.levels,
                   help="twotier atp: aggregate in the rack switches and the PS rack switch (2), or only in the PS "
                        "rack switch (1) (default %(default)s)")
    p.add_argument("--fault-plan", type=existing_file, default=None, metavar="PLAN",
                   help="a fault plan for the job (worker.faults: drop/duplicate/delay/corrupt packets by kind, rank, "
                        "slot; reset the job's switch state), applied by the embedded switch, seeded by --seed")
    p.add_argument("--kill-rank", type=_rank_after, default=None, metavar="R:S",
                   help="kill worker rank R S seconds into the all-reduce (the run then names the missing rank)")
    p.add_argument("--restart-switch-after", type=positive_float, default=None, metavar="S",
                   help="kill the switch S seconds into the all-reduce and start it again, re-programmed")
    p.add_argument("--cpus", choices=CPU_LAYOUTS, default=d.cpus,
                   help="split: each switch process on a CPU of its own, the hosts' processes on the others (with "
                        "at least twice as many CPUs as switches); shared: the scheduler places them "
                        "(default %(default)s)")
    p.add_argument("--pcap", action="store_true",
                   help="every switch writes a pcap per port and direction into RUN_DIR/pcap/ (decode one with "
                        "python -m worker.scapy_layers PROGRAM.json FILE)")
    p.add_argument("--trace", type=Path, default=None, metavar="FILE",
                   help="write the run's timeline to FILE (Chrome trace-event JSON: open it in https://ui.perfetto.dev"
                        " or chrome://tracing): a track per worker and slot/aggregator, the switch and the PS")
    p.add_argument("--ecn-threshold", type=at_least(1), default=None, metavar="PACKETS",
                   help="atp: mark ECN on packets that leave an egress queue at least this deep (default: off)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    prog = "python -m experiments.run"
    args = _parser().parse_args(argv)
    try:  # every value checked before anything is started or written
        target, why = Target.explain(args.target)
        cfg = ExperimentConfig(protocol=args.protocol, bw=None if args.bw == "auto" else args.bw,
                               workers=args.workers, size=args.size,
                               loss=args.loss, dtype=args.dtype, target=target, program_json=args.program_json,
                               p4info=args.p4info, program_dir=args.program_dir, pool_size=args.pool_size,
                               window=args.window, window_control=args.window_control, timeout_s=args.timeout,
                               seed=args.seed, run_dir=args.run_dir,
                               topo=args.topo, racks=args.racks, levels=args.levels, ecn_threshold=args.ecn_threshold,
                               fault_plan=args.fault_plan, kill_rank_after=args.kill_rank,
                               restart_switch_after_s=args.restart_switch_after, cpus=args.cpus, pcap=args.pcap,
                               trace=args.trace)
        cfg.check()
    except (ValueError, OSError) as err:
        return fail(prog, str(err))
    if os.geteuid() != 0:
        print("error: Mininet needs root: run `sudo make run`", file=sys.stderr)
        return 2
    print(why, flush=True)
    try:
        if args.bw == "auto":
            from experiments.calibrate import calibrate

            cal = calibrate(cfg)
            print(f"link rate auto: {cal.describe()}", flush=True)
            cfg = replace(cfg, bw=cal.bw_mbps)
        result = run_experiment(cfg)
    except Exception as err:  # one clear line (plus the switch log if it is a startup failure)
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(result.table())
    if cfg.fault_plan is not None:
        print("\n" + fault_report(cfg, result.switch_log))
    if cfg.trace:
        print(f"\ntimeline in {cfg.trace} (open it in https://ui.perfetto.dev or chrome://tracing)")
    if cfg.pcap:
        print(f"\npcaps in {cfg.run_dir / 'pcap'} (python -m worker.scapy_layers {cfg.program_files[0]} FILE "
              "decodes one)")
    if not result.correct:
        print(f"\nswitch log ({result.switch_log}):\n{log_tail(result.switch_log)}", file=sys.stderr)
    return 0 if result.correct else 1


if __name__ == "__main__":
    sys.exit(main())
