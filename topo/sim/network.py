"""The packet-level virtual-time network: the in-process network's switch, hosts and jobs over modelled links.

`SimNetwork` is `topo.inprocess.InProcessNetwork` with its event loop replaced: the same embedded switch engine
runs the P4 program (bit-exact), the same protocol ranks (found through the registry) run on the hosts, the same
controller programs the switch and the same fault plan acts at the switch's ports — but frames cross `Port`s
(`topo.sim.links`: rate, propagation delay, drop-tail queues, ECN) instead of a fixed latency, the switch takes a
service time per packet, and a host a processing cost per frame. Time is SimPy's (`simpy.Environment`): every
arrival, timer and deferred processing step is one of its events, and frames due at the same instant are one event
(a multicast result reaching idle, equal links is one event, not one per worker).

    net = SimNetwork(program_json, jobs, p4info=p4info, link=LinkSpec(100e9, 1e-6), seed=7)
    runs = net.allreduce({job_id: [input of each rank]}, dtype="int32")
    net.report()        # SimReport: simulated time, events, each port's traffic, queue, drops, marks

The model, in words (docs/simulator.md says more):
- each host has one link to its switch port; each direction is a `Port` (its output queue at the sending end);
  switches of a larger network (`topo.sim.fabric`) are linked the same way;
- a switch processes frames one at a time, `service_s` each (0: at line rate, as a switching ASIC; the embedded
  switch's measured per-packet cost reproduces the emulator), then hands each output to its egress port's queue;
- a host handles one event at a time, `host_cost_s` per frame received or sent (0: free), its sends leaving when
  the work is done; with `host_cpus` the hosts share that many CPUs (host k on CPU k mod host_cpus, as the emulator
  pins all its hosts to one), so one host's work waits for another's; frames that reach a host before its worker
  started are discarded, as a closed socket would;
- `compute_s` delays every worker's start of an all-reduce (the step's computation); `allreduce(start_at=…)`
  delays single workers (stragglers).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import simpy

from switch.faults import FaultPlan
from topo.inprocess import Endpoint, InProcessNetwork
from topo.sim.links import LinkSpec, Port
from worker.job import WorkerSpec

__all__ = ["SimNetwork", "SimReport", "PortReport"]


@dataclass(frozen=True)
class PortReport:
    """What crossed one direction of a link during a run."""

    name: str
    port: int
    """The switch port the link is on (a link between switches: the lower switch's, towards the upper one)."""
    up: bool
    """The direction host -> switch (the host's NIC queue), or lower -> upper switch; else the way down (the
    sending switch's egress queue)."""
    frames: int
    bytes: int
    busy: float
    """Fraction of the run's simulated time the wire was transmitting."""
    max_queue: int
    drops: int
    marks: int
    congested: int
    switch: str = "s"
    """The switch `port` is on."""
    host: int | None = None
    """The host at the link's other end (its key in the network's `hosts`); None for a link between switches."""


@dataclass
class SimReport:
    """One run of the simulator: its simulated and wall time, its events, and every port's traffic."""

    sim_s: float = 0.0
    wall_s: float = 0.0
    events: int = 0
    """SimPy events (frames due at one instant are one event)."""
    deliveries: int = 0
    """Frames handed to a node (the switch or a host) and timers fired: the work the events carried."""
    ports: list[PortReport] = field(default_factory=list)
    switch_busy: float = 0.0
    """Fraction of the run the (busiest) switch spent on its per-packet service time."""
    host_busy: float = 0.0
    """The busiest host's fraction of the run spent on its per-frame cost."""

    @property
    def events_per_s(self) -> float:
        return self.events / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def busiest(self) -> PortReport | None:
        return max(self.ports, key=lambda p: p.busy, default=None)

    @property
    def drops(self) -> int:
        return sum(p.drops for p in self.ports)

    def describe(self) -> str:
        b = self.busiest
        where = f"busiest port {b.name} {100 * b.busy:.0f} % (max queue {b.max_queue} B)" if b else "no traffic"
        return (f"simulated {self.sim_s * 1e3:.3f} ms in {self.wall_s:.2f} s wall, {self.events} events "
                f"({self.events_per_s / 1e3:.1f} k/s) carrying {self.deliveries} deliveries "
                f"({self.deliveries / self.wall_s / 1e3 if self.wall_s else 0:.1f} k/s); {where}; {self.drops} queue drops")


class SimSwitch:
    """A switch's place in the simulated network: its engine and fault plan, its serial service queue, and where
    each of its ports leads."""

    __slots__ = ("name", "sw", "faults", "faulty", "reset", "free", "busy_s", "release_at", "out", "peer")

    def __init__(self, name: str, sw: Any, faults: FaultPlan, reset: Callable[[str, int, int | None], None]) -> None:
        self.name = name
        self.sw = sw
        self.faults = faults
        self.faulty = bool(faults.rules or faults.events)
        self.reset = reset
        """Zeroes a register range (a fault plan's events)."""
        self.free = 0.0
        """When the switch finishes the frames it has taken."""
        self.busy_s = 0.0
        self.release_at = float("inf")
        """The RELEASE event already scheduled for the plan's held frames."""
        self.out: dict[int, Port] = {}
        """Egress port -> the Port of its link (a port without one: frames leave the network)."""
        self.peer: dict[int, tuple[SimSwitch | None, int]] = {}
        """Egress port -> (the next switch, its ingress port), or (None, the host's key)."""


class _HostState:
    """A host's place in the simulated network: its NIC port and switch, its CPU's next free instant, its armed
    timer."""

    __slots__ = ("host", "key", "up", "switch", "switch_port", "cpu", "timer_at")

    def __init__(self, host: Endpoint, key: int, up: Port | None, switch: SimSwitch, switch_port: int,
                 cpu: _Cpu) -> None:
        self.host = host
        self.key = key
        self.up = up
        self.switch = switch
        self.switch_port = switch_port
        self.cpu = cpu
        self.timer_at: float | None = None


class _Cpu:
    """A CPU the hosts' work runs on: when it is next free, and how long it has been busy."""

    __slots__ = ("free", "busy")

    def __init__(self, free: float) -> None:
        self.free = free
        self.busy = 0.0


class SimNetwork(InProcessNetwork):
    """An in-network protocol's jobs on one switch over modelled links (see the module).

    `link`: every host link's parameters; `links`: per switch port, those of some links (a PS's faster link);
    `service_s`, `host_cost_s`, `compute_s`: the switch's per-packet, a host's per-frame and each worker's
    per-step times; `host_cpus`: CPUs the hosts share (None: one each). Other arguments as InProcessNetwork (its
    `latency` and `jitter` are unused)."""

    def __init__(self, program: Mapping[str, Any], jobs: Any, *, link: LinkSpec, links: Mapping[int, LinkSpec] = {},
                 service_s: float = 0.0, host_cost_s: float = 0.0, compute_s: float = 0.0,
                 host_cpus: int | None = None, **kwargs: Any) -> None:
        super().__init__(program, jobs, **kwargs)
        if service_s < 0 or host_cost_s < 0 or compute_s < 0:
            raise ValueError("service_s, host_cost_s and compute_s must be >= 0")
        if host_cpus is not None and host_cpus < 1:
            raise ValueError(f"host_cpus must be >= 1, got {host_cpus}")
        self.host_cpus = host_cpus
        self.link = link
        self.links = dict(links)
        self.service_s = service_s
        self.host_cost_s = host_cost_s
        self.compute_s = compute_s
        self.up: dict[int, Port] = {}
        """Per switch port, the direction host -> switch (the host's NIC queue)."""
        self.down: dict[int, Port] = {}
        """Per switch port, the direction switch -> host (the switch's egress queue)."""
        self.switch_free = 0.0
        self.switch_busy_s = 0.0
        self.last: SimReport | None = None
        """The last run's report."""

    def ports(self, port: int) -> tuple[Port, Port]:
        """(up, down) Ports of the link on switch port `port` (made on first use)."""
        if port not in self.up:
            spec = self.links.get(port, self.link)
            self.up[port] = Port(f"h{port}->s", spec)
            self.down[port] = Port(f"s->h{port}", spec)
        return self.up[port], self.down[port]

    # --- the topology: a star here; a larger network overrides these four -----------------------------------

    def _switches(self) -> list[SimSwitch]:
        """Every switch, wired (called once per run, after `_plug` made the hosts' links)."""
        star = SimSwitch("s", self.sw, self.faults, self._reset_register)
        star.out = self.down
        star.peer = {port: (None, port) for port in self.down}
        star.free, star.busy_s = self.switch_free, self.switch_busy_s
        return [star]

    def _plug(self, key: int, sends: bool) -> tuple[int, int, Port | None]:
        """Where host `key` plugs in: its switch (an index into `_switches()`), the switch's port, and its NIC's Port
        when it `sends` (made on first use). The star's hosts are keyed by their switch port."""
        return 0, key, self.ports(key)[0] if sends else None

    def _port_table(self) -> list[tuple[Port, str, int, bool, int | None]]:
        """Every Port with (switch, switch port, up, host key) for the report."""
        return [(p, "s", port, up, port) for up, table in ((True, self.up), (False, self.down))
                for port, p in table.items()]

    def _ran(self, switches: list[SimSwitch]) -> None:
        """Keep what the run's switches accumulated (service queue and time) for the next run."""
        self.switch_free, self.switch_busy_s = switches[0].free, switches[0].busy_s

    def host_key(self, worker: WorkerSpec) -> int:
        """The key of `worker`'s host in `hosts` (the star's: its switch port)."""
        return worker.switch_port

    def host_link(self, key: int) -> tuple[LinkSpec, Port]:
        """Host `key`'s link parameters and its NIC's Port (made on first use)."""
        return self.links.get(key, self.link), self.ports(key)[0]

    def path(self, a: int, b: int) -> list[LinkSpec]:
        """The links a frame from host `a` to host `b` crosses, in order (on the star: both hosts' links)."""
        return [self.links.get(a, self.link), self.links.get(b, self.link)]

    def allreduce(self, inputs: Any, dtype: str = "float32", start_at: Mapping[tuple[int, int], float] | None = None,
                  time_limit: float | None = None) -> Any:
        """InProcessNetwork.allreduce, every worker starting `compute_s` later (its step's computation)."""
        if self.compute_s:
            start_at = {(jid, r): self.compute_s + (start_at or {}).get((jid, r), 0.0)
                        for jid, arrays in inputs.items() for r in range(len(arrays))}
        return super().allreduce(inputs, dtype, start_at, time_limit)

    def run(self, until: Callable[[], bool]) -> None:
        """Run the hosts' cores until every worker is done (then `until()` must hold); TimeoutError past
        `time_limit` of simulated time."""
        env = simpy.Environment(initial_time=self.now)
        started_at, wall0 = self.now, time.perf_counter()
        linked = self._linked_ports()
        states: dict[int, _HostState] = {}
        plugs = {key: self._plug(key, key in linked) for key in self.hosts}
        switches = self._switches()
        table = self._port_table()
        before = {id(p): _totals(p) for p, *_ in table}
        for p, *_ in table:
            p.max_queue = 0
        busy0 = [s.busy_s for s in switches]
        for s in switches:  # the programs' timestamps are simulated time, from the network's start
            s.sw.set_clock(lambda: round(env.now * 1e9), start_ns=0)
        service, cost, limit = self.service_s, self.host_cost_s, self.time_limit
        shared = [_Cpu(self.now) for _ in range(self.host_cpus or 0)]
        for k, (key, h) in enumerate(self.hosts.items()):
            index, port, up = plugs[key]
            cpu = shared[k % len(shared)] if shared else _Cpu(self.now)
            states[key] = _HostState(h, key, up, switches[index], port, cpu)
        waiting = {key for key, h in self.hosts.items() if not h.done}
        finished = env.event()
        batches: dict[float, list[tuple[int, int, Any, Any]]] = {}  # time -> (kind, port or host, item, switch)
        events = [0, 0]  # SimPy events, deliveries

        def at(t: float, kind: int, port: int, item: Any, node: SimSwitch | None) -> None:
            batch = batches.get(t)
            if batch is None:
                batch = batches[t] = []
                ev = env.timeout(t - env.now, t)
                ev.callbacks.append(fire)
            batch.append((kind, port, item, node))

        def fire(ev: simpy.Event) -> None:
            now = ev.value  # the instant scheduled: env.now (now + (t - now)) may differ from it in the last bit
            if now > limit:
                raise TimeoutError(f"simulated run exceeded {limit} s of simulated time")
            events[0] += 1
            batch = batches.pop(ev.value)
            events[1] += len(batch)
            for kind, port, item, node in batch:
                if kind == TO_SWITCH:
                    into_switch(node, port, item, now)
                elif kind == TO_HOST:
                    to_host(port, item, now)
                elif kind == PROCESS:
                    process(node, port, item, now)
                elif kind == TIMER:
                    timer(port, now)
                elif kind == START:
                    host_work(states[port], now, START, None)
                elif kind == RELEASE:
                    release(node, now)
                else:  # DEFERRED: a host's work (kind, frame) that waited for its CPU
                    host_work(states[port], now, *item)

        def into_switch(s: SimSwitch, port: int, frame: bytes, now: float) -> None:
            if s.faulty:
                passed = s.faults.ingress([(port, frame)], now, s.reset)
                check_release(s)
                for port, frame in passed:  # none (dropped), one, or more (a duplicate, released delayed frames)
                    serve(s, port, frame, now)
            else:
                serve(s, port, frame, now)

        def serve(s: SimSwitch, port: int, frame: bytes, now: float) -> None:
            """The switch takes a frame: at once (line rate) or after the frames before it, `service` each."""
            if service:
                end = (now if s.free <= now else s.free) + service
                s.free = end
                s.busy_s += service
                at(end, PROCESS, port, frame, s)
            else:
                process(s, port, frame, now)

        def process(s: SimSwitch, port: int, frame: bytes, now: float) -> None:
            if self.trace is not None:
                self.trace.append((now, "in", port, frame))
            egress(s, s.sw.process(port, frame), now)

        def egress(s: SimSwitch, out: list[tuple[int, bytes]], now: float, faulted: bool = False) -> None:
            if s.faulty and not faulted:
                out = s.faults.egress(out, now)
                check_release(s)
            ports, peers = s.out, s.peer
            for port, f in out:
                if self.trace is not None:
                    self.trace.append((now, "out", port, f))
                self.frames += 1
                p = ports.get(port)
                if p is None:
                    continue  # a port with no link: the frame leaves the network
                sent = p.send(f, now)
                if sent is not None:
                    nxt, to = peers[port]
                    at(sent[0], TO_HOST if nxt is None else TO_SWITCH, to, sent[1], nxt)

        def check_release(s: SimSwitch) -> None:
            t = s.faults.next_release()
            if t is not None and t < s.release_at:
                s.release_at = t
                at(t, RELEASE, 0, None, s)

        def release(s: SimSwitch, now: float) -> None:
            s.release_at = float("inf")
            arriving, leaving = s.faults.release_expired(now)
            for port, f in arriving:
                serve(s, port, f, now)
            egress(s, leaving, now, faulted=True)
            check_release(s)

        def to_host(key: int, frame: bytes, now: float) -> None:
            st = states.get(key)
            if st is None or st.host.start_at > now:
                return
            host_work(st, now, TO_HOST, frame)

        def timer(key: int, now: float) -> None:
            st = states[key]
            if st.timer_at != now:
                return  # replaced by an earlier timer
            st.timer_at = None
            d = None if st.host.done else st.host.next_deadline()
            if d is None:
                return
            if d > now:
                arm(st, d)
            else:
                host_work(st, now, TIMER, None)

        def arm(st: _HostState, d: float) -> None:
            if st.timer_at is None or d < st.timer_at:
                st.timer_at = d
                at(d, TIMER, st.key, None, None)

        def host_work(st: _HostState, now: float, kind: int, frame: bytes | None) -> None:
            """The host starts (START), takes a frame (TO_HOST) or its timer fires (TIMER); what it sends leaves
            when its CPU has done the work."""
            h = st.host
            cpu = st.cpu
            if cost and cpu.free > now:
                at(cpu.free, DEFERRED, st.key, (kind, frame), None)
                return
            out = h.on_frame(frame, now) if kind == TO_HOST else h.on_timer(now) if kind == TIMER else h.start(now)
            send_at = now
            if cost:
                spent = cost * (1 + len(out))
                cpu.free = send_at = now + spent
                cpu.busy += spent
            if out:
                up = st.up
                if up is None:
                    raise RuntimeError(f"host {st.key} sent frames but has no link")
                node, port = st.switch, st.switch_port
                for f in out:
                    self.frames += 1
                    sent = up.send(f, send_at)
                    if sent is not None:
                        at(sent[0], TO_SWITCH, port, sent[1], node)
            if h.done:
                if st.key in waiting:
                    waiting.discard(st.key)
                    if not waiting and not finished.triggered:
                        finished.succeed()
                return
            d = h.next_deadline()
            if d is not None:
                arm(st, max(d, now))  # a deadline that passed while the host's CPU was busy: at once

        for st in states.values():
            at(max(st.host.start_at, env.now), START, st.key, None, None)
        if not waiting:
            finished.succeed()
        try:
            env.run(until=finished)
        except RuntimeError as exc:
            if "until" not in str(exc):
                raise
            raise RuntimeError("simulated network: nothing in flight and no timer armed, and workers are not "
                               "done") from None
        finally:
            self._ran(switches)
        self.now = env.now
        if not until():
            raise RuntimeError("simulated network: every worker host is done but the run's condition does not hold")
        sim = self.now - started_at
        reports = []
        for p, switch, port, up, host in table:
            frames, nbytes, busy, drops, marks, congested = (a - b for a, b in zip(_totals(p), before[id(p)]))
            reports.append(PortReport(p.name, port, up, frames, nbytes, busy / sim if sim else 0.0, p.max_queue,
                                      drops, marks, congested, switch, host))
        switch_busy = max((s.busy_s - b for s, b in zip(switches, busy0)), default=0.0)
        self.last = SimReport(sim, time.perf_counter() - wall0, events[0], events[1], reports,
                              switch_busy / sim if sim else 0.0,
                              max((s.cpu.busy / sim for s in states.values()), default=0.0) if sim else 0.0)

    def _linked_ports(self) -> set[int]:
        """Switch ports with a host that sends: every worker's and each parameter server's."""
        ports = {w.switch_port for j in self.jobs for w in j.workers}
        return ports | set(self.ps_hosts)

    def report(self) -> SimReport:
        """The last run's report (RuntimeError before any run)."""
        if self.last is None:
            raise RuntimeError("no run yet")
        return self.last


def _totals(p: Port) -> tuple[int, int, float, int, int, int]:
    """A port's running totals (frames, bytes, busy seconds, drops, marks, congested), to subtract run by run."""
    return p.frames, p.bytes, p.busy_s, p.drops, p.marks, p.congested


TO_SWITCH, TO_HOST, PROCESS, TIMER, START, RELEASE, DEFERRED = range(7)
