"""The highest offered rate a switch forwards with loss below a bound ("delivered rate at ~0 % loss").

A rate passes when its probe loses less than 0.1 % of the frames and leaves no backlog (results arriving long after
the sender stopped: the switch's and the kernel's buffers absorbed an overload, which a longer run would lose).
`find_max_rate(probe)` offers rates through `probe(rate)`: an exponential ramp (start, start·factor, ...) until a
probe loses too much, then bisection between the highest passing and the lowest failing rate until they are within
`tolerance` of each other; bounded by `max_probes` and `max_rate`. A probe whose sender could not offer the rate it
was asked for ends the search: the switch kept up with everything the sender could do (`sender_limited`).
"""

from __future__ import annotations

import dataclasses
from typing import Callable

MAX_LOSS = 0.001
"""The loss criterion: below 0.1 % of the frames offered."""
MAX_BACKLOG_FRACTION = 0.05
MIN_BACKLOG_S = 0.1
"""A probe passes only if its results stop arriving within max(MIN_BACKLOG_S, MAX_BACKLOG_FRACTION × its length)
after the sender stops."""
SENDER_SHORTFALL = 0.95
"""A probe offered less than this fraction of its target rate: the sender, not the switch, was the limit."""


@dataclasses.dataclass(frozen=True)
class Probe:
    """One paced run: the target rate, what was offered (attempted) and what came back."""

    rate: float
    """Target offered rate, frames/s."""
    offered: int
    """Frames the sender tried to send (kernel refusals included: they are lost frames too)."""
    received: int
    seconds: float
    """How long the sender sent."""
    switch_cpu: float | None = None
    """The switch process's CPU time / wall time during the probe (1.0: one core), when known."""
    backlog_s: float = 0.0
    """How long results kept arriving after the sender stopped: a queue that built up during the probe."""
    sender_cpu: float | None = None
    """The sender's CPU time / its sending time (near 1.0: the traffic generator, not the switch, may be the limit)."""
    receiver_cpu: float | None = None
    """The receiver's CPU time / the probe's wall time, when known."""

    @property
    def offered_pps(self) -> float:
        return self.offered / self.seconds if self.seconds > 0 else 0.0

    @property
    def delivered_pps(self) -> float:
        """Frames received per second, from the start of sending to the last result (sending time + backlog)."""
        span = self.seconds + self.backlog_s
        return self.received / span if span > 0 else 0.0

    @property
    def loss(self) -> float:
        """1 − received / offered (0 when nothing was offered; negative would mean frames from elsewhere)."""
        return 1.0 - self.received / self.offered if self.offered else 0.0

    @property
    def max_backlog_s(self) -> float:
        """The backlog a sustainable rate may leave: MAX_BACKLOG_FRACTION of the probe, at least MIN_BACKLOG_S."""
        return max(MIN_BACKLOG_S, MAX_BACKLOG_FRACTION * self.seconds)

    def passes(self, max_loss: float = MAX_LOSS) -> bool:
        """Loss below `max_loss`, and no queue that took more than max_backlog_s to drain (buffers absorbing an
        overload for the length of a probe are not a rate the switch sustains). More frames back than offered
        fails too: one frame in gives at most one result, so the surplus can only be an earlier probe's results
        arriving late (seen on a saturated 2-CPU machine: -3.3 % "loss" right after an overloaded probe); counting
        the probe as clean would report a rate that was not measured."""
        return (self.offered > 0 and 0 <= self.received <= self.offered and self.loss < max_loss
                and self.backlog_s <= self.max_backlog_s)

    @property
    def sender_limited(self) -> bool:
        return self.offered_pps < SENDER_SHORTFALL * self.rate


@dataclasses.dataclass
class SearchResult:
    """The probes of one search, in order, and the best passing one."""

    probes: list[Probe]
    best: Probe | None
    sender_limited: bool = False
    """The search stopped because the sender could not offer more: `best` is a lower bound of the switch's rate."""

    @property
    def delivered_pps(self) -> float:
        """Delivered frames/s of the best passing probe (0 when none passed)."""
        return self.best.delivered_pps if self.best is not None else 0.0


def find_max_rate(probe: Callable[[float], Probe], *, start: float = 10_000.0, factor: float = 2.0,
                  tolerance: float = 0.05, max_rate: float = 2_000_000.0, min_rate: float = 500.0,
                  max_probes: int = 12, max_loss: float = MAX_LOSS) -> SearchResult:
    """Search the highest rate in [min_rate, max_rate] whose probe loses less than `max_loss`.

    Ramp: start, start·factor, ... while probes pass (down by `factor` from `start` while they fail, to min_rate);
    then bisect [highest passing, lowest failing] until hi / lo − 1 ≤ tolerance. At most `max_probes` probes.
    """
    if not (factor > 1 and 0 < tolerance and 0 < min_rate <= start <= max_rate and max_probes >= 1):
        raise ValueError("find_max_rate: need factor > 1, tolerance > 0, 0 < min_rate <= start <= max_rate, "
                         "max_probes >= 1")
    probes: list[Probe] = []
    best: Probe | None = None
    fail: float | None = None  # lowest failing rate
    rate = start
    while len(probes) < max_probes:
        p = probe(rate)
        probes.append(p)
        if p.passes(max_loss):
            if best is None or p.rate > best.rate:
                best = p
            if p.sender_limited:
                return SearchResult(probes, best, sender_limited=True)
        else:
            fail = rate if fail is None else min(fail, rate)
        if fail is None:  # ramping up
            if rate >= max_rate:
                break
            rate = min(rate * factor, max_rate)
        elif best is None:  # ramping down
            if rate <= min_rate:
                break
            rate = max(rate / factor, min_rate)
        else:
            if fail / best.rate - 1 <= tolerance:
                break
            rate = (best.rate + fail) / 2
    return SearchResult(probes, best)
