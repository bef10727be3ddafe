"""Packet plans: what each packet of one all-reduce carries and what each result means.

A plan cuts the input into blocks of N elements (the last one zero-padded) and maps packet ids to payloads:

- `Int32Plan`: pass-through, packet p carries block p; the switch's int32 sums (two's complement wraparound) are the
  result, exactly.
- `Float32Plan`: SwitchML's exponent-ahead block floating point with window W. Packet p carries the local exponent of
  block p (biased, 0 when p >= B) and the data of block p - W (zeros when p < W), quantized with the exponent the
  switch agreed on in the result of packet p - W. So there are B + W packets: the first W ("extra batch") carry only
  exponents, the last W only data, and data is always quantized with the already-known max exponent. Because packet
  p reuses the slot of packet p - W (other set) and is only sent after that result arrived, the agreed exponent is
  always known when packet p is built.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from worker.blocks import block_view, to_blocks
from worker.errors import ProtocolError
from worker.switchml.header import WIRE_INT32
from worker.switchml.quantize import (
    EXP_MAX,
    EXP_MIN,
    EXPONENT_BIAS,
    INT32_MAX,
    block_exponents,
    check_finite_range,
    encode_exponent,
)

__all__ = ["PacketPlan", "ProtocolError", "Int32Plan", "Float32Plan", "to_blocks", "block_view"]


class PacketPlan(Protocol):
    """What the window core needs from a plan."""

    num_packets: int

    def packets(self, packet_ids: Sequence[int]) -> tuple[list[int], np.ndarray]:
        """(biased wire exponent of each packet, their payloads as a (len(packet_ids), N) big-endian int32 array)."""
        ...

    def results(self, packet_ids: Sequence[int], exponents: Sequence[int], values: np.ndarray) -> None:
        """Take the switch's results for packet_ids (biased exponents, (k, N) int32 sums in any byte order)."""
        ...


_EXPONENTS = tuple(range(EXP_MIN, EXP_MAX + 1))
"""The exponents EXP_MIN..EXP_MAX as shared int objects, e at index e - EXP_MIN (Python caches only -5..256)."""


def _rows(ks: list[int]) -> slice | list[int]:
    """An index for rows ks: a slice when they are consecutive and ascending (a batch's usual case; numpy indexes a
    slice ~20x faster than a list)."""
    first = ks[0]
    if ks[-1] - first == len(ks) - 1 and ks == list(range(first, first + len(ks))):
        return slice(first, first + len(ks))
    return ks


class Int32Plan:
    """int32 pass-through: B packets, results are the exact int32 (wrapping) sums."""

    def __init__(self, array: np.ndarray, num_elems: int) -> None:
        arr = np.asarray(array)
        if not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"int32 mode needs an integer array, got {arr.dtype}")
        if arr.size and (arr.min() < -(2**31) or arr.max() > 2**31 - 1):
            raise ValueError("int32 mode: values outside the int32 range")
        self.size = arr.size
        self.shape = arr.shape
        self.blocks = block_view(arr, num_elems, np.int32)
        self.sums = np.zeros(self.blocks.shape, dtype=np.int32)
        self.num_packets = self.blocks.shape[0]
        self.num_blocks = self.num_packets

    def packets(self, packet_ids: Sequence[int]) -> tuple[list[int], np.ndarray]:
        return [0] * len(packet_ids), self.blocks[packet_ids].astype(WIRE_INT32)

    def results(self, packet_ids: Sequence[int], exponents: Sequence[int], values: np.ndarray) -> None:
        self.sums[packet_ids] = values

    def packet(self, packet_id: int) -> tuple[int, np.ndarray]:
        """One packet of `packets`, its payload as native int32."""
        exps, rows = self.packets([packet_id])
        return exps[0], rows[0].astype(np.int32)

    def result(self, packet_id: int, exponent: int, values: np.ndarray) -> None:
        """One result of `results`."""
        self.results([packet_id], [exponent], np.asarray(values)[None])

    def output(self) -> np.ndarray:
        """The all-reduced array, in the input's shape."""
        return self.sums.ravel()[: self.size].reshape(self.shape)


class Float32Plan:
    """float32 block floating point with the exponent sent one window ahead: B + W packets.

    Memory: the blocks are a view of the input when it is float32 (no copy), the output is one float32 array, the
    per-block state a few bytes per block; packets are quantized and results dequantized a batch of rows at a time
    (`packets` / `results`), so nothing proportional to the tensor is allocated per packet."""

    def __init__(self, array: np.ndarray, num_elems: int, num_workers: int, window: int) -> None:
        arr = np.asarray(array)
        if not np.issubdtype(arr.dtype, np.floating):
            raise TypeError(f"float32 mode needs a floating-point array, got {arr.dtype}")
        arr32 = np.asarray(arr, dtype=np.float32)
        check_finite_range(arr32)
        if window < 1:
            raise ValueError("window must be >= 1")
        self.size = arr.size
        self.shape = arr.shape
        self.n = num_workers
        self.window = window
        self.blocks = block_view(arr32, num_elems, np.float32)
        self.num_blocks = self.blocks.shape[0]
        self.local_exponents = block_exponents(self.blocks)
        self._wire_exp = [int(e) for e in encode_exponent(self.local_exponents)]
        self._local = [_EXPONENTS[e - EXP_MIN] for e in self.local_exponents.tolist()]
        self._agreed = [EXP_MIN - 1] * self.num_blocks  # EXP_MIN - 1: not yet known
        """`local_exponents` and `agreed` as Python ints (batches read them element by element, cheaper than numpy's
        per-call cost); entries are `_EXPONENTS`' objects, so a list costs a pointer per block whatever the values."""
        self._m = INT32_MAX // num_workers
        self.out = np.zeros(self.blocks.shape, dtype=np.float32)
        self.num_packets = self.num_blocks + window if self.num_blocks else 0
        self._zeros = np.zeros((1, num_elems), dtype=WIRE_INT32)
        self._q = np.empty(num_elems, dtype=np.float64)

    def packets(self, packet_ids: Sequence[int]) -> tuple[list[int], np.ndarray]:
        nb, w = self.num_blocks, self.window
        wire = self._wire_exp
        exps = [wire[p] if p < nb else 0 for p in packet_ids]
        if len(packet_ids) == 1 and packet_ids[0] >= w:
            return exps, self._one(packet_ids[0] - w)[None]
        if max(packet_ids) < w:  # all of the first window: exponents only
            return exps, np.broadcast_to(self._zeros, (len(packet_ids), self._zeros.shape[1]))
        ks = [p - w for p in packet_ids if p >= w]
        agreed = self._agreed
        factors = []
        for k in ks:
            e = agreed[k]
            if e < EXP_MIN:
                raise AssertionError(f"packet {k + w} built before its block's exponent was agreed")
            factors.append(math.ldexp(self._m, -e))
        # = quantize(blocks[k], e, n): rint(x * f), f = m / 2^e exact in float64 (the float32 block is widened to
        # float64 before the product, which is rounded once). quantize's saturation to +-m never applies here:
        # _agree refuses an exponent below the block's own, so |x| < 2^e and |x * f| < m
        q = np.multiply(self.blocks[_rows(ks)], np.array(factors)[:, None], dtype=np.float64)
        np.rint(q, out=q)
        if len(ks) == len(packet_ids):
            return exps, q.astype(WIRE_INT32)
        rows = np.zeros((len(packet_ids), q.shape[1]), dtype=WIRE_INT32)
        rows[[i for i, p in enumerate(packet_ids) if p >= w]] = q
        return exps, rows

    def _one(self, k: int) -> np.ndarray:
        """`packets` of the one packet carrying block k, with scalar arithmetic (a batch of one is the common case
        when packets arrive one by one)."""
        e = self._agreed[k]
        if e < EXP_MIN:
            raise AssertionError(f"packet {k + self.window} built before its block's exponent was agreed")
        q = self._q
        q[:] = self.blocks[k]  # float32 -> float64 first: the product must be rounded once, in float64
        q *= math.ldexp(self._m, -e)
        np.rint(q, out=q)  # no saturation needed (see packets)
        return q.astype(WIRE_INT32)

    def results(self, packet_ids: Sequence[int], exponents: Sequence[int], values: np.ndarray) -> None:
        nb, w = self.num_blocks, self.window
        if len(packet_ids) == 1:
            pid = packet_ids[0]
            if pid < nb:
                self._agree(pid, exponents[0])
            if pid >= w:
                self.out[pid - w] = values[0] / math.ldexp(self._m, -self._agreed[pid - w])
            return
        for pid, exponent in zip(packet_ids, exponents):
            if pid < nb:
                self._agree(pid, exponent)
        agreed, m = self._agreed, self._m
        rows = [i for i, p in enumerate(packet_ids) if p >= w]
        if not rows:
            return
        ks = [packet_ids[i] - w for i in rows]
        # = dequantize(values, agreed, n): float64(S) / f, rounded once to float32 on assignment
        f = np.array([math.ldexp(m, -agreed[k]) for k in ks])
        data = values if len(rows) == len(packet_ids) else values[rows]
        self.out[_rows(ks)] = np.divide(data, f[:, None], dtype=np.float64)

    def _agree(self, pid: int, exponent: int) -> None:
        """Record the switch's (biased) exponent for block pid, checked against this worker's own."""
        e = exponent - EXPONENT_BIAS
        if not EXP_MIN <= e <= EXP_MAX or e < self._local[pid]:
            raise ProtocolError(
                f"switch returned exponent {e} (wire {exponent}) for block {pid}, but this worker's own "
                f"exponent is {int(self.local_exponents[pid])}: the switch must return the maximum"
            )
        self._agreed[pid] = _EXPONENTS[e - EXP_MIN]

    @property
    def agreed(self) -> np.ndarray:
        """The switch's exponent of each block (int64; EXP_MIN - 1 where not yet known), a new array."""
        return np.array(self._agreed, dtype=np.int64)

    def packet(self, packet_id: int) -> tuple[int, np.ndarray]:
        """One packet of `packets`, its payload as native int32."""
        exps, rows = self.packets([packet_id])
        return exps[0], rows[0].astype(np.int32)

    def result(self, packet_id: int, exponent: int, values: np.ndarray) -> None:
        """One result of `results`."""
        self.results([packet_id], [exponent], np.asarray(values)[None])

    def output(self) -> np.ndarray:
        """The all-reduced array (float32), in the input's shape."""
        return self.out.ravel()[: self.size].reshape(self.shape)
