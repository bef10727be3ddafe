"""In-process networks: the embedded switch engine, hosts' sans-IO protocol cores, fake time, seeded faults.

No sockets, no Mininet, no real time. Each host sits on one switch port; a frame a host sends reaches the switch
`latency` later (each host's uplink stays FIFO, as a real link and the kernel's send path keep it), the switch
processes it at once, and each frame it sends reaches its host `latency` plus a uniform `jitter` later (so results
may overtake each other on the way down). When nothing is in flight the clock jumps to the next timer. Faults are a
`switch.faults.FaultPlan` applied at the switch's ports exactly as `python -m switch --fault-plan` applies it (loss
is a probabilistic drop rule on every port, both directions), so a plan behaves alike here and on a real port, and
one seed replays one run frame for frame.

    net = InProcessNetwork(program_json, jobs, p4info=p4info, faults=FaultPlan(...), loss=0.01, seed=7)
    runs = net.allreduce({job_id: [input of each rank]}, dtype="int32")   # job id -> JobRun

Any registered in-network protocol runs here unchanged: the network asks the protocol's spec (`worker.plugin`,
found from the program's header) for each worker's sans-IO rank (`worker.collective.Rank`, the same code the worker
process runs over UDP) and for its parameter server's core, and programs the switch through the program's
controller (`controller.programs`). Used by the protocols' host tests, the exactly-once soak (experiments.soak) and
the fuzzing (experiments.fuzz).
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from controller.local import LocalClient
from controller.programs import controller_for
from controller.registers import P4RuntimeRegisters
from switch.faults import FaultPlan, FaultRule
from switch.timeline import Timeline
from topo.addresses import SWITCH
from topo.frames import udp_frame
from worker.collective import CollectiveOptions, Rank
from worker.driver import WindowCore, WindowOptions
from worker.job import MAX_WORKERS, JobConfig, PoolRange, PsSpec, WorkerSpec
from worker.plugin import ProtocolSpec
from worker.protocols import protocol_of_program
from worker.stats import RunResult
from worker.verify import verify_float_sum

__all__ = ["InProcessNetwork", "EngineCache", "clear_engine", "zero_register", "Endpoint", "JobRun", "make_jobs",
           "loss_rule", "frame", "PS_PORT"]

PS_PORT = 100
DEFAULT_OPTIONS = WindowOptions(window=16, timeout=0.05, max_timeout=0.2, min_timeout=0.01, max_retries=30)


def frame(src_mac: str, dst_mac: str, src_ip: str, dst_ip: str, sport: int, dport: int, payload: bytes) -> bytes:
    """Ethernet / IPv4 (checksummed, don't fragment) / UDP (checksum 0: none) around payload."""
    return udp_frame(dst_mac, src_mac, src_ip, dst_ip, sport, dport, payload, dont_fragment=True)


def loss_rule(loss: float) -> FaultRule:
    """Drop each frame with probability `loss` on every port, in each direction."""
    return FaultRule(action="drop", direction="any", probability=loss, name=f"loss {loss:g}")


class Endpoint(Protocol):
    """A host on one switch port: a sans-IO core that takes frames and timers and returns frames to send."""

    port: int
    start_at: float

    def start(self, now: float) -> list[bytes]: ...
    def on_frame(self, data: bytes, now: float) -> list[bytes]: ...
    def on_timer(self, now: float) -> list[bytes]: ...
    def next_deadline(self) -> float | None: ...
    @property
    def done(self) -> bool: ...


@dataclass
class FakeTimeNetwork:
    """One switch engine with hosts on its ports, fake time and a fault plan at the switch's ports (the event loop
    under `InProcessNetwork`)."""

    program: Mapping[str, Any]
    faults: FaultPlan = field(default_factory=FaultPlan)
    seed: int = 0
    """Seeds the switch's random() and the downlink jitter."""
    latency: float = 50e-6
    jitter: float = 0.0
    time_limit: float = 600.0
    """Simulated seconds after which a run raises TimeoutError."""
    engine: Any = None
    """A switch engine already loaded with `program` to reuse (its state is cleared, see EngineCache); None: a new
    one."""
    p4info: Any = None
    """The program's P4Info (message or text file): the network programs its switch through the controllers over
    `controller.local.LocalClient`, as a switch process is programmed over gRPC."""

    def __post_init__(self) -> None:
        from switch.v1model import V1Switch

        if self.engine is not None:
            self.sw = self.engine
            clear_engine(self.sw, self.seed)
        else:
            self.sw = V1Switch(seed=self.seed)
            self.sw.load(dict(self.program))
        if self.p4info is None:
            raise ValueError("an in-process network programs its switch through the controller: pass the program's "
                             "P4Info (p4info=, e.g. out/<program>.p4info.txt or compiler's CompileResult.p4info)")
        self._connect()
        self.rng = random.Random(self.seed)
        self.now = 0.0
        self.sw.set_clock(lambda: round(self.now * 1e9), start_ns=0)  # the program's timestamps: this fake time
        self.hosts: dict[int, Endpoint] = {}
        self.frames = 0
        """Frames sent by hosts and by the switch."""
        self.trace: list[tuple[float, str, int, bytes]] | None = None
        """Set to a list to record (time, "in"/"out", port, frame) of every frame at the switch's ports."""

    def _connect(self) -> None:
        """A P4Runtime device for the engine, as a switch process starts with: `client` and `registers` over it."""
        self.client = LocalClient(self.sw, self.p4info, self.program)
        self.registers = P4RuntimeRegisters(self.client)

    @property
    def dropped(self) -> int:
        return self.faults.stats["drop"]

    def attach(self, host: Endpoint) -> None:
        self.hosts[host.port] = host

    def _reset_register(self, name: str, first: int, count: int | None) -> None:
        zero_register(self.sw, name, first, count)

    def run(self, until: Callable[[], bool]) -> None:
        """Deliver frames and fire timers until `until()` holds (TimeoutError past time_limit)."""
        events: list[tuple[float, int, bool, int, bytes]] = []  # (time, order, to_switch, port, frame)
        order = 0
        uplink_free: dict[int, float] = {}

        def from_host(port: int, frames: list[bytes], now: float) -> None:
            nonlocal order
            for f in frames:
                self.frames += 1
                at = uplink_free[port] = max(now + self.latency, uplink_free.get(port, 0.0))
                order += 1
                heapq.heappush(events, (at, order, True, port, f))

        def from_switch(out: list[tuple[int, bytes]], now: float, faulted: bool = False) -> None:
            nonlocal order
            for port, f in (out if faulted else self.faults.egress(out, now)):
                self.frames += 1
                if self.trace is not None:
                    self.trace.append((now, "out", port, f))
                at = now + self.latency + (self.rng.uniform(0, self.jitter) if self.jitter else 0.0)
                order += 1
                heapq.heappush(events, (at, order, False, port, f))

        def into_switch(frames: list[tuple[int, bytes]], now: float) -> None:
            for port, f in frames:
                if self.trace is not None:
                    self.trace.append((now, "in", port, f))
                from_switch(self.sw.process(port, f), now)

        pending = sorted(self.hosts.values(), key=lambda h: (h.start_at, h.port))
        # each host's next timer, kept up to date after every call into the host (only those calls change it)
        deadlines: dict[int, float] = {}

        def called(h: Endpoint) -> None:
            d = None if h.done else h.next_deadline()
            if d is None:
                deadlines.pop(h.port, None)
            else:
                deadlines[h.port] = d

        while not until():
            t_timer = min((d, port) for port, d in deadlines.items()) if deadlines else (float("inf"), -1)
            t_start = pending[0].start_at if pending else float("inf")
            t_event = events[0][0] if events else float("inf")
            t_release = self.faults.next_release()
            t_release = float("inf") if t_release is None else t_release
            now = min(t_timer[0], t_start, t_event, t_release)
            if now == float("inf"):
                raise RuntimeError("in-process network: nothing in flight and no timer armed")
            self.now = max(self.now, now)
            if self.now > self.time_limit:
                raise TimeoutError(f"in-process run exceeded {self.time_limit} s of simulated time")
            if t_release <= now:
                arriving, leaving = self.faults.release_expired(self.now)
                into_switch(arriving, self.now)
                from_switch(leaving, self.now, faulted=True)
            elif t_start <= now:
                h = pending.pop(0)
                from_host(h.port, h.start(self.now), self.now)
                called(h)
            elif t_event <= now:
                _, _, to_switch, port, f = heapq.heappop(events)
                if to_switch:
                    into_switch(self.faults.ingress([(port, f)], self.now, self._reset_register), self.now)
                else:
                    h = self.hosts.get(port)
                    if h is not None and h.start_at <= self.now:
                        from_host(port, h.on_frame(f, self.now), self.now)
                        called(h)
            else:
                h = self.hosts[t_timer[1]]
                from_host(h.port, h.on_timer(self.now), self.now)
                called(h)


def zero_register(sw: Any, name: str, first: int, count: int | None) -> None:
    """Zero `count` cells (None: to the end) of engine `sw`'s register `name` from `first`, as a fault plan's event
    does (a register the program lacks: nothing)."""
    reg = sw.registers.get(name)
    if reg is not None:
        end = reg.size if count is None else min(reg.size, first + count)
        reg.values[first:end] = [0] * max(0, end - first)


def clear_engine(sw: Any, seed: int) -> None:
    """A loaded engine back to the state of a fresh load: no entries, program defaults, zero registers and counters,
    no multicast groups, random() reseeded."""
    for t in sw.tables.values():
        t.clear()
    for r in sw.registers.values():
        r.reset()
    for c in sw.counters.values():
        c.reset()
    sw.pre.groups.clear()
    sw.rng.seed(seed)


class EngineCache:
    """One loaded engine per program (code generation costs far more than a short run): pass `engine=cache.get(p)`
    to a network; the network clears its state. Only for networks used one after another."""

    def __init__(self) -> None:
        self._engines: dict[int, tuple[Mapping[str, Any], list[Any]]] = {}

    def get(self, program: Mapping[str, Any]) -> Any:
        return self.many(program, 1)[0]

    def many(self, program: Mapping[str, Any], n: int) -> list[Any]:
        """n distinct engines loaded with `program`, for a network of n switches (the first is `get`'s)."""
        hit = self._engines.get(id(program))
        if hit is None or hit[0] is not program:
            hit = self._engines[id(program)] = (program, [])
        engines = hit[1]
        while len(engines) < n:
            from switch.v1model import V1Switch

            sw = V1Switch()
            sw.load(dict(program))
            engines.append(sw)
        return engines[:n]




# ---------------------------------------------------------------------------------------------------- jobs


def make_jobs(num_jobs: int, workers: int, num_elems: int, pool: PoolRange | Sequence[PoolRange], *,
              ps: bool = False, ps_per_job: bool = False) -> list[JobConfig]:
    """Jobs 1..num_jobs of `workers` workers each on consecutive switch ports from 1, the given pools; with `ps`, one
    parameter server for every job on port PS_PORT (past the workers' ports when they reach it) at 10.0.0.100; with
    `ps_per_job` too, job j's own on port PS_PORT + j - 1 at 10.0.0.{99 + j} (as ATP runs its jobs: a PS host and link
    each). Worker r of job j is host h = r + 1 at 10.{h >> 8}.{j}.{h & 255}, MAC 00:00:00:{h >> 8}:{j}:{h & 255}.
    Jobs of more than MAX_WORKERS (32) workers are checked against the switch's program when its controller installs
    them (`JobConfig.max_workers`: SwitchML's -D INA_MAX_WORKERS)."""
    pools = [pool] * num_jobs if isinstance(pool, PoolRange) else list(pool)
    servers = (num_jobs if ps_per_job else 1) if ps else 0
    if num_jobs * workers + servers > 510:
        raise ValueError(f"{num_jobs} jobs of {workers} workers (and {servers} parameter servers) need "
                         f"{num_jobs * workers + servers} switch ports; a switch has at most 510 (1..510: the egress "
                         f"port is 9 bits and 511 is v1model's drop port)")
    if ps_per_job and num_jobs > 155:
        raise ValueError(f"a PS per job addresses at most 155 jobs (10.0.0.100..254), got {num_jobs}")
    jobs, port = [], 1
    ps_port = PS_PORT if num_jobs * workers < PS_PORT else num_jobs * workers + 1
    for j in range(num_jobs):
        k = j if ps_per_job else 0
        ws = []
        for r in range(workers):
            hi, lo = (r + 1) >> 8, (r + 1) & 255
            ws.append(WorkerSpec(rank=r, ip=f"10.{hi}.{j + 1}.{lo}", mac=f"00:00:00:{hi:02x}:{j + 1:02x}:{lo:02x}",
                                 udp_port=50000 + r, switch_port=port))
            port += 1
        jobs.append(JobConfig(job_id=j + 1, num_elems=num_elems, switch=SWITCH, pool=pools[j], workers=tuple(ws),
                              ps=PsSpec(ip=f"10.0.0.{100 + k}", mac=f"00:00:0a:00:00:{100 + k:02x}",
                                        switch_port=ps_port + k) if ps else None,
                              max_workers=max(MAX_WORKERS, workers)))
    return jobs


# ---------------------------------------------------------------------------------------------------- hosts


@dataclass
class WorkerHost:
    """A worker on its switch port: one all-reduce's window core (worker.driver.WindowCore) of a protocol's rank,
    behind Ethernet/IPv4/UDP framing, as `worker.driver.drive` runs it over a socket."""

    rank: Rank
    window: WindowCore
    start_at: float = 0.0

    def __post_init__(self) -> None:
        self.me = self.rank.job.worker(self.rank.rank)
        self.port = self.me.switch_port
        self.dst = self.rank.destination()

    @property
    def done(self) -> bool:
        return self.window.done

    def _frames(self, outs: Sequence[Any]) -> list[bytes]:
        mac, ip, port = self.dst
        encode = self.rank.encode
        return [frame(self.me.mac, mac, self.me.ip, ip, self.me.udp_port, port, encode(o)) for o in outs]

    def start(self, now: float) -> list[bytes]:
        return self._frames(self.window.start(now))

    def on_frame(self, data: bytes, now: float) -> list[bytes]:
        if self.window.done:
            return []
        batch = self.rank.decode_batch
        if batch is not None:
            headers, values, malformed = batch([data[42:]])
            self.window.stats.malformed += malformed
            return self._frames(self.window.on_packets(headers, values, now)) if headers else []  # type: ignore
        hdr, values = self.rank.decode(data[42:])
        return self._frames(self.window.on_packet(hdr, values, now))

    def on_timer(self, now: float) -> list[bytes]:
        return self._frames(self.window.on_timer(now))

    def next_deadline(self) -> float | None:
        return self.window.next_deadline()


@dataclass
class _Action:
    """Something done to the network at a point of simulated time (a host that only starts, and is never waited
    for)."""

    port: int
    start_at: float
    action: Callable[[], None]
    done: bool = True

    def start(self, now: float) -> list[bytes]:
        self.action()
        return []

    def on_frame(self, data: bytes, now: float) -> list[bytes]:
        return []

    def on_timer(self, now: float) -> list[bytes]:
        return []

    def next_deadline(self) -> float | None:
        return None


@dataclass
class PsHost:
    """The parameter server of every job (the protocol's `ps_core` per job) on one port."""

    cores: Mapping[int, Any]
    jobs: Mapping[int, JobConfig]
    codec: Any
    udp_port: int
    port: int
    via_switch: bool = True
    """False (no switch aggregation): the PS addresses each worker itself."""
    start_at: float = 0.0
    done: bool = True
    """Never waited for: the run ends when the workers are done."""

    def start(self, now: float) -> list[bytes]:
        return []

    def on_frame(self, data: bytes, now: float) -> list[bytes]:
        hdr, values = self.codec.decode(data[42:])
        core = self.cores.get(hdr.job_id)
        if core is None:
            return []
        job = self.jobs[hdr.job_id]
        ps = job.ps
        assert ps is not None
        dsts = [(job.switch.mac, job.switch.ip)] if self.via_switch else [(w.mac, w.ip) for w in job.workers]
        return [frame(ps.mac, mac, ps.ip, ip, self.udp_port, self.udp_port, self.codec.encode(h, v))
                for h, v in core.on_packet(hdr, values) for mac, ip in dsts]

    def on_timer(self, now: float) -> list[bytes]:
        return []

    def next_deadline(self) -> float | None:
        return None


# ---------------------------------------------------------------------------------------------------- the network


@dataclass
class JobRun:
    """One job's all-reduce: each rank's result and window core, the job's switch counters during the run, its PS."""

    runs: list[RunResult]
    """Each rank's outcome (array, statistics, SwitchML's agreed exponents)."""
    windows: list[Any]
    """Each rank's window core (its plan, statistics, timers)."""
    counters: dict[str, int]
    """Packets counted by each of the job's per-job counters during the run (names without the control prefix)."""
    ps: Any = None
    """The job's parameter server core (its `stats`), for a protocol with one."""

    @property
    def results(self) -> list[np.ndarray]:
        return [r.array for r in self.runs]


class InProcessNetwork(FakeTimeNetwork):
    """One switch running an in-network protocol's program, with its jobs' workers (and their PS), in this process.

    The protocol is the one whose header the program declares (`worker.protocols.protocol_of_program`), or
    `protocol`; `options` (window, timeouts) and `protocol_options` (`CollectiveOptions.protocol`) are every rank's.
    The switch is programmed as `experiments.run` programs a switch process: the PS reachable by MAC and each job
    installed by the program's controller (its choices, such as SwitchML's epochs, drawn from `seed`); without
    `switch_aggregation` no job is installed and every worker is reachable by MAC (the PS addresses them itself).
    A host baseline's `protocol` (ring, PS: `host_steps`, no rank) is installed as the program's L2 forwarding
    alone; its ranks are TCP hosts (`topo.sim.hosts.host_allreduce` on a SimNetwork).
    """

    def __init__(self, program: Mapping[str, Any], jobs: Sequence[JobConfig], *, p4info: Any = None,
                 protocol: ProtocolSpec | None = None, faults: FaultPlan | None = None, loss: float = 0.0,
                 seed: int = 0, options: WindowOptions = DEFAULT_OPTIONS, protocol_options: Any = None,
                 switch_aggregation: bool = True, latency: float = 50e-6, jitter: float = 0.0, engine: Any = None,
                 timelines: Mapping[tuple[int, int], Timeline] | None = None) -> None:
        plan = faults or FaultPlan(seed=seed)
        if loss:
            plan.rules.append(loss_rule(loss))
        super().__init__(program, plan, seed, latency, jitter, engine=engine, p4info=p4info)
        self.protocol = spec = protocol or protocol_of_program(program)[0]
        if spec.rank is None and spec.host_steps is None:
            raise ValueError(f"{spec.name} has neither a sans-IO rank nor host steps to run here")
        self.jobs = list(jobs)
        self.loss = loss
        self.options = options
        self.switch_aggregation = switch_aggregation and spec.rank is not None
        self.timelines = timelines
        """(job id, rank)'s window records into timelines[job id, rank] (simulated time)."""
        self.codec = spec.codec.from_program_json(program) if spec.codec is not None else None
        self.ps_hosts: dict[int, PsHost] = {}
        """Each parameter server host by its switch port (one for every job, or one per job: make_jobs)."""
        if spec.needs_ps:
            if any(j.ps is None for j in self.jobs) or spec.ps_core is None:
                raise ValueError(f"{spec.name} needs a parameter server: give the jobs one (make_jobs(ps=True))")
            servers: dict[int, list[JobConfig]] = {}
            for j in self.jobs:
                assert j.ps is not None
                servers.setdefault(j.ps.switch_port, []).append(j)
            for port, served in servers.items():
                cores = {j.job_id: spec.ps_core(j, self.codec.num_elems) for j in served}
                self.ps_hosts[port] = PsHost(cores, {j.job_id: j for j in served}, self.codec,
                                             int(spec.udp_port or 0), port, via_switch=switch_aggregation)
        copts = CollectiveOptions(window=options, protocol=protocol_options)
        self.ranks = {(j.job_id, w.rank): spec.rank(j, w.rank, self.codec, replace(
            copts, timeline=(timelines or {}).get((j.job_id, w.rank)))) for j in self.jobs for w in j.workers
            } if spec.rank is not None else {}
        """Each worker's sans-IO rank: its all-reduces continue from one to the next, as in a worker process (none
        for a host baseline: its ranks are TCP hosts, `topo.sim.hosts`)."""
        self.restarts: list[float] = []
        self.controller = controller_for(str(spec.program))(self.client, self.registers,
                                                            rng=random.Random(f"controller:{seed}"))
        self._install()

    @property
    def ps_host(self) -> PsHost | None:
        """The (first) parameter server host, if the protocol has one."""
        return next(iter(self.ps_hosts.values()), None)

    def ps_core(self, job_id: int) -> Any:
        """The parameter server core of job `job_id` (None without a PS)."""
        for host in self.ps_hosts.values():
            if job_id in host.cores:
                return host.cores[job_id]
        return None

    def _install(self) -> None:
        """Program the switch: each PS reachable by MAC, each job's role (or, without switch aggregation, every
        worker reachable by MAC)."""
        ctl = self.controller
        hosts = list(dict.fromkeys((j.ps.mac, j.ps.switch_port) for j in self.jobs if j.ps is not None))
        if not self.switch_aggregation:
            hosts += [(w.mac, w.switch_port) for job in self.jobs for w in job.workers]
        if hosts:
            ctl.install_forwarding(hosts, sorted({p for _, p in hosts} | {w.switch_port for j in self.jobs
                                                                         for w in j.workers}))
        if self.switch_aggregation:
            for job in self.jobs:
                ctl.create_job(job)

    def restart(self) -> None:
        """The switch loses every state (tables, registers, counters, groups) and is programmed again, as
        `experiments.run` re-programs a restarted switch process: a fresh P4Runtime device, every job installed
        anew (SwitchML: with a new epoch)."""
        clear_engine(self.sw, self.seed)
        self._connect()
        self.controller.client, self.controller.registers = self.client, self.registers
        self._install()

    def restart_at(self, when: float) -> None:
        """Restart the switch (`restart`) `when` simulated seconds from now, during the next all-reduce."""
        self.restarts.append(when)

    def counters(self, job_id: int) -> dict[str, int]:
        """Packets counted by each of a job's per-job counters (names without the control prefix)."""
        return {name.rsplit(".", 1)[1]: c.packets[job_id] for name, c in self.sw.counters.items()
                if not c.is_direct and c.size > job_id}

    def allreduce(self, inputs: Mapping[int, Sequence[np.ndarray]], dtype: str = "float32",
                  start_at: Mapping[tuple[int, int], float] | None = None,
                  time_limit: float | None = None) -> dict[int, JobRun]:
        """One all-reduce per job, all at once: inputs[job_id][rank] is that rank's array; `start_at[(job, rank)]`:
        when that worker joins (stragglers). Returns each job's run."""
        if self.protocol.rank is None:
            raise ValueError(f"{self.protocol.name} is a host baseline: its ranks are TCP hosts, run it with "
                             "topo.sim.hosts.host_allreduce(net, inputs) on a SimNetwork")
        if time_limit is not None:
            self.time_limit = time_limit
        before = {jid: self.counters(jid) for jid in inputs}
        self.hosts = {}
        for ps_host in self.ps_hosts.values():
            self.attach(ps_host)
        cores: dict[tuple[int, int], Any] = {}
        for jid, arrays in inputs.items():
            for r, arr in enumerate(arrays):
                cores[jid, r] = core = self.ranks[jid, r].begin(arr, dtype)
                self.attach(WorkerHost(self.ranks[jid, r], core, self.now + (start_at or {}).get((jid, r), 0.0)))
        free = max(self.hosts, default=0) + 1  # an action is no host: a key no host's port takes
        for k, when in enumerate(self.restarts):
            self.attach(_Action(free + k, self.now + when, self.restart))
        self.restarts = []
        self.run(lambda: all(c.done for c in cores.values()))
        out = {}
        for jid, arrays in inputs.items():
            after = self.counters(jid)
            n = len(arrays)
            out[jid] = JobRun([self.ranks[jid, r].end(cores[jid, r]) for r in range(n)],
                              [cores[jid, r] for r in range(n)],
                              {k: after[k] - before[jid].get(k, 0) for k in after},
                              self.ps_core(jid))
        return out

    def verify(self, job_id: int, run: JobRun, inputs: Sequence[np.ndarray], dtype: str) -> list[Any]:
        """Each rank's verdict on its result, by the protocol's error model (a host baseline's: float32 summation)."""
        if not self.ranks:
            return [verify_float_sum(res.array, list(inputs), dtype) for res in run.runs]
        return [self.ranks[job_id, r].verify(res, list(inputs), dtype) for r, res in enumerate(run.runs)]
