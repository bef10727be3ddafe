"""ATP's worker (NSDI'21): hashed aggregators, a window with cumulative ACK, resend, and AIMD on ECN.

One all-reduce is a stream of packets with sequence numbers (continuing across all-reduces, from 1). Sequence s uses
window position `(s - 1) mod W` and that position's aggregator; `W = min(window, pool size)` (window default
`ATP_WINDOW`) is fixed for the job, and the aggregator of each position starts as a hash of (job, position) into the
job's range of the shared pool. Packet s is sent only while `s < first unacknowledged + cwnd` (cumulative ACK), so a
position's aggregator is reused only after the PS's ACK of the previous sequence freed it. The PS's ACK (parameter
packet) carries the sum, and when the sequence collided with another job, the aggregator the position uses from now on
(`agtr_next`); every worker takes it from its first acceptance of that ACK, so all workers keep the same map.

Loss recovery (`AtpWindow`): `worker.reliable.ReliableWindow`, the reliable window every in-network protocol shares
(adaptive RTO with Karn's rule and backoff, timers restarted while ACKs arrive, fast retransmit once `fast_retransmit`
later sequences were ACKed first — ATP's gap resend —, bounded retries); a retransmission carries the RESEND flag,
which flushes the switch's partial aggregate to the PS, which completes the sequence.

Congestion (AIMD): the window starts at W; after every cwnd ACKs it is halved if one of them carried ECN, else
grown by one, within [1, W].

Values (`FixedPointPlan`): float32 uses ATP's fixed-point scaling, q = rint(x * 2^scale_bits), exact int32 sums in
the switch with saturation. Per element the result is within n * 2^-(scale_bits + 1) of the exact sum, plus the
final rounding to float32. A block whose values do not fit (|q| > 2^31 - 2), or whose sum saturated anywhere (the PS
sees INT32_MAX/INT32_MIN or the OVERFLOW flag), is resent raw: float32 values that only the PS adds (in float64,
rounded once to float32). int32 is the identity scaling; a sum that saturates is resent raw and the PS returns the
exact sum modulo 2^32, as SwitchML's wrapping sums.
"""

from __future__ import annotations

import math
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from switch.timeline import Timeline
from worker.atp.bitmap import Contributions
from worker.atp.header import ACK, ATP_UDP_PORT, COLLISION, ECN, FLOAT, OVERFLOW, RAW, RESEND, AtpCodec, AtpHeader
from worker.blocks import block_view, to_blocks
from worker.codec import CodecError, find_program_json
from worker.collective import run_rank
from worker.driver import WindowOptions
from worker.errors import Unreachable
from worker.job import JobConfig, JobConfigError
from worker.reliable import Outstanding, ReliableWindow
from worker.stats import RunResult, Stats
from worker.transport import Transport
from worker.verify import Verdict, verify_fixed_point

__all__ = ["ATP_WINDOW", "AtpOptions", "AtpStats", "AtpUnreachable", "FixedPointPlan", "AtpWindow", "AtpWorker",
           "aggregator_map", "find_atp_json"]

ATP_WINDOW = 32
"""W when the options leave it unset. Not 64 as for SwitchML: with ATP's cumulative ACK and raw resends a window of 64
did worse at 1 % loss (86k vs 101k elem/s, 4 workers; see the README's benchmark notes)."""

Q_MAX = 2**31 - 2
"""Largest |q| a worker sends as fixed point: INT32_MAX and INT32_MIN are the switch's saturation sentinels."""


def find_atp_json() -> Path:
    """The compiled atp.json: $INA_ATP_JSON, else out/atp.json or build/atp.json."""
    return find_program_json("atp", "INA_ATP_JSON")


@dataclass(frozen=True, slots=True)
class AtpOptions:
    """ATP knobs beside the shared window options."""

    scale_bits: int = 20
    """float32 fixed point: values are sent as rint(x * 2^scale_bits) (ATP's scaling factor)."""
    initial_cwnd: int | None = None
    """Congestion window at the start of each all-reduce (default: W)."""

    def __post_init__(self) -> None:
        if not 0 <= self.scale_bits <= 30:
            raise ValueError(f"scale_bits must be in [0, 30], got {self.scale_bits}")
        if self.initial_cwnd is not None and self.initial_cwnd < 1:
            raise ValueError(f"initial_cwnd must be >= 1, got {self.initial_cwnd}")


@dataclass(slots=True)
class AtpStats(Stats):
    """`worker.switchml.window.Stats` plus ATP's congestion window, collisions and raw resends."""

    ecn_acks: int = 0
    """ACKs that carried ECN."""
    cwnd_min: int = 0
    cwnd_final: int = 0
    cwnd_decreases: int = 0
    collisions: int = 0
    """ACKs that moved a window position to another aggregator (its sequence collided with another job)."""
    raw_resends: int = 0
    """Sequences resent raw (overflow)."""

    def as_dict(self) -> dict[str, float | int]:
        out = Stats.as_dict(self)
        out.update(ecn_acks=self.ecn_acks, cwnd_min=self.cwnd_min, cwnd_final=self.cwnd_final,
                   cwnd_decreases=self.cwnd_decreases, collisions=self.collisions, raw_resends=self.raw_resends)
        return out


class AtpUnreachable(Unreachable):
    """No ACK for a sequence after all retransmissions."""

    def __init__(self, job_id: int, seq: int, agtr: int, transmissions: int, waited: float,
                 last_ack_ago: float | None) -> None:
        self.job_id, self.seq, self.agtr = job_id, seq, agtr
        seen = ("no ACK arrived at all in this run" if last_ack_ago is None
                else f"the last ACK arrived {last_ack_ago:.2f} s ago")
        super().__init__(
            f"job {job_id}: no ACK for seq {seq} (aggregator {agtr}) after {transmissions} transmissions over "
            f"{waited:.2f} s; {seen}: switch or parameter server unreachable, job not installed, or another worker "
            "of the job stopped sending")

    @property
    def details(self) -> dict[str, int]:
        return {"seq": self.seq, "agtr": self.agtr}


def aggregator_map(job: JobConfig, width: int) -> list[int]:
    """The initial aggregator of each window position: CRC32 of (job, position) into the job's range, probing
    linearly so that the job's positions use distinct aggregators (ATP's per-application hash)."""
    base, size = job.pool.base, job.pool.size
    if width > size:
        raise JobConfigError(f"window {width} exceeds the job's {size} aggregators")
    used: set[int] = set()
    out = []
    for pos in range(width):
        h = zlib.crc32(bytes([job.job_id]) + pos.to_bytes(4, "big")) % size
        while h in used:
            h = (h + 1) % size
        used.add(h)
        out.append(base + h)
    return out


class FixedPointPlan:
    """Blocks of one all-reduce as ATP sends them: fixed-point int32, or raw values when they do not fit."""

    def __init__(self, array: np.ndarray, num_elems: int, dtype: str, scale_bits: int) -> None:
        arr = np.asarray(array)
        self.size, self.shape, self.dtype = arr.size, arr.shape, dtype
        if dtype == "float32":
            if not np.issubdtype(arr.dtype, np.floating):
                raise TypeError(f"float32 mode needs a floating-point array, got {arr.dtype}")
            self.raw_blocks = to_blocks(arr, num_elems, np.float32)
            self.scale = math.ldexp(1.0, scale_bits)
            q = np.rint(self.raw_blocks.astype(np.float64) * self.scale)
            self.fits = np.all(np.abs(q) <= Q_MAX, axis=1) & np.all(np.isfinite(q), axis=1)
            self.fixed = np.where(self.fits[:, None], q, 0).astype(np.int32)
            self.out: np.ndarray = np.zeros_like(self.raw_blocks)
        elif dtype == "int32":
            if not np.issubdtype(arr.dtype, np.integer):
                raise TypeError(f"int32 mode needs an integer array, got {arr.dtype}")
            self.raw_blocks = block_view(arr, num_elems, np.int32)  # read only: no copy of a contiguous input
            self.scale = 1.0
            self.fixed = self.raw_blocks
            self.fits = np.ones(self.fixed.shape[0], dtype=bool)
            self.out = np.zeros_like(self.raw_blocks)
        else:
            raise ValueError(f"dtype must be float32 or int32, got {dtype!r}")
        self.num_packets = self.raw_blocks.shape[0]
        self.raw_flags = RAW | (FLOAT if dtype == "float32" else 0)

    def result(self, i: int, values: np.ndarray, raw: bool) -> None:
        """Take the PS's sum for block i: fixed point (int32 sums), or raw (float32 bits / int32 with RAW)."""
        if raw:
            self.out[i] = values.view(np.float32) if self.dtype == "float32" else values
        elif self.dtype == "float32":
            self.out[i] = values / self.scale
        else:
            self.out[i] = values

    def output(self) -> np.ndarray:
        return self.out.ravel()[: self.size].reshape(self.shape)


class _Pending(Outstanding):
    """An outstanding ATP packet: its block and whether it carries the raw values."""

    __slots__ = ("raw",)

    def __init__(self, index: int, out: tuple[AtpHeader, np.ndarray], raw: bool) -> None:
        super().__init__(index, out)
        self.raw = raw


@dataclass(slots=True)
class AtpWindow(ReliableWindow):
    """Window state of one all-reduce: start(), then on_ack()/on_timer() until done. Returns (header, values).
    Timers, RTO, fast retransmit and giving up are `worker.reliable.ReliableWindow`'s; packets are kept by block."""

    plan: FixedPointPlan
    job: JobConfig
    rank: int
    first_seq: int
    agtr: list[int]
    """Aggregator of each window position (len = W); updated in place on collisions."""
    options: WindowOptions = field(default_factory=WindowOptions)
    initial_cwnd: int | None = None
    stats: AtpStats = field(default_factory=AtpStats)
    timeline: Timeline | None = None
    """Where to record the run's events (`switch.timeline`): a track per aggregator with a span per packet from its
    first transmission to its ACK; instants for timeouts, retransmissions, collisions, ECN marks and raw resends."""
    _acked: list[bool] = field(default_factory=list, init=False)
    _cum: int = field(default=0, init=False)
    _next: int = field(default=0, init=False)
    _raw_needed: set[int] = field(default_factory=set, init=False)
    _epoch_acks: int = field(default=0, init=False)
    _epoch_ecn: bool = field(default=False, init=False)
    cwnd: int = field(default=0, init=False)
    _base: AtpHeader = field(default_factory=AtpHeader, init=False)
    width: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self.width = len(self.agtr)
        self._init_reliable(self.options, self.stats, self.timeline, self.plan.num_packets, self.width)
        me = self.job.worker(self.rank)
        racks = self.job.racks
        bit = Contributions(self.job).bit(self.rank)  # the switch sets it too, from its table
        self._base = AtpHeader(bitmap0=1 << bit, bitmap1=1 << me.rack, fan_in0=self.job.rack_size(me.rack),
                               fan_in1=len(racks), job_id=self.job.job_id, rank=self.rank)
        self._acked = [False] * self.plan.num_packets
        self.cwnd = max(1, min(self.width, self.initial_cwnd or self.width))
        self.stats.cwnd_min = self.stats.cwnd_final = self.cwnd

    def seq(self, index: int) -> int:
        return (self.first_seq + index - 1) % (1 << 32) + 1

    def _position(self, index: int) -> int:
        return (self.first_seq + index - 1) % self.width

    def _values(self, index: int, raw: bool) -> np.ndarray:
        return self.plan.raw_blocks[index] if raw else self.plan.fixed[index]

    def _send_new(self, now: float) -> list[tuple[AtpHeader, np.ndarray]]:
        out = []
        while self._next < self.plan.num_packets and self._next < self._cum + self.cwnd and self._room():
            i = self._next
            self._next += 1
            raw = i in self._raw_needed or not bool(self.plan.fits[i])
            flags = self.plan.raw_flags if raw else 0
            hdr = AtpHeader(self._base.bitmap0, self._base.bitmap1, self._base.fan_in0, self._base.fan_in1, flags,
                            self._base.job_id, self.seq(i), self.agtr[self._position(i)], 0, self.rank)
            p = self._book(_Pending(i, (hdr, self._values(i, raw)), raw), now)
            if self.timeline is not None:
                self.timeline.track(hdr.agtr + 1, f"aggregator {hdr.agtr}")  # track 0: the all-reduce
            self.stats.raw_resends += raw
            out.append(p.out)
        return out

    def start(self, now: float) -> list[tuple[AtpHeader, np.ndarray]]:
        self._start = now
        return self._send_new(now)

    def on_ack(self, hdr: AtpHeader, values: np.ndarray, now: float) -> list[tuple[AtpHeader, np.ndarray]]:
        """Take one received packet; returns the packets to send."""
        if not hdr.flags & ACK or hdr.job_id != self.job.job_id:
            self.stats.foreign_ignored += 1
            return []
        i = (hdr.seq - self.first_seq) % (1 << 32)
        if i >= self.plan.num_packets or self._acked[i]:
            self.stats.duplicates_ignored += 1
            return []
        p = self._pending.get(i)
        if hdr.flags & OVERFLOW and not hdr.flags & RAW:
            # the PS asks for this sequence's raw values
            if p is None:
                self._raw_needed.add(i)  # not sent yet: it will go raw
                return []
            if p.raw:
                self.stats.duplicates_ignored += 1
                return []
            p.raw = p.ambiguous = True
            header = p.out[0]
            p.out = (header.with_flags(self.plan.raw_flags), self._values(i, True))
            self.stats.raw_resends += 1
            self.stats.packets_sent += 1
            if self.timeline is not None:
                self.timeline.instant("raw resend", header.agtr + 1, now, "overflow", seq=hdr.seq)
            self._rearm(p, now + p.timeout)
            return [p.out]
        if p is None:
            self.stats.duplicates_ignored += 1  # a result for a sequence this worker has not sent: impossible
            return []
        del self._pending[i]
        tl = self.timeline
        if tl is not None:
            agtr = p.out[0].agtr + 1
            tl.span(f"seq {hdr.seq}", agtr, p.first_sent, now, "packet", seq=hdr.seq,
                    retransmissions=p.retries + p.fast_count, raw=p.raw)
            if hdr.flags & COLLISION:
                tl.instant("collision", agtr, now, "collision", seq=hdr.seq, next_aggregator=hdr.agtr_next)
            if hdr.flags & ECN:
                tl.instant("ECN", agtr, now, "ecn", seq=hdr.seq)
        self.plan.result(i, values, bool(hdr.flags & RAW))
        self._acked[i] = True
        self._answer(p, now)
        if hdr.flags & COLLISION:
            self.agtr[self._position(i)] = hdr.agtr_next
            self.stats.collisions += 1
        if hdr.flags & ECN:
            self.stats.ecn_acks += 1
            self._epoch_ecn = True
        self._epoch_acks += 1
        if self._epoch_acks >= self.cwnd:
            if self._epoch_ecn:
                self.cwnd = max(1, self.cwnd // 2)
                self.stats.cwnd_decreases += 1
            else:
                self.cwnd = min(self.width, self.cwnd + 1)
            self.stats.cwnd_min = min(self.stats.cwnd_min, self.cwnd)
            self._epoch_acks, self._epoch_ecn = 0, False
        while self._cum < self.plan.num_packets and self._acked[self._cum]:
            self._cum += 1
        out = self._fast_retransmits(now)
        out.extend(self._send_new(now))
        if self.done:
            self._finish(now)
            self.stats.cwnd_final = self.cwnd
        return out

    on_packet = on_ack  # the name worker.driver.drive calls

    def _flag(self, p: _Pending) -> tuple[AtpHeader, np.ndarray]:
        """A RESEND: it flushes the switch's partial aggregate to the PS."""
        header, values = p.out
        return header.with_flags(header.flags | RESEND), values

    def _track(self, p: _Pending) -> tuple[int, dict[str, int]]:
        return p.out[0].agtr + 1, {"seq": p.out[0].seq}

    def _give_up(self, p: _Pending, now: float) -> None:
        header = p.out[0]
        raise AtpUnreachable(self.job.job_id, header.seq, header.agtr, p.retries + 1 + p.fast_count,
                             now - p.first_sent, None if self._last_result is None else now - self._last_result)


class AtpWorker:
    """One rank of an ATP job; run() any number of times over its transport (sequence numbers continue), or make
    its window cores with begin()/end() (the sans-IO rank every tool runs, `worker.collective.Rank`)."""

    accept_any_source = True
    """Packets go to the PS; ACKs come from the switch."""

    def __init__(self, job: JobConfig, rank: int, transport: Transport | None, codec: AtpCodec,
                 options: WindowOptions | None = None, atp: AtpOptions | None = None, *,
                 clock: Callable[[], float] = time.monotonic, timeline: Timeline | None = None) -> None:
        job.worker(rank)
        if job.ps is None:
            raise JobConfigError(f"job {job.job_id}: ATP needs a parameter server (\"ps\" in the job file)")
        if codec.num_elems != job.num_elems:
            raise CodecError(f"job {job.job_id} says num_elems={job.num_elems} but the compiled atp.p4 carries "
                             f"{codec.num_elems} elements per packet (compile with -D ATP_NUM_ELEMS={job.num_elems})")
        self.job, self.rank, self.transport, self.codec = job, rank, transport, codec
        self.options = options or WindowOptions()
        self.atp = atp or AtpOptions()
        self.clock = clock
        self.timeline = timeline
        self.agtr = aggregator_map(job, self.options.width(job.pool.size, ATP_WINDOW))
        self.next_seq = 1
        self.decode = codec.decode
        self.decode_batch = None

    def destination(self) -> tuple[str, str, int]:
        """(MAC, IP, UDP port) its packets go to: the job's PS (through the switch, which aggregates them)."""
        assert self.job.ps is not None
        return self.job.ps.mac, self.job.ps.ip, ATP_UDP_PORT

    def encode(self, out: tuple[AtpHeader, np.ndarray]) -> bytes:
        return self.codec.encode(*out)

    def begin(self, array: np.ndarray, dtype: str | None = None) -> AtpWindow:
        """The window core of the next all-reduce of array (float32 or int32; default: from the array)."""
        arr = np.asarray(array)
        mode = dtype or ("int32" if np.issubdtype(arr.dtype, np.integer) else "float32")
        plan = FixedPointPlan(arr, self.job.num_elems, mode, self.atp.scale_bits)
        win = AtpWindow(plan, self.job, self.rank, self.next_seq, self.agtr, self.options, self.atp.initial_cwnd,
                        timeline=self.timeline)
        win.stats.elements = arr.size
        self.next_seq = (self.next_seq + plan.num_packets - 1) % (1 << 32) + 1
        return win

    def end(self, win: AtpWindow) -> RunResult:
        return RunResult(array=win.plan.output(), stats=win.stats, exponents=None)

    def run(self, array: np.ndarray, dtype: str | None = None) -> RunResult:
        if self.transport is None:
            raise ValueError("this AtpWorker has no transport: run its cores with begin()/end()")
        return run_rank(self, self.transport, array, dtype, self.clock)

    def allreduce(self, array: np.ndarray) -> np.ndarray:
        return self.run(array).array

    def verify(self, run: RunResult, inputs: list[np.ndarray], dtype: str) -> Verdict:
        """int32 exact (wrapping); float32 within the fixed-point bound (and float32 summation for raw blocks)."""
        return verify_fixed_point(run.array, inputs, dtype, self.atp.scale_bits)
