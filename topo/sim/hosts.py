"""The host baselines on the packet simulator: each rank a `TcpHost` on its switch port, running its protocol's
steps (`ProtocolSpec.host_steps`, via `worker.host.stream.StreamRank`: the algorithm the blocking ranks run over
sockets) over one `topo.sim.tcp.TcpConnection` per peer. Their frames cross the switch's P4 program (its L2
forwarding: the network installs no job for a host baseline), its ports' queues and the fault plan like any other.

    net = SimNetwork(program_json, jobs, p4info=p4info, protocol=PROTOCOLS[name], link=LinkSpec(2e6), ...)
    runs = host_allreduce(net, {job_id: [input of each rank]}, dtype="int32")   # as net.allreduce for INA

As in the emulator, where the workers connect before their start barrier, every all-reduce has fresh connections,
established when it starts; a rank's `elapsed` runs from its start (a straggler's late start excluded) to its last
byte received, and the run goes on until every rank's data is acknowledged.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from topo.frames import ip_bytes
from topo.inprocess import JobRun
from topo.sim.network import SimNetwork
from topo.sim.tcp import HEADER_BYTES, Nic, TcpAddress, TcpConnection, TcpOptions
from worker.host.peers import HostStats
from worker.host.stream import StreamRank
from worker.job import JobConfig
from worker.stats import RunResult

__all__ = ["EPHEMERAL_PORT", "TcpHost", "TcpHostStats", "host_allreduce"]

EPHEMERAL_PORT = 40000
"""The connecting (lower) rank's port towards rank h is EPHEMERAL_PORT + h; the accepting rank's is its job entry's
port, as `connect_mesh` listens."""


@dataclass(slots=True)
class TcpHostStats(HostStats):
    """A simulated rank's counters: `packets_sent` counts TCP segments (ACKs and resends included, as the emulator's
    retransmitted share counts them), `retransmissions` resent data segments."""

    tcp_timeouts: int = 0


class TcpHost:
    """One rank of a host baseline on its switch port: a `topo.inprocess.Endpoint` (see the module)."""

    def __init__(self, job: JobConfig, core: StreamRank, *, start_at: float, app_at: float,
                 options: TcpOptions = TcpOptions(), nic: Nic | None = None, srtt: Mapping[int, float] | None = None,
                 shape: tuple[int, ...] | None = None) -> None:
        me = job.worker(core.rank)
        self.me = me
        self.port = me.switch_port
        self.start_at = start_at
        """When the host's TCP stack is up (frames before it are lost)."""
        self.app_at = app_at
        """When the rank starts its all-reduce."""
        self.core = core
        self.shape = shape or core.flat.shape
        self.conns: dict[int, TcpConnection] = {}
        self._peer_of: dict[bytes, int] = {}
        for p in core.peers:
            peer = job.worker(p)
            high = max(core.rank, p)
            mine = TcpAddress(me.mac, me.ip, me.udp_port if core.rank == high else EPHEMERAL_PORT + high)
            theirs = TcpAddress(peer.mac, peer.ip, peer.udp_port if p == high else EPHEMERAL_PORT + high)
            self.conns[p] = TcpConnection(mine, theirs, options, isn=_isn(mine, theirs), peer_isn=_isn(theirs, mine),
                                          now=start_at, nic=nic, srtt=(srtt or {}).get(p))
            self._peer_of[ip_bytes(peer.ip)] = p
        self.started = False
        self.finished_at: float | None = None

    @property
    def done(self) -> bool:
        return self.finished_at is not None and all(c.idle for c in self.conns.values())

    def start(self, now: float) -> list[bytes]:
        return self._begin(now) if self.app_at <= now else []

    def on_frame(self, data: bytes, now: float) -> list[bytes]:
        peer = self._peer_of.get(bytes(data[26:30]))
        if peer is None or data[12:14] != b"\x08\x00" or data[23] != 6:
            return []  # not TCP from a peer
        out, delivered = self.conns[peer].on_frame(data, now)
        if delivered:
            out += self._write(self.core.on_bytes(peer, delivered), now)
        return out

    def on_timer(self, now: float) -> list[bytes]:
        out = self._begin(now) if not self.started and self.app_at <= now else []
        for c in self.conns.values():
            d = c.next_deadline()
            if d is not None and d <= now:
                out += c.on_timer(now)
        return out

    def next_deadline(self) -> float | None:
        times = [d for d in (c.next_deadline() for c in self.conns.values()) if d is not None]
        if not self.started:
            times.append(self.app_at)
        return min(times, default=None)

    def _begin(self, now: float) -> list[bytes]:
        self.started = True
        return self._write(self.core.start(), now)

    def _write(self, sends: Sequence[tuple[int, bytes]], now: float) -> list[bytes]:
        """The rank's sends after a step of its core, and the window updates of what it read."""
        out: list[bytes] = []
        for p, conn in self.conns.items():
            out += conn.set_unread(self.core.unread(p), now)
        for p, data in sends:
            out += self.conns[p].send(data, now)
        if self.core.done and self.finished_at is None:
            self.finished_at = now
        return out

    @property
    def stats(self) -> TcpHostStats:
        tcp = [c.stats for c in self.conns.values()]
        return TcpHostStats(elements=self.core.flat.size,
                            elapsed=(self.finished_at - self.app_at) if self.finished_at is not None else 0.0,
                            packets_sent=sum(s.segments for s in tcp), bytes_sent=sum(s.bytes_written for s in tcp),
                            retransmissions=sum(s.retransmissions for s in tcp),
                            tcp_timeouts=sum(s.timeouts for s in tcp))

    def result(self) -> RunResult:
        return RunResult(array=self.core.flat.reshape(self.shape), stats=self.stats, exponents=None)


def _nic(net: SimNetwork, key: int) -> Nic:
    """The host's view of its uplink."""
    spec, port = net.host_link(key)
    nic = Nic(spec.rate_bps, spec.overhead_bytes, spec.burst_bytes)
    nic.free_at = port.free_at
    return nic


def _idle_rtt(net: SimNetwork, a: int, b: int) -> float:
    """A segment's and its ACK's round trip from host `a` to host `b` and back over an idle network (the handshake's
    sample): each link's serialisation and delay, each switch's service time, both ways."""
    links = net.path(a, b)
    one_way = sum(((HEADER_BYTES + s.overhead_bytes) * 8 / s.rate_bps if s.serialises else 0.0) + s.delay_s
                  for s in links)
    return 2 * one_way + 2 * (len(links) - 1) * net.service_s


def _isn(a: TcpAddress, b: TcpAddress) -> int:
    """A deterministic initial sequence number per direction."""
    return zlib.crc32(f"{a.ip}:{a.port}>{b.ip}:{b.port}".encode())


def host_allreduce(net: SimNetwork, inputs: Mapping[int, Sequence[np.ndarray]], dtype: str = "float32",
                   start_at: Mapping[tuple[int, int], float] | None = None, time_limit: float | None = None,
                   options: TcpOptions = TcpOptions()) -> dict[int, JobRun]:
    """`SimNetwork.allreduce` for a host baseline (the network's protocol) over TCP hosts: inputs[job_id][rank] is
    that rank's array, `start_at[(job, rank)]` when it starts past the network's `compute_s` (a straggler). Returns
    each job's run (`windows`: its TcpHosts). Each host knows its link's rate (its `Nic`: TCP small queues) and its
    connections start with the handshake's RTT sample, the path's idle round trip."""
    steps = net.protocol.host_steps
    if steps is None:
        raise ValueError(f"{net.protocol.name} has no host steps: it is not a host baseline")
    if net.restarts:
        raise ValueError("switch restarts are not modelled for the host baselines (their traffic keeps no switch "
                         "state)")
    if time_limit is not None:
        net.time_limit = time_limit
    jobs = {j.job_id: j for j in net.jobs}
    before = {jid: net.counters(jid) for jid in inputs}
    net.hosts = {}
    hosts: dict[int, list[TcpHost]] = {}
    for jid, arrays in inputs.items():
        job, n = jobs[jid], len(arrays)
        if n != job.num_workers:
            raise ValueError(f"job {jid} has {job.num_workers} workers, got {n} inputs")
        hosts[jid] = []
        for r, arr in enumerate(arrays):
            core = StreamRank.begin(steps(r, n), r, n, arr, dtype)
            late = net.compute_s + (start_at or {}).get((jid, r), 0.0)
            key = net.host_key(job.worker(r))
            h = TcpHost(job, core, start_at=net.now, app_at=net.now + late, options=options, nic=_nic(net, key),
                        srtt={p: _idle_rtt(net, key, net.host_key(job.worker(p))) for p in core.peers},
                        shape=np.shape(arr))
            hosts[jid].append(h)
            net.attach(h)
    net.run(lambda: all(h.done for hs in hosts.values() for h in hs))
    out = {}
    for jid, hs in hosts.items():
        after = net.counters(jid)
        out[jid] = JobRun([h.result() for h in hs], list(hs), {k: v - before[jid].get(k, 0) for k, v in after.items()})
    return out
