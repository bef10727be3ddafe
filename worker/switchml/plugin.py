"""SwitchML as a registered protocol: its rank, packets, fault model and how a run is accounted for."""

from __future__ import annotations

from typing import Any

from worker.job import MAX_WORKERS, JobConfig
from worker.plugin import ProtocolSpec
from worker.switchml.faults import FAULTS
from worker.switchml.header import INA_HEADER_TYPE, INA_UDP_PORT, MSG_DATA, MSG_RESULT, SET_BIT, Codec
from worker.switchml.window import SwitchRestarted
from worker.switchml.worker import SWITCHML_WINDOW, Worker

__all__ = ["SWITCHML"]


def accounting(job: JobConfig, run: Any) -> str:
    """Exactly once: the switch aggregated workers x packets contributions (`ina_aggregated`), no more, no less."""
    want = job.num_workers * run.windows[0].plan.num_packets
    got = run.counters.get("ina_aggregated", 0)
    return "" if got == want else f"ina_aggregated {got}, expected {want} (workers x packets)"


def scale_defines(workers: int) -> dict[str, str]:
    """A worker bitmap wide enough for `workers` (the next power of two) past the default build's 32."""
    return {} if workers <= MAX_WORKERS else {"INA_MAX_WORKERS": str(1 << (workers - 1).bit_length())}


SWITCHML = ProtocolSpec(
    "switchml", "in-network aggregation through the P4 switch (SwitchML: UDP, block floating point, shadow-copy slots)",
    rank=lambda job, rank, codec, o: Worker(job, rank, None, codec, o.window, timeline=o.timeline),
    codec=Codec, program="switchml", program_env="INA_PROGRAM_JSON", in_network=True, default_window=SWITCHML_WINDOW,
    header_type=INA_HEADER_TYPE, udp_port=INA_UDP_PORT, faults=FAULTS, uplink_in_order=True,
    trace_track="ina.pool_index&0x7fff",
    trace_fields=("ina.msg_type", "ina.packet_id", "ina.pool_index", "ina.worker_rank"),
    sets_per_slot=2, restart_error=SwitchRestarted, accounting=accounting,
    fuzz_values={"msg_type": (MSG_DATA, MSG_DATA, MSG_RESULT, 0, 7), "flags": (0, 1, 255),
                 "pool_index": (*range(0, 21), *(i | SET_BIT for i in range(0, 21)))},
    scale_defines=scale_defines)
