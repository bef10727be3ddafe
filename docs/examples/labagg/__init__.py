"""labagg: the course labs' reliable in-network aggregation, added to the testbed as a plug-in protocol — this folder
and one registry line (`INA_PROTOCOLS=docs/examples/labagg`), no other file (docs/adding-a-protocol.md).

    labagg.p4      the switch program: one slot per packet, two sets per slot, int32 sums
    worker.py      its codec, window core (on worker.reliable) and rank
    controller.py  its control plane and its view in the controller CLI
"""

from __future__ import annotations

from typing import Any

from worker.faultmodel import ProtocolFaults
from worker.job import JobConfig
from worker.plugin import ProtocolSpec

from .controller import LabController  # noqa: F401 (defining it registers it for labagg.p4)
from .worker import FLAG_RETRANSMIT, HEADER_TYPE, MSG_DATA, MSG_RESULT, SET_BIT, UDP_PORT, WINDOW, LabCodec, LabRank


def accounting(job: JobConfig, run: Any) -> str:
    """Exactly once: the switch aggregated workers x packets contributions."""
    want = job.num_workers * len(run.windows[0].blocks)
    got = run.counters.get("lab_aggregated", 0)
    return "" if got == want else f"lab_aggregated {got}, expected {want} (workers x packets)"


PROTOCOL = ProtocolSpec(
    "labagg", "the course labs' reliable in-network aggregation (UDP, one slot per packet, two sets, int32 and "
    "fixed-point float32)",
    rank=LabRank, codec=LabCodec, program="labagg", in_network=True, default_window=WINDOW,
    header_type=HEADER_TYPE, udp_port=UDP_PORT, uplink_in_order=True, sets_per_slot=2, accounting=accounting,
    faults=ProtocolFaults(
        kinds={"data": ("in", "dport", [("msg_type", MSG_DATA, 0xFF)]),
               "retransmission": ("in", "dport", [("msg_type", MSG_DATA, 0xFF), ("flags", FLAG_RETRANSMIT, 1)]),
               "result": ("out", "sport", [("msg_type", MSG_RESULT, 0xFF)])},
        slot_field=("slot", 0x7FFF), state=[("LabIngress.lab_bitmap", 2), ("LabIngress.lab_count", 2)],
        cells_per_slot_elems=("LabIngress.lab_values",)),
    trace_track="lab.slot&0x7fff", trace_fields=("lab.msg_type", "lab.seq", "lab.slot", "lab.rank"),
    fuzz_values={"msg_type": (MSG_DATA, MSG_DATA, MSG_RESULT, 0, 7), "flags": (0, 1, 255),
                 "slot": (*range(0, 21), *(i | SET_BIT for i in range(0, 21)))})
