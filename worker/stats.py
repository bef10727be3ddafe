"""What every all-reduce run reports, whatever the algorithm: elements, elapsed time and the goodput they give."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["RunTiming", "read_json_report"]


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
