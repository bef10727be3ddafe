"""P4Info index: the objects of a P4Info message by id and by name, validated as PI's p4info reader does.

Ids carry their type in the top byte (P4Runtime spec §"P4Info object IDs"): 0x01 action, 0x02 table, 0x04 controller
header, 0x11 action profile, 0x12 counter, 0x13 direct counter, 0x14 meter, 0x15 direct meter, 0x16 register, ...
"""

from __future__ import annotations

from dataclasses import dataclass, field

from finsy.proto import p4i

from switch.runtime.status import invalid

ACTION, TABLE, VALUE_SET, CONTROLLER_HEADER = 0x01, 0x02, 0x03, 0x04
ACTION_PROFILE, COUNTER, DIRECT_COUNTER, METER, DIRECT_METER, REGISTER, DIGEST = (
    0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17)

MATCH_EXACT = p4i.MatchField.EXACT
MATCH_LPM = p4i.MatchField.LPM
MATCH_TERNARY = p4i.MatchField.TERNARY
MATCH_RANGE = p4i.MatchField.RANGE
MATCH_OPTIONAL = p4i.MatchField.OPTIONAL
PRIORITY_MATCH_TYPES = frozenset({MATCH_TERNARY, MATCH_RANGE, MATCH_OPTIONAL})


def id_prefix(p4_id: int) -> int:
    """The object-type byte of a P4Info id."""
    return (p4_id >> 24) & 0xFF


@dataclass(frozen=True)
class MatchFieldInfo:
    """One key field of a table: id, name, width and match type (a p4i.MatchField.MatchType value)."""

    id: int
    name: str
    bitwidth: int
    match_type: int
    ternary_in_json: bool = False
    """An OPTIONAL field whose BMv2 JSON key is `ternary` (as p4c-bm2-ss writes it): its entries are ternary there,
    the value with a full mask, a wildcard with mask 0 (PI's bmv2 back end does the same)."""


@dataclass(frozen=True)
class ActionInfo:
    """An action: id, name, params as (id, name, bitwidth) in P4Info order."""

    id: int
    name: str
    params: tuple[tuple[int, str, int], ...]

    def param_bitwidth(self, param_id: int) -> int | None:
        """Width of parameter `param_id`, None if the action has no such parameter."""
        for pid, _, width in self.params:
            if pid == param_id:
                return width
        return None


@dataclass(frozen=True)
class TableInfo:
    """A table: key fields in order, allowed actions with their scope, const-ness and direct resources."""

    id: int
    name: str
    match_fields: tuple[MatchFieldInfo, ...]
    action_scopes: dict[int, int]  # action id -> p4i.ActionRef.Scope
    const_default_action_id: int
    implementation_id: int
    direct_resource_ids: tuple[int, ...]
    size: int
    is_const: bool
    supports_idle_timeout: bool

    @property
    def needs_priority(self) -> bool:
        """True for tables with a ternary, range or optional key field (P4Runtime priorities apply)."""
        return any(mf.match_type in PRIORITY_MATCH_TYPES for mf in self.match_fields)

    def direct_resource(self, prefix: int) -> int | None:
        """The id of the table's direct resource of type `prefix`, if any."""
        return next((rid for rid in self.direct_resource_ids if id_prefix(rid) == prefix), None)


@dataclass(frozen=True)
class CounterInfo:
    """An indirect counter array or a direct counter (direct_table_id != 0); unit is a p4i.CounterSpec.Unit."""

    id: int
    name: str
    unit: int
    size: int
    direct_table_id: int = 0


@dataclass(frozen=True)
class RegisterInfo:
    """A register array of bit<bitwidth> cells."""

    id: int
    name: str
    size: int
    bitwidth: int


@dataclass(frozen=True)
class ValueSetInfo:
    """A parser value set: its member fields (P4Info `match`) and size."""

    id: int
    name: str
    match: tuple[MatchFieldInfo, ...]
    size: int


@dataclass(frozen=True)
class PacketMetadataInfo:
    """A controller header ("packet_in" / "packet_out"): fields as (id, name, bitwidth) in declaration order."""

    id: int
    name: str
    fields: tuple[tuple[int, str, int], ...]


@dataclass
class P4InfoIndex:
    """Every P4Info object this runtime uses, by id; `names[(prefix, name)]` gives ids by fully qualified name."""

    p4info: p4i.P4Info
    tables: dict[int, TableInfo] = field(default_factory=dict)
    actions: dict[int, ActionInfo] = field(default_factory=dict)
    counters: dict[int, CounterInfo] = field(default_factory=dict)
    direct_counters: dict[int, CounterInfo] = field(default_factory=dict)
    registers: dict[int, RegisterInfo] = field(default_factory=dict)
    meters: dict[int, str] = field(default_factory=dict)
    direct_meters: dict[int, str] = field(default_factory=dict)
    action_profiles: dict[int, str] = field(default_factory=dict)
    controller_headers: dict[str, PacketMetadataInfo] = field(default_factory=dict)
    value_sets: dict[int, ValueSetInfo] = field(default_factory=dict)
    names: dict[tuple[int, str], int] = field(default_factory=dict)

    def is_valid_id(self, p4_id: int, prefix: int) -> bool:
        """PI's check_p4_id: right type byte and an object with that id exists."""
        if id_prefix(p4_id) != prefix:
            return False
        registry = {
            TABLE: self.tables, ACTION: self.actions, COUNTER: self.counters,
            DIRECT_COUNTER: self.direct_counters, REGISTER: self.registers, METER: self.meters,
            DIRECT_METER: self.direct_meters, ACTION_PROFILE: self.action_profiles, VALUE_SET: self.value_sets,
        }.get(prefix)
        return registry is not None and p4_id in registry


def _register_width(reg: p4i.Register) -> int:
    spec = reg.type_spec
    kind = spec.WhichOneof("type_spec")
    if kind == "bitstring":
        bits = spec.bitstring
        which = bits.WhichOneof("type_spec")
        if which in ("bit", "int"):
            return getattr(bits, which).bitwidth
    raise invalid(f"register '{reg.preamble.name}': only bit<W>/int<W> cells are supported")


def build_index(p4info: p4i.P4Info) -> P4InfoIndex:
    """Index a P4Info message; INVALID_ARGUMENT on bad or duplicate ids, or references to unknown ids."""
    index = P4InfoIndex(p4info=p4info)
    seen: set[int] = set()

    def add(prefix: int, preamble: p4i.Preamble, kind: str) -> None:
        if id_prefix(preamble.id) != prefix:
            raise invalid(f"{kind} '{preamble.name}': id 0x{preamble.id:08x} does not have prefix 0x{prefix:02x}")
        if preamble.id in seen:
            raise invalid(f"{kind} '{preamble.name}': duplicate id 0x{preamble.id:08x}")
        if not preamble.name:
            raise invalid(f"{kind} with id 0x{preamble.id:08x} has no name")
        seen.add(preamble.id)
        index.names[(prefix, preamble.name)] = preamble.id

    for act in p4info.actions:
        add(ACTION, act.preamble, "action")
        params = tuple((p.id, p.name, p.bitwidth) for p in act.params)
        if len({p[0] for p in params}) != len(params):
            raise invalid(f"action '{act.preamble.name}': duplicate parameter ids")
        index.actions[act.preamble.id] = ActionInfo(act.preamble.id, act.preamble.name, params)

    for tbl in p4info.tables:
        add(TABLE, tbl.preamble, "table")
        fields = tuple(MatchFieldInfo(mf.id, mf.name, mf.bitwidth, mf.match_type) for mf in tbl.match_fields)
        if len({f.id for f in fields}) != len(fields):
            raise invalid(f"table '{tbl.preamble.name}': duplicate match field ids")
        for mf, f in zip(tbl.match_fields, fields):
            if mf.WhichOneof("match") != "match_type" or f.match_type not in (
                    MATCH_EXACT, MATCH_LPM, MATCH_TERNARY, MATCH_RANGE, MATCH_OPTIONAL):
                raise invalid(f"table '{tbl.preamble.name}': match field '{mf.name}' has an unsupported match type")
        scopes = {ref.id: ref.scope for ref in tbl.action_refs}
        for action_id in scopes:
            if action_id not in index.actions:
                raise invalid(f"table '{tbl.preamble.name}' refers to unknown action id 0x{action_id:08x}")
        index.tables[tbl.preamble.id] = TableInfo(
            id=tbl.preamble.id, name=tbl.preamble.name, match_fields=fields, action_scopes=scopes,
            const_default_action_id=tbl.const_default_action_id, implementation_id=tbl.implementation_id,
            direct_resource_ids=tuple(tbl.direct_resource_ids), size=tbl.size, is_const=tbl.is_const_table,
            supports_idle_timeout=tbl.idle_timeout_behavior == p4i.Table.NOTIFY_CONTROL)

    for ctr in p4info.counters:
        add(COUNTER, ctr.preamble, "counter")
        index.counters[ctr.preamble.id] = CounterInfo(ctr.preamble.id, ctr.preamble.name, ctr.spec.unit, ctr.size)
    for ctr in p4info.direct_counters:
        add(DIRECT_COUNTER, ctr.preamble, "direct counter")
        index.direct_counters[ctr.preamble.id] = CounterInfo(
            ctr.preamble.id, ctr.preamble.name, ctr.spec.unit, 0, ctr.direct_table_id)
    for reg in p4info.registers:
        add(REGISTER, reg.preamble, "register")
        index.registers[reg.preamble.id] = RegisterInfo(reg.preamble.id, reg.preamble.name, reg.size,
                                                        _register_width(reg))
    for met in p4info.meters:
        add(METER, met.preamble, "meter")
        index.meters[met.preamble.id] = met.preamble.name
    for met in p4info.direct_meters:
        add(DIRECT_METER, met.preamble, "direct meter")
        index.direct_meters[met.preamble.id] = met.preamble.name
    for prof in p4info.action_profiles:
        add(ACTION_PROFILE, prof.preamble, "action profile")
        index.action_profiles[prof.preamble.id] = prof.preamble.name
    for hdr in p4info.controller_packet_metadata:
        add(CONTROLLER_HEADER, hdr.preamble, "controller packet metadata")
        fields = tuple((m.id, m.name, m.bitwidth) for m in hdr.metadata)
        index.controller_headers[hdr.preamble.name] = PacketMetadataInfo(hdr.preamble.id, hdr.preamble.name, fields)
    for vs in p4info.value_sets:
        add(VALUE_SET, vs.preamble, "value set")
        match = tuple(MatchFieldInfo(m.id, m.name, m.bitwidth, m.match_type) for m in vs.match)
        index.value_sets[vs.preamble.id] = ValueSetInfo(vs.preamble.id, vs.preamble.name, match, vs.size)
    for dig in p4info.digests:
        add(DIGEST, dig.preamble, "digest")

    for tbl in index.tables.values():
        for rid in tbl.direct_resource_ids:
            if rid not in seen:
                raise invalid(f"table '{tbl.name}' refers to unknown direct resource id 0x{rid:08x}")
    for ctr in index.direct_counters.values():
        if ctr.direct_table_id not in index.tables:
            raise invalid(f"direct counter '{ctr.name}' refers to unknown table id 0x{ctr.direct_table_id:08x}")
    return index
