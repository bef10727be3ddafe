"""What SwitchML's packets and slot state look like to a fault plan (`worker.faults`)."""

from __future__ import annotations

from worker.faultmodel import ProtocolFaults

__all__ = ["FAULTS"]

FAULTS = ProtocolFaults(
    kinds={"data": ("in", "dport", [("msg_type", 1, 0xFF)]),
           "retransmission": ("in", "dport", [("msg_type", 1, 0xFF), ("flags", 1, 1)]),
           "result": ("out", "sport", [("msg_type", 2, 0xFF)])},
    slot_field=("pool_index", 0x7FFF),
    state=[("SwitchMLIngress.ina_bitmap", 2), ("SwitchMLIngress.ina_countdown", 2),
           ("SwitchMLIngress.ina_exponent", 2)],
    cells_per_slot_elems=("SwitchMLIngress.ina_values",))
