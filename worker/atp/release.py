"""Straggler-tolerant aggregation as a registered protocol: ATP's hosts (ranks, parameter server, packets) over
release.p4, whose switch sends a partial aggregate older than its job's timeout on to the job's PS when another
packet needs the aggregator (p4src/release.p4, controller/release.py). Like ESA it lives in ATP's folder because its
host side is ATP's."""

from __future__ import annotations

from dataclasses import replace

from worker.atp.esa import ESA
from worker.atp.header import RELEASE_HEADER_TYPE, ReleaseCodec

__all__ = ["RELEASE"]

RELEASE = replace(
    ESA, name="release",
    description="straggler-tolerant aggregation (ATP's hosts and PS; a partial aggregate past its job's timeout is "
    "released to its PS for the next packet that needs the aggregator; aggregators freed at completion)",
    codec=ReleaseCodec, program="release", program_env="INA_RELEASE_JSON", header_type=RELEASE_HEADER_TYPE,
    faults=replace(ESA.faults, state=[*ESA.faults.state, ("AtpIngress.atp_deadline", 1)]))
