"""The SwitchML worker's adaptive window: packets in flight sized to the path's bandwidth-delay product plus a
small standing queue.

SwitchML's paper sizes the pool to the bandwidth-delay product (enough slots to keep the link busy) and keeps every
slot in flight. On a path slower than that assumes — a rate-limited link, a slow switch — the extra packets only
stand in a queue: each adds a serialisation time to every RTT; a worker that keeps 64 packets in flight on a 2 Mbit/s
link holds ~80 ms of queue (its own results, and every flow sharing the link, wait behind it) for no gain in
throughput. `BdpWindow` keeps `rate x (min RTT + queue_target)` in flight, as BBR estimates the product (max-filtered
delivery rate, min-filtered RTT) but with the headroom of a queueing-delay target, CoDel's 5 ms (RFC 8289), rather
than BBR's gain: the delivery rate is the results answered per round (a round lasts at least the minimum RTT),
max-filtered over the last `rounds`; the minimum RTT is the least unambiguous RTT sample (Karn). A window below the
path's capacity delivers `window / RTT`, and the next estimate is larger as long as the RTT stays within the target
of the minimum, so the window settles where the queue it builds is about `queue_target`; a fast path (where
`queue_target` is many packets) keeps the whole window. Measured (README, Worker): on 2 Mbit/s links the same
completion time with a smoothed RTT of ~10 ms instead of ~80 ms; on unlimited links, unchanged.

It starts at the full window (no slow start: the first round measures the path) and only bounds how many packets
are outstanding: which slot a packet uses is unchanged (`worker.switchml.window`).
"""

from __future__ import annotations

import math
from collections import deque

__all__ = ["BdpWindow"]


class BdpWindow:
    """Packets in flight for a path of estimated rate x (minimum RTT + queue target)."""

    def __init__(self, limit: int, *, queue_target: float = 0.005, min_window: int = 4, rounds: int = 10) -> None:
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        self.limit = limit
        self.queue_target = queue_target
        self.min_window = min(min_window, limit)
        self.window = limit
        """Packets allowed in flight now."""
        self.smallest = limit
        """The smallest window of the run (for the run's statistics)."""
        self.min_rtt = math.inf
        self._rates: deque[float] = deque(maxlen=rounds)
        self._round_start: float | None = None
        self._round_delivered = 0

    def on_rtt(self, rtt: float) -> None:
        """An unambiguous RTT sample (a packet answered after its only transmission)."""
        if 0 < rtt < self.min_rtt:
            self.min_rtt = rtt

    def on_delivered(self, count: int, now: float) -> None:
        """`count` packets answered at `now` (fresh results only); closes a round once it lasted the minimum RTT."""
        start = self._round_start
        if start is None:  # the first result starts the clock: what arrives after it is delivered in a measured time
            self._round_start = now
            return
        self._round_delivered += count
        elapsed = now - start
        if elapsed < self.min_rtt or elapsed <= 0:  # (min_rtt is inf until the first sample)
            return
        self._rates.append(self._round_delivered / elapsed)
        self._round_start, self._round_delivered = now, 0
        wanted = max(self._rates) * (self.min_rtt + self.queue_target)
        self.window = max(self.min_window, min(self.limit, math.ceil(wanted)))
        self.smallest = min(self.smallest, self.window)
