"""Virtual time at the field's scale: the same P4 programs and protocol cores over a packet-level model of links,
queues and service times, on SimPy's discrete-event core (docs/simulator.md)."""

from topo.sim.links import ETHERNET_OVERHEAD, LinkSpec, Port
from topo.sim.network import PortReport, SimNetwork, SimReport

__all__ = ["ETHERNET_OVERHEAD", "LinkSpec", "Port", "PortReport", "SimNetwork", "SimReport"]
