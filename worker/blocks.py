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
from typing import Protocol

import numpy as np

from worker.quantize import (
    EXP_MAX,
    EXP_MIN,
    INT32_MAX,
    block_exponents,
    check_finite_range,
    decode_exponent,
    dequantize,
    encode_exponent,
    quantize,
)

__all__ = ["PacketPlan", "ProtocolError", "Int32Plan", "Float32Plan", "to_blocks"]


class ProtocolError(RuntimeError):
    """The switch answered something no correct switch would (e.g. an exponent below this worker's own)."""


class PacketPlan(Protocol):
    """What the window core needs from a plan."""

    num_packets: int

    def packet(self, packet_id: int) -> tuple[int, np.ndarray]:
        """(biased wire exponent, int32 payload) of packet packet_id."""
        ...

    def result(self, packet_id: int, exponent: int, values: np.ndarray) -> None:
        """Take the switch's result for packet packet_id (biased exponent, int32 sums)."""
        ...


def to_blocks(array: np.ndarray, num_elems: int, dtype: type) -> np.ndarray:
    """A (B, num_elems) copy of the flattened array in dtype, the last block zero-padded."""
    flat = np.ascontiguousarray(array, dtype=dtype).ravel()
    b = -(-flat.size // num_elems)
    out = np.zeros(b * num_elems, dtype=dtype)
    out[: flat.size] = flat
    return out.reshape(b, num_elems)


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
        self.blocks = to_blocks(arr, num_elems, np.int32)
        self.sums = np.zeros_like(self.blocks)
        self.num_packets = self.blocks.shape[0]
        self.num_blocks = self.num_packets

    def packet(self, packet_id: int) -> tuple[int, np.ndarray]:
        return 0, self.blocks[packet_id]

    def result(self, packet_id: int, exponent: int, values: np.ndarray) -> None:
        self.sums[packet_id] = values

    def output(self) -> np.ndarray:
        """The all-reduced array, in the input's shape."""
        return self.sums.ravel()[: self.size].reshape(self.shape)


class Float32Plan:
    """float32 block floating point with the exponent sent one window ahead: B + W packets."""

    def __init__(self, array: np.ndarray, num_elems: int, num_workers: int, window: int) -> None:
        arr = np.asarray(array)
        if not np.issubdtype(arr.dtype, np.floating):
            raise TypeError(f"float32 mode needs a floating-point array, got {arr.dtype}")
        arr32 = arr.astype(np.float32)
        check_finite_range(arr32.ravel())
        if window < 1:
            raise ValueError("window must be >= 1")
        self.size = arr.size
        self.shape = arr.shape
        self.n = num_workers
        self.window = window
        self.blocks = to_blocks(arr32, num_elems, np.float32)
        self.num_blocks = self.blocks.shape[0]
        self.local_exponents = block_exponents(self.blocks)
        # per-packet fast path (the window calls packet()/result() once per packet): float64 blocks converted once,
        # scalar scale factors with math.ldexp; bit-identical to quantize()/dequantize() (tests/worker/test_window.py)
        self._blocks64 = self.blocks.astype(np.float64)
        self._wire_exp = [int(e) for e in encode_exponent(self.local_exponents)]
        self._m = INT32_MAX // num_workers
        self._q = np.empty(num_elems, dtype=np.float64)
        self.agreed = np.full(self.num_blocks, EXP_MIN - 1, dtype=np.int64)  # EXP_MIN - 1: not yet known
        self.out = np.zeros_like(self.blocks)
        self.num_packets = self.num_blocks + window if self.num_blocks else 0
        self._zeros = np.zeros(num_elems, dtype=np.int32)

    def packet(self, packet_id: int) -> tuple[int, np.ndarray]:
        exp = self._wire_exp[packet_id] if packet_id < self.num_blocks else 0
        k = packet_id - self.window
        if k < 0:
            return exp, self._zeros
        e = int(self.agreed[k])
        if e < EXP_MIN:
            raise AssertionError(f"packet {packet_id} built before block {k}'s exponent was agreed")
        # = quantize(self.blocks[k], e, self.n): rint(x * f) saturated to +-m, f = m / 2^e exact in float64
        q = np.multiply(self._blocks64[k], math.ldexp(self._m, -e), out=self._q)
        np.rint(q, out=q)
        np.minimum(q, self._m, out=q)
        np.maximum(q, -self._m, out=q)
        return exp, q.astype(np.int32)

    def result(self, packet_id: int, exponent: int, values: np.ndarray) -> None:
        if packet_id < self.num_blocks:
            e = int(decode_exponent(exponent))
            if not EXP_MIN <= e <= EXP_MAX or e < self.local_exponents[packet_id]:
                raise ProtocolError(
                    f"switch returned exponent {e} (wire {exponent}) for block {packet_id}, but this worker's own "
                    f"exponent is {int(self.local_exponents[packet_id])}: the switch must return the maximum"
                )
            self.agreed[packet_id] = e
        k = packet_id - self.window
        if k >= 0:
            # = dequantize(values, agreed, n): float64(S) / f, rounded once to float32 on assignment
            self.out[k] = values / math.ldexp(self._m, -int(self.agreed[k]))

    def output(self) -> np.ndarray:
        """The all-reduced array (float32), in the input's shape."""
        return self.out.ravel()[: self.size].reshape(self.shape)
