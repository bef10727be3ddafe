"""An in-process network: the embedded switch engine, hosts' sans-IO protocol cores, fake time, seeded loss.

No sockets, no Mininet, no real time: frames are delivered in FIFO order through `switch.v1model.V1Switch.process`,
each host link may drop frames with a seeded probability, and when nothing is in flight the clock jumps to the next
timer. Used by the ATP tests (several jobs sharing one switch, loss, overflow) and meant for soaks.

    net = AtpNetwork(atp_json, jobs, loss=0.01, seed=7)
    results = net.allreduce({job_id: [input of each rank]}, dtype="float32")
"""

from __future__ import annotations

import ipaddress
import random
import struct
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from worker.atp import AtpOptions, AtpWindow, FixedPointPlan, aggregator_map
from worker.atp_header import ATP_UDP_PORT, AtpCodec
from worker.atp_ps import PsCore
from worker.job import JobConfig, PoolRange, PsSpec, SwitchAddress, WorkerSpec
from worker.window import WindowOptions

__all__ = ["AtpNetwork", "JobRun", "atp_jobs"]

SWITCH = SwitchAddress(ip="10.0.0.254", mac="00:00:0a:00:00:fe")
PS_PORT = 100


def _mac(text: str) -> bytes:
    return bytes.fromhex(text.replace(":", ""))


def _ip(text: str) -> bytes:
    return ipaddress.IPv4Address(text).packed


def frame(src_mac: str, dst_mac: str, src_ip: str, dst_ip: str, sport: int, dport: int, payload: bytes) -> bytes:
    """Ethernet / IPv4 / UDP around payload (checksums 0: the engine's atp.p4 verifies none)."""
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28 + len(payload), 0, 0x4000, 64, 17, 0, _ip(src_ip), _ip(dst_ip))
    return _mac(dst_mac) + _mac(src_mac) + b"\x08\x00" + ip + struct.pack("!HHHH", sport, dport, 8 + len(payload),
                                                                           0) + payload


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
class AtpNetwork:
    """One atp.p4 switch, the jobs' workers and their PS, all in this process."""

    program: Mapping[str, Any]
    jobs: Sequence[JobConfig]
    loss: float = 0.0
    """Drop probability of every frame on every host link, each direction."""
    seed: int = 0
    options: WindowOptions = field(default_factory=lambda: WindowOptions(window=16, timeout=0.05, max_timeout=0.2,
                                                                          min_timeout=0.01, max_retries=30))
    atp: AtpOptions = field(default_factory=AtpOptions)
    switch_aggregation: bool = True
    """False: no atp_jobs entries, every packet passes the switch unchanged (the PS alone: the PS baseline)."""

    def __post_init__(self) -> None:
        from switch.v1model import V1Switch

        self.codec = AtpCodec.from_program_json(self.program)
        self.sw = V1Switch(seed=self.seed)
        self.sw.load(dict(self.program))
        self.rng = random.Random(self.seed)
        self.now = 0.0
        self.dropped = 0
        self.frames = 0
        self.cores = {j.job_id: PsCore(j, self.codec.num_elems) for j in self.jobs}
        self.maps = {(j.job_id, w.rank): aggregator_map(j, min(self.options.window, j.pool.size))
                     for j in self.jobs for w in j.workers}
        self.next_seq = {j.job_id: 1 for j in self.jobs}
        self._install()

    def _install(self) -> None:
        t, pre = self.sw.tables, self.sw.pre
        ig, eg = "AtpIngress.", "AtpEgress."
        ps = self.jobs[0].ps
        assert ps is not None
        t[ig + "l2_forward"].insert((int.from_bytes(_mac(ps.mac), "big"),), ig + "l2_set_port", [ps.switch_port])
        for job in self.jobs:
            mgid = job.job_id + 1
            pre.set_group(mgid, [(w.switch_port, w.rank) for w in job.workers])
            if self.switch_aggregation:
                t[ig + "atp_jobs"].insert((job.job_id,), ig + "atp_set_job", [0, mgid, 0])
                t[ig + "atp_ack_ports"].insert((job.job_id, ps.switch_port), ig + "atp_allow_ack", [])
            for w in job.workers:
                t[ig + "atp_workers"].insert((w.switch_port, int.from_bytes(_ip(w.ip), "big"), w.udp_port, job.job_id),
                                             ig + "atp_set_worker", [w.rank])
                t[eg + "atp_destinations"].insert(
                    (job.job_id, w.rank), eg + "atp_set_destination",
                    [int.from_bytes(_mac(SWITCH.mac), "big"), int.from_bytes(_ip(SWITCH.ip), "big"),
                     int.from_bytes(_mac(w.mac), "big"), int.from_bytes(_ip(w.ip), "big"), w.udp_port])
        if not self.switch_aggregation:
            # without a job entry an ACK is switched by MAC: the PS addresses each worker itself
            for job in self.jobs:
                for w in job.workers:
                    t[ig + "l2_forward"].insert((int.from_bytes(_mac(w.mac), "big"),), ig + "l2_set_port",
                                                [w.switch_port])

    def _lost(self) -> bool:
        return self.loss > 0 and self.rng.random() < self.loss

    def allreduce(self, inputs: Mapping[int, Sequence[np.ndarray]], dtype: str = "float32",
                  time_limit: float = 600.0) -> dict[int, JobRun]:
        """Run one all-reduce per job concurrently; inputs[job_id][rank] is that rank's array."""
        jobs = {j.job_id: j for j in self.jobs}
        wins: dict[tuple[int, int], AtpWindow] = {}
        plans: dict[tuple[int, int], FixedPointPlan] = {}
        for jid, arrays in inputs.items():
            job = jobs[jid]
            for r, arr in enumerate(arrays):
                plans[jid, r] = FixedPointPlan(arr, job.num_elems, dtype, self.atp.scale_bits)
                # each worker has its own aggregator map (they stay equal by construction)
                wins[jid, r] = AtpWindow(plans[jid, r], job, r, self.next_seq[jid], self.maps[jid, r], self.options,
                                         self.atp.initial_cwnd)
            self.next_seq[jid] += plans[jid, 0].num_packets
        queue: deque[tuple[int, bytes]] = deque()  # (ingress port, frame)

        def send_from_worker(jid: int, r: int, out: list) -> None:
            job = jobs[jid]
            me, ps = job.worker(r), job.ps
            assert ps is not None
            for h, v in out:
                self.frames += 1
                if self._lost():
                    self.dropped += 1
                    continue
                queue.append((me.switch_port, frame(me.mac, ps.mac, me.ip, ps.ip, me.udp_port, ATP_UDP_PORT,
                                                    self.codec.encode(h, v))))

        def send_from_ps(jid: int, out: list) -> None:
            job = jobs[jid]
            ps = job.ps
            assert ps is not None
            for h, v in out:
                payload = self.codec.encode(h, v)
                dsts = ([(job.switch.mac, job.switch.ip)] if self.switch_aggregation
                        else [(w.mac, w.ip) for w in job.workers])
                for mac, ip in dsts:
                    self.frames += 1
                    if self._lost():
                        self.dropped += 1
                        continue
                    queue.append((ps.switch_port, frame(ps.mac, mac, ps.ip, ip, ATP_UDP_PORT, ATP_UDP_PORT, payload)))

        port_owner: dict[int, tuple[int, int]] = {}
        for jid in inputs:
            for w in jobs[jid].workers:
                port_owner[w.switch_port] = (jid, w.rank)
        for (jid, r), w in wins.items():
            send_from_worker(jid, r, w.start(self.now))
        while not all(w.done for w in wins.values()):
            while queue:
                port, data = queue.popleft()
                for eport, out in self.sw.process(port, data):
                    if self._lost():
                        self.dropped += 1
                        continue
                    payload = out[42:]
                    hdr, values = self.codec.decode(payload)
                    if eport == PS_PORT:
                        send_from_ps(hdr.job_id, self.cores[hdr.job_id].on_packet(hdr, values))
                    elif eport in port_owner:
                        jid, r = port_owner[eport]
                        w = wins.get((jid, r))
                        if w is not None and not w.done:
                            send_from_worker(jid, r, w.on_ack(hdr, values, self.now))
            deadlines = [d for w in wins.values() if not w.done and (d := w.next_deadline()) is not None]
            if not deadlines:
                break
            self.now = max(self.now, min(deadlines))
            if self.now > time_limit:
                raise TimeoutError(f"in-process ATP run exceeded {time_limit} s of simulated time")
            for (jid, r), w in wins.items():
                if not w.done:
                    send_from_worker(jid, r, w.on_timer(self.now))
        return {jid: JobRun([plans[jid, r].output() for r in range(len(arrays))],
                            [wins[jid, r] for r in range(len(arrays))], self.cores[jid])
                for jid, arrays in inputs.items()}
