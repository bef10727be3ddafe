"""What every all-reduce run reports, whatever the algorithm: elements, elapsed time and the goodput they give."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["RunResult", "RunTiming", "Stats", "read_json_report"]


def read_json_report(stdout: str) -> dict[str, Any]:
    """The report `python -m worker --json` printed: its last line that parses as JSON ({} if none)."""
    for line in reversed(stdout.strip().splitlines()):
        try:
            report = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(report, dict):
            return report
    return {}


@dataclass(slots=True)
class RunTiming:
    """Base of the run statistics of every collective (`window.Stats`, `peers.HostStats`)."""

    elements: int = 0
    """Elements of the input array all-reduced."""
    elapsed: float = 0.0
    """Seconds from the first packet sent to the last result."""

    @property
    def goodput(self) -> float:
        """Input elements all-reduced per second."""
        return self.elements / self.elapsed if self.elapsed > 0 else 0.0


@dataclass(slots=True)
class Stats(RunTiming):
    """Counters of one all-reduce run."""

    packets_sent: int = 0
    retransmissions: int = 0
    timeouts: int = 0
    results: int = 0
    duplicates_ignored: int = 0
    """Results for packets already answered (late, duplicated or stale)."""
    fast_retransmissions: int = 0
    """Retransmissions triggered by later packets' results rather than a timeout (part of retransmissions)."""
    foreign_ignored: int = 0
    """Packets of another job or not a RESULT."""
    malformed: int = 0
    """Datagrams the codec rejected (counted by the driver)."""
    srtt: float | None = None
    """Smoothed RTT at the end of the run (None: no sample)."""
    window_min: int | None = None
    """The smallest window of an adaptive window during the run (None: a fixed window)."""
    rto: float = 0.0
    """Adaptive timeout at the end of the run."""

    def as_dict(self) -> dict[str, float | int]:
        return {
            "packets_sent": self.packets_sent,
            "retransmissions": self.retransmissions,
            "timeouts": self.timeouts,
            "fast_retransmissions": self.fast_retransmissions,
            "results": self.results,
            "duplicates_ignored": self.duplicates_ignored,
            "foreign_ignored": self.foreign_ignored,
            "malformed": self.malformed,
            "elements": self.elements,
            "elapsed_s": round(self.elapsed, 6),
            "srtt_ms": None if self.srtt is None else round(self.srtt * 1000, 3),
            "rto_ms": round(self.rto * 1000, 3),
            "window_min": self.window_min,
            "goodput_elems_per_s": round(self.goodput, 1),
        }


@dataclass(frozen=True, slots=True)
class RunResult:
    """Output of one all-reduce: the array, the run's statistics and (float32) the agreed block exponents."""

    array: np.ndarray
    stats: RunTiming
    """The protocol's counters (`Stats`, `worker.atp.worker.AtpStats`, `worker.host.peers.HostStats`)."""
    exponents: np.ndarray | None
