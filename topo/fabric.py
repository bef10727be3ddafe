"""Fabric: the shape of an experiment's network, behind one interface for the star and the two-tier topology.

A fabric knows its Mininet topology, where every host plugs in (switch, port), the L2 entries of every switch, which
switch ports carry a host's traffic (they get the simulated loss), which links are metered, and how an in-network
job is installed on its switches (one switch, or a first and a second aggregation level).

Hosts are numbered as in Mininet: h1..hW are the workers of every job (job j's rank r on h(j·workers + r + 1)), and
h(W+1) is the parameter server when the program needs one (h(W+1)..h(W+P) with `ps_hosts` P > 1: job j's on
h(W+1 + j mod P), each PS behind a link of its own, as ATP runs a PS per job). Host hI is 10.0.0.I with MAC
00:00:0a:00:00:II.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from mininet.topo import Topo

from topo.addresses import SWITCH, WORKER_UDP_PORT, host_ip, host_mac
from worker.job import MAX_WORKERS, JobConfig, PoolRange, PsSpec, WorkerSpec


@dataclass(frozen=True)
class Attachment:
    """Where a host plugs in: a switch (Mininet name) and its port."""

    switch: str
    port: int


class Fabric(ABC):
    """A network of P4 switches and hosts for `workers` worker hosts (plus a PS host if `ps`)."""

    name: ClassVar[str]

    def __init__(self, workers: int, *, ps: bool = False, bw: float | None = None, ps_hosts: int = 1) -> None:
        if workers < 1:
            raise ValueError(f"a network needs at least one worker host, got {workers}")
        if bw is not None and not bw > 0:
            raise ValueError(f"link rate must be > 0 Mbit/s, got {bw}")
        if ps_hosts < 1:
            raise ValueError(f"ps_hosts must be at least 1, got {ps_hosts}")
        self.workers = workers
        self.ps = ps
        self.bw = bw
        self.ps_count = ps_hosts if ps else 0

    @property
    def hosts(self) -> int:
        """Hosts in the network (workers, then the PS hosts)."""
        return self.workers + self.ps_count

    @property
    def ps_host(self) -> int | None:
        """The (first) PS's host number, if there is one."""
        return self.workers + 1 if self.ps else None

    @property
    def ps_host_list(self) -> list[int]:
        """Every PS host's number."""
        return list(range(self.workers + 1, self.workers + 1 + self.ps_count))

    def ps_host_of(self, job_index: int) -> int | None:
        """The PS host of the job_index-th job (0-based)."""
        return self.workers + 1 + job_index % self.ps_count if self.ps else None

    @abstractmethod
    def topo(self) -> Topo:
        """The Mininet topology."""

    @property
    @abstractmethod
    def switches(self) -> list[str]:
        """Switch names; the last is the primary one (the star's switch, the PS's switch)."""

    @abstractmethod
    def attachment(self, host: int) -> Attachment:
        """Where host h<host> plugs in."""

    @abstractmethod
    def forwarding(self, switch: str) -> tuple[list[tuple[str, int]], list[int]]:
        """The switch's L2 entries (host MAC, port) for every host, and its flood ports."""

    def rack(self, host: int) -> int:
        """ATP: the rack (first-level switch) the worker on h<host> reports in its job file; 0 with one level."""
        return 0

    def inter_links(self) -> list[tuple[str, int, str, int]]:
        """Every link between two switches: (lower switch, its port, upper switch, its port)."""
        return []

    def hops(self, a: int, b: int) -> int:
        """Links between switches on the path from host h<a> to host h<b>."""
        return 0

    def host_ports(self) -> dict[str, list[int]]:
        """Per switch, the ports a host's traffic enters and leaves by (the simulated loss applies there)."""
        out: dict[str, list[int]] = {s: [] for s in self.switches}
        for h in range(1, self.hosts + 1):
            a = self.attachment(h)
            out[a.switch].append(a.port)
        return out

    def metered_links(self) -> dict[str, list[str]]:
        """Named groups of switch interfaces whose traffic a run reports (both directions)."""
        if self.ps_host is None:
            return {}
        return {"ps": [f"{a.switch}-eth{a.port}" for a in map(self.attachment, self.ps_host_list)]}

    def job_config(self, job_id: int, hosts: list[int], *, num_elems: int, pool: PoolRange,
                   ps_host: int | None = None, max_workers: int = MAX_WORKERS) -> JobConfig:
        """The job file of the workers on `hosts` (rank r on hosts[r]); its PS on `ps_host` (default: the first);
        validated against `max_workers` (JobConfig.max_workers)."""
        workers = [WorkerSpec(rank=r, ip=host_ip(h), mac=host_mac(h), udp_port=WORKER_UDP_PORT,
                              switch_port=self.attachment(h).port, rack=self.rack(h)) for r, h in enumerate(hosts)]
        ps = None
        where = ps_host or self.ps_host
        if where is not None:
            ps = PsSpec(ip=host_ip(where), mac=host_mac(where), switch_port=self.attachment(where).port)
        return JobConfig(job_id=job_id, num_elems=num_elems, switch=SWITCH,
                         pool=pool, workers=workers, ps=ps, max_workers=max_workers)

    @abstractmethod
    def install_job(self, controllers: Mapping[str, Any], job: JobConfig) -> None:
        """Install a job of the switches' program (its job file as the workers read it) where it is aggregated."""

    def check(self, protocol: str, program: str, in_network: bool) -> None:
        """ValueError if the collective `protocol` (of `program`) cannot run on this network."""

    def describe(self) -> str:
        """One line for the run's header."""
        return self.name
