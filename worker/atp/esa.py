"""ESA as a registered protocol: ATP's hosts (ranks, parameter server, packets) over esa.p4, whose switch evicts a
lower-priority job's partial aggregate for a higher-priority job's packet and frees an aggregator as soon as its
aggregate is complete (p4src/esa.p4, controller/esa.py). It lives in ATP's folder because its host side is ATP's."""

from __future__ import annotations

from dataclasses import replace

from worker.atp.faults import FAULTS
from worker.atp.header import ESA_HEADER_TYPE, EsaCodec
from worker.atp.plugin import ATP

__all__ = ["ESA"]

ESA = replace(
    ATP, name="esa",
    description="ESA-style preemptive aggregator allocation (ATP's hosts and PS; a higher-priority job's packet evicts "
    "a lower-priority partial aggregate to its PS, aggregators freed at completion)",
    codec=EsaCodec, program="esa", program_env="INA_ESA_JSON", levels=1, header_type=ESA_HEADER_TYPE,
    faults=replace(FAULTS, state=[*FAULTS.state, ("AtpIngress.atp_priority", 1), ("AtpIngress.atp_evicted_owner", 1)]))
