"""In-process networks: the embedded switch engine, hosts' sans-IO protocol cores, fake time, seeded faults.

No sockets, no Mininet, no real time. Each host sits on one switch port; a frame a host sends reaches the switch
`latency` later (each host's uplink stays FIFO, as a real link and the kernel's send path keep it), the switch
processes it at once, and each frame it sends reaches its host `latency` plus a uniform `jitter` later (so results
may overtake each other on the way down). When nothing is in flight the clock jumps to the next timer. Faults are a
`switch.faults.FaultPlan` applied at the switch's ports exactly as `python -m switch --fault-plan` applies it (loss
is a probabilistic drop rule on every port, both directions), so a plan behaves alike here and on a real port, and
one seed replays one run frame for frame.

    net = SwitchMLNetwork(switchml_json, job, faults=FaultPlan(...), seed=7)
    run = net.allreduce([input of each rank], dtype="int32")
    net = AtpNetwork(atp_json, jobs, loss=0.01, seed=7)
    runs = net.allreduce({job_id: [input of each rank]}, dtype="float32")

Used by the ATP and SwitchML host tests and by the exactly-once soak (experiments.soak).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from controller.atp import AtpController
from controller.local import LocalClient
from controller.registers import P4RuntimeRegisters
from controller.switchml import EPOCHS, SwitchMLController
from switch.faults import FaultPlan, FaultRule
from switch.timeline import Timeline
from topo.addresses import SWITCH
from topo.frames import udp_frame
from worker.atp.header import ATP_UDP_PORT, AtpCodec
from worker.atp.ps import PsCore
from worker.atp.worker import ATP_WINDOW, AtpOptions, AtpWindow, FixedPointPlan, aggregator_map
from worker.driver import DecodeBatch, WindowCore, WindowOptions
from worker.job import JobConfig, PoolRange, PsSpec, WorkerSpec
from worker.switchml.blocks import Float32Plan, Int32Plan
from worker.switchml.header import INA_UDP_PORT, Codec
from worker.switchml.window import Window
from worker.switchml.worker import SWITCHML_WINDOW

__all__ = ["InProcessNetwork", "EngineCache", "clear_engine", "Endpoint", "SwitchMLNetwork", "SwitchMLRun", "AtpNetwork", "JobRun", "atp_jobs",
           "switchml_job", "loss_rule", "frame"]

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
class InProcessNetwork:
    """One switch engine with hosts on its ports, fake time and a fault plan at the switch's ports."""

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
        import random

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
        reg = self.sw.registers.get(name)
        if reg is not None:
            end = reg.size if count is None else min(reg.size, first + count)
            reg.values[first:end] = [0] * max(0, end - first)

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
        self._engines: dict[int, tuple[Mapping[str, Any], Any]] = {}

    def get(self, program: Mapping[str, Any]) -> Any:
        hit = self._engines.get(id(program))
        if hit is None or hit[0] is not program:
            from switch.v1model import V1Switch

            sw = V1Switch()
            sw.load(dict(program))
            hit = self._engines[id(program)] = (program, sw)
        return hit[1]


# ---------------------------------------------------------------------------------------------------- SwitchML


def switchml_job(workers: int, num_elems: int, pool: PoolRange, job_id: int = 1) -> JobConfig:
    """A SwitchML job of `workers` ranks on switch ports 1..workers."""
    ws = [WorkerSpec(rank=r, ip=f"10.0.{job_id}.{r + 1}", mac=f"00:00:00:00:{job_id:02x}:{r + 1:02x}",
                     udp_port=50000 + r, switch_port=r + 1) for r in range(workers)]
    return JobConfig(job_id=job_id, num_elems=num_elems, switch=SWITCH, pool=pool, workers=tuple(ws))


@dataclass
class WorkerHost:
    """A worker on its switch port: a protocol's window core (worker.driver.WindowCore) behind Ethernet/IPv4/UDP
    framing, sending to `dst` (mac, ip, UDP port); `encode` turns what the core sends into a UDP payload and
    `decode` a received payload into (header, values), as worker.driver.drive uses them."""

    job: JobConfig
    rank: int
    window: WindowCore
    dst: tuple[str, str, int]
    encode: Callable[[Any], bytes]
    decode: Callable[[bytes], tuple[Any, np.ndarray]]
    start_at: float = 0.0
    decode_batch: DecodeBatch | None = None
    """When set (a core with `on_packets`): received payloads go through it, as `worker.driver.drive` does."""

    def __post_init__(self) -> None:
        self.me = self.job.worker(self.rank)
        self.port = self.me.switch_port

    @property
    def done(self) -> bool:
        return self.window.done

    def _frames(self, outs: Sequence[Any]) -> list[bytes]:
        mac, ip, port = self.dst
        return [frame(self.me.mac, mac, self.me.ip, ip, self.me.udp_port, port, self.encode(o)) for o in outs]

    def start(self, now: float) -> list[bytes]:
        return self._frames(self.window.start(now))

    def on_frame(self, data: bytes, now: float) -> list[bytes]:
        if self.window.done:
            return []
        if self.decode_batch is not None:
            headers, values, malformed = self.decode_batch([data[42:]])
            self.window.stats.malformed += malformed
            return self._frames(self.window.on_packets(headers, values, now)) if headers else []  # type: ignore
        hdr, values = self.decode(data[42:])
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
class SwitchMLRun:
    """One SwitchML all-reduce: each rank's result, its window and plan, and the job's switch counters."""

    results: list[np.ndarray]
    windows: list[Window]
    plans: list[Float32Plan | Int32Plan]
    counters: dict[str, int]


class SwitchMLNetwork(InProcessNetwork):
    """switchml.p4 with one job and its workers (window cores) on ports 1..n."""

    def __init__(self, program: Mapping[str, Any], job: JobConfig, *, p4info: Any = None,
                 faults: FaultPlan | None = None, seed: int = 0, options: WindowOptions = DEFAULT_OPTIONS,
                 latency: float = 50e-6, jitter: float = 0.0, engine: Any = None, epoch: int | None = None,
                 timelines: Sequence[Timeline] | None = None) -> None:
        super().__init__(program, faults or FaultPlan(seed=seed), seed, latency, jitter, engine=engine, p4info=p4info)
        self.job = job
        self.options = options
        self.timelines = timelines
        """Rank r's window records into timelines[r] (simulated time)."""
        self.codec = Codec.from_program_json(program)
        self.controller = SwitchMLController(self.client, self.registers)
        self.epoch = seed % EPOCHS + 1 if epoch is None else epoch
        """The job's epoch in ina_epochs (seeded, so that a seed replays it)."""
        self.controller.create_job(job, epoch=self.epoch)
        self.restarts: list[float] = []
        self._next_set = [0] * job.pool.size

    def restart(self) -> None:
        """The switch loses every state (tables, registers, counters, groups) and is programmed again, as
        `experiments.run` re-programs a restarted switch process: a fresh P4Runtime device, the job with a new
        epoch."""
        clear_engine(self.sw, self.seed)
        self._connect()
        self.controller.client, self.controller.registers = self.client, self.registers
        self.controller.create_job(self.job)
        self.epoch = self.controller.epochs[self.job.job_id]

    def restart_at(self, when: float) -> None:
        """Restart the switch (`restart`) `when` simulated seconds from now, during the next all-reduce."""
        self.restarts.append(when)

    def counters(self) -> dict[str, int]:
        """Packets counted by each of the job's per-job counters (names without the control prefix)."""
        return {name.rsplit(".", 1)[1]: c.packets[self.job.job_id] for name, c in self.sw.counters.items()
                if not c.is_direct and c.size > self.job.job_id}

    def allreduce(self, inputs: Sequence[np.ndarray], dtype: str = "float32",
                  start_at: Sequence[float] | None = None) -> SwitchMLRun:
        """One all-reduce of inputs[r] per rank; `start_at[r]`: when rank r joins (stragglers)."""
        job, n = self.job, self.job.num_workers
        before = self.counters()
        blocks = -(-inputs[0].size // job.num_elems)
        w = max(1, min(self.options.width(job.pool.size, SWITCHML_WINDOW), blocks))
        plans: list[Float32Plan | Int32Plan] = [
            Float32Plan(x, job.num_elems, n, w) if dtype == "float32" else Int32Plan(x, job.num_elems)
            for x in inputs]
        wins = [Window(plan=plans[r], job_id=job.job_id, rank=r, slots=[job.pool.base + i for i in range(w)],
                       first_set=self._next_set[:w], options=self.options,
                       timeline=self.timelines[r] if self.timelines else None) for r in range(n)]
        self.hosts = {}
        dst = (job.switch.mac, job.switch.ip, INA_UDP_PORT)
        encode = lambda o: self.codec.encode_fields(o.fields, o.values)  # noqa: E731
        for r in range(n):
            self.attach(WorkerHost(job, r, wins[r], dst, encode, self.codec.decode,
                                   self.now + (start_at[r] if start_at else 0.0), self.codec.decode_batch))
        for k, when in enumerate(self.restarts):
            self.attach(_Action(PS_PORT + 1 + k, self.now + when, self.restart))
        self.restarts = []
        self.run(lambda: all(win.done for win in wins))
        self._next_set[:w] = wins[0].next_first_set()
        after = self.counters()
        return SwitchMLRun([p.output() for p in plans], wins, plans,
                           {k: after[k] - before.get(k, 0) for k in after})


# ---------------------------------------------------------------------------------------------------- ATP


def atp_jobs(num_jobs: int, workers: int, num_elems: int, pool: PoolRange | Sequence[PoolRange]) -> list[JobConfig]:
    """Jobs 1..num_jobs of `workers` workers each on consecutive switch ports, one PS (port 100), the given pools."""
    pools = [pool] * num_jobs if isinstance(pool, PoolRange) else list(pool)
    jobs = []
    port = 1
    for j in range(num_jobs):
        ws = []
        for r in range(workers):
            ws.append(WorkerSpec(rank=r, ip=f"10.0.{j + 1}.{r + 1}", mac=f"00:00:00:00:{j + 1:02x}:{r + 1:02x}",
                                 udp_port=50000 + r, switch_port=port))
            port += 1
        jobs.append(JobConfig(job_id=j + 1, num_elems=num_elems, switch=SWITCH, pool=pools[j], workers=tuple(ws),
                              ps=PsSpec(ip="10.0.0.100", mac="00:00:0a:00:00:64", switch_port=PS_PORT)))
    return jobs


@dataclass
class JobRun:
    """One job's outcome: each rank's result and window statistics, and the PS's statistics."""

    results: list[np.ndarray]
    windows: list[AtpWindow]
    ps: PsCore


@dataclass
class AtpPsHost:
    """The parameter server of every job (worker.atp.ps.PsCore per job) on one port."""

    cores: Mapping[int, PsCore]
    jobs: Mapping[int, JobConfig]
    codec: AtpCodec
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
        return [frame(ps.mac, mac, ps.ip, ip, ATP_UDP_PORT, ATP_UDP_PORT, self.codec.encode(h, v))
                for h, v in core.on_packet(hdr, values) for mac, ip in dsts]

    def on_timer(self, now: float) -> list[bytes]:
        return []

    def next_deadline(self) -> float | None:
        return None


class AtpNetwork(InProcessNetwork):
    """One atp.p4 switch, the jobs' workers and their PS, all in this process."""

    def __init__(self, program: Mapping[str, Any], jobs: Sequence[JobConfig], *, p4info: Any = None,
                 loss: float = 0.0, seed: int = 0, faults: FaultPlan | None = None,
                 options: WindowOptions = DEFAULT_OPTIONS, atp: AtpOptions | None = None,
                 switch_aggregation: bool = True, latency: float = 50e-6, jitter: float = 0.0,
                 engine: Any = None, timelines: Mapping[tuple[int, int], Timeline] | None = None) -> None:
        plan = faults or FaultPlan(seed=seed)
        if loss:
            plan.rules.append(loss_rule(loss))
        super().__init__(program, plan, seed, latency, jitter, engine=engine, p4info=p4info)
        self.jobs = list(jobs)
        self.loss = loss
        self.options = options
        self.atp = atp or AtpOptions()
        self.switch_aggregation = switch_aggregation
        self.timelines = timelines
        """(job id, rank)'s window records into timelines[job id, rank] (simulated time)."""
        self.codec = AtpCodec.from_program_json(program)
        self.cores = {j.job_id: PsCore(j, self.codec.num_elems) for j in self.jobs}
        self.maps = {(j.job_id, w.rank): aggregator_map(j, self.options.width(j.pool.size, ATP_WINDOW))
                     for j in self.jobs for w in j.workers}
        self.next_seq = {j.job_id: 1 for j in self.jobs}
        ps = self.jobs[0].ps
        assert ps is not None
        self.ps_host = AtpPsHost(self.cores, {j.job_id: j for j in self.jobs}, self.codec, ps.switch_port,
                                 via_switch=switch_aggregation)
        self._install()

    def _install(self) -> None:
        """Program the switch as `experiments.run` does: the PS reachable by MAC, each job's role (or, without
        switch aggregation, every worker reachable by MAC: the PS addresses each worker itself)."""
        ctl = self.controller = AtpController(self.client, self.registers)
        ps = self.jobs[0].ps
        assert ps is not None
        hosts = [(ps.mac, ps.switch_port)]
        if not self.switch_aggregation:
            hosts += [(w.mac, w.switch_port) for job in self.jobs for w in job.workers]
        ctl.install_forwarding(hosts, sorted({p for _, p in hosts} | {w.switch_port for j in self.jobs
                                                                     for w in j.workers}))
        if self.switch_aggregation:
            for job in self.jobs:
                ctl.create_job(job)

    def allreduce(self, inputs: Mapping[int, Sequence[np.ndarray]], dtype: str = "float32",
                  time_limit: float | None = None, start_at: Mapping[tuple[int, int], float] | None = None
                  ) -> dict[int, JobRun]:
        """Run one all-reduce per job concurrently; inputs[job_id][rank] is that rank's array; `start_at[(job,
        rank)]`: when that worker joins (stragglers)."""
        if time_limit is not None:
            self.time_limit = time_limit
        jobs = {j.job_id: j for j in self.jobs}
        wins: dict[tuple[int, int], AtpWindow] = {}
        plans: dict[tuple[int, int], FixedPointPlan] = {}
        self.hosts = {}
        self.attach(self.ps_host)
        for jid, arrays in inputs.items():
            job = jobs[jid]
            for r, arr in enumerate(arrays):
                plans[jid, r] = FixedPointPlan(arr, job.num_elems, dtype, self.atp.scale_bits)
                # each worker has its own aggregator map (they stay equal by construction)
                wins[jid, r] = AtpWindow(plans[jid, r], job, r, self.next_seq[jid], self.maps[jid, r], self.options,
                                         self.atp.initial_cwnd, timeline=(self.timelines or {}).get((jid, r)))
                delay = (start_at or {}).get((jid, r), 0.0)
                assert job.ps is not None
                self.attach(WorkerHost(job, r, wins[jid, r], (job.ps.mac, job.ps.ip, ATP_UDP_PORT),
                                       lambda o: self.codec.encode(*o), self.codec.decode, self.now + delay))
            self.next_seq[jid] += plans[jid, 0].num_packets
        self.run(lambda: all(w.done for w in wins.values()))
        return {jid: JobRun([plans[jid, r].output() for r in range(len(arrays))],
                            [wins[jid, r] for r in range(len(arrays))], self.cores[jid])
                for jid, arrays in inputs.items()}
