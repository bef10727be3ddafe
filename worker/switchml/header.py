"""The INA packet codec, derived from the compiled program's BMv2 JSON `header_types`.

The INA header and the payload are declared once, in `p4src/switchml.p4`; this module reads their layout from the
compiled JSON (`Codec.from_program_json`) instead of repeating it:

- the INA header is the `header_types` entry named ``ina_h`` (fields in wire order, bit-packed, network byte order);
  it must contain the fields of `InaHeader` (msg_type, job_id, pool_index, packet_id, exponent, flags, worker_rank);
  any other field is sent as 0 and ignored on receive;
- the payload is every header instance that follows the ``ina_h`` instance in the deparser's emit ``order`` and whose
  type consists only of 32-bit fields (a header stack of one-field headers or one or more "data" headers alike);
  its total number of 32-bit fields is N, the elements per packet; they carry two's complement int32 values.

`Codec.encode` / `Codec.decode` turn an `InaHeader` plus an int32 numpy vector into the UDP payload bytes and back.
Byte-aligned headers (the normal case) use one precompiled `struct.Struct`; other layouts use exact bit packing.
The worker's hot path skips the `InaHeader` objects: `Codec.encode_fields` takes the field values as a tuple and a
big-endian payload row (no conversion), `Codec.decode_batch` parses every datagram of one receive at once (header
tuples and one (k, N) big-endian view of the payloads).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from dataclasses import fields as dc_fields
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from worker.codec import CodecError, HeaderSpec, MalformedPacket, codec_source

__all__ = [
    "INA_UDP_PORT",
    "MSG_DATA",
    "MSG_RESULT",
    "FLAG_RETRANSMIT",
    "SET_BIT",
    "EXPONENT_BIAS",
    "InaHeader",
    "Codec",
    "HeaderFields",
    "astuple_header",
    "WIRE_INT32",
    "pool_index",
    "split_pool_index",
]

INA_UDP_PORT = 48864
"""UDP destination port of DATA packets and source port of RESULT packets (0xBEE0)."""
MSG_DATA = 1
MSG_RESULT = 2
FLAG_RETRANSMIT = 0x01
SET_BIT = 0x8000
"""pool_index bit 15 selects the set (shadow copy); bits 14..0 are the slot."""
from worker.switchml.quantize import EXPONENT_BIAS  # noqa: E402 - one definition, re-exported

INA_HEADER_TYPE = "ina_h"

WIRE_INT32 = np.dtype(">i4")
"""The payload's element type on the wire (network byte order)."""

HeaderFields = tuple[int, int, int, int, int, int, int]
"""An INA header's values in `InaHeader` order: msg_type, job_id, pool_index, packet_id, exponent, flags,
worker_rank."""


def pool_index(slot: int, set_: int) -> int:
    """The 16-bit pool_index for slot (0..32767) in set 0 or 1."""
    if not 0 <= slot < SET_BIT:
        raise ValueError(f"slot {slot} does not fit in 15 bits")
    if set_ not in (0, 1):
        raise ValueError(f"set must be 0 or 1, got {set_}")
    return slot | (SET_BIT if set_ else 0)


def split_pool_index(index: int) -> tuple[int, int]:
    """(slot, set) of a pool_index."""
    return index & (SET_BIT - 1), (index >> 15) & 1


@dataclass(frozen=True, slots=True)
class InaHeader:
    """The INA header's values (see the brief: 12 bytes with the default layout)."""

    msg_type: int = MSG_DATA
    job_id: int = 0
    pool_index: int = 0
    packet_id: int = 0
    exponent: int = 0
    """Biased by EXPONENT_BIAS on the wire."""
    flags: int = 0
    worker_rank: int = 0

    @property
    def slot(self) -> int:
        return self.pool_index & (SET_BIT - 1)

    @property
    def set(self) -> int:
        return (self.pool_index >> 15) & 1


_INA_FIELDS: tuple[str, ...] = tuple(f.name for f in dc_fields(InaHeader))


def astuple_header(h: InaHeader) -> HeaderFields:
    """The header's values in `HeaderFields` order."""
    return (h.msg_type, h.job_id, h.pool_index, h.packet_id, h.exponent, h.flags, h.worker_rank)


class Codec:
    """Encodes and decodes INA UDP payloads (INA header + N int32 elements) for one program layout."""

    def __init__(self, ina: HeaderSpec, num_elems: int) -> None:
        missing = [n for n in _INA_FIELDS if n not in {f.name for f in ina.fields}]
        if missing:
            raise CodecError(f"header type {ina.name} lacks field(s) {', '.join(missing)} needed by the worker")
        if num_elems <= 0:
            raise CodecError(f"no payload elements found after {ina.name} (need header(s) of 32-bit fields)")
        self.ina = ina
        self.num_elems = num_elems
        self.header_len = ina.byte_len
        self.packet_len = self.header_len + 4 * num_elems
        # Position of each wire field in InaHeader, or -1 for fields the worker does not know (sent as 0).
        self._order = tuple(_INA_FIELDS.index(f.name) if f.name in _INA_FIELDS else -1 for f in ina.fields)
        self._known = tuple(i for i, f in enumerate(ina.fields) if f.name in _INA_FIELDS)
        self._known_slots = tuple(_INA_FIELDS.index(ina.fields[i].name) for i in self._known)
        fmt = ina.struct_format()
        self._struct = struct.Struct(fmt) if fmt is not None else None
        self._masks = tuple((1 << f.width) - 1 for f in ina.fields)
        # the usual layout: the wire fields are InaHeader's, in its order, so a tuple of them packs as it is
        self._direct = self._struct is not None and self._order == tuple(range(len(_INA_FIELDS)))
        self._payload = np.dtype([("header", f"V{self.header_len}"), ("values", WIRE_INT32, (num_elems,))])

    # --- construction ---------------------------------------------------------------------------------------

    @classmethod
    def from_program_json(cls, src: str | Path | Mapping[str, Any]) -> Codec:
        """Derive the codec from a compiled BMv2 JSON program (a path or the parsed dict)."""
        return cls(*codec_source(src, INA_HEADER_TYPE))

    # --- encode / decode ------------------------------------------------------------------------------------

    def encode_header(self, hdr: InaHeader) -> bytes:
        """The INA header bytes."""
        vals = (hdr.msg_type, hdr.job_id, hdr.pool_index, hdr.packet_id, hdr.exponent, hdr.flags, hdr.worker_rank)
        wire = [vals[i] & m if i >= 0 else 0 for i, m in zip(self._order, self._masks)]
        if self._struct is not None:
            return self._struct.pack(*wire)
        return self.ina.pack(wire)

    def encode_fields(self, fields: HeaderFields, values: np.ndarray | Sequence[int]) -> bytes:
        """UDP payload bytes from the header's values (`HeaderFields` order) and the payload; a big-endian int32 row
        of num_elems elements (what the window's plans produce) is copied as it is."""
        if self._direct and getattr(values, "dtype", None) == WIRE_INT32 and values.shape == (self.num_elems,):
            try:
                return self._struct.pack(*fields) + values.tobytes()  # type: ignore[union-attr,union-attr]
            except struct.error:
                pass  # a value wider than its field: reduced modulo 2^width below
        return self.encode(InaHeader(*fields), values)

    def encode(self, hdr: InaHeader, values: np.ndarray | Sequence[int]) -> bytes:
        """UDP payload bytes: INA header then exactly num_elems big-endian int32 elements."""
        arr = np.asarray(values)
        if arr.shape != (self.num_elems,):
            raise ValueError(f"payload must have {self.num_elems} elements, got shape {arr.shape}")
        if arr.dtype != np.int32 and arr.dtype != WIRE_INT32:
            if not np.issubdtype(arr.dtype, np.integer):
                raise ValueError(f"payload must be integers, got {arr.dtype}")
            arr = arr.astype(np.int64).astype(np.uint32).view(np.int32)  # two's complement wrap
        return self.encode_header(hdr) + arr.astype(WIRE_INT32, copy=False).tobytes()

    def decode_header(self, data: bytes) -> InaHeader:
        """The INA header at the start of data."""
        if len(data) < self.header_len:
            raise MalformedPacket(f"INA packet truncated: {len(data)} bytes, header alone is {self.header_len}")
        if self._struct is not None:
            wire = self._struct.unpack_from(data)
        else:
            wire = self.ina.unpack(data)
        vals = [0] * len(_INA_FIELDS)
        for i, slot in zip(self._known, self._known_slots):
            vals[slot] = wire[i]
        return InaHeader(*vals)

    def decode(self, data: bytes) -> tuple[InaHeader, np.ndarray]:
        """(header, int32 elements) from UDP payload bytes; MalformedPacket if the length is not exact."""
        if len(data) != self.packet_len:
            raise MalformedPacket(
                f"INA packet has {len(data)} bytes, expected {self.packet_len} "
                f"({self.header_len}-byte header + {self.num_elems} x int32)"
            )
        hdr = self.decode_header(data)
        values = np.frombuffer(data, dtype=">i4", count=self.num_elems, offset=self.header_len).astype(np.int32)
        return hdr, values

    def decode_batch(self, datagrams: Sequence[bytes]) -> tuple[list[HeaderFields], np.ndarray, int]:
        """Parse the datagrams of one receive at once: (header values per valid datagram, in `HeaderFields` order;
        their payloads as one (k, num_elems) big-endian int32 view; how many were malformed). A datagram is valid
        exactly when `decode` accepts it."""
        size = self.packet_len
        good = [d for d in datagrams if len(d) == size]
        if not good:
            return [], np.empty((0, self.num_elems), dtype=WIRE_INT32), len(datagrams)
        buf = good[0] if len(good) == 1 else b"".join(good)
        if self._direct:
            unpack = self._struct.unpack_from  # type: ignore[union-attr]
            headers: list[HeaderFields] = [unpack(buf, i) for i in range(0, len(buf), size)]
        else:
            headers = [astuple_header(self.decode_header(d)) for d in good]
        values = np.frombuffer(buf, dtype=self._payload)["values"]
        return headers, values, len(datagrams) - len(good)

    def __repr__(self) -> str:
        layout = ", ".join(f"{f.name}:{f.width}" for f in self.ina.fields)
        return f"Codec({self.ina.name}[{layout}] + {self.num_elems} x int32, {self.packet_len} bytes)"
