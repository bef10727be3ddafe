"""Leaf–spine network: k leaves of workers and the PS's leaf, each wired to every one of S spines.

    worker leaves s1..sk: leaf r's hosts on ports 1..m_r, its link to spine j on port m_r + 1 + j
    spines s(k+1)..s(k+S): leaf r on port r + 1, the PS's leaf on port k + 1
    PS leaf s(k+S+1): spine j on port j + 1, the PS host (if any) on port S + 1

The W worker hosts fill the leaves in order, as evenly as possible (h1.. under leaf 0), as `topo.twotier` fills its
racks. Routing is static and per destination, as a switch's exact L2 table allows (the programs have no ECMP hash):
leaf r sends what is for host h in another leaf through spine (r + h) mod S, so the destinations, and the racks'
paths to the PS, spread over the spines; a spine sends every host's MAC down its leaf's port. Flooding follows a tree
(every leaf floods up to spine 0 only), so a broadcast cannot loop.

ATP runs with `levels` levels, as on two tiers: 2 makes every worker leaf the first level of its rack (ACKs come
from the spine its path to the PS takes) and the PS's leaf the second, whose ACK to each rack leaves addressed to that
rack's leaf (`rack_address`: the spines forward by MAC; `AtpController.create_job(rack_addresses=…)`); 1 lets the
PS's leaf aggregate every worker (each seen on the port its leaf's route to the PS arrives by), each ACK replica
addressed to its worker. SwitchML aggregates in exactly one switch
and drops INA packets of jobs it does not know: it runs on the star. The host baselines need no job.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from mininet.topo import Topo

from topo.addresses import host_index, host_ip, host_mac, rack_address
from topo.fabric import Attachment, Fabric
from topo.twotier import TwoTierFabric, spread_over_racks
from worker.job import JobConfig

__all__ = ["LeafSpineTopo", "LeafSpineFabric", "MAX_SPINES"]

MAX_SPINES = 64
"""Spines of one network (a leaf's ports: its hosts and one link to each spine)."""


class LeafSpineTopo(Topo):
    """The worker leaves with their hosts, the spines, and the PS's leaf (see the module)."""

    def build(self, fabric: LeafSpineFabric) -> None:  # type: ignore[override]
        link_opts = {"bw": fabric.bw} if fabric.bw is not None else {}
        spines = [self.addSwitch(fabric.spine(j)) for j in range(fabric.spines)]
        ps_leaf = self.addSwitch(fabric.ps_leaf)
        for r in range(fabric.racks):
            leaf = self.addSwitch(fabric.leaf(r))
            for h in fabric.rack_hosts(r):
                node = self.addHost(f"h{h}", ip=f"{host_ip(h)}/16", mac=host_mac(h))
                self.addLink(node, leaf, port2=fabric.attachment(h).port, **link_opts)
            for j, spine in enumerate(spines):
                self.addLink(leaf, spine, port1=fabric.uplink_port(r, j), port2=r + 1, **link_opts)
        for j, spine in enumerate(spines):
            self.addLink(ps_leaf, spine, port1=j + 1, port2=fabric.racks + 1, **link_opts)
        if fabric.ps_host is not None:
            ps = self.addHost(f"h{fabric.ps_host}", ip=f"{host_ip(fabric.ps_host)}/16", mac=host_mac(fabric.ps_host))
            self.addLink(ps, ps_leaf, port2=fabric.spines + 1, **link_opts)


class LeafSpineFabric(Fabric):
    """k worker leaves and the PS's leaf under S spines; ATP aggregates on one or two levels (see the module)."""

    name = "leafspine"

    def __init__(self, workers: int, *, racks: int = 2, spines: int = 2, levels: int = 2, ps: bool = False,
                 bw: float | None = None) -> None:
        super().__init__(workers, ps=ps, bw=bw)
        if not 1 <= spines <= MAX_SPINES:
            raise ValueError(f"spines must be 1..{MAX_SPINES}, got {spines}")
        self._rack_of = spread_over_racks(workers, racks, levels)
        self.racks = racks
        self.spines = spines
        self.levels = levels
        self._hosts_of = [[h for h in range(1, workers + 1) if self._rack_of[h - 1] == r] for r in range(racks)]

    # --- the layout -------------------------------------------------------------------------------------------

    def leaf(self, rack: int) -> str:
        """The leaf of rack `rack` (the PS's leaf: rack `racks`)."""
        return f"s{rack + 1}" if rack < self.racks else self.ps_leaf

    def spine(self, j: int) -> str:
        return f"s{self.racks + 1 + j}"

    @property
    def ps_leaf(self) -> str:
        """The PS's leaf (the second aggregation level)."""
        return f"s{self.racks + self.spines + 1}"

    def rack_hosts(self, rack: int) -> list[int]:
        """The worker hosts of a rack, in order."""
        return self._hosts_of[rack]

    def physical_rack(self, host: int) -> int:
        """The leaf a host is wired into: its rack, or `racks` for the PS."""
        return self.racks if host == self.ps_host else self._rack_of[host - 1]

    def uplink_port(self, rack: int, j: int) -> int:
        """The port of leaf `rack` (the PS's: `racks`) towards spine j."""
        return j + 1 if rack == self.racks else len(self.rack_hosts(rack)) + 1 + j

    def spine_of(self, rack: int, host: int) -> int:
        """The spine leaf `rack` sends host `host`'s traffic through (static, per destination)."""
        return (rack + host) % self.spines

    def topo(self) -> Topo:
        return LeafSpineTopo(fabric=self)

    @property
    def switches(self) -> list[str]:
        return [self.leaf(r) for r in range(self.racks)] + [self.spine(j) for j in range(self.spines)] + [self.ps_leaf]

    def attachment(self, host: int) -> Attachment:
        if host == self.ps_host:
            return Attachment(self.ps_leaf, self.spines + 1)
        if not 1 <= host <= self.workers:
            raise ValueError(f"no host h{host} in this network")
        rack = self._rack_of[host - 1]
        return Attachment(self.leaf(rack), self.rack_hosts(rack).index(host) + 1)

    def rack(self, host: int) -> int:
        return self.physical_rack(host) if self.levels == 2 else 0

    def inter_links(self) -> list[tuple[str, int, str, int]]:
        """Every link between two switches: (leaf, its port, spine, its port), the PS's leaf's last."""
        return [(self.leaf(r), self.uplink_port(r, j), self.spine(j), r + 1)
                for r in range(self.racks + 1) for j in range(self.spines)]

    def hops(self, a: int, b: int) -> int:
        """Links between switches on the path from host a to host b: none under one leaf, else two."""
        return 0 if self.physical_rack(a) == self.physical_rack(b) else 2

    # --- programming ------------------------------------------------------------------------------------------

    def forwarding(self, switch: str) -> tuple[list[tuple[str, int]], list[int]]:
        hosts = range(1, self.hosts + 1)
        names = self.switches
        index = names.index(switch)
        if self.racks <= index < self.racks + self.spines:  # a spine: each host, each rack's ACK address, down
            entries = [(host_mac(h), self.physical_rack(h) + 1) for h in hosts]
            entries += [(rack_address(r)[0], r + 1) for r in range(self.racks)]
            return entries, list(range(1, self.racks + 2))
        rack = index if index < self.racks else self.racks
        local = [h for h in hosts if self.physical_rack(h) == rack]
        entries = [(host_mac(h), self.attachment(h).port if h in local else
                    self.uplink_port(rack, self.spine_of(rack, h))) for h in hosts]
        return entries, [self.attachment(h).port for h in local] + [self.uplink_port(rack, 0)]

    def metered_links(self) -> dict[str, list[str]]:
        out = super().metered_links()
        out["uplinks"] = [f"{leaf}-eth{port}" for leaf, port, _, _ in self.inter_links()]
        return out

    def check(self, protocol: str, program: str, in_network: bool) -> None:
        TwoTierFabric.check_program(protocol, program, in_network)

    def install_job(self, controllers: Mapping[str, Any], job: JobConfig) -> None:
        """ATP: two levels (each worker leaf at level 0 for its rack, the PS's leaf at level 1, its ACKs addressed
        to the racks' leaves), or one (the PS's leaf at level 0 for every worker, each on the port from the spine
        its leaf's route to the PS takes). Nothing for other programs: their switches only forward."""
        if job.ps is None:
            return
        ps = host_index(job.ps.ip)
        if self.levels == 2:
            racks = sorted(job.racks)
            for rack in racks:
                controllers[self.leaf(rack)].create_job(
                    job, level=0, rack=rack, ack_port=self.uplink_port(rack, self.spine_of(rack, ps)))
            controllers[self.ps_leaf].create_job(
                job, level=1, rack_ports={r: self.uplink_port(self.racks, self.spine_of(r, ps)) for r in racks},
                rack_addresses={r: rack_address(r) for r in racks})
        else:
            # a worker's packets reach the PS's leaf through the spine its leaf's route to the PS takes
            seen_from_ps_leaf = replace(job, workers=tuple(
                replace(w, switch_port=self.uplink_port(self.racks, self.spine_of(self.physical_rack(
                    host_index(w.ip)), ps)), rack=0) for w in job.workers))
            controllers[self.ps_leaf].create_job(seen_from_ps_leaf, level=0, rack=0)

    def describe(self) -> str:
        sizes = "+".join(str(len(self.rack_hosts(r))) for r in range(self.racks))
        return (f"leaf–spine, {self.racks} leaves ({sizes} workers) and the PS's leaf under {self.spines} spines, "
                f"{self.levels}-level aggregation")
