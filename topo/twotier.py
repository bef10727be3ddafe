"""Two-tier network: k racks of workers, each behind its own P4 switch (ToR), and a PS rack switch above them.

    rack switches s1..sk: rack r's hosts on ports 1..m_r, the uplink to the PS rack switch on port m_r + 1
    PS rack switch s(k+1): rack r's uplink on port r + 1, the PS host (if any) on port k + 1

The W worker hosts fill the racks in order, as evenly as possible (h1.. in rack 0). Every switch is its own switch
process (one P4Switch node each, embedded or BMv2). L2 forwarding is a tree: a rack switch sends every MAC that is not
in its rack up; the PS rack switch sends a rack's MACs down its port.

ATP runs with `levels` aggregation levels: 2 (the default) makes every rack switch a first-level aggregator of its
rack's workers (ACKs come down its uplink) and the PS rack switch the second level, which merges rack aggregates;
1 leaves the rack switches as plain L2 switches (ATP packets pass them as transit) and lets the PS rack switch
aggregate every worker: the one-level baseline on the same wires. Host-based collectives (ring, ps) need no job on
any switch. SwitchML aggregates in exactly one switch and drops INA packets of jobs it does not know, so it runs on
the star only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from mininet.topo import Topo

from topo.addresses import host_index, host_mac
from topo.fabric import Attachment, Fabric
from worker.job import JobConfig
from worker.protocols import PROTOCOLS

__all__ = ["TwoTierTopo", "TwoTierFabric", "MAX_RACKS", "spread_over_racks"]

MAX_RACKS = 32
"""Racks under one PS rack switch: ATP's rack bitmap (bitmap1) has 32 bits."""


def spread_over_racks(workers: int, racks: int, levels: int) -> list[int]:
    """Each worker host's rack (h1.. in rack 0, as evenly as possible), after checking a network of racks: 1..MAX_RACKS
    racks that the workers fill, ATP on 1 or 2 levels (ValueError naming the value)."""
    if not 1 <= racks <= MAX_RACKS:
        raise ValueError(f"racks must be 1..{MAX_RACKS}, got {racks}")
    if workers < racks:
        raise ValueError(f"{workers} worker hosts cannot fill {racks} racks")
    if levels not in (1, 2):
        raise ValueError(f"levels must be 1 or 2, got {levels}")
    return [(h - 1) * racks // workers for h in range(1, workers + 1)]


class TwoTierTopo(Topo):
    """Rack switches s1..sk with their hosts and uplinks, and the PS rack switch s(k+1) (see the module)."""

    def build(self, fabric: TwoTierFabric) -> None:  # type: ignore[override]
        link_opts = {"bw": fabric.bw} if fabric.bw is not None else {}
        spine = self.addSwitch(fabric.spine)
        for r in range(fabric.racks):
            tor = self.addSwitch(fabric.tor(r))
            for h in fabric.rack_hosts(r):
                node = self.addHost(f"h{h}", ip=f"10.0.0.{h}/24", mac=host_mac(h))
                self.addLink(node, tor, port2=fabric.attachment(h).port, **link_opts)
            self.addLink(tor, spine, port1=fabric.uplink_port(r), port2=r + 1, **link_opts)
        if fabric.ps_host is not None:
            ps = self.addHost(f"h{fabric.ps_host}", ip=f"10.0.0.{fabric.ps_host}/24", mac=host_mac(fabric.ps_host))
            self.addLink(ps, spine, port2=fabric.racks + 1, **link_opts)


class TwoTierFabric(Fabric):
    """k rack switches under a PS rack switch; ATP aggregates on one or two levels (see the module)."""

    name = "twotier"

    def __init__(self, workers: int, *, racks: int = 2, levels: int = 2, ps: bool = False,
                 bw: float | None = None) -> None:
        super().__init__(workers, ps=ps, bw=bw)
        self._rack_of = spread_over_racks(workers, racks, levels)
        self.racks = racks
        self.levels = levels

    @property
    def spine(self) -> str:
        """The PS rack switch."""
        return f"s{self.racks + 1}"

    def tor(self, rack: int) -> str:
        """The switch of rack `rack`."""
        return f"s{rack + 1}"

    def rack_hosts(self, rack: int) -> list[int]:
        """The worker hosts of a rack, in order."""
        return [h for h in range(1, self.workers + 1) if self._rack_of[h - 1] == rack]

    def uplink_port(self, rack: int) -> int:
        """The rack switch's port towards the PS rack switch."""
        return len(self.rack_hosts(rack)) + 1

    def physical_rack(self, host: int) -> int:
        """The rack a worker host is wired into."""
        return self._rack_of[host - 1]

    def topo(self) -> Topo:
        return TwoTierTopo(fabric=self)

    @property
    def switches(self) -> list[str]:
        return [self.tor(r) for r in range(self.racks)] + [self.spine]

    def attachment(self, host: int) -> Attachment:
        if host == self.ps_host:
            return Attachment(self.spine, self.racks + 1)
        if not 1 <= host <= self.workers:
            raise ValueError(f"no host h{host} in this network")
        rack = self.physical_rack(host)
        return Attachment(self.tor(rack), self.rack_hosts(rack).index(host) + 1)

    def rack(self, host: int) -> int:
        return self.physical_rack(host) if self.levels == 2 else 0

    def _spine_port(self, host: int) -> int:
        return self.racks + 1 if host == self.ps_host else self.physical_rack(host) + 1

    def forwarding(self, switch: str) -> tuple[list[tuple[str, int]], list[int]]:
        hosts = range(1, self.hosts + 1)
        if switch == self.spine:
            entries = [(host_mac(h), self._spine_port(h)) for h in hosts]
            return entries, list(range(1, self.racks + 1 + self.ps))
        rack = int(switch[1:]) - 1
        up = self.uplink_port(rack)
        entries = [(host_mac(h), self.attachment(h).port if h <= self.workers and self.physical_rack(h) == rack
                    else up) for h in hosts]
        return entries, list(range(1, up + 1))

    def inter_links(self) -> list[tuple[str, int, str, int]]:
        return [(self.tor(r), self.uplink_port(r), self.spine, r + 1) for r in range(self.racks)]

    def hops(self, a: int, b: int) -> int:
        """None within a rack, one between a rack and the PS (on the PS rack switch), else two."""
        racks = [None if h == self.ps_host else self.physical_rack(h) for h in (a, b)]
        if racks[0] == racks[1]:
            return 0
        return 1 if None in racks else 2

    def metered_links(self) -> dict[str, list[str]]:
        out = super().metered_links()
        out["uplinks"] = [f"{self.tor(r)}-eth{self.uplink_port(r)}" for r in range(self.racks)]
        return out

    AGGREGATING = tuple(p.name for p in PROTOCOLS.values() if p.levels > 1)
    """Programs that aggregate across switch levels (their jobs have a parameter server)."""

    def check(self, protocol: str, program: str, in_network: bool) -> None:
        self.check_program(protocol, program, in_network)

    @classmethod
    def check_program(cls, protocol: str, program: str, in_network: bool) -> None:
        """ValueError if the collective `protocol` (of `program`) cannot run on two tiers (any fabric's `check`)."""
        if in_network and program not in cls.AGGREGATING:
            raise ValueError(f"{protocol} aggregates in exactly one switch ({program}.p4 drops INA packets of jobs it does "
                             f"not know): run it on the star; networks of several switches run "
                             f"{', '.join(cls.AGGREGATING)} and the host-based baselines")

    def install_job(self, controllers: Mapping[str, Any], job: JobConfig) -> None:
        """ATP: two levels (rack switches at level 0 for their rack, the PS rack switch at level 1), or one (the PS
        rack switch at level 0 for every worker, reached through its rack's port). Nothing for other programs: their
        switches only forward."""
        if job.ps is None:
            return
        if self.levels == 2:
            for rack in job.racks:
                controllers[self.tor(rack)].create_job(job, level=0, rack=rack, ack_port=self.uplink_port(rack))
            controllers[self.spine].create_job(job, level=1, rack_ports={r: r + 1 for r in job.racks})
        else:
            seen_from_spine = replace(job, workers=tuple(
                replace(w, switch_port=self._spine_port(host_index(w.ip)), rack=0) for w in job.workers))
            controllers[self.spine].create_job(seen_from_spine, level=0, rack=0)

    def describe(self) -> str:
        sizes = "+".join(str(len(self.rack_hosts(r))) for r in range(self.racks))
        return f"two-tier, {self.racks} racks ({sizes} workers), {self.levels}-level aggregation"
