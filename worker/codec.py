"""What every protocol's packet codec shares: header layouts read from the compiled program's BMv2 JSON.

A protocol declares its header once, in its P4 program; its codec (`worker.switchml.header.Codec`,
`worker.atp.header.AtpCodec`) takes the layout from the compiled JSON through `header_and_payload` instead of
repeating it. `find_program_json` locates the compiled program of a protocol.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["CodecError", "MalformedPacket", "FieldSpec", "HeaderSpec", "load_program", "header_and_payload",
           "find_program_json", "PROGRAM_JSON_CANDIDATES"]


class CodecError(ValueError):
    """The program JSON does not describe a usable INA layout."""


class MalformedPacket(ValueError):
    """Bytes that are not a well-formed INA packet for this codec."""


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One header field: name, width in bits, signedness and bit offset from the header start."""

    name: str
    width: int
    signed: bool
    offset: int


@dataclass(frozen=True, slots=True)
class HeaderSpec:
    """A fixed-width header type as declared in BMv2 JSON `header_types`."""

    name: str
    fields: tuple[FieldSpec, ...]

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> HeaderSpec:
        """Build from one `header_types` entry: {"name", "fields": [[name, width, signed], ...]}."""
        name = entry.get("name")
        raw = entry.get("fields")
        if not isinstance(name, str) or not isinstance(raw, list):
            raise CodecError(f"header_types entry {entry!r} lacks name/fields")
        specs: list[FieldSpec] = []
        offset = 0
        for f in raw:
            if not isinstance(f, (list, tuple)) or len(f) < 2:
                raise CodecError(f"header type {name}: malformed field {f!r}")
            fname, width = f[0], f[1]
            if not isinstance(width, int) or isinstance(width, bool) or width <= 0:
                raise CodecError(f"header type {name}: field {fname} has width {width!r}; varbit is not supported here")
            signed = bool(f[2]) if len(f) > 2 else False
            specs.append(FieldSpec(str(fname), width, signed, offset))
            offset += width
        if offset % 8:
            raise CodecError(f"header type {name}: {offset} bits is not a whole number of bytes")
        return cls(name, tuple(specs))

    @property
    def bit_width(self) -> int:
        return sum(f.width for f in self.fields)

    @property
    def byte_len(self) -> int:
        return self.bit_width // 8

    def field(self, name: str) -> FieldSpec:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"header type {self.name} has no field {name!r}")

    def struct_format(self) -> str | None:
        """A `struct` format for this header when every field is a byte-aligned 8/16/32/64-bit integer, else None."""
        codes = {8: "B", 16: "H", 32: "I", 64: "Q"}
        fmt = "!"
        for f in self.fields:
            if f.offset % 8 or f.width not in codes:
                return None
            code = codes[f.width]
            fmt += code.lower() if f.signed else code
        return fmt

    def pack(self, values: Sequence[int]) -> bytes:
        """Bit-pack field values (in declaration order) into bytes; values are reduced modulo 2^width."""
        acc = 0
        for f, v in zip(self.fields, values, strict=True):
            acc = (acc << f.width) | (int(v) & ((1 << f.width) - 1))
        return acc.to_bytes(self.byte_len, "big")

    def unpack(self, data: bytes) -> tuple[int, ...]:
        """Field values (declaration order) from the first byte_len bytes; signed fields are sign-extended."""
        if len(data) < self.byte_len:
            raise MalformedPacket(f"{self.name}: need {self.byte_len} bytes, got {len(data)}")
        acc = int.from_bytes(data[: self.byte_len], "big")
        out = []
        total = self.bit_width
        for f in self.fields:
            v = (acc >> (total - f.offset - f.width)) & ((1 << f.width) - 1)
            if f.signed and v >> (f.width - 1):
                v -= 1 << f.width
            out.append(v)
        return tuple(out)


def load_program(src: str | Path | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(src, Mapping):
        return src
    try:
        data = json.loads(Path(src).read_text())
    except OSError as exc:
        raise CodecError(f"cannot read program JSON {src}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise CodecError(f"{src}: not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise CodecError(f"{src}: top level is not a JSON object")
    return data


IDENTIFIERS: list[Callable[[Mapping[str, Any]], str | None]] = []
"""Functions that say what a compiled program is and which codec it takes ("the atp program: use ..."); the
protocol registry adds one, so a codec given another protocol's program names the right one."""


def codec_source(src: str | Path | Mapping[str, Any], header_type: str) -> tuple[HeaderSpec, int]:
    """header_and_payload of a program for a codec of `header_type`; a program of another protocol is named, with the
    codec to use instead."""
    prog = load_program(src)
    if any(isinstance(t, dict) and t.get("name") == header_type for t in prog.get("header_types", [])):
        return header_and_payload(prog, header_type)
    hints = [h for h in (identify(prog) for identify in IDENTIFIERS) if h]
    if not hints:
        return header_and_payload(prog, header_type)  # its error names the header types the program has
    where = "the program" if isinstance(src, Mapping) else str(src)
    raise CodecError(f"{where} is {hints[0]} (or worker.scapy_layers.bind_program_layer for scapy)")


def header_and_payload(prog: Mapping[str, Any], header_type: str) -> tuple[HeaderSpec, int]:
    """The spec of header type `header_type` and N, the 32-bit elements of the payload that follows its instance.

    The payload is every header instance after it in the deparser's emit order whose type consists only of 32-bit
    fields (a header stack of one-field headers or one or more "data" headers alike)."""
    types = {t.get("name"): t for t in prog.get("header_types", []) if isinstance(t, dict)}
    if header_type not in types:
        raise CodecError(f"program JSON has no header type {header_type!r} (header_types: {sorted(types)})")
    spec = HeaderSpec.from_json(types[header_type])
    headers = [h for h in prog.get("headers", []) if isinstance(h, dict) and not h.get("metadata", False)]
    by_name = {h.get("name"): h for h in headers}
    instances = [h["name"] for h in headers if h.get("header_type") == header_type]
    if not instances:
        raise CodecError(f"program JSON declares header type {header_type} but no header instance of it")
    order: list[str] = []
    for dep in prog.get("deparsers", []):
        if isinstance(dep, dict) and instances[0] in dep.get("order", []):
            order = list(dep["order"])
            break
    if not order:  # no deparser information: header instances in id order
        order = [h["name"] for h in sorted(headers, key=lambda h: h.get("id", 0))]
    num = 0
    for name in order[order.index(instances[0]) + 1 :]:
        inst = by_name.get(name)
        if inst is None:
            continue
        ht = types.get(inst.get("header_type"))
        if ht is None:
            raise CodecError(f"header {name} has unknown type {inst.get('header_type')!r}")
        payload = HeaderSpec.from_json(ht)
        if not all(f.width == 32 for f in payload.fields):
            break  # payload ends at the first header that is not made of 32-bit elements
        num += len(payload.fields)
    return spec, num


PROGRAM_JSON_CANDIDATES = ("out/{program}.json", "build/{program}.json")
"""Where the compiled program is looked for (relative to the working directory and the repository root)."""


def find_program_json(program: str, env_var: str = "INA_PROGRAM_JSON") -> Path:
    """The compiled <program>.json: $env_var, else the first of out/<program>.json, build/<program>.json (relative to
    the working directory, then the repository root) that exists."""
    env = os.environ.get(env_var)
    if env:
        return Path(env)
    roots = [Path.cwd(), Path(__file__).resolve().parent.parent]
    tried = []
    for root in roots:
        for rel in (c.format(program=program) for c in PROGRAM_JSON_CANDIDATES):
            p = root / rel
            tried.append(str(p))
            if p.is_file():
                return p
    raise CodecError(
        "no compiled switch program found (tried " + ", ".join(tried) + "): run `make build` or pass the "
        f"compiled JSON (--program-json / {env_var}); the worker derives the packet layout from it"
    )
