"""What every all-reduce run reports, whatever the algorithm: elements, elapsed time and the goodput they give."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RunTiming"]


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
