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
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from switch.timeline import Timeline
from worker.driver import WindowOptions
from worker.errors import ProtocolError, Unreachable
from worker.reliable import Outstanding, ReliableWindow
from worker.stats import Stats
from worker.switchml.blocks import PacketPlan
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


class SwitchUnreachable(Unreachable):
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

    @property
    def details(self) -> dict[str, int]:
        return {"slot": self.slot, "set": self.set, "packet_id": self.packet_id}


class _Pending(Outstanding):
    """An outstanding SwitchML packet: its id and pool index (slot | set bit)."""

    __slots__ = ("packet_id", "pool_index")

    def __init__(self, key: int, packet_id: int, pool_index: int) -> None:
        super().__init__(key)
        self.packet_id = packet_id
        self.pool_index = pool_index


def slot_uses(num_packets: int, window: int, index: int) -> int:
    """How many packets of a run of num_packets use slot position index (0..window-1)."""
    return max(0, -(-(num_packets - index) // window))


@dataclass(slots=True)
class Window(ReliableWindow):
    """Window state of one run: call start(), then on_result()/on_timer() until done. Timers, RTO, fast retransmit
    and giving up are `worker.reliable.ReliableWindow`'s; packets are kept by window position."""

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
    _mismatch: tuple[int, int, int, int] | None = field(default=None, init=False)
    _epoch: int = field(default=0, init=False)
    """The job's epoch in this run's results (flags bits 7..1); 0: none seen (or a switch without epochs)."""
    _index_of: dict[int, int] = field(default_factory=dict, init=False)
    """pool_index (either set) -> window position."""
    _ready: list[int] = field(default_factory=list, init=False)
    """Heap of packet ids whose slot is free (packet id - W answered) but that wait for room in the adaptive window (`bdp`)."""
    width: int = field(default=0, init=False)
    """W (len(slots))."""

    def __post_init__(self) -> None:
        if len(self.slots) != len(self.first_set) or not self.slots:
            raise ValueError("slots and first_set must be non-empty and of equal length")
        self.width = len(self.slots)
        self._init_reliable(self.options, self.stats, self.timeline, self.plan.num_packets, self.width)
        for i, slot in enumerate(self.slots):
            self._index_of[slot] = self._index_of[slot | SET_BIT] = i
            if self.timeline is not None:
                self.timeline.track(slot + 1, f"slot {slot}")  # track 0: the whole all-reduce

    def position(self, packet_id: int) -> tuple[int, int]:
        """(slot, set) of a packet id."""
        i = packet_id % self.width
        return self.slots[i], self.first_set[i] ^ ((packet_id // self.width) & 1)

    def _register(self, packet_id: int, now: float) -> _Pending:
        """Book packet_id as sent now (timer, fast-retransmit order); its Outgoing is filled in by `_fill`."""
        i = packet_id % self.width
        pool = self.slots[i] | (SET_BIT if self.first_set[i] ^ ((packet_id // self.width) & 1) else 0)
        return self._book(_Pending(i, packet_id, pool), now)

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
        room = first if self.bdp is None else min(first, self.bdp.window)
        fresh = [self._register(p, now) for p in range(room)]
        self._ready = list(range(room, first))
        if fresh:
            self._fill(fresh)
        return [p.out for p in fresh]

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
        bdp = self.bdp
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
            rows.append(row)
            ids.append(pid)
            exps.append(exp)
            self._answer(p, now)
            if self._answered == num_packets:
                self._finish(now)
            out.extend(self._fast_retransmits(now))
            nxt = pid + width
            if bdp is None or (not self._ready and len(pending) < bdp.window):
                if nxt < num_packets:
                    q = self._register(nxt, now)
                    fresh.append(q)
                    out.append(q)
            else:
                if nxt < num_packets:
                    heapq.heappush(self._ready, nxt)
                while self._ready and len(pending) < bdp.window:  # the lowest free packet first
                    q = self._register(heapq.heappop(self._ready), now)
                    fresh.append(q)
                    out.append(q)
        if ids:
            self.plan.results(ids, exps, values[rows] if len(rows) < len(values) else values)
        if fresh:
            self._fill(fresh)
        return [o.out if isinstance(o, _Pending) else o for o in out]

    on_packet = on_result  # the name worker.driver.drive calls

    def _flag(self, p: _Pending) -> Outgoing:
        o = p.out
        if o.fields[5] & FLAG_RETRANSMIT:
            return o
        f = o.fields
        return Outgoing((f[0], f[1], f[2], f[3], f[4], f[5] | FLAG_RETRANSMIT, f[6]), o.values)

    def _track(self, p: _Pending) -> tuple[int, dict[str, int]]:
        return (p.pool_index & (SET_BIT - 1)) + 1, {"packet": p.packet_id}

    def _give_up(self, p: _Pending, now: float) -> None:
        slot, set_ = self.position(p.packet_id)
        raise SwitchUnreachable(
            job_id=self.job_id,
            slot=slot,
            set_=set_,
            packet_id=p.packet_id,
            transmissions=p.retries + 1 + p.fast_count,
            waited=now - p.first_sent,
            last_result_ago=None if self._last_result is None else now - self._last_result,
            mismatch=self._mismatch,
        )

    def next_first_set(self) -> list[int]:
        """first_set for the next run on the same slots (each slot continues alternating)."""
        n = self.plan.num_packets
        return [s ^ (slot_uses(n, self.width, i) & 1) for i, s in enumerate(self.first_set)]
