"""The adaptive retransmission timeout: RFC 6298's SRTT/RTTVAR estimator, clamped for a LAN emulation.

`RtoEstimator.sample(rtt)` takes the round-trip time of a packet that was sent once and answered (Karn's rule:
the caller never feeds samples of retransmitted packets, whose answer cannot be matched to one transmission);
`rto` is then SRTT + max(G, 4 RTTVAR), clamped to [min_rto, max_rto]. Before the first sample `rto` is the initial
value. Backoff after a timeout is per packet and lives in the window core: the drops here are independent random
losses (the switch's drop simulator), not a congestion signal, so one loss must not slow down every other slot.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["RtoEstimator"]

ALPHA = 1 / 8
"""Gain of SRTT (RFC 6298)."""
BETA = 1 / 4
"""Gain of RTTVAR (RFC 6298)."""
K = 4
"""RTTVAR multiplier (RFC 6298)."""


@dataclass(slots=True)
class RtoEstimator:
    """SRTT/RTTVAR of one worker's packets and the resulting retransmission timeout (all in seconds)."""

    initial_rto: float
    min_rto: float
    max_rto: float
    granularity: float = 0.0
    """G, the clock granularity (time.monotonic() is sub-microsecond: 0)."""
    srtt: float | None = field(default=None, init=False)
    rttvar: float = field(default=0.0, init=False)
    samples: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        if not 0 < self.min_rto <= self.max_rto:
            raise ValueError(f"need 0 < min_rto <= max_rto, got {self.min_rto}, {self.max_rto}")

    def sample(self, rtt: float) -> None:
        """Take one RTT measurement (of a packet transmitted exactly once)."""
        rtt = max(0.0, rtt)
        if self.srtt is None:
            self.srtt, self.rttvar = rtt, rtt / 2
        else:
            self.rttvar = (1 - BETA) * self.rttvar + BETA * abs(self.srtt - rtt)
            self.srtt = (1 - ALPHA) * self.srtt + ALPHA * rtt
        self.samples += 1

    @property
    def rto(self) -> float:
        """The current retransmission timeout."""
        if self.srtt is None:
            raw = self.initial_rto
        else:
            raw = self.srtt + max(self.granularity, K * self.rttvar)
        return min(self.max_rto, max(self.min_rto, raw))
