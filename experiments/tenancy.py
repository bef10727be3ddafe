"""What a multi-tenant study records and how it splits the switch's memory between jobs, for both engines
(`experiments.multitenant` on Mininet, `experiments.multitenant_sim` on the packet simulator)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from experiments.config import num_elems
from experiments.resume import MULTITENANT_KEY, row_key
from worker.protocols import PROTOCOLS, in_network, program_paths

__all__ = ["EQUAL_PRIORITY", "JobRow", "pools_for", "rep_key"]

EQUAL_PRIORITY = 1
"""Every job's priority with `--equal-priorities` (a switch that allocates by priority then evicts no job's aggregate
for another's)."""


@dataclass(frozen=True)
class JobRow:
    """One job in one repetition."""

    protocol: str
    rep: int
    job: int
    workers: int
    size_elems: int
    pool_slots: int
    """SwitchML: the job's slots; ATP: the shared pool's aggregators."""
    window_packets: int
    verified: bool
    completion_s: float
    goodput_elems_per_s: float
    retransmissions: int
    in_switch_fraction: float
    """Fraction of contributions aggregated in the switch."""
    collisions: int
    raw_sequences: int
    wire_frames: int = 0
    wire_bytes: int = 0
    """What the job's worker hosts sent into the network (experiments.result.ExperimentResult.wire)."""
    bound: str = ""
    """What bound the run (experiments.bound)."""
    srtt_ms: float | None = None
    """The largest smoothed round-trip time the job's workers measured (None: not reported)."""
    wait_s: float = 0.0
    """Time the job waited for a static partition (SwitchML with fewer partitions than jobs); in completion_s."""
    ps_link_busy: float | None = None
    """ATP on rate-limited links: the bytes that crossed a PS's link (both directions together; with a PS per job,
    the PS links' average) over its rate and the job's time (up to 2: each direction carries the rate)."""


def pools_for(cells: int, jobs: int, program_dir: Path, partitions: int | None = None,
              protocols: Sequence[str] | None = None) -> dict[str, int]:
    """Pool size per protocol (default: every in-network one) for `cells` int32 cells of switch memory: slots per
    static partition (one per job unless `partitions` says fewer), or the aggregators of a shared pool."""
    parts = partitions or jobs
    if parts > jobs or jobs % parts:
        raise ValueError(f"--partitions {parts} must divide the {jobs} jobs (the jobs wait for a partition in waves)")
    out = {}
    for proto in protocols or in_network():
        spec = PROTOCOLS[proto]
        out[proto] = size = spec.pool_size(cells, num_elems(program_paths(program_dir, str(spec.program))[0]), parts)
        if size < 1:
            raise ValueError(f"{cells} cells give {proto} no slot of its pool")
    return out


def rep_key(protocol: str, rep: int) -> tuple[str, ...]:
    """The key (experiments.resume.MULTITENANT_KEY) of the rows one repetition of a protocol writes."""
    return row_key({"protocol": protocol, "rep": rep}, MULTITENANT_KEY)
