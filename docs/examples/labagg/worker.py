"""labagg's host side: its packet codec (from the compiled program's JSON), its window core on the shared reliable
window (`worker.reliable`), and its rank (`worker.collective.Rank`).

Packet p of an all-reduce carries block p and uses slot `base + p mod W`, in the set that slot's use alternates to
(each slot flips sets from one use to the next, and across all-reduces); it is sent once the result of packet p - W
(the same slot, the other set) arrived, so the switch still holds that result while the other set fills. float32
travels as fixed point: q = rint(x * 2^SCALE_BITS), summed exactly in int32; a value whose sum could overflow is
refused before anything is sent.
"""

from __future__ import annotations

import math
import struct
from collections import deque
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from switch.timeline import Timeline
from worker.blocks import to_blocks
from worker.codec import CodecError, HeaderSpec, MalformedPacket, codec_source
from worker.collective import CollectiveOptions
from worker.driver import WindowOptions
from worker.errors import InputError, Unreachable
from worker.job import JobConfig
from worker.reliable import Outstanding, ReliableWindow
from worker.stats import RunResult, Stats
from worker.verify import Verdict, verify_fixed_point

HEADER_TYPE = "lab_h"
UDP_PORT = 0xBEE2
MSG_DATA, MSG_RESULT = 1, 2
FLAG_RETRANSMIT = 1
SET_BIT = 0x8000
WINDOW = 32
"""Packets in flight per worker when the options leave it unset (at most the job's pool)."""
SCALE_BITS = 16
"""float32 values travel as rint(x * 2^16)."""
FIELDS = ("msg_type", "job_id", "slot", "seq", "rank", "flags")


class LabCodec:
    """The lab header and its 32-bit payload, laid out as the compiled program declares them."""

    def __init__(self, spec: HeaderSpec, num_elems: int) -> None:
        names = [f.name for f in spec.fields]
        fmt = spec.struct_format()
        if names != list(FIELDS) or fmt is None:
            raise CodecError(f"header type {spec.name} is not labagg's ({', '.join(FIELDS)}), it has {names}")
        self.header = spec
        self.num_elems = num_elems
        self._struct = struct.Struct(fmt)
        self.packet_len = spec.byte_len + 4 * num_elems

    @classmethod
    def from_program_json(cls, src: str | Path | Mapping[str, Any]) -> LabCodec:
        return cls(*codec_source(src, HEADER_TYPE))

    def encode(self, header: tuple[int, ...], values: np.ndarray) -> bytes:
        return self._struct.pack(*header) + np.asarray(values, dtype=">i4").tobytes()

    def decode(self, data: bytes) -> tuple[tuple[int, ...], np.ndarray]:
        if len(data) != self.packet_len:
            raise MalformedPacket(f"labagg packet of {len(data)} bytes, expected {self.packet_len}")
        values = np.frombuffer(data, dtype=">i4", offset=self.header.byte_len).astype(np.int32)
        return self._struct.unpack_from(data), values


class LabUnreachable(Unreachable):
    """No result for a packet after every retransmission."""

    def __init__(self, job_id: int, seq: int, slot: int, waited: float) -> None:
        self.seq, self.slot = seq, slot
        super().__init__(f"job {job_id}: no result for packet {seq} (slot {slot & ~SET_BIT}) after {waited:.2f} s: "
                         "switch unreachable, job not installed, or another worker of the job stopped sending")

    @property
    def details(self) -> dict[str, int]:
        return {"packet_id": self.seq, "slot": self.slot & ~SET_BIT}


class _Pending(Outstanding):
    __slots__ = ("packet", "slot")

    def __init__(self, key: int, packet: int, slot: int) -> None:
        super().__init__(key)
        self.packet, self.slot = packet, slot


class LabWindow(ReliableWindow):
    """One all-reduce of `blocks` (int32 rows of N) by rank `rank`: start(), then on_packet()/on_timer()."""

    def __init__(self, job: JobConfig, rank: int, blocks: np.ndarray, sets: list[int], options: WindowOptions,
                 timeline: Timeline | None = None) -> None:
        self.job, self.rank, self.blocks, self.sets = job, rank, blocks, sets
        self.width = len(sets)
        self.result = np.zeros_like(blocks)
        self._waiting: deque[int] = deque()
        self._init_reliable(options, Stats(), timeline, len(blocks), self.width)

    def _send(self, packet: int, now: float) -> Any:
        i = packet % self.width
        slot = (self.job.pool.base + i) | (SET_BIT if self.sets[i] ^ (packet // self.width) & 1 else 0)
        p = self._book(_Pending(i, packet, slot), now)
        p.out = ((MSG_DATA, self.job.job_id, slot, packet, self.rank, 0), self.blocks[packet])
        return p.out

    def _send_or_wait(self, packet: int, now: float) -> list[Any]:
        """Send `packet` if the adaptive window has room, else queue it; then whatever queued fits."""
        if packet < len(self.blocks):
            self._waiting.append(packet)
        out = []
        while self._waiting and self._room():
            out.append(self._send(self._waiting.popleft(), now))
        return out

    def start(self, now: float) -> list[Any]:
        self._start = now
        out: list[Any] = []
        for packet in range(min(self.width, len(self.blocks))):
            out += self._send_or_wait(packet, now)
        return out

    def on_packet(self, header: tuple[int, ...], values: np.ndarray, now: float) -> list[Any]:
        msg, job, slot, seq, _rank, _flags = header
        p = self._pending.get(seq % self.width) if msg == MSG_RESULT and job == self.job.job_id else None
        if p is None or p.packet != seq or p.slot != slot:
            self.stats.duplicates_ignored += 1
            return []
        del self._pending[p.key]
        self.result[seq] = values
        self._answer(p, now)
        if self.done:
            self._finish(now)
        return self._fast_retransmits(now) + self._send_or_wait(seq + self.width, now)

    def _flag(self, p: _Pending) -> Any:
        header, values = p.out
        return header[:5] + (header[5] | FLAG_RETRANSMIT,), values

    def _track(self, p: _Pending) -> tuple[int, dict[str, int]]:
        return (p.slot & ~SET_BIT) + 1, {"packet": p.packet}

    def _give_up(self, p: _Pending, now: float) -> None:
        raise LabUnreachable(self.job.job_id, p.packet, p.slot, now - p.first_sent)


class LabRank:
    """One worker of a labagg job: its all-reduces in order (each slot's sets keep alternating)."""

    accept_any_source = False
    decode_batch = None

    def __init__(self, job: JobConfig, rank: int, codec: LabCodec, options: CollectiveOptions) -> None:
        if codec.num_elems != job.num_elems:
            raise CodecError(f"job {job.job_id} says num_elems={job.num_elems}, labagg.p4 carries {codec.num_elems}")
        self.job, self.rank, self.codec = job, rank, codec
        self.options = options.window
        self.timeline = options.timeline
        self.decode = codec.decode
        self._sets = [0] * job.pool.size

    def destination(self) -> tuple[str, str, int]:
        return self.job.switch.mac, self.job.switch.ip, UDP_PORT

    def encode(self, out: Any) -> bytes:
        return self.codec.encode(*out)

    def begin(self, array: np.ndarray, dtype: str | None = None) -> LabWindow:
        arr = np.asarray(array)
        mode = dtype or ("int32" if np.issubdtype(arr.dtype, np.integer) else "float32")
        if mode == "int32":
            blocks = to_blocks(arr, self.job.num_elems, np.int32)
        elif mode == "float32":
            limit = (2**31 - 1) / self.job.num_workers
            q = np.rint(to_blocks(arr, self.job.num_elems, np.float64) * math.ldexp(1.0, SCALE_BITS))
            if q.size and not (np.all(np.isfinite(q)) and np.abs(q).max() <= limit):
                raise InputError(f"labagg carries float32 as fixed point x * 2^{SCALE_BITS}: values must stay "
                                 f"within +-{limit / 2**SCALE_BITS:.4g} for {self.job.num_workers} workers")
            blocks = q.astype(np.int32)
        else:
            raise ValueError(f"dtype must be float32 or int32, got {mode!r}")
        width = max(1, min(self.options.width(self.job.pool.size, WINDOW), len(blocks)))
        win = LabWindow(self.job, self.rank, blocks, self._sets[:width], self.options, self.timeline)
        win.stats.elements = arr.size
        win.dtype, win.shape = mode, arr.shape  # type: ignore[attr-defined]
        return win

    def end(self, win: LabWindow) -> RunResult:
        n = len(win.blocks)
        self._sets[: win.width] = [s ^ (max(0, -(-(n - i) // win.width)) & 1) for i, s in enumerate(win.sets)]
        flat = win.result.ravel()[: int(np.prod(win.shape))]
        out = flat.astype(np.float64) / 2**SCALE_BITS if win.dtype == "float32" else flat  # type: ignore[attr-defined]
        dtype = np.float32 if win.dtype == "float32" else np.int32  # type: ignore[attr-defined]
        return RunResult(out.astype(dtype).reshape(win.shape), win.stats, None)  # type: ignore[attr-defined]

    def verify(self, run: RunResult, inputs: list[np.ndarray], dtype: str) -> Verdict:
        return verify_fixed_point(run.array, inputs, dtype, SCALE_BITS)
