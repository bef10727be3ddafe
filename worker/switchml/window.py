"""The sans-IO protocol core: a window of W outstanding packets over the job's slots, timeouts and retransmission.

Packet p uses slot ``slots[p % W]`` in set ``first_set[p % W] ^ ((p // W) & 1)``: each slot alternates sets, and packet
p is only sent once the result of packet p - W (same slot, other set) has arrived, so the switch still holds the
previous result of a slot while the current use of the other set fills up (retransmissions of late packets get
their result from it). The core never touches sockets or clocks: callers feed it results (`on_result`), the time
(`on_timer`), and send the `Outgoing` packets it returns. Every outstanding packet has its own timeout with
exponential backoff; after `max_retries` retransmissions without a result it raises `SwitchUnreachable`, naming the
slot, set, packet id, how long it waited and what was missing.

The timeout of a packet is the adaptive RTO of `worker.rto.RtoEstimator` at its first transmission (SRTT +
max(min_timeout, 4 RTTVAR) from the RTTs of packets answered after a single transmission, Karn's rule, capped at
max_timeout); `timeout` is the value before the first sample (and the fixed timeout with adaptive=False). Each
retransmission of the same packet multiplies its own timeout by `backoff` (capped at max_timeout). Fast retransmit:
all workers send a job's packets in the same order, so once `fast_retransmit` packets first sent after p (or, near
the end of the run, all that follow it) have been answered while p has not, p (some worker's copy, or the result) was
most likely lost; p is retransmitted early and its timer restarts without backoff (when another worker's copy was the
lost one, the switch drops this retransmission to the incomplete slot: the price of not knowing whose copy is
missing); a fast retransmission that is lost too is judged by the same rule from when it was sent, up to
`max_fast_retransmits` times. The rule counts answered packets, like RFC 6675's DupThresh, rather than asking
whether one packet `fast_retransmit` places later was answered: a worker that sends the next use of a slot late (its
result was lost and came back on its retransmission) completes that slot with its copy, so the late packet is
answered at once, ahead of the window it was sent behind; by place it would overtake the whole window and
retransmit every packet of it (measured, 4 workers at 1 % loss: ~2,200 fast retransmissions and ~1,400 duplicate
results per run by place, ~1,300 and ~550 counted). Bounded failure: a packet whose first timeout was t0 gets
SwitchUnreachable after at most worst_case_wait(t0) + k t0 when it was fast-retransmitted k times (each restarts a
timer of t0 that had not expired), never more than `give_up_bound()`.

Results are matched on (job, pool_index, packet_id) of the outstanding packet; anything else (a duplicate, a late
answer to a retransmission, a stale result of an earlier use of the slot) is counted and ignored. Like SwitchML, the
scheme assumes that the path from a worker to the switch does not reorder that worker's own packets (true for a
link and the kernel's send queue; losses and in-order duplicates are fine): a retransmission of packet p overtaking
packet p + W would find its bit lazily cleared in p's set and be counted a second time.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from switch.timeline import Timeline
from worker.driver import WindowOptions
from worker.switchml.cwnd import BdpWindow
from worker.rto import RtoEstimator
from worker.stats import Stats
from worker.switchml.blocks import PacketPlan, ProtocolError
from worker.switchml.header import (
    FLAG_RETRANSMIT,
    MSG_DATA,
    MSG_RESULT,
    SET_BIT,
    HeaderFields,
    InaHeader,
    astuple_header,
)

__all__ = ["Outgoing", "SwitchRestarted", "SwitchUnreachable", "Window", "slot_uses"]


class Outgoing:
    """A DATA packet to send: its header's values (`HeaderFields` order) and its big-endian int32 payload row.

    `header` builds the `InaHeader` on demand: the hot path (`Codec.encode_fields`) packs `fields` directly."""

    __slots__ = ("fields", "values")

    def __init__(self, fields: HeaderFields, values: np.ndarray) -> None:
        self.fields = fields
        self.values = values

    @property
    def header(self) -> InaHeader:
        return InaHeader(*self.fields)

    def __repr__(self) -> str:
        return f"Outgoing({self.header!r}, {self.values!r})"


class SwitchRestarted(ProtocolError):
    """Results of one run carried two epochs: the switch lost its state and was re-programmed mid-run."""

    def __init__(self, job_id: int, before: int, after: int) -> None:
        self.job_id, self.before, self.after = job_id, before, after
        super().__init__(f"job {job_id}: the switch's epoch changed from {before} to {after} during the run (it "
                         "restarted and the job was installed again): the slots' earlier state is gone, so results "
                         "from now on could mix in retransmissions of earlier packets; the run stops here")


class SwitchUnreachable(RuntimeError):
    """No result arrived for a packet after all retransmissions."""

    def __init__(
        self,
        *,
        job_id: int,
        slot: int,
        set_: int,
        packet_id: int,
        transmissions: int,
        waited: float,
        last_result_ago: float | None,
        mismatch: tuple[int, int, int, int] | None = None,
    ) -> None:
        self.job_id = job_id
        self.slot = slot
        self.set = set_
        self.packet_id = packet_id
        self.transmissions = transmissions
        self.waited = waited
        self.last_result_ago = last_result_ago
        self.mismatch = mismatch
        if mismatch is not None:
            m_slot, m_set, m_got, m_expected = mismatch
            seen = (f"a result for slot {m_slot}, set {m_set} carried packet_id {m_got} while this worker's packet "
                    f"there is {m_expected}")
            cause = "the workers disagree on the sequence (same --size, --dtype and --window everywhere?)"
        elif last_result_ago is None:
            seen = "no result packet from the switch arrived at all in this run"
            cause = ("switch unreachable, job not installed, this worker unknown to the switch, or another worker of "
                     "the job never started")
        else:
            seen = f"the last result from the switch arrived {last_result_ago:.2f} s ago"
            cause = "switch gone, heavy loss, or another worker of the job stopped sending (slot never completed)"
        super().__init__(
            f"job {job_id}: no result for packet_id {packet_id} (slot {slot}, set {set_}) after {transmissions} "
            f"transmissions over {waited:.2f} s; {seen}: {cause}"
        )


@dataclass(slots=True)
class _Pending:
    """An outstanding packet: what was sent, when, and its timer state."""

    packet_id: int
    pool_index: int
    out: Outgoing | None
    """None only while its batch is being built (`Window._fill`)."""
    first_sent: float
    deadline: float
    timeout: float
    seq: int
    """Order of first transmission within the run (fast retransmit compares it)."""
    retries: int = 0
    generation: int = 0
    fast_count: int = 0
    """Fast retransmissions so far (after one, its answer is no RTT sample)."""
    mark: int = 0
    """`Window._seq` at its last fast retransmission: packets registered from then on were sent after it."""
    dequeued: bool = False
    """Taken off `Window._unacked` while still outstanding (fast-retransmitted or timed out)."""


def slot_uses(num_packets: int, window: int, index: int) -> int:
    """How many packets of a run of num_packets use slot position index (0..window-1)."""
    return max(0, -(-(num_packets - index) // window))


@dataclass(slots=True)
class Window:
    """Window state of one run: call start(), then on_result()/on_timer() until done."""

    plan: PacketPlan
    job_id: int
    rank: int
    slots: Sequence[int]
    """Slot numbers used, one per window position (len = W)."""
    first_set: Sequence[int]
    """Set of each slot position's first use in this run (continues the alternation of earlier runs)."""
    options: WindowOptions = field(default_factory=WindowOptions)
    stats: Stats = field(default_factory=Stats)
    timeline: Timeline | None = None
    """Where to record the run's events (`switch.timeline`): a track per slot with a span per packet from its first
    transmission to its result, and instants for timeouts, retransmissions and giving up."""
    _pending: dict[int, _Pending] = field(default_factory=dict, init=False)
    _heap: list[tuple[float, int, int]] = field(default_factory=list, init=False)
    _answered: int = field(default=0, init=False)
    _start: float = field(default=0.0, init=False)
    _last_result: float | None = field(default=None, init=False)
    _mismatch: tuple[int, int, int, int] | None = field(default=None, init=False)
    _epoch: int = field(default=0, init=False)
    """The job's epoch in this run's results (flags bits 7..1); 0: none seen (or a switch without epochs)."""
    _index_of: dict[int, int] = field(default_factory=dict, init=False)
    """pool_index (either set) -> window position."""
    rto: RtoEstimator = field(init=False)
    _seq: int = field(default=0, init=False)
    _answered_seq: int = field(default=-1, init=False)
    """Highest first-transmission order among answered packets."""
    _dequeued: int = field(default=0, init=False)
    """Outstanding packets taken off `_unacked` (all first sent before its head)."""
    _unacked: deque[_Pending] = field(default_factory=deque, init=False)
    """Candidates for fast retransmit, in order of first transmission (answered ones are skipped lazily)."""
    cwnd: BdpWindow | None = field(default=None, init=False)
    """How many of the W packets may be outstanding (WindowOptions.adapt_window; None: all W)."""
    _ready: list[int] = field(default_factory=list, init=False)
    """Heap of packet ids whose slot is free (packet id - W answered) but that wait for room in `cwnd`."""
    _refast: deque[_Pending] = field(default_factory=deque, init=False)
    """Fast-retransmitted packets that may be fast-retransmitted again (see WindowOptions.max_fast_retransmits), in
    order of their last fast retransmission."""

    def __post_init__(self) -> None:
        if len(self.slots) != len(self.first_set) or not self.slots:
            raise ValueError("slots and first_set must be non-empty and of equal length")
        self.width = len(self.slots)
        o = self.options
        self.rto = RtoEstimator(o.timeout, o.min_timeout, o.max_timeout)
        if o.adapt_window:
            self.cwnd = BdpWindow(self.width)
        for i, slot in enumerate(self.slots):
            self._index_of[slot] = self._index_of[slot | SET_BIT] = i
            if self.timeline is not None:
                self.timeline.track(slot + 1, f"slot {slot}")  # track 0: the whole all-reduce

    width: int = field(default=0, init=False)
    """W (len(slots))."""

    @property
    def done(self) -> bool:
        return self._answered == self.plan.num_packets

    def position(self, packet_id: int) -> tuple[int, int]:
        """(slot, set) of a packet id."""
        i = packet_id % self.width
        return self.slots[i], self.first_set[i] ^ ((packet_id // self.width) & 1)

    def _register(self, packet_id: int, now: float) -> _Pending:
        """Book packet_id as sent now (timer, fast-retransmit order); its Outgoing is filled in by `_fill`."""
        i = packet_id % self.width
        pool = self.slots[i] | (SET_BIT if self.first_set[i] ^ ((packet_id // self.width) & 1) else 0)
        timeout = self.rto.rto if self.options.adaptive else self.options.timeout
        p = _Pending(packet_id, pool, None, now, now + timeout, timeout, self._seq)
        self._seq += 1
        self._pending[i] = p
        heapq.heappush(self._heap, (p.deadline, packet_id, 0))
        if self.options.fast_retransmit:
            self._unacked.append(p)
        self.stats.packets_sent += 1
        return p

    def _fill(self, fresh: list[_Pending]) -> None:
        """Build the packets of fresh pendings, the whole batch quantized in one pass of the plan."""
        exps, rows = self.plan.packets([p.packet_id for p in fresh])
        job, rank = self.job_id, self.rank
        for p, exp, row in zip(fresh, exps, rows):
            p.out = Outgoing((MSG_DATA, job, p.pool_index, p.packet_id, exp, 0, rank), row)

    def start(self, now: float) -> list[Outgoing]:
        """The first window of packets."""
        self._start = now
        first = min(self.width, self.plan.num_packets)
        room = first if self.cwnd is None else min(first, self.cwnd.window)
        fresh = [self._register(p, now) for p in range(room)]
        self._ready = list(range(room, first))
        if fresh:
            self._fill(fresh)
        return [p.out for p in fresh]  # type: ignore[misc]

    def on_result(self, hdr: InaHeader, values: np.ndarray, now: float) -> list[Outgoing]:
        """Take one received packet; returns the packets to send (its replacement in the window, fast
        retransmissions)."""
        return self.on_packets([astuple_header(hdr)], np.asarray(values)[None], now)

    def on_packets(self, headers: Sequence[HeaderFields], values: np.ndarray, now: float) -> list[Outgoing]:
        """Take the packets of one receive (header values, (k, N) payloads); returns the packets to send, in the
        order that taking them one by one would send them. The plan takes the batch's results, then quantizes the
        batch's new packets, in one pass each."""
        job_id, width = self.job_id, self.width
        pending = self._pending
        stats = self.stats
        cwnd = self.cwnd
        num_packets = self.plan.num_packets
        out: list[Outgoing | _Pending] = []
        rows: list[int] = []
        ids: list[int] = []
        exps: list[int] = []
        fresh: list[_Pending] = []
        for row, (msg_type, job, pool, pid, exp, flags, _rank) in enumerate(headers):
            if msg_type != MSG_RESULT or job != job_id:
                stats.foreign_ignored += 1
                continue
            epoch = flags >> 1
            if epoch != self._epoch:
                if self._epoch:
                    raise SwitchRestarted(job_id, self._epoch, epoch)
                self._epoch = epoch
            p = pending.get(pid % width)
            if p is None or p.packet_id != pid or p.pool_index != pool:
                stats.duplicates_ignored += 1
                user = pending.get(self._index_of.get(pool, -1))
                if (user is not None and user.pool_index == pool
                        and (pid > user.packet_id or (user.packet_id - pid) % (2 * width))):
                    # neither this use of the slot nor an earlier one (those are 2W apart): the workers' sequences
                    # differ
                    self._mismatch = (pool & (SET_BIT - 1), (pool >> 15) & 1, pid, user.packet_id)
                continue
            del pending[pid % width]
            if self.timeline is not None:
                self.timeline.span(f"packet {pid}", (pool & (SET_BIT - 1)) + 1, p.first_sent, now, "packet",
                                   packet=pid, set=int(bool(pool & SET_BIT)), retransmissions=p.retries + p.fast_count)
            if p.dequeued:
                self._dequeued -= 1
            rows.append(row)
            ids.append(pid)
            exps.append(exp)
            stats.results += 1
            self._answered += 1
            self._last_result = now
            if p.retries == 0 and not p.fast_count:
                self.rto.sample(now - p.first_sent)  # Karn: only packets sent once give unambiguous RTTs
                if self.cwnd is not None:
                    self.cwnd.on_rtt(now - p.first_sent)
                if self.rto.samples == 1 and self.options.adaptive:
                    self._rearm_from_first_sample()
            if self._answered == num_packets:
                stats.elapsed = now - self._start
                stats.srtt, stats.rto = self.rto.srtt, self.rto.rto
                stats.window_min = None if self.cwnd is None else self.cwnd.smallest
            if self.options.fast_retransmit:
                if p.seq > self._answered_seq:
                    self._answered_seq = p.seq
                out.extend(self._fast_retransmits(now))
            nxt = pid + width
            if cwnd is not None:
                cwnd.on_delivered(1, now)  # per result, as taking them one by one would
            if cwnd is None or (not self._ready and len(pending) < cwnd.window):
                if nxt < num_packets:
                    q = self._register(nxt, now)
                    fresh.append(q)
                    out.append(q)
            else:
                if nxt < num_packets:
                    heapq.heappush(self._ready, nxt)
                while self._ready and len(pending) < cwnd.window:  # the lowest free packet first
                    q = self._register(heapq.heappop(self._ready), now)
                    fresh.append(q)
                    out.append(q)
        if ids:
            self.plan.results(ids, exps, values[rows] if len(rows) < len(values) else values)
        if fresh:
            self._fill(fresh)
        return [o.out if isinstance(o, _Pending) else o for o in out]  # type: ignore[misc]

    on_packet = on_result  # the name worker.driver.drive calls

    def _rearm_from_first_sample(self) -> None:
        """Packets sent before any RTT sample (on the initial timeout) now time out after the measured RTO."""
        rto = self.rto.rto
        for p in self._pending.values():
            if p.retries == 0 and not p.fast_count and p.first_sent + rto < p.deadline:
                p.generation += 1
                p.timeout = rto
                p.deadline = p.first_sent + rto
                heapq.heappush(self._heap, (p.deadline, p.packet_id, p.generation))

    def _answered_after(self, seq: int) -> int:
        """How many packets first sent after the seq-th were answered (a scan of the outstanding ones)."""
        return self._seq - 1 - seq - sum(1 for q in self._pending.values() if q.seq > seq)

    def _fast_retransmits(self, now: float) -> list[Outgoing]:
        """Packets overtaken by fast_retransmit answered later packets: retransmit each once, restart its timer."""
        out: list[Outgoing] = []
        k, last = self.options.fast_retransmit, self.plan.num_packets - 1
        q, pending, width = self._unacked, self._pending, self.width
        # k answered packets sent after p have seqs up to p.seq + k at least (at the end of the run fewer than k
        # packets follow p: all that follow it suffice, the very last packet has none and relies on its timeout);
        # the answered count falls and min(seq + k, last) grows along the queue, so the scan stops at the first miss,
        # except among the last k packets, whose fewer followers can all be answered behind a miss
        missed = False
        while q and q[0].seq < last and self._answered_seq >= min(q[0].seq + k, last):
            p = q.popleft()
            if pending.get(p.packet_id % width) is not p:
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
            for p in [p for p in q if last - k < p.seq < last and pending.get(p.packet_id % width) is p
                      and not p.retries and self._answered_after(p.seq) == last - p.seq]:
                q.remove(p)
                p.dequeued = True
                self._dequeued += 1
                out.append(self._fast(p, now))
        r = self._refast
        # a fast retransmission counts as lost by the same rule, counting the packets first sent since; marks grow in
        # the order of the queue, so the scan stops at the first packet with fewer than k of them answered (answered
        # ones are skipped lazily, like those of _unacked)
        while r and self._answered_seq >= r[0].mark + k - 1:
            p = r[0]
            live = pending.get(p.packet_id % width) is p and not p.retries
            if live and self._answered_after(p.mark - 1) < k:
                break
            r.popleft()
            if live:
                out.append(self._fast(p, now))
        return out

    def _fast(self, p: _Pending, now: float) -> Outgoing:
        """Fast-retransmit p (its timer restarts without backoff)."""
        p.fast_count += 1
        p.mark = self._seq
        if p.fast_count < self.options.max_fast_retransmits:
            self._refast.append(p)
        self.stats.fast_retransmissions += 1
        return self._retransmit(p, now, p.timeout, "fast")

    def _retransmit(self, p: _Pending, now: float, timeout: float, why: str) -> Outgoing:
        """Re-arm p's timer with timeout and return its packet, flagged as a retransmission (`why`: "timeout" or
        "fast")."""
        if self.timeline is not None:
            self.timeline.instant("retransmit", (p.pool_index & (SET_BIT - 1)) + 1, now, "retransmit",
                                  packet=p.packet_id, why=why, transmission=p.retries + p.fast_count + 1)
        p.generation += 1
        p.timeout = timeout
        p.deadline = now + timeout
        o = p.out
        assert o is not None
        if not o.fields[5] & FLAG_RETRANSMIT:
            f = o.fields
            p.out = o = Outgoing((f[0], f[1], f[2], f[3], f[4], f[5] | FLAG_RETRANSMIT, f[6]), o.values)
        heapq.heappush(self._heap, (p.deadline, p.packet_id, p.generation))
        self.stats.retransmissions += 1
        self.stats.packets_sent += 1
        return o

    def rx_settle(self) -> float:
        """How long the driver lets results accumulate once one is ready (`WindowOptions.rx_coalesce`)."""
        return self.options.rx_settle(self.rto, len(self._pending))

    def next_deadline(self) -> float | None:
        """When on_timer must be called next (None: nothing outstanding)."""
        while self._heap:
            deadline, pid, gen = self._heap[0]
            p = self._pending.get(pid % self.width)
            if p is None or p.packet_id != pid or p.generation != gen:
                heapq.heappop(self._heap)  # answered or rescheduled
                continue
            return deadline
        return None

    def on_timer(self, now: float) -> list[Outgoing]:
        """Retransmit every packet whose timeout expired; SwitchUnreachable when one ran out of retries."""
        out: list[Outgoing] = []
        while True:
            deadline = self.next_deadline()
            if deadline is None or deadline > now:
                return out
            _, pid, _ = heapq.heappop(self._heap)
            p = self._pending[pid % self.width]
            if (self.options.restart_on_progress and self._last_result is not None
                    and now < self._last_result + p.timeout):
                # results still arrive: p waits behind a standing queue, not lost; its timer runs from the last
                # result, as TCP restarts its retransmission timer on every ACK of new data (RFC 6298, 5.3)
                p.generation += 1
                p.deadline = self._last_result + p.timeout
                heapq.heappush(self._heap, (p.deadline, p.packet_id, p.generation))
                continue
            self.stats.timeouts += 1
            if self.timeline is not None:
                self.timeline.instant("timeout", (p.pool_index & (SET_BIT - 1)) + 1, now, "timeout", packet=pid,
                                      waited_ms=round((now - p.first_sent) * 1000, 3))
            if p.retries >= self.options.max_retries:
                slot, set_ = self.position(pid)
                if self.timeline is not None:
                    self.timeline.instant("gave up", slot + 1, now, "error", packet=pid)
                raise SwitchUnreachable(
                    job_id=self.job_id,
                    slot=slot,
                    set_=set_,
                    packet_id=pid,
                    transmissions=p.retries + 1 + p.fast_count,
                    waited=now - p.first_sent,
                    last_result_ago=None if self._last_result is None else now - self._last_result,
                    mismatch=self._mismatch,
                )
            p.retries += 1
            out.append(self._retransmit(p, now, min(p.timeout * self.options.backoff, self.options.max_timeout),
                                        "timeout"))

    def next_first_set(self) -> list[int]:
        """first_set for the next run on the same slots (each slot continues alternating)."""
        n = self.plan.num_packets
        return [s ^ (slot_uses(n, self.width, i) & 1) for i, s in enumerate(self.first_set)]
