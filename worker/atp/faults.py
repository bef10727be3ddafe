"""What ATP's packets and aggregator state look like to a fault plan (`worker.faults`)."""

from __future__ import annotations

from worker.faultmodel import ProtocolFaults

__all__ = ["FAULTS"]

FAULTS = ProtocolFaults(
    kinds={"data": ("in", "dport", [("flags", 0, 0x01)]),
           "resend": ("in", "dport", [("flags", 0x04, 0x05)]),
           "collision": ("out", "dport", [("flags", 0x08, 0x09)]),
           "ack": ("any", "sport", [("flags", 0x01, 0x01)])},
    slot_field=("agtr", 0xFFFF),
    state=[("AtpIngress.atp_owner", 1), ("AtpIngress.atp_bitmap", 1), ("AtpIngress.atp_racks", 1),
           ("AtpIngress.atp_count", 1), ("AtpIngress.atp_flags", 1)],
    cells_per_slot_elems=("AtpIngress.atp_values",))
