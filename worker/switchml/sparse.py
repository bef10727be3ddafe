"""OmniReduce-style sparse all-reduce on SwitchML's slots (`p4src/omnireduce.p4`): the codec, the plan, the window.

A run's W slots are streams: stream i (window position i) carries the blocks i, i + W, i + 2W, ... of the tensor.
Each use of a stream's slot is a round for one block; round r takes the set ``first_set[i] ^ (r & 1)``, so the
switch keeps the previous round's result while the next one fills (switchml.p4's shadow copies and retransmission
answers, unchanged). Round 0 only announces (packet_id `NO_BLOCK`, no payload). Every packet names the sender's next
non-zero block of the stream after the round's block (`next_block`) and, in `exponent`, that block's local
exponent; the RESULT carries the smallest next block and the largest exponent among the workers that named it, so the
next round is for that block, quantized with that exponent, and a block that is zero in every worker gets no round.
A worker whose block of the round is zero sends the header alone. A stream ends at a RESULT naming `NO_BLOCK`.

int32 tensors are summed exactly (two's complement wraparound); float32 ones as SwitchML's block floating point, the
exponent agreed one round ahead (`worker.switchml.quantize`), within the same error bound.
"""

from __future__ import annotations

import math
import struct
from bisect import bisect_right
from collections import deque
from dataclasses import dataclass, field
from dataclasses import fields as dc_fields
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from switch.timeline import Timeline
from worker.blocks import block_view
from worker.codec import CodecError, HeaderSpec, MalformedPacket, codec_source
from worker.driver import WindowOptions
from worker.errors import ProtocolError
from worker.reliable import Outstanding, ReliableWindow
from worker.stats import Stats
from worker.switchml.header import FLAG_RETRANSMIT, MSG_DATA, MSG_RESULT, SET_BIT, WIRE_INT32
from worker.switchml.quantize import (
    EXP_MAX,
    EXP_MIN,
    EXPONENT_BIAS,
    INT32_MAX,
    block_exponents,
    check_finite_range,
)
from worker.switchml.window import SwitchRestarted, SwitchUnreachable

__all__ = ["NO_BLOCK", "OMNIREDUCE_HEADER_TYPE", "SparseHeader", "SparseCodec", "SparseOut", "SparsePlan",
           "StreamWindow"]

NO_BLOCK = 0xFFFFFFFF
"""next_block of a stream with no further non-zero block; packet_id of a stream's announcing round."""
OMNIREDUCE_HEADER_TYPE = "omnireduce_h"
"""omnireduce.p4's header: switchml.p4's ina_h plus next_block, under its own type name."""


@dataclass(frozen=True, slots=True)
class SparseHeader:
    """The header's values (16 bytes with the default layout)."""

    msg_type: int = MSG_DATA
    job_id: int = 0
    pool_index: int = 0
    packet_id: int = 0
    """The round's block (`NO_BLOCK` in a stream's first, announcing round)."""
    exponent: int = 0
    """DATA: the biased local exponent of the sender's next_block; RESULT: the agreed one of the stream's next."""
    flags: int = 0
    worker_rank: int = 0
    next_block: int = NO_BLOCK

    @property
    def slot(self) -> int:
        return self.pool_index & (SET_BIT - 1)


SparseFields = tuple[int, int, int, int, int, int, int, int]
"""A header's values in `SparseHeader` order."""
_FIELDS = tuple(f.name for f in dc_fields(SparseHeader))


class SparseCodec:
    """Packets of omnireduce.p4, laid out as its compiled JSON declares `omnireduce_h` and the payload after it.

    A DATA packet is the header alone (a zero block) or the header and N big-endian int32; a RESULT always has N."""

    HEADER_TYPE = OMNIREDUCE_HEADER_TYPE

    def __init__(self, spec: HeaderSpec, num_elems: int) -> None:
        names = [f.name for f in spec.fields]
        missing = [n for n in _FIELDS if n not in names]
        if missing:
            raise CodecError(f"header type {spec.name} lacks the fields {missing} of an omnireduce.p4 header")
        if num_elems <= 0:
            raise CodecError(f"header type {spec.name} is followed by no 32-bit payload")
        self.spec = spec
        self.num_elems = num_elems
        self.header_len = spec.byte_len
        self.packet_len = self.header_len + 4 * num_elems
        self._slot_of = [names.index(n) for n in _FIELDS]
        """Wire position of each `SparseHeader` field."""
        self._masks = [(1 << spec.fields[i].width) - 1 for i in self._slot_of]
        fmt = spec.struct_format()
        self._struct = struct.Struct(fmt) if fmt else None

    @classmethod
    def from_program_json(cls, src: str | Path | Mapping[str, Any]) -> SparseCodec:
        return cls(*codec_source(src, cls.HEADER_TYPE))

    def encode_fields(self, fields: Sequence[int], values: np.ndarray | None) -> bytes:
        """UDP payload: the header (values in `SparseHeader` order, each reduced to its width), then the payload
        (None: none, a zero block's DATA packet)."""
        wire = [0] * len(self.spec.fields)
        for pos, v, m in zip(self._slot_of, fields, self._masks):
            wire[pos] = int(v) & m
        head = self._struct.pack(*wire) if self._struct is not None else self.spec.pack(wire)
        if values is None:
            return head
        arr = np.asarray(values)
        if arr.shape != (self.num_elems,):
            raise ValueError(f"payload must have {self.num_elems} elements, got shape {arr.shape}")
        if arr.dtype != WIRE_INT32:
            arr = arr.astype(np.int64).astype(np.uint32).view(np.int32).astype(WIRE_INT32)
        return head + arr.tobytes()

    def encode(self, hdr: SparseHeader, values: np.ndarray | Sequence[int] | None) -> bytes:
        return self.encode_fields(astuple_sparse(hdr), None if values is None else np.asarray(values))

    def decode(self, data: bytes) -> tuple[SparseHeader, np.ndarray]:
        """(header, int32 elements; zeros for a header-only packet); MalformedPacket for any other length."""
        if len(data) not in (self.header_len, self.packet_len):
            raise MalformedPacket(f"omnireduce packet has {len(data)} bytes, expected {self.header_len} (header "
                                  f"alone) or {self.packet_len} (+ {self.num_elems} x int32)")
        wire = self._struct.unpack_from(data) if self._struct is not None else self.spec.unpack(data)
        hdr = SparseHeader(*(wire[pos] for pos in self._slot_of))
        if len(data) == self.header_len:
            return hdr, np.zeros(self.num_elems, dtype=np.int32)
        return hdr, np.frombuffer(data, dtype=WIRE_INT32, offset=self.header_len).astype(np.int32)

    def decode_batch(self, datagrams: Sequence[bytes]) -> tuple[list[SparseFields], np.ndarray, int]:
        """The datagrams of one receive at once: (header values per valid datagram, in `SparseHeader` order; their
        payloads as one (k, N) big-endian int32 array, zeros for a header-only one; how many were malformed)."""
        size, head = self.packet_len, self.header_len
        good = [d for d in datagrams if len(d) == size or len(d) == head]
        rows = np.zeros((len(good), self.num_elems), dtype=WIRE_INT32)
        headers: list[SparseFields] = []
        unpack = self._struct.unpack_from if self._struct is not None else self.spec.unpack
        order = self._slot_of
        for i, d in enumerate(good):
            wire = unpack(d)
            headers.append(tuple(wire[pos] for pos in order))  # type: ignore[arg-type]
            if len(d) == size:
                rows[i] = np.frombuffer(d, dtype=WIRE_INT32, offset=head)
        return headers, rows, len(datagrams) - len(good)

    def __repr__(self) -> str:
        layout = ", ".join(f"{f.name}:{f.width}" for f in self.spec.fields)
        return f"SparseCodec({self.spec.name}[{layout}] + 0 or {self.num_elems} x int32)"


def astuple_sparse(h: SparseHeader) -> SparseFields:
    return (h.msg_type, h.job_id, h.pool_index, h.packet_id, h.exponent, h.flags, h.worker_rank, h.next_block)


class SparseOut:
    """A DATA packet to send: header values (`SparseHeader` order) and its payload row (None: header alone)."""

    __slots__ = ("fields", "values")

    def __init__(self, fields: SparseFields, values: np.ndarray | None) -> None:
        self.fields = fields
        self.values = values

    @property
    def header(self) -> SparseHeader:
        return SparseHeader(*self.fields)

    def __repr__(self) -> str:
        return f"SparseOut({self.header!r}, {'empty' if self.values is None else 'payload'})"


class SparsePlan:
    """One worker's tensor as blocks of N: which are non-zero, the next one of a stream, payloads and results."""

    def __init__(self, array: np.ndarray, num_elems: int, num_workers: int, streams: int, mode: str) -> None:
        arr = np.asarray(array)
        if mode == "float32":
            if not np.issubdtype(arr.dtype, np.floating):
                raise TypeError(f"float32 mode needs a floating-point array, got {arr.dtype}")
            arr = np.asarray(arr, dtype=np.float32)
            check_finite_range(arr)
        elif mode == "int32":
            if not np.issubdtype(arr.dtype, np.integer):
                raise TypeError(f"int32 mode needs an integer array, got {arr.dtype}")
            if arr.size and (arr.min() < -(2**31) or arr.max() > 2**31 - 1):
                raise ValueError("int32 mode: values outside the int32 range")
        else:
            raise ValueError(f"dtype must be float32 or int32, got {mode!r}")
        self.mode = mode
        self.size, self.shape = arr.size, arr.shape
        self.blocks = block_view(arr, num_elems, np.float32 if mode == "float32" else np.int32)
        self.num_blocks = self.blocks.shape[0]
        self.streams = streams
        nonzero = np.flatnonzero(np.any(self.blocks != 0, axis=1))
        self._next = [nonzero[nonzero % streams == i].tolist() for i in range(streams)]
        """Per stream, its non-zero blocks in order."""
        self._is_nz = np.zeros(self.num_blocks, dtype=bool)
        self._is_nz[nonzero] = True
        self.out = np.zeros(self.blocks.shape, dtype=self.blocks.dtype)
        if mode == "float32":
            self.local = block_exponents(self.blocks)
            self.agreed = np.full(self.num_blocks, EXP_MIN, dtype=np.int64)
            """The switch's exponent of each block; a block zero in every worker keeps EXP_MIN (its exponent)."""
            self._m = INT32_MAX // num_workers

    def stream_blocks(self, i: int) -> int:
        """How many blocks stream i has."""
        return max(0, -(-(self.num_blocks - i) // self.streams))

    def next_after(self, i: int, block: int) -> int:
        """Stream i's first non-zero block of this worker after block (-1: from the start), else NO_BLOCK."""
        nz = self._next[i]
        k = bisect_right(nz, block)
        return nz[k] if k < len(nz) else NO_BLOCK

    def exponent(self, block: int) -> int:
        """The biased local exponent of block, sent ahead of it (0 for int32 and for NO_BLOCK)."""
        if self.mode != "float32" or block == NO_BLOCK:
            return 0
        return int(self.local[block]) + EXPONENT_BIAS

    def agree(self, block: int, wire: int) -> None:
        """The switch's exponent for block (from the RESULT naming it next), checked against this worker's own."""
        if self.mode != "float32":
            return
        e = wire - EXPONENT_BIAS
        if not EXP_MIN <= e <= EXP_MAX or e < self.local[block]:
            raise ProtocolError(f"switch returned exponent {e} (wire {wire}) for block {block}, but this worker's own "
                                f"exponent is {int(self.local[block])}: the switch must return the maximum")
        self.agreed[block] = e

    def payload(self, block: int) -> np.ndarray | None:
        """Block's DATA payload (big-endian int32), None when it is zero here."""
        if not self._is_nz[block]:
            return None
        if self.mode == "int32":
            return self.blocks[block].astype(WIRE_INT32)
        # SwitchML's quantize: rint(x * m / 2^e) in float64; |x| < 2^e (agree refuses less) keeps it within +-m
        q = self.blocks[block].astype(np.float64) * math.ldexp(self._m, -int(self.agreed[block]))
        return np.rint(q).astype(WIRE_INT32)

    def result(self, block: int, values: np.ndarray) -> None:
        if self.mode == "int32":
            self.out[block] = values
        else:
            self.out[block] = np.asarray(values, dtype=np.float64) / math.ldexp(self._m, -int(self.agreed[block]))

    def output(self) -> np.ndarray:
        return self.out.ravel()[: self.size].reshape(self.shape)


class _Round(Outstanding):
    """A stream's outstanding round: its block and pool index."""

    __slots__ = ("block", "pool_index", "round")

    def __init__(self, key: int, block: int, pool_index: int, round_: int) -> None:
        super().__init__(key)
        self.block = block
        self.pool_index = pool_index
        self.round = round_


@dataclass(slots=True)
class StreamWindow(ReliableWindow):
    """One run's streams, one round of each in flight; timers, RTO, fast retransmit and giving up are
    `worker.reliable.ReliableWindow`'s. `rounds` per stream once done: what the switch aggregated, per worker."""

    plan: SparsePlan
    job_id: int
    rank: int
    slots: Sequence[int]
    first_set: Sequence[int]
    options: WindowOptions = field(default_factory=WindowOptions)
    stats: Stats = field(default_factory=Stats)
    timeline: Timeline | None = None
    rounds: list[int] = field(default_factory=list, init=False)
    """Rounds sent so far, per stream."""
    width: int = field(default=0, init=False)
    _index_of: dict[int, int] = field(default_factory=dict, init=False)
    _ready: deque[_Round] = field(default_factory=deque, init=False)
    _epoch: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        if len(self.slots) != len(self.first_set) or len(self.slots) != self.plan.streams:
            raise ValueError("slots and first_set must have one entry per stream")
        self.width = len(self.slots)
        plan = self.plan
        # an upper bound until each stream ends (then exact): the announcing round and one per block
        total = sum(1 + plan.stream_blocks(i) for i in range(self.width)) if plan.num_blocks else 0
        self._init_reliable(self.options, self.stats, self.timeline, total, self.width)
        self.rounds = [0] * self.width
        for i, slot in enumerate(self.slots):
            self._index_of[slot] = self._index_of[slot | SET_BIT] = i
            if self.timeline is not None:
                self.timeline.track(slot + 1, f"stream {i} (slot {slot})")

    @property
    def total_rounds(self) -> int:
        """Rounds of the whole run, the same in every worker (once done)."""
        return sum(self.rounds)

    def _round(self, i: int, block: int, now: float | None) -> _Round:
        r = self.rounds[i]
        self.rounds[i] = r + 1
        pool = self.slots[i] | (SET_BIT if self.first_set[i] ^ (r & 1) else 0)
        p = _Round(i, block, pool, r)
        plan = self.plan
        nxt = plan.next_after(i, -1 if block == NO_BLOCK else block)
        values = None if block == NO_BLOCK else plan.payload(block)
        p.out = SparseOut((MSG_DATA, self.job_id, pool, block, plan.exponent(nxt), 0, self.rank, nxt), values)
        return p

    def _send(self, p: _Round, now: float, out: list[SparseOut]) -> None:
        if self.bdp is None or (not self._ready and len(self._pending) < self.bdp.window):
            out.append(self._book(p, now).out)
        else:
            self._ready.append(p)

    def start(self, now: float) -> list[SparseOut]:
        self._start = now
        out: list[SparseOut] = []
        if self.plan.num_blocks:
            for i in range(self.width):
                self._send(self._round(i, NO_BLOCK, now), now, out)
        else:
            self._finish(now)
        return out

    def on_packet(self, hdr: SparseHeader, values: np.ndarray, now: float) -> list[SparseOut]:
        """Take one received packet; returns the packets to send."""
        return self.on_packets([astuple_sparse(hdr)], np.asarray(values)[None], now)

    def on_packets(self, headers: Sequence[SparseFields], values: np.ndarray, now: float) -> list[SparseOut]:
        """Take the packets of one receive (header values, (k, N) payloads); returns the packets to send."""
        out: list[SparseOut] = []
        for row, fields in enumerate(headers):
            self._take(fields, values[row], now, out)
        while self._ready and self._room():
            out.append(self._book(self._ready.popleft(), now).out)
        return out

    def _take(self, fields: Sequence[int], values: np.ndarray, now: float, out: list[SparseOut]) -> None:
        msg_type, job, pool, block, exponent, flags, _rank, nxt = fields
        stats = self.stats
        if msg_type != MSG_RESULT or job != self.job_id:
            stats.foreign_ignored += 1
            return
        epoch = flags >> 1
        if epoch != self._epoch:
            if self._epoch:
                raise SwitchRestarted(self.job_id, self._epoch, epoch)
            self._epoch = epoch
        i = self._index_of.get(pool, -1)
        p = self._pending.get(i)
        if p is None or p.pool_index != pool or p.block != block:
            stats.duplicates_ignored += 1
            return
        del self._pending[i]
        if self.timeline is not None:
            self.timeline.span(f"block {p.block}" if p.block != NO_BLOCK else "announce", (pool & 0x7FFF) + 1,
                               p.first_sent, now, "packet", round=p.round, retransmissions=p.retries + p.fast_count)
        self._answer(p, now)
        plan = self.plan
        if p.block != NO_BLOCK:
            plan.result(p.block, values)
        if nxt == NO_BLOCK:
            # the stream is over: the bound counted one round per block, it took self.rounds[i]
            self._lower_total(1 + plan.stream_blocks(i) - self.rounds[i])
        else:
            if (nxt >= plan.num_blocks or nxt % self.width != i
                    or (p.block != NO_BLOCK and nxt <= p.block)):
                raise ProtocolError(f"job {self.job_id}: the switch named block {nxt} next on stream {i} after "
                                    f"{'its announcement' if p.block == NO_BLOCK else f'block {p.block}'}: the "
                                    "workers disagree on the tensor's size or window (same --size, --dtype and "
                                    "--window everywhere?)")
            plan.agree(nxt, exponent)
            self._send(self._round(i, nxt, now), now, out)
        if self._answered == self._total:
            self._finish(now)
        out.extend(self._fast_retransmits(now))

    def _flag(self, p: _Round) -> SparseOut:
        f = p.out.fields
        if f[5] & FLAG_RETRANSMIT:
            return p.out
        return SparseOut((f[0], f[1], f[2], f[3], f[4], f[5] | FLAG_RETRANSMIT, f[6], f[7]), p.out.values)

    def _track(self, p: _Round) -> tuple[int, dict[str, int]]:
        return (p.pool_index & (SET_BIT - 1)) + 1, {"block": p.block, "round": p.round}

    def _give_up(self, p: _Round, now: float) -> None:
        raise SwitchUnreachable(job_id=self.job_id, slot=p.pool_index & (SET_BIT - 1), set_=p.pool_index >> 15,
                                packet_id=p.block, transmissions=p.retries + 1 + p.fast_count,
                                waited=now - p.first_sent,
                                last_result_ago=None if self._last_result is None else now - self._last_result)

    def next_first_set(self) -> list[int]:
        """first_set for the next run on the same slots (each slot continues alternating)."""
        return [s ^ (r & 1) for s, r in zip(self.first_set, self.rounds)]
