"""A network of several switches in virtual time, as a `topo.fabric.Fabric` wires Mininet: two tiers (rack switches
under the PS's rack switch, `topo.twotier`) or a leaf–spine network (`topo.leafspine`).

    fabric = TwoTierFabric(64, racks=4, levels=2, ps=True)      # or LeafSpineFabric(64, racks=4, spines=2, ps=True)
    net = FabricSimNetwork(program, fabric, [fabric_job(fabric, 32, PoolRange(0, 64))], p4info=p4info,
                           link=LinkSpec(100e9), uplink=LinkSpec(400e9), seed=7)
    runs = net.allreduce({1: [input of each rank]}, dtype="int32")
    net.report()        # every port: h5->s1, s1->h5, s1->s5 (rack 0's uplink), s5->s1, ...

The fabric decides the layout, the addresses and the programming: each switch is an engine of its own with its own
controller over a `LocalClient`, given `Fabric.forwarding(switch)` and, per job, `Fabric.install_job` (ATP on two
levels: every rack's switch aggregates its rack at level 0 and the PS's switch merges the racks at level 1; one
level: the PS's switch aggregates every worker while the others only forward) — what `topo.network` installs in
Mininet. Every link is two `Port`s (host links `link`, the links between switches, `Fabric.inter_links`, `uplink`),
every switch has its own serial service queue (`service_s`). Hosts are keyed by their host number (h1..hW the
workers, h(W+1) the PS), so the report names ports `h5->s1`, `s1->h5`, `s1->s3`, `s3->s1`.

Faults: `loss` is a drop rule on every host-facing port of every switch, both directions (`Fabric.host_ports`), as
`make twolevel --loss` sets the P4 drop simulator on those ports in Mininet; the links between switches lose
nothing. `faults` adds a plan per switch name (its ports are that switch's). Restarting a switch is the star's
(`SimNetwork`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from controller.local import LocalClient
from controller.programs import controller_for
from controller.registers import P4RuntimeRegisters
from switch.faults import FaultPlan, FaultRule
from topo.addresses import host_index
from topo.inprocess import PsHost, WorkerHost, clear_engine, zero_register
from topo.sim.hosts import TcpHost
from topo.sim.links import LinkSpec, Port
from topo.sim.network import SimNetwork, SimSwitch
from topo.fabric import Fabric
from worker.job import MAX_WORKERS, JobConfig, PoolRange, WorkerSpec
from worker.protocols import protocol_of_program

__all__ = ["FabricSimNetwork", "fabric_job"]


def fabric_job(fabric: Fabric, num_elems: int, pool: PoolRange, job_id: int = 1) -> JobConfig:
    """One job of every worker host of `fabric` (rank r on h(r+1)), its PS on the PS host."""
    hosts = list(range(1, fabric.workers + 1))
    return fabric.job_config(job_id, hosts, num_elems=num_elems, pool=pool, max_workers=max(MAX_WORKERS, len(hosts)))


class FabricSimNetwork(SimNetwork):
    """A protocol's jobs on a network of several switches over modelled links (see the module).

    `fabric`: the layout (its `ps` must be set for a protocol with a parameter server); `uplink`: the links between
    switches (default `link`); `engines`: one loaded engine per switch in `fabric.switches` order to reuse
    (EngineCache.many), else each is loaded. Other arguments as SimNetwork."""

    def __init__(self, program: Mapping[str, Any], fabric: Fabric, jobs: Sequence[JobConfig], *,
                 p4info: Any, link: LinkSpec, uplink: LinkSpec | None = None, loss: float = 0.0,
                 faults: Mapping[str, FaultPlan] | None = None, seed: int = 0, engines: Sequence[Any] | None = None,
                 protocol: Any = None, **kwargs: Any) -> None:
        spec = protocol or protocol_of_program(program)[0]
        fabric.check(spec.name, str(spec.program), spec.rank is not None)
        names = fabric.switches  # the rack switches, then the PS rack switch
        if engines is not None and len(engines) != len(names):
            raise ValueError(f"{len(names)} switches need as many engines, got {len(engines)}")
        unknown = set(faults or {}) - set(names)
        if unknown:
            raise ValueError(f"fault plans for switches this network lacks: {', '.join(sorted(unknown))}")
        self.fabric = fabric
        host_ports = fabric.host_ports()
        plans = []
        for i, name in enumerate(names):
            plan = (faults or {}).get(name) or FaultPlan(seed=seed * 64 + i)
            if loss:
                plan.rules.append(FaultRule(action="drop", direction="any", probability=loss,
                                            ports=frozenset(host_ports[name]), name=f"loss {loss:g} on host ports"))
            plans.append(plan)
        # every switch but the last; the last (the PS's) is InProcessNetwork's own (self.sw, self.controller), whose
        # __init__ programs every switch (_install)
        self._others: list[tuple[str, Any, Any]] = []
        for i, name in enumerate(names[:-1]):
            sw_seed = seed * 64 + i + 1
            if engines is not None:
                sw = engines[i]
                clear_engine(sw, sw_seed)
            else:
                from switch.v1model import V1Switch

                sw = V1Switch(seed=sw_seed)
                sw.load(dict(program))
            client = LocalClient(sw, p4info, program)
            ctl = controller_for(str(spec.program))(client, P4RuntimeRegisters(client),
                                                    rng=random.Random(f"controller:{seed}:{name}"))
            self._others.append((name, sw, ctl))
        super().__init__(program, jobs, p4info=p4info, link=link, protocol=spec, faults=plans[-1], seed=seed,
                         engine=None if engines is None else engines[-1], **kwargs)
        self.loss = loss
        self.uplink = uplink or link
        self._nodes = [SimSwitch(name, sw, plan, partial(zero_register, sw))
                       for (name, sw, _), plan in zip(self._others, plans)]
        self._nodes.append(SimSwitch(names[-1], self.sw, self.faults, self._reset_register))
        self._wire()

    def _wire(self) -> None:
        """Every host link and link between switches: two Ports each, the switches' port maps, the report's
        table."""
        f, index = self.fabric, {n.name: i for i, n in enumerate(self._nodes)}
        self._plugs: dict[int, tuple[int, int, Port]] = {}
        self._table: list[tuple[Port, str, int, bool, int | None]] = []
        for h in range(1, f.hosts + 1):
            a = f.attachment(h)
            node = self._nodes[index[a.switch]]
            up, down = Port(f"h{h}->{a.switch}", self.link), Port(f"{a.switch}->h{h}", self.link)
            node.out[a.port], node.peer[a.port] = down, (None, h)
            self._plugs[h] = (index[a.switch], a.port, up)
            self._table += [(up, a.switch, a.port, True, h), (down, a.switch, a.port, False, h)]
        for lower, port, upper, upper_port in f.inter_links():
            a, b = self._nodes[index[lower]], self._nodes[index[upper]]
            up, down = Port(f"{lower}->{upper}", self.uplink), Port(f"{upper}->{lower}", self.uplink)
            a.out[port], a.peer[port] = up, (b, upper_port)
            b.out[upper_port], b.peer[upper_port] = down, (a, port)
            self._table += [(up, lower, port, True, None), (down, lower, port, False, None)]

    # --- programming ----------------------------------------------------------------------------------------

    @property
    def plans(self) -> dict[str, FaultPlan]:
        """Each switch's fault plan, by name."""
        return {node.name: node.faults for node in self._nodes}

    @property
    def controllers(self) -> dict[str, Any]:
        """Each switch's controller, by name."""
        return {**{name: ctl for name, _, ctl in self._others}, self.fabric.switches[-1]: self.controller}

    def _install(self) -> None:
        """Every switch programmed as `topo.network` programs Mininet's: the fabric's L2 entries, and each job where
        the fabric aggregates it."""
        ctls = self.controllers
        for name, ctl in ctls.items():
            ctl.install_forwarding(*self.fabric.forwarding(name))
        if self.switch_aggregation:
            for job in self.jobs:
                self.fabric.install_job(ctls, job)

    def restart(self) -> None:
        raise ValueError("restarting a switch mid-run is supported on the star")

    def restart_at(self, when: float) -> None:
        raise ValueError("restarting a switch mid-run is supported on the star")

    def counters(self, job_id: int) -> dict[str, int]:
        """Packets counted by each of a job's per-job counters, summed over the switches (a two-level aggregate
        counts at both levels)."""
        out: dict[str, int] = {}
        for node in self._nodes:
            for name, c in node.sw.counters.items():
                if not c.is_direct and c.size > job_id:
                    key = name.rsplit(".", 1)[1]
                    out[key] = out.get(key, 0) + c.packets[job_id]
        return out

    # --- the topology (SimNetwork's hooks) ------------------------------------------------------------------

    def attach(self, host: Any) -> None:
        """Hosts are keyed by their host number."""
        if isinstance(host, PsHost):
            key = self.fabric.ps_host
        elif isinstance(host, (WorkerHost, TcpHost)):
            key = self.host_key(host.me)
        else:
            raise ValueError(f"the two-tier network runs worker, TCP and PS hosts, not {type(host).__name__}")
        self.hosts[key] = host

    def host_key(self, worker: WorkerSpec) -> int:
        return host_index(worker.ip)

    def host_link(self, key: int) -> tuple[LinkSpec, Port]:
        return self.link, self._plugs[key][2]

    def path(self, a: int, b: int) -> list[LinkSpec]:
        """Two host links, and the links between switches on the way (`Fabric.hops`)."""
        return [self.link, *[self.uplink] * self.fabric.hops(a, b), self.link]

    def _linked_ports(self) -> set[int]:
        keys = {host_index(w.ip) for j in self.jobs for w in j.workers}
        ps = self.fabric.ps_host
        return keys | ({ps} if self.ps_host is not None and ps is not None else set())

    def _switches(self) -> list[SimSwitch]:
        for node in self._nodes:
            node.faulty = bool(node.faults.rules or node.faults.events)
            node.release_at = float("inf")  # a release scheduled in a past run's environment is gone
        return self._nodes

    def _plug(self, key: int, sends: bool) -> tuple[int, int, Port | None]:
        index, port, up = self._plugs[key]
        return index, port, up if sends else None

    def _port_table(self) -> list[tuple[Port, str, int, bool, int | None]]:
        return self._table

    def _ran(self, switches: list[SimSwitch]) -> None:
        pass  # the switches keep their own service queues
