"""The host-based baselines as registered protocols: ring all-reduce and a co-located sharded parameter server, both
over TCP through the switch's L2 forwarding."""

from __future__ import annotations

from worker.host.collective import open_host
from worker.host.ps import ShardedPS
from worker.host.ring import Ring
from worker.plugin import ProtocolSpec

__all__ = ["PS", "RING"]

RING = ProtocolSpec(Ring.name, Ring.description, open=open_host(Ring), host_steps=Ring.steps)
PS = ProtocolSpec(ShardedPS.name, ShardedPS.description, open=open_host(ShardedPS), host_steps=ShardedPS.steps)
