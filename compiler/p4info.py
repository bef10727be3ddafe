"""P4Info emission with p4c's id and alias rules (finsy's `p4i` protobuf classes, text format like p4c's).

Ids (p4c control-plane/p4RuntimeSymbolTable.cpp): `id = prefix << 24 | (jenkins_one_at_a_time(name) & 0xffffff)`,
prefix per object kind (p4info.proto `P4Ids`). `@id(n)` fixes an id (prefix added if missing; a wrong prefix or a
duplicate is an error). The other names of each kind are hashed in sorted order, and a taken id is resolved by
linear probing on the hash value. Controller headers are hashed by their *type* name. Hidden objects take part.

Aliases: the shortest dotted suffix of the name that no other control-plane name (of any kind) shares.

Field-level ids (match fields, action params, controller-header fields) are 1..n in order, `@id` honoured.
Preamble/field `annotations` carry every annotation except `@name`, `@id`, `@brief`, `@description` (the last two
go to `doc`). Objects are emitted in model order; the text format is protobuf's, as p4c writes it.
"""

from __future__ import annotations

from collections.abc import Iterable

from finsy.proto import p4i
from google.protobuf import text_format

from compiler.ast import NOLOC, Annotation, SourceLoc, annotation_to_p4, find_annotation
from compiler.cpmodel import (
    CPActionRef,
    CPField,
    CPModel,
    CPStruct,
)
from compiler.diagnostics import CompileError, Diagnostics

ACTION = 0x01
TABLE = 0x02
VALUE_SET = 0x03
CONTROLLER_HEADER = 0x04
ACTION_PROFILE = 0x11
COUNTER = 0x12
DIRECT_COUNTER = 0x13
METER = 0x14
DIRECT_METER = 0x15
REGISTER = 0x16
DIGEST = 0x17

_SKIPPED_ANNOTATIONS = frozenset({"name", "id", "brief", "description"})


def jenkins_one_at_a_time(data: str | bytes) -> int:
    """Bob Jenkins' one-at-a-time hash of the UTF-8 bytes of `data`, as a 32-bit unsigned integer."""
    raw = data.encode() if isinstance(data, str) else data
    h = 0
    for b in raw:
        h = (h + b) & 0xFFFFFFFF
        h = (h + (h << 10)) & 0xFFFFFFFF
        h ^= h >> 6
    h = (h + (h << 3)) & 0xFFFFFFFF
    h ^= h >> 11
    h = (h + (h << 15)) & 0xFFFFFFFF
    return h


class SuffixSet:
    """All control-plane names, for p4c's alias rule (shortest unique dotted suffix)."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._names: set[str] = set()
        self._count: dict[tuple[str, ...], int] = {}
        for n in names:
            self.add(n)

    def add(self, name: str) -> None:
        if name in self._names:
            return
        self._names.add(name)
        parts = name.split(".")
        for k in range(1, len(parts) + 1):
            key = tuple(parts[-k:])
            self._count[key] = self._count.get(key, 0) + 1

    def alias(self, name: str) -> str:
        """The shortest suffix of `name` (in whole dotted components) that only `name` has."""
        parts = name.split(".")
        for k in range(1, len(parts) + 1):
            if self._count.get(tuple(parts[-k:]), 0) < 2:
                return ".".join(parts[-k:])
        return name


class IdAllocator:
    """p4c's P4Runtime symbol table: (kind, name) → id."""

    def __init__(self, diags: Diagnostics) -> None:
        self.diags = diags
        self._pending: dict[int, dict[str, SourceLoc]] = {}
        self._ids: dict[tuple[int, str], int] = {}
        self._taken: set[int] = set()

    def add(self, kind: int, name: str, annotations: list[Annotation], loc: SourceLoc | None) -> None:
        """Register a symbol; an `@id` is applied now, others are hashed in `assign()`."""
        if (kind, name) in self._ids or name in self._pending.get(kind, {}):
            return
        anno = find_annotation(annotations, "id")
        if anno is not None:
            value = anno.int_arg()
            where = anno.loc
            if value is None or value < 0 or value > 0xFFFFFFFF:
                self.diags.error(where, "@id should be an unsigned integer", "p4info")
                return
            prefix = kind << 24
            if value & 0xFF000000 and value & 0xFF000000 != prefix:
                self.diags.error(where, f"{name}: @id has the wrong 8-bit prefix", "p4info")
                return
            value |= prefix
            if value in self._taken:
                self.diags.error(where, f"@id {value} is assigned to multiple declarations", "p4info")
                return
            self._taken.add(value)
            self._ids[(kind, name)] = value
            return
        self._pending.setdefault(kind, {})[name] = loc or NOLOC

    def assign(self) -> None:
        """Give every symbol without `@id` its hashed id (sorted names, linear probing)."""
        for kind in sorted(self._pending):
            for name in sorted(self._pending[kind]):
                start = jenkins_one_at_a_time(name)
                value = start
                while True:
                    candidate = (kind << 24) | (value & 0xFFFFFF)
                    if candidate not in self._taken:
                        break
                    value = (value + 1) & 0xFFFFFFFF
                    if value == start:  # pragma: no cover - 2^32 symbols
                        raise CompileError(self.diags)
                self._taken.add(candidate)
                self._ids[(kind, name)] = candidate
        self._pending.clear()

    def get(self, kind: int, name: str) -> int:
        return self._ids[(kind, name)]

    def __contains__(self, key: tuple[int, str]) -> bool:
        return key in self._ids


def _annotation_strings(annotations: list[Annotation], skip: frozenset[str] = _SKIPPED_ANNOTATIONS) -> list[str]:
    return [annotation_to_p4(a) for a in annotations if a.name not in skip]


def _set_doc(msg, annotations: list[Annotation]) -> None:  # type: ignore[no-untyped-def]
    brief = find_annotation(annotations, "brief")
    desc = find_annotation(annotations, "description")
    if brief is not None and brief.string_arg() is not None:
        msg.doc.brief = brief.string_arg()
    if desc is not None and desc.string_arg() is not None:
        msg.doc.description = desc.string_arg()


def _set_preamble(pre: p4i.Preamble, id_: int, name: str, alias: str, annotations: list[Annotation]) -> None:
    pre.id = id_
    pre.name = name
    pre.alias = alias
    pre.annotations.extend(_annotation_strings(annotations))
    _set_doc(pre, annotations)


def _field_ids(items: list, diags: Diagnostics, what: str) -> list[int]:  # type: ignore[type-arg]
    """p4c's FieldIdAllocator: @id values first, then 1.. by position, skipping taken ids."""
    user: dict[int, int] = {}
    taken: set[int] = set()
    for i, item in enumerate(items):
        anno = find_annotation(item.annotations, "id")
        if anno is None:
            continue
        value = anno.int_arg()
        if value is None or value <= 0:
            diags.error(anno.loc, f"{what} '{item.name}': 0 is not a valid @id value" if value == 0
                        else f"{what} '{item.name}': @id should be a positive integer", "p4info")
            continue
        if value in taken:
            diags.error(anno.loc, f"{what} '{item.name}': @id {value} is used multiple times", "p4info")
        user[i] = value
        taken.add(value)
    ids: list[int] = []
    index = 1
    for i, _item in enumerate(items):
        if i in user:
            ids.append(user[i])
            index += 1
            continue
        while index in taken:
            index += 1
        ids.append(index)
        taken.add(index)
    return ids


def _struct_info(info: p4i.P4Info, name: str, fields: list[CPField | CPStruct]) -> None:
    """`type_info.structs[name]`, and those of its struct members, as p4c describes a digest's struct."""
    struct = info.type_info.structs[name]
    del struct.members[:]
    for f in fields:
        member = struct.members.add()
        member.name = f.name
        if isinstance(f, CPStruct):
            member.type_spec.struct.name = f.type_name
            _struct_info(info, f.type_name, f.fields)
        else:
            member.type_spec.bitstring.bit.bitwidth = _as_field(f).bitwidth


def _as_field(p: CPField | tuple) -> CPField:  # type: ignore[type-arg]
    if isinstance(p, CPField):
        return p
    name, bitwidth = p[0], p[1]
    return CPField(name, int(bitwidth))


def _scope(ref: CPActionRef, diags: Diagnostics, table: str) -> int:
    table_only = find_annotation(ref.annotations, "tableonly") is not None
    default_only = find_annotation(ref.annotations, "defaultonly") is not None
    if table_only and default_only:
        diags.error(ref.annotations[0].loc, f"Table '{table}' has an action reference ('{ref.name}') which is "
                    "annotated with both '@tableonly' and '@defaultonly'", "p4info")
    scope = ref.scope
    if scope == "TABLE_AND_DEFAULT":
        scope = "TABLE_ONLY" if table_only else "DEFAULT_ONLY" if default_only else scope
    return p4i.ActionRef.Scope.Value(scope)


_MATCH_TYPES = {"exact": p4i.MatchField.EXACT, "lpm": p4i.MatchField.LPM, "ternary": p4i.MatchField.TERNARY,
                "range": p4i.MatchField.RANGE, "optional": p4i.MatchField.OPTIONAL}


def build(model: CPModel, diags: Diagnostics | None = None) -> p4i.P4Info:
    """The P4Info message for `model`; raises CompileError on bad `@id`s or a missing referenced object."""
    diags = diags if diags is not None else Diagnostics()
    ids = IdAllocator(diags)
    suffixes = SuffixSet()

    def sym(kind: int, name: str, annotations: list[Annotation], loc: SourceLoc | None) -> None:
        ids.add(kind, name, annotations, loc)
        suffixes.add(name)

    # Collect symbols in the order p4c does (it only matters for @id duplicate reports).
    for a in model.actions:
        sym(ACTION, a.name, a.annotations, a.loc)
    for t in model.tables:
        sym(TABLE, t.name, t.annotations, t.loc)
    for c in model.counters:
        sym(COUNTER, c.name, c.annotations, c.loc)
    for d in model.direct_counters:
        sym(DIRECT_COUNTER, d.name, d.annotations, d.loc)
    for ap in model.action_profiles:
        sym(ACTION_PROFILE, ap.name, ap.annotations, ap.loc)
    for m in model.meters:
        sym(METER, m.name, m.annotations, m.loc)
    for dm in model.direct_meters:
        sym(DIRECT_METER, dm.name, dm.annotations, dm.loc)
    for r in model.registers:
        sym(REGISTER, r.name, r.annotations, r.loc)
    for h in model.controller_headers:
        sym(CONTROLLER_HEADER, h.type_name, h.annotations, h.loc)
    for dg in model.digests:
        sym(DIGEST, dg.name, dg.annotations, dg.loc)
    for vs in model.value_sets:
        sym(VALUE_SET, vs.name, vs.annotations, vs.loc)
    # p4c: the same name twice within one kind is an error, except for actions (deduplicated silently, since its
    # midend copies global actions into every control that uses them).
    for what, objs in (("table", model.tables), ("counter", model.counters),
                       ("direct counter", model.direct_counters), ("meter", model.meters),
                       ("direct meter", model.direct_meters), ("action profile", model.action_profiles),
                       ("register", model.registers),
                       ("controller packet metadata", model.controller_headers), ("digest", model.digests),
                       ("value set", model.value_sets)):
        seen: set[str] = set()
        for o in objs:
            if o.name in seen:
                diags.error(o.loc or NOLOC, f"Name '{o.name}' is used for multiple {what} objects in the P4Info "
                            "message", "p4info")
            seen.add(o.name)
    diags.check()
    ids.assign()

    def ref_id(kind: int, name: str, what: str, loc: SourceLoc | None) -> int:
        if (kind, name) not in ids:
            diags.error(loc or NOLOC, f"P4Info: reference to unknown {what} '{name}'", "p4info")
            return 0
        return ids.get(kind, name)

    info = p4i.P4Info()
    info.pkg_info.arch = model.arch

    for t in model.tables:
        if t.hidden:
            continue
        msg = info.tables.add()
        _set_preamble(msg.preamble, ids.get(TABLE, t.name), t.name, suffixes.alias(t.name), t.annotations)
        for fid, mf in zip(_field_ids(t.match_fields, diags, "match field"), t.match_fields):
            f = msg.match_fields.add()
            f.id = fid
            f.name = mf.name
            f.annotations.extend(_annotation_strings(mf.annotations))
            _set_doc(f, mf.annotations)
            f.bitwidth = mf.bitwidth
            if mf.match_type in _MATCH_TYPES:
                f.match_type = _MATCH_TYPES[mf.match_type]
            else:
                f.other_match_type = mf.match_type
            if mf.type_name:
                f.type_name.name = mf.type_name
            if mf.enum is not None and mf.enum[0] not in info.type_info.serializable_enums:
                # p4c's TypeSpecConverter describes a serializable enum key's type in type_info
                name, width, members = mf.enum
                desc = info.type_info.serializable_enums[name]
                desc.underlying_type.bitwidth = width
                for member, value in members:
                    m = desc.members.add()
                    m.name = member
                    m.value = (value % (1 << width)).to_bytes((width + 7) // 8, "big")
        for ref in t.action_refs:
            r = msg.action_refs.add()
            r.id = ref_id(ACTION, ref.name, "action", t.loc)
            r.annotations.extend(_annotation_strings(ref.annotations, frozenset({"name", "id"})))
            r.scope = _scope(ref, diags, t.name)  # type: ignore[assignment]
        if t.const_default_action is not None:
            msg.const_default_action_id = ref_id(ACTION, t.const_default_action, "action", t.loc)
        if t.direct_counter is not None:
            msg.direct_resource_ids.append(ref_id(DIRECT_COUNTER, t.direct_counter, "direct counter", t.loc))
        if t.direct_meter is not None:
            msg.direct_resource_ids.append(ref_id(DIRECT_METER, t.direct_meter, "direct meter", t.loc))
        if t.implementation is not None:
            msg.implementation_id = ref_id(ACTION_PROFILE, t.implementation, "action profile", t.loc)
        msg.size = t.size
        if t.support_timeout:
            msg.idle_timeout_behavior = p4i.Table.NOTIFY_CONTROL
        if t.is_const_table:  # `const entries` (even an empty list), as p4c
            msg.is_const_table = True
        if t.has_initial_entries:  # at least one entry, const or not
            msg.has_initial_entries = True

    emitted_actions: set[str] = set()
    for a in model.actions:
        if a.hidden or a.name in emitted_actions:
            continue
        emitted_actions.add(a.name)
        msg = info.actions.add()
        _set_preamble(msg.preamble, ids.get(ACTION, a.name), a.name, suffixes.alias(a.name), a.annotations)
        params = [_as_field(p) for p in a.params]
        for pid, p in zip(_field_ids(params, diags, "action parameter"), params):
            f = msg.params.add()
            f.id = pid
            f.name = p.name
            f.annotations.extend(_annotation_strings(p.annotations))
            _set_doc(f, p.annotations)
            f.bitwidth = p.bitwidth
            if p.type_name:
                f.type_name.name = p.type_name

    for c in model.counters:
        msg = info.counters.add()
        _set_preamble(msg.preamble, ids.get(COUNTER, c.name), c.name, suffixes.alias(c.name), c.annotations)
        msg.spec.unit = p4i.CounterSpec.Unit.Value(c.unit)
        msg.size = c.size

    for d in model.direct_counters:
        msg = info.direct_counters.add()
        _set_preamble(msg.preamble, ids.get(DIRECT_COUNTER, d.name), d.name, suffixes.alias(d.name), d.annotations)
        msg.spec.unit = p4i.CounterSpec.Unit.Value(d.unit)
        msg.direct_table_id = ref_id(TABLE, d.table, "table", d.loc)

    for ap in model.action_profiles:
        msg = info.action_profiles.add()
        _set_preamble(msg.preamble, ids.get(ACTION_PROFILE, ap.name), ap.name, suffixes.alias(ap.name),
                      ap.annotations)
        msg.table_ids.extend(ref_id(TABLE, t, "table", ap.loc) for t in ap.tables)
        if ap.with_selector:
            msg.with_selector = True
        msg.size = ap.size

    for m in model.meters:
        msg = info.meters.add()
        _set_preamble(msg.preamble, ids.get(METER, m.name), m.name, suffixes.alias(m.name), m.annotations)
        msg.spec.unit = p4i.MeterSpec.Unit.Value(m.unit)
        msg.size = m.size

    for dm in model.direct_meters:
        msg = info.direct_meters.add()
        _set_preamble(msg.preamble, ids.get(DIRECT_METER, dm.name), dm.name, suffixes.alias(dm.name),
                      dm.annotations)
        msg.spec.unit = p4i.MeterSpec.Unit.Value(dm.unit)
        msg.direct_table_id = ref_id(TABLE, dm.table, "table", dm.loc)

    for h in model.controller_headers:
        msg = info.controller_packet_metadata.add()
        # P4Info names the header after the annotation ("packet_in"), alias likewise; the id hashes the type name.
        _set_preamble(msg.preamble, ids.get(CONTROLLER_HEADER, h.type_name), h.name, h.name, h.annotations)
        fields = [_as_field(f) for f in h.metadata]
        for fid, fld in zip(_field_ids(fields, diags, "header field"), fields):
            md = msg.metadata.add()
            md.id = fid
            md.name = fld.name
            md.annotations.extend(_annotation_strings(fld.annotations))
            md.bitwidth = fld.bitwidth
            if fld.type_name:
                md.type_name.name = fld.type_name

    for r in model.registers:
        msg = info.registers.add()
        _set_preamble(msg.preamble, ids.get(REGISTER, r.name), r.name, suffixes.alias(r.name), r.annotations)
        if r.signed:
            msg.type_spec.bitstring.int.bitwidth = r.bitwidth
        else:
            msg.type_spec.bitstring.bit.bitwidth = r.bitwidth
        msg.size = r.size

    for dg in model.digests:
        msg = info.digests.add()
        _set_preamble(msg.preamble, ids.get(DIGEST, dg.name), dg.name, suffixes.alias(dg.name), dg.annotations)
        msg.type_spec.struct.name = dg.name
        _struct_info(info, dg.name, dg.fields)

    for vs in model.value_sets:
        msg = info.value_sets.add()
        _set_preamble(msg.preamble, ids.get(VALUE_SET, vs.name), vs.name, suffixes.alias(vs.name), vs.annotations)
        for fid, mf in zip(_field_ids(vs.match, diags, "value set field"), vs.match):
            m = msg.match.add()
            m.id = fid
            if mf.name:
                m.name = mf.name
            m.annotations.extend(_annotation_strings(mf.annotations))
            m.bitwidth = mf.bitwidth
            if mf.match_type in _MATCH_TYPES:
                m.match_type = _MATCH_TYPES[mf.match_type]
            else:
                m.other_match_type = mf.match_type
        msg.size = vs.size

    # p4c's serializer creates `type_info` (empty unless a type needs describing) whenever it converts a table's
    # match fields (every visible table, keyless too), an action parameter, an extern instance (counter, meter,
    # register ...), an extern function called from a control, a controller-header field or a digest; not a value
    # set (p4c 1.2.4.8's addValueSet leaves type_info alone: "TODO(antonin): handle new types").
    if (any(not t.hidden for t in model.tables)
            or any(a.params for a in model.actions if not a.hidden)
            or model.counters or model.direct_counters or model.meters or model.direct_meters or model.registers
            or model.action_profiles
            or model.calls_extern_functions
            or any(h.metadata for h in model.controller_headers) or model.digests):
        info.type_info.SetInParent()
    diags.check()
    return info


def to_text(info: p4i.P4Info) -> str:
    """The protobuf text format of `info` (what `--p4runtime-files x.p4info.txt` writes)."""
    return text_format.MessageToString(info)


def write(info: p4i.P4Info, path: str) -> None:
    """Write `info` to `path` in the format its suffix asks for: .txtpb or .txt (text), .json, .bin (binary), like
    p4c (which recommends .txtpb and calls .txt deprecated)."""
    if path.endswith((".txtpb", ".txt")):
        data: bytes = to_text(info).encode()
    elif path.endswith(".json"):
        from google.protobuf import json_format

        data = json_format.MessageToJson(info, indent=2).encode()
    elif path.endswith(".bin"):
        data = info.SerializeToString()
    else:
        d = Diagnostics()
        d.error(SourceLoc(path, 0, 0), f"{path}: unknown file kind; known suffixes are .bin, .txt, .json, and .txtpb", "io")
        raise CompileError(d)
    with open(path, "wb") as f:
        f.write(data)
