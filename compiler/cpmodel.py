"""The control-plane model: what a compiled program exposes to P4Runtime, filled in by the lowering pass.

Plain dataclasses, one per P4Info object kind. Names are the fully qualified control-plane names, exactly as they
appear in the BMv2 JSON (`MyIngress.ipv4_lpm`, `NoAction`); match-field names are the key's source text or its
`@name` (`hdr.ipv4.dstAddr`). `annotations` are the AST annotations of the declaration (`@id`, `@brief`,
`@description` and the rest are interpreted by `compiler.p4info`). Lists keep the order p4c emits: controls in
package order, declarations in source order (see `compiler.p4info` for details).

`hidden` objects (p4c's `@hidden`, e.g. the `tbl_*` tables made for direct action calls) take part in id and alias
assignment, as in p4c, but are not emitted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from compiler.ast import Annotation, SourceLoc

MATCH_TYPES = ("exact", "lpm", "ternary", "range", "optional")
COUNTER_UNITS = ("PACKETS", "BYTES", "BOTH")
SCOPES = ("TABLE_AND_DEFAULT", "TABLE_ONLY", "DEFAULT_ONLY")

# v1model enum members → P4Info units.
COUNTER_TYPE_UNITS = {"packets": "PACKETS", "bytes": "BYTES", "packets_and_bytes": "BOTH"}
METER_TYPE_UNITS = {"packets": "PACKETS", "bytes": "BYTES"}


@dataclass
class CPField:
    """A named bit field: an action parameter or a controller-header field."""

    name: str
    bitwidth: int
    annotations: list[Annotation] = field(default_factory=list)
    type_name: str | None = None  # a `type` (newtype) or serializable-enum name, if the field has one


@dataclass
class CPMatchField:
    """One key element of a table. `match_type` is one of MATCH_TYPES, or another match_kind's name."""

    name: str
    bitwidth: int
    match_type: str
    annotations: list[Annotation] = field(default_factory=list)
    type_name: str | None = None
    enum: tuple[str, int, list[tuple[str, int]]] | None = None
    """A serializable enum key: (name, underlying width, members in declaration order with their values)."""


@dataclass
class CPActionRef:
    """An action in a table's action list; `scope` follows `@tableonly` / `@defaultonly` when left at default."""

    name: str
    scope: str = "TABLE_AND_DEFAULT"
    annotations: list[Annotation] = field(default_factory=list)


@dataclass
class CPTable:
    """A match-action table."""

    name: str
    match_fields: list[CPMatchField] = field(default_factory=list)
    action_refs: list[CPActionRef] = field(default_factory=list)
    const_default_action: str | None = None  # action name when `const default_action`
    size: int = 1024
    is_const_table: bool = False  # `const entries = {...}` (even empty)
    has_initial_entries: bool = False  # `entries` or `const entries` with at least one entry
    direct_counter: str | None = None  # name of the direct_counter in `counters = ...`
    direct_meter: str | None = None  # name of the direct_meter in `meters = ...`
    implementation: str | None = None  # name of the action profile / selector in `implementation = ...`
    support_timeout: bool = False
    annotations: list[Annotation] = field(default_factory=list)
    hidden: bool = False
    loc: SourceLoc | None = None


@dataclass
class CPAction:
    """An action; `params` are its directionless (control-plane) parameters, in order."""

    name: str
    params: list[CPField] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)
    hidden: bool = False
    loc: SourceLoc | None = None


@dataclass
class CPCounter:
    """An indexed `counter` array; unit is one of COUNTER_UNITS."""

    name: str
    size: int
    unit: str
    annotations: list[Annotation] = field(default_factory=list)
    loc: SourceLoc | None = None


@dataclass
class CPDirectCounter:
    """A `direct_counter` attached to `table`."""

    name: str
    table: str
    unit: str
    annotations: list[Annotation] = field(default_factory=list)
    loc: SourceLoc | None = None


@dataclass
class CPMeter:
    """An indexed `meter` array; unit "PACKETS" or "BYTES"."""

    name: str
    size: int
    unit: str
    annotations: list[Annotation] = field(default_factory=list)
    loc: SourceLoc | None = None


@dataclass
class CPDirectMeter:
    """A `direct_meter` attached to `table`."""

    name: str
    table: str
    unit: str
    annotations: list[Annotation] = field(default_factory=list)
    loc: SourceLoc | None = None


@dataclass
class CPActionProfile:
    """An `action_profile` or `action_selector` (`with_selector`) and the tables it implements."""

    name: str
    size: int
    with_selector: bool
    tables: list[str] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)
    loc: SourceLoc | None = None


@dataclass
class CPRegister:
    """A `register<bit<W>>` (or `int<W>` with `signed`) array of `size` cells."""

    name: str
    size: int
    bitwidth: int
    signed: bool = False
    annotations: list[Annotation] = field(default_factory=list)
    loc: SourceLoc | None = None


@dataclass
class CPControllerHeader:
    """A header type annotated `@controller_header("packet_in" | "packet_out")`.

    `name` is the annotation's string (the P4Info name); `type_name` the header type's name, which p4c hashes
    for the id.
    """

    name: str
    type_name: str
    metadata: list[CPField] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)
    loc: SourceLoc | None = None


@dataclass
class CPStruct:
    """A struct member of a digest's struct: the member's `name`, its struct type `type_name` and that type's
    members (P4Info: a `type_info.structs` entry of its own)."""

    name: str
    type_name: str
    fields: list[CPField | CPStruct] = field(default_factory=list)


@dataclass
class CPDigest:
    """A `digest<T>(receiver, data)` call site's struct type T: `name` is the struct's name, `fields` its
    bit<W> (or struct) members in order (P4Info describes them in `type_info.structs`)."""

    name: str
    fields: list[CPField | CPStruct] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)
    loc: SourceLoc | None = None


@dataclass
class CPValueSet:
    """A parser value set: its members match `match` (one field for a bit<W> element, else the struct's fields)."""

    name: str
    match: list[CPMatchField]
    size: int
    annotations: list[Annotation] = field(default_factory=list)
    loc: SourceLoc | None = None


@dataclass
class CPModel:
    """Everything a program exposes to the control plane."""

    tables: list[CPTable] = field(default_factory=list)
    actions: list[CPAction] = field(default_factory=list)
    counters: list[CPCounter] = field(default_factory=list)
    direct_counters: list[CPDirectCounter] = field(default_factory=list)
    meters: list[CPMeter] = field(default_factory=list)
    direct_meters: list[CPDirectMeter] = field(default_factory=list)
    action_profiles: list[CPActionProfile] = field(default_factory=list)
    registers: list[CPRegister] = field(default_factory=list)
    controller_headers: list[CPControllerHeader] = field(default_factory=list)
    digests: list[CPDigest] = field(default_factory=list)
    value_sets: list[CPValueSet] = field(default_factory=list)
    arch: str = "v1model"
    calls_extern_functions: bool = False
    """A control calls an extern function (mark_to_drop, hash, clone ...): p4c then writes an (empty) type_info."""
