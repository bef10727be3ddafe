"""The reliable window every in-network protocol shares: timers, RTO, Karn, restart on progress, fast retransmit,
bounded give-up. A protocol's window core subclasses `ReliableWindow` and keeps only what is its own: which packet
goes next and where (SwitchML's slots and sets, ATP's aggregators under a congestion window), how a result is
matched and applied, and how a retransmission is flagged on its header.

The mechanism (measured on SwitchML first, issue 27; every protocol gets it from here):

- **Timeouts**: a packet's timeout is the adaptive RTO of `worker.rto.RtoEstimator` at its first transmission (SRTT
  + max(min_timeout, 4 RTTVAR), capped at max_timeout) or the fixed `timeout`; each timeout retransmission of the
  same packet multiplies its own timeout by `backoff`. Before the first RTT sample every packet waits on the initial
  timeout (RFC 6298's 1 s); the first sample re-arms them from the measured RTO.
- **Karn's rule**: only packets answered after a single transmission give RTT samples.
- **Restart on progress** (RFC 6298 5.3): a packet's timer runs from the later of its (re)transmission and the last
  fresh result, so a packet at the back of a standing queue (a slow link or switch) is waiting, not lost.
- **Fast retransmit**: the workers of a job send in the same order, so once `fast_retransmit` packets first sent
  after p (or, near the end of the run, all that follow it) were answered while p was not, p (some worker's copy, or
  the result) was most likely lost; p is sent again at once, its timer restarted without backoff, up to
  `max_fast_retransmits` times (a fast retransmission that is lost too is judged by the same rule from when it was
  sent). The rule counts answered packets, like RFC 6675's DupThresh, rather than asking whether one packet
  `fast_retransmit` places later was answered: a worker that sends the next use of a slot late completes it at
  once, ahead of the window it was sent behind, which by place would retransmit the whole window.
- **Adaptive window** (`WindowOptions.adapt_window`, off by default): at most rate x (min RTT + 5 ms) packets in
  flight (`worker.cwnd.BdpWindow`, `bdp`); a protocol with its own congestion window (ATP's AIMD on ECN) sends
  while both allow it.
- **Bounded failure**: after `max_retries` timeout retransmissions the protocol's `_give_up` raises (its error names
  what it waited for); `WindowOptions.give_up_bound` bounds the wait whatever the RTTs.

A subclass books each packet it sends with `_book` (an `Outstanding` of its own type, `key` where it keeps it), calls
`_answer(p, now)` for each fresh result, `_fast_retransmits(now)` after it, and implements `_flag` (the packet as
a retransmission), `_give_up` and, for the timeline, `_track`.
"""

from __future__ import annotations

import heapq
from collections import deque
from typing import Any

from switch.timeline import Timeline
from worker.cwnd import BdpWindow
from worker.driver import WindowOptions
from worker.rto import RtoEstimator
from worker.stats import Stats

__all__ = ["Outstanding", "ReliableWindow"]


class Outstanding:
    """A packet in flight: what was sent, when, and its timer; a protocol's window adds its own fields."""

    __slots__ = ("key", "out", "first_sent", "deadline", "timeout", "seq", "retries", "generation", "fast_count",
                 "mark", "dequeued", "ambiguous")

    def __init__(self, key: int, out: Any = None) -> None:
        self.key = key
        """Where the window keeps it (`ReliableWindow._pending`)."""
        self.out = out
        """The packet to (re)send, as the protocol's driver encodes it."""
        self.first_sent = 0.0
        self.deadline = 0.0
        self.timeout = 0.0
        self.seq = 0
        """Order of first transmission within the run (fast retransmit compares it)."""
        self.retries = 0
        """Timeout retransmissions so far."""
        self.generation = 0
        self.fast_count = 0
        """Fast retransmissions so far."""
        self.mark = 0
        """`_seq` at its last fast retransmission: packets booked from then on were sent after it."""
        self.dequeued = False
        """Taken off `_unacked` while still outstanding (fast-retransmitted or timed out)."""
        self.ambiguous = False
        """Sent again for another reason than loss (ATP's raw resend): its answer is no RTT sample either."""


class ReliableWindow:
    """The retransmission machinery of a window core (see the module docstring); `drive` runs any subclass."""

    __slots__ = ("options", "stats", "timeline", "rto", "_pending", "_heap", "_seq", "_answered", "_answered_seq",
                 "_dequeued", "_unacked", "_refast", "_last_result", "_start", "_total", "bdp")

    def _init_reliable(self, options: WindowOptions, stats: Stats, timeline: Timeline | None, total: int,
                       width: int) -> None:
        """Set up for a run of `total` packets, at most `width` in flight."""
        self.options, self.stats, self.timeline = options, stats, timeline
        self.bdp = BdpWindow(width) if options.adapt_window else None
        """How many of the `width` packets may be outstanding (None: all of them)."""
        self.rto = RtoEstimator(options.timeout, options.min_timeout, options.max_timeout)
        self._pending: dict[int, Any] = {}
        self._heap: list[tuple[float, int, int, Any]] = []
        self._seq = 0
        self._answered = 0
        self._answered_seq = -1
        """Highest first-transmission order among answered packets."""
        self._dequeued = 0
        """Outstanding packets taken off `_unacked` (all first sent before its head)."""
        self._unacked: deque[Any] = deque()
        """Candidates for fast retransmit, in order of first transmission (answered ones are skipped lazily)."""
        self._refast: deque[Any] = deque()
        """Fast-retransmitted packets that may be fast-retransmitted again, in order of their last one."""
        self._last_result: float | None = None
        self._start = 0.0
        self._total = total

    # --- what a protocol implements ----------------------------------------------------------------------------

    def _flag(self, p: Any) -> Any:
        """p's packet as a retransmission (its header flagged); returns the packet to send."""
        raise NotImplementedError

    def _give_up(self, p: Any, now: float) -> None:
        """Raise the protocol's error: p got no answer after every retransmission."""
        raise NotImplementedError

    def _track(self, p: Any) -> tuple[int, dict[str, Any]]:
        """p's timeline track and the arguments that name it (packet id, sequence number)."""
        return 0, {}

    # --- the shared mechanism ----------------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        return self._answered == self._total

    def _book(self, p: Any, now: float) -> Any:
        """Book p as first sent now: its timer, its place in the fast-retransmit order."""
        o = self.options
        p.first_sent = now
        p.timeout = timeout = self.rto.rto if o.adaptive else o.timeout
        p.deadline = now + timeout
        p.seq = self._seq
        self._seq += 1
        self._pending[p.key] = p
        heapq.heappush(self._heap, (p.deadline, p.seq, 0, p))
        if o.fast_retransmit:
            self._unacked.append(p)
        self.stats.packets_sent += 1
        return p

    def _answer(self, p: Any, now: float) -> bool:
        """p's fresh result arrived (the caller has taken it off `_pending`): counts, the RTT sample (Karn), the
        progress that restarts timers. True if it gave an RTT sample."""
        if p.dequeued:
            self._dequeued -= 1
        self._answered += 1
        self._last_result = now
        self.stats.results += 1
        if p.seq > self._answered_seq:
            self._answered_seq = p.seq
        bdp = self.bdp
        if p.retries or p.fast_count or p.ambiguous:
            if bdp is not None:
                bdp.on_delivered(1, now)
            return False
        self.rto.sample(now - p.first_sent)
        if bdp is not None:
            bdp.on_rtt(now - p.first_sent)
            bdp.on_delivered(1, now)
        if self.rto.samples == 1 and self.options.adaptive:
            self._rearm_from_first_sample()
        return True

    def _lower_total(self, by: int) -> None:
        """A run whose packet count depends on the data (omnireduce's rounds) starts from an upper bound and lowers it
        as it learns; fast retransmit's end-of-run rule applies once the bound is exact."""
        self._total -= by

    def _finish(self, now: float) -> None:
        """Statistics at the end of the run."""
        self.stats.elapsed = now - self._start
        self.stats.srtt, self.stats.rto = self.rto.srtt, self.rto.rto
        self.stats.window_min = None if self.bdp is None else self.bdp.smallest

    def _room(self) -> bool:
        """Whether the adaptive window lets one more packet go out."""
        return self.bdp is None or len(self._pending) < self.bdp.window

    def _rearm_from_first_sample(self) -> None:
        """Packets sent before any RTT sample (on the initial timeout) now time out after the measured RTO."""
        rto = self.rto.rto
        for p in self._pending.values():
            if p.retries == 0 and not p.fast_count and p.first_sent + rto < p.deadline:
                self._rearm(p, p.first_sent + rto, rto)

    def _rearm(self, p: Any, deadline: float, timeout: float | None = None) -> None:
        p.generation += 1
        if timeout is not None:
            p.timeout = timeout
        p.deadline = deadline
        heapq.heappush(self._heap, (deadline, p.seq, p.generation, p))

    def _answered_after(self, seq: int) -> int:
        """How many packets first sent after the seq-th were answered (a scan of the outstanding ones)."""
        return self._seq - 1 - seq - sum(1 for q in self._pending.values() if q.seq > seq)

    def _fast_retransmits(self, now: float) -> list[Any]:
        """Packets overtaken by fast_retransmit answered later packets: each sent again, its timer restarted."""
        k = self.options.fast_retransmit
        if not k:
            return []
        out: list[Any] = []
        last = self._total - 1
        q, pending = self._unacked, self._pending
        # k answered packets sent after p have seqs up to p.seq + k at least (at the end of the run fewer than k
        # packets follow p: all that follow it suffice, the very last packet has none and relies on its timeout);
        # the answered count falls and min(seq + k, last) grows along the queue, so the scan stops at the first miss,
        # except among the last k packets, whose fewer followers can all be answered behind a miss
        missed = False
        while q and q[0].seq < last and self._answered_seq >= min(q[0].seq + k, last):
            p = q.popleft()
            if pending.get(p.key) is not p:
                continue  # answered
            if not p.retries:  # else already timed out (its backoff is running)
                # every packet first sent before p is answered or off the queue: the count needs no scan
                if self._answered - p.seq + self._dequeued < min(k, last - p.seq):
                    q.appendleft(p)
                    missed = True
                    break
                out.append(self._fast(p, now))
            p.dequeued = True
            self._dequeued += 1
        if missed and self._answered_seq == last:
            for p in [p for p in q if last - k < p.seq < last and pending.get(p.key) is p
                      and not p.retries and self._answered_after(p.seq) == last - p.seq]:
                q.remove(p)
                p.dequeued = True
                self._dequeued += 1
                out.append(self._fast(p, now))
        r = self._refast
        # a fast retransmission counts as lost by the same rule, counting the packets first sent since; marks grow in
        # the order of the queue, so the scan stops at the first packet with fewer than k of them answered
        while r and self._answered_seq >= r[0].mark + k - 1:
            p = r[0]
            live = pending.get(p.key) is p and not p.retries
            if live and self._answered_after(p.mark - 1) < k:
                break
            r.popleft()
            if live:
                out.append(self._fast(p, now))
        return out

    def _fast(self, p: Any, now: float) -> Any:
        """Fast-retransmit p (its timer restarts without backoff)."""
        p.fast_count += 1
        p.mark = self._seq
        if p.fast_count < self.options.max_fast_retransmits:
            self._refast.append(p)
        self.stats.fast_retransmissions += 1
        return self._retransmit(p, now, p.timeout, "fast")

    def _retransmit(self, p: Any, now: float, timeout: float, why: str) -> Any:
        """Re-arm p's timer with timeout and return its packet flagged as a retransmission (`why`: "timeout" or
        "fast")."""
        if self.timeline is not None:
            track, args = self._track(p)
            self.timeline.instant("retransmit", track, now, "retransmit", **args, why=why,
                                  transmission=p.retries + p.fast_count + 1)
        self._rearm(p, now + timeout, timeout)
        p.out = self._flag(p)
        self.stats.retransmissions += 1
        self.stats.packets_sent += 1
        return p.out

    def rx_settle(self) -> float:
        """How long the driver lets results accumulate once one is ready (`WindowOptions.rx_coalesce`)."""
        return self.options.rx_settle(self.rto, len(self._pending))

    def next_deadline(self) -> float | None:
        """When on_timer must be called next (None: nothing outstanding)."""
        heap, pending = self._heap, self._pending
        while heap:
            deadline, _, gen, p = heap[0]
            if pending.get(p.key) is not p or p.generation != gen:
                heapq.heappop(heap)  # answered or rescheduled
                continue
            return deadline
        return None

    def on_timer(self, now: float) -> list[Any]:
        """Retransmit every packet whose timeout expired; the protocol's error when one ran out of retries."""
        out: list[Any] = []
        o = self.options
        while True:
            deadline = self.next_deadline()
            if deadline is None or deadline > now:
                return out
            p = heapq.heappop(self._heap)[3]
            if o.restart_on_progress and self._last_result is not None and now < self._last_result + p.timeout:
                # results still arrive: p waits behind a standing queue, not lost; its timer runs from the last
                # result, as TCP restarts its retransmission timer on every ACK of new data (RFC 6298, 5.3)
                self._rearm(p, self._last_result + p.timeout)
                continue
            self.stats.timeouts += 1
            if self.timeline is not None:
                track, args = self._track(p)
                self.timeline.instant("timeout", track, now, "timeout", **args,
                                      waited_ms=round((now - p.first_sent) * 1000, 3))
            if p.retries >= o.max_retries:
                if self.timeline is not None:
                    track, args = self._track(p)
                    self.timeline.instant("gave up", track, now, "error", **args)
                self._give_up(p, now)
            p.retries += 1
            out.append(self._retransmit(p, now, min(p.timeout * o.backoff, o.max_timeout), "timeout"))
