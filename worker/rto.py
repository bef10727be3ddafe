"""The adaptive retransmission timeout: RFC 6298's SRTT/RTTVAR estimator with a floor on the variance term.

`RtoEstimator.sample(rtt)` takes the round-trip time of a packet that was sent once and answered (Karn's rule:
the caller never feeds samples of retransmitted packets, whose answer cannot be matched to one transmission);
`rto` is then SRTT + max(min_rto, 4 RTTVAR), capped at max_rto. Before the first sample `rto` is the initial value.

min_rto plays the part of RFC 6298's clock granularity G (and of Linux's rto_min, which Linux also adds to SRTT
rather than using as a plain floor): a worker gets a window of results per RTT, so RTTVAR converges to almost nothing
in steady state, and SRTT + 4 RTTVAR alone would then fire on the first scheduling hiccup of the switch or of
another worker (several ms on a loaded 2-core machine), flooding the switch with spurious retransmissions.

Backoff after a timeout is per packet and lives in the window core: the drops here are independent random losses
(the switch's drop simulator), not a congestion signal, so one loss must not slow down every other slot.
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
            return min(self.max_rto, max(self.min_rto, self.initial_rto))
        return min(self.max_rto, self.srtt + max(self.min_rto, K * self.rttvar))
