"""The ATP packet codec, derived from the compiled atp.p4's BMv2 JSON (`header_types` "atp_h" and its payload).

The ATP header is declared once, in `p4src/include/atp_headers.p4`; this module reads the field layout from the
compiled JSON like `worker.switchml.header.Codec` does for SwitchML: the header must contain the fields of `AtpHeader`
(others are sent as 0), the payload is the N 32-bit elements after it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, replace
from dataclasses import fields as dc_fields
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from worker.codec import CodecError, HeaderSpec, MalformedPacket, codec_source, load_program

__all__ = ["ATP_UDP_PORT", "ACK", "ECN", "RESEND", "COLLISION", "OVERFLOW", "RAW", "FLOAT", "AtpHeader", "AtpCodec",
           "EsaCodec", "ReleaseCodec", "codec_of_program", "flag_names"]

ATP_UDP_PORT = 48865
"""UDP destination port of every ATP packet (0xBEE1): workers -> PS, PS -> switch (ACK), switch -> workers (source)."""
ATP_HEADER_TYPE = "atp_h"
ESA_HEADER_TYPE = "esa_h"
"""esa.p4's header: ATP's, under its own type name (the tools tell the programs apart by it)."""
RELEASE_HEADER_TYPE = "release_h"
"""release.p4's header: ATP's, under its own type name."""

ACK = 0x01
"""Parameter packet from the PS: frees the aggregator, multicast to the job's workers."""
ECN = 0x02
RESEND = 0x04
"""A retransmission: flushes the partial aggregate to the PS; never allocates an aggregator."""
COLLISION = 0x08
OVERFLOW = 0x10
"""On an aggregate: an addition saturated. On an ACK without RAW: the PS asks for a raw resend of the sequence."""
RAW = 0x20
"""The payload is the raw values (float32 bits with FLOAT, else int32): only the PS adds them."""
FLOAT = 0x40

_FLAG_NAMES = {ACK: "ack", ECN: "ecn", RESEND: "resend", COLLISION: "collision", OVERFLOW: "overflow", RAW: "raw",
               FLOAT: "float"}


def flag_names(flags: int) -> str:
    """`ack|ecn` for flags 0x03 (`-` for none)."""
    return "|".join(n for b, n in _FLAG_NAMES.items() if flags & b) or "-"


@dataclass(frozen=True, slots=True)
class AtpHeader:
    """The ATP header's values (24 bytes with the default layout)."""

    bitmap0: int = 0
    bitmap1: int = 0
    fan_in0: int = 0
    fan_in1: int = 0
    flags: int = 0
    job_id: int = 0
    seq: int = 0
    agtr: int = 0
    agtr_next: int = 0
    rank: int = 0

    def with_flags(self, flags: int) -> AtpHeader:
        return replace(self, flags=flags)


_FIELDS: tuple[str, ...] = tuple(f.name for f in dc_fields(AtpHeader))


class AtpCodec:
    """Encodes and decodes ATP UDP payloads (header + N int32 elements) for one program layout."""

    HEADER_TYPE = ATP_HEADER_TYPE
    """The program's header type this codec reads."""

    def __init__(self, spec: HeaderSpec, num_elems: int) -> None:
        names = {f.name for f in spec.fields}
        missing = [n for n in _FIELDS if n not in names]
        if missing:
            raise CodecError(f"header type {spec.name} lacks field(s) {', '.join(missing)} needed by ATP hosts")
        if num_elems <= 0:
            raise CodecError(f"no payload elements found after {spec.name}")
        self.spec = spec
        self.num_elems = num_elems
        self.header_len = spec.byte_len
        self.packet_len = self.header_len + 4 * num_elems
        self._order = tuple(_FIELDS.index(f.name) if f.name in _FIELDS else -1 for f in spec.fields)
        self._masks = tuple((1 << f.width) - 1 for f in spec.fields)
        fmt = spec.struct_format()
        self._struct = struct.Struct(fmt) if fmt is not None else None

    @classmethod
    def from_program_json(cls, src: str | Path | Mapping[str, Any]) -> AtpCodec:
        """Derive the codec from a compiled atp.p4 (a path or the parsed dict)."""
        return cls(*codec_source(src, cls.HEADER_TYPE))

    def encode(self, hdr: AtpHeader, values: np.ndarray | Sequence[int]) -> bytes:
        """UDP payload: header then exactly num_elems big-endian 32-bit elements (int32, or float32 bits as int32)."""
        arr = np.asarray(values)
        if arr.shape != (self.num_elems,):
            raise ValueError(f"payload must have {self.num_elems} elements, got shape {arr.shape}")
        if arr.dtype == np.float32:
            arr = arr.view(np.int32)
        elif arr.dtype != np.int32:
            arr = arr.astype(np.int64).astype(np.uint32).view(np.int32)
        vals = (hdr.bitmap0, hdr.bitmap1, hdr.fan_in0, hdr.fan_in1, hdr.flags, hdr.job_id, hdr.seq, hdr.agtr,
                hdr.agtr_next, hdr.rank)
        wire = [vals[i] & m if i >= 0 else 0 for i, m in zip(self._order, self._masks)]
        head = self._struct.pack(*wire) if self._struct is not None else self.spec.pack(wire)
        return head + arr.astype(">i4").tobytes()

    def decode(self, data: bytes) -> tuple[AtpHeader, np.ndarray]:
        """(header, int32 elements); MalformedPacket unless the length is exact."""
        if len(data) != self.packet_len:
            raise MalformedPacket(f"ATP packet has {len(data)} bytes, expected {self.packet_len} "
                                  f"({self.header_len}-byte header + {self.num_elems} x int32)")
        wire = self._struct.unpack_from(data) if self._struct is not None else self.spec.unpack(data)
        vals = [0] * len(_FIELDS)
        for w, i in zip(wire, self._order):
            if i >= 0:
                vals[i] = w
        values = np.frombuffer(data, dtype=">i4", count=self.num_elems, offset=self.header_len).astype(np.int32)
        return AtpHeader(*vals), values

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec.name}, {self.num_elems} x int32, {self.packet_len} bytes)"


class EsaCodec(AtpCodec):
    """esa.p4's packets: ATP's (`ESA_HEADER_TYPE`)."""

    HEADER_TYPE = ESA_HEADER_TYPE


class ReleaseCodec(AtpCodec):
    """release.p4's packets: ATP's (`RELEASE_HEADER_TYPE`)."""

    HEADER_TYPE = RELEASE_HEADER_TYPE


def codec_of_program(src: str | Path | Mapping[str, Any]) -> AtpCodec:
    """The codec of a compiled program of ATP's packets: esa.p4's or release.p4's, else atp.p4's (its error names
    the program)."""
    prog = load_program(src)
    names = {t.get("name") for t in prog.get("header_types", []) if isinstance(t, dict)}
    return next((c for c in (EsaCodec, ReleaseCodec) if c.HEADER_TYPE in names), AtpCodec).from_program_json(prog)
