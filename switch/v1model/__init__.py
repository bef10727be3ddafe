"""v1model: simple_switch's architecture on top of switch.sim.

Modules:
    switch      V1Switch — standard_metadata, after-ingress order, egress FIFOs, clone/resubmit/recirculate, stats
    pre         Pre (multicast groups of (port, rid)) and Mirror (clone sessions)
    primitives  code emitters for v1model primitives (mark_to_drop, clone, resubmit, recirculate, ...)
"""

from switch.v1model.switch import V1Switch

__all__ = ["V1Switch"]
