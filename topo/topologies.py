"""The networks by name, the way Mininet's `mn --topo` picks topologies from a dict: `make_fabric("twotier", 8,
racks=2)` builds the fabric a runner needs without branching on names."""

from __future__ import annotations

from collections.abc import Callable

from topo.fabric import Fabric
from topo.leafspine import LeafSpineFabric
from topo.star import StarFabric
from topo.twotier import TwoTierFabric

__all__ = ["TOPOLOGIES", "make_fabric"]


def _star(workers: int, *, ps: bool, bw: float | None, racks: int, levels: int, ps_hosts: int = 1,
          spines: int = 2) -> Fabric:
    return StarFabric(workers, ps=ps, bw=bw, ps_hosts=ps_hosts)


def _twotier(workers: int, *, ps: bool, bw: float | None, racks: int, levels: int, ps_hosts: int = 1,
             spines: int = 2) -> Fabric:
    if ps_hosts != 1:
        raise ValueError("the two-tier network has one PS host (behind the PS's rack switch)")
    return TwoTierFabric(workers, racks=racks, levels=levels, ps=ps, bw=bw)


def _leafspine(workers: int, *, ps: bool, bw: float | None, racks: int, levels: int, ps_hosts: int = 1,
               spines: int = 2) -> Fabric:
    if ps_hosts != 1:
        raise ValueError("the leaf-spine network has one PS host (on the PS's leaf)")
    return LeafSpineFabric(workers, racks=racks, spines=spines, levels=levels, ps=ps, bw=bw)


TOPOLOGIES: dict[str, Callable[..., Fabric]] = {"star": _star, "twotier": _twotier, "leafspine": _leafspine}
"""star: one switch; twotier: rack switches under a PS rack switch; leafspine: leaves and the PS's leaf under
spines."""


def make_fabric(name: str, workers: int, *, ps: bool = False, bw: float | None = None, racks: int = 2,
                levels: int = 2, ps_hosts: int = 1, spines: int = 2) -> Fabric:
    """The fabric called `name` (ValueError naming the choices); `ps_hosts` PS hosts when the protocol has a PS."""
    make = TOPOLOGIES.get(name)
    if make is None:
        raise ValueError(f"unknown topology {name!r}; choose one of {', '.join(TOPOLOGIES)}")
    return make(workers, ps=ps, bw=bw, racks=racks, levels=levels, ps_hosts=ps_hosts, spines=spines)
