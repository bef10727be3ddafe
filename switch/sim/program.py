"""Loading a BMv2 JSON program: validation and the flat PHV layout (one list slot per field, validity bit, stack index).

A packet is one Python list `F`. Slots 0..NRESERVED-1 are per-packet registers (payload bytes, length register,
exit / clone / resubmit / recirculate flags, ...); then the fields of all metadata headers (a contiguous range, so
"reset metadata" is one slice assignment); then the fields and `$valid$` slot of every other header and the `next`
index of every header stack. `Program.template` is a fresh packet: metadata zero (valid), headers invalid.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from switch.errors import LoadError

# per-packet registers (after BMv2's RegisterAccess); slot numbers in F
P_PAYLOAD = 0    # bytes after the parsed headers
P_LEN = 1        # packet length register (updated by add_header / remove_header)
P_EXIT = 2       # exit flag
P_CLONE = 3      # clone: 0 = none, else (session id | 1 << 32)
P_CLONE_FL = 4   # clone field list id
P_RESUBMIT = 5   # resubmit field list id (0 = none)
P_RECIRC = 6     # recirculate field list id (0 = none)
P_TRUNC = 7      # truncate to this many bytes (0 = none)
P_INLEN = 8      # length of the packet as it entered (counters count these bytes)
P_ID = 9         # packet id string for traces
P_LEARN = 10     # learn list id of the digest to send when ingress ends (0 = none; BMv2's lf_field_list)
NRESERVED = 11

SUPPORTED_MAJOR = 2
VL_BITS = "$vlbits$"  # hidden last field of a header with a varbit field: the varbit field's current width in bits
CORE_ERRORS = ("NoError", "PacketTooShort", "NoMatch", "StackOutOfBounds", "HeaderTooShort", "ParserTimeout",
               "ParserInvalidArgument")


@dataclass
class HeaderLayout:
    """A header instance: its fields' slots, validity slot and size."""

    name: str
    id: int
    type_name: str
    metadata: bool
    fields: list[tuple[str, int, bool]]          # (name, width, signed)
    slots: dict[str, int] = field(default_factory=dict)
    valid_slot: int = -1
    nbits: int = 0                               # fixed-size fields only (a varbit field counts 0, as in BMv2)
    stack: str | None = None
    vl: str | None = None                        # the varbit field, if any (its width in `fields` is its maximum)
    union_siblings: tuple[int, ...] = ()         # valid slots of the other members of its header union, if any

    @property
    def nbytes(self) -> int:
        return (self.nbits + 7) // 8


@dataclass
class StackLayout:
    """A header stack: element header names in order and the slot of its `next` index."""

    name: str
    id: int
    type_name: str
    headers: list[str]
    next_slot: int = -1


@dataclass
class UnionLayout:
    """A header union: its member header instances in declaration order (BMv2 keeps at most one valid)."""

    name: str
    id: int
    type_name: str
    headers: list[str]
    members: list[str]                           # the union type's member names, same order


@dataclass
class UnionStackLayout:
    """A header union stack: element union names in order and the slot of its `next` index."""

    name: str
    id: int
    type_name: str
    unions: list[str]
    members: list[str]
    next_slot: int = -1


def _req(obj: dict, key: str, where: str) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise LoadError(f"missing {key!r} in {where}")
    return obj[key]


def parse_json(source: str | bytes | dict) -> dict:
    """JSON text/bytes/dict → dict, checking `__meta__.version` major."""
    if isinstance(source, dict):
        j = source
    else:
        try:
            j = json.loads(source)
        except (ValueError, UnicodeDecodeError) as exc:
            raise LoadError(f"not valid JSON: {exc}") from None
    if not isinstance(j, dict):
        raise LoadError("BMv2 JSON must be an object at top level")
    meta = j.get("__meta__")
    if not isinstance(meta, dict) or not isinstance(meta.get("version"), list) or not meta["version"]:
        raise LoadError("missing __meta__.version (BMv2 JSON format 2.x expected)")
    if meta["version"][0] != SUPPORTED_MAJOR:
        raise LoadError(f"unsupported BMv2 JSON format version {meta['version']} (major {SUPPORTED_MAJOR} expected)")
    return j


class Program:
    """The layout of a loaded program: headers, stacks, aliases, errors, enums, field lists."""

    def __init__(self, j: dict) -> None:
        self.json = j
        self.header_types: dict[str, dict] = {}
        for ht in j.get("header_types", []):
            name = _req(ht, "name", "header_types")
            fields = []
            vl = None
            for f in _req(ht, "fields", f"header type {name!r}"):
                if not isinstance(f, list) or len(f) < 2:
                    raise LoadError(f"malformed field {f!r} in header type {name!r}")
                if f[1] == "*":
                    if vl is not None:
                        raise LoadError(f"header type {name!r} has more than one variable-length field")
                    vl = f[0]
                    fields.append((f[0], 0, False))
                    continue
                if not isinstance(f[1], int) or f[1] <= 0:
                    raise LoadError(f"bad width {f[1]!r} of field {f[0]!r} in header type {name!r}")
                fields.append((f[0], f[1], bool(f[2]) if len(f) > 2 else False))
            if vl is not None:
                if "length_exp" in ht:
                    raise LoadError(f"unsupported length_exp of header type {name!r} (P4_14 variable-length header)")
                max_len = ht.get("max_length")
                fixed = sum(w for _n, w, _s in fields)
                if not isinstance(max_len, int) or max_len * 8 <= fixed:
                    raise LoadError(f"header type {name!r} has a variable-length field but no valid max_length")
                fields = [(n, max_len * 8 - fixed if n == vl else w, s) for n, w, s in fields] + [(VL_BITS, 32, False)]
            self.header_types[name] = {"fields": fields, "id": ht.get("id"), "vl": vl}

        self.vsets: dict[str, tuple[int, int, int | None]] = {}  # name → (id, compressed bitwidth, max size)
        for v in j.get("parse_vsets") or []:
            bw, size = v.get("compressed_bitwidth") if isinstance(v, dict) else None, v.get("max_size")
            if not isinstance(bw, int) or bw <= 0 or not isinstance(v.get("name"), str) \
                    or not (size is None or isinstance(size, int) and size >= 0):
                raise LoadError(f"bad parse_vset {v!r}")
            self.vsets[v["name"]] = (v.get("id", len(self.vsets)), bw, size)
        for key in ("extern_instances",):
            if j.get(key):
                raise LoadError(f"unsupported {key}: {[x.get('name') for x in j[key] if isinstance(x, dict)]}")

        self.headers: dict[str, HeaderLayout] = {}
        self.header_by_id: dict[int, HeaderLayout] = {}
        hdrs = j.get("headers", [])
        if not isinstance(hdrs, list):
            raise LoadError("'headers' must be a list")
        for h in hdrs:
            name = _req(h, "name", "headers")
            tname = _req(h, "header_type", f"header {name!r}")
            if tname not in self.header_types:
                raise LoadError(f"header {name!r} has unknown header_type {tname!r}")
            fields = self.header_types[tname]["fields"]
            hl = HeaderLayout(name, h.get("id", len(self.headers)), tname, bool(h.get("metadata", False)), fields)
            hl.vl = self.header_types[tname]["vl"]
            hl.nbits = sum(w for n, w, _ in fields if n != hl.vl and n != VL_BITS)
            if not hl.metadata and hl.nbits % 8:
                raise LoadError(f"header {name!r} is {hl.nbits} bits, not a multiple of 8")
            self.headers[name] = hl
            self.header_by_id[hl.id] = hl

        self.stacks: dict[str, StackLayout] = {}
        for s in j.get("header_stacks", []):
            name = _req(s, "name", "header_stacks")
            ids = _req(s, "header_ids", f"header stack {name!r}")
            names = []
            for i in ids:
                if i not in self.header_by_id:
                    raise LoadError(f"header stack {name!r} refers to unknown header id {i}")
                hl = self.header_by_id[i]
                hl.stack = name
                names.append(hl.name)
            self.stacks[name] = StackLayout(name, s.get("id", len(self.stacks)), s.get("header_type", ""), names)

        self.load_unions(j)

        # slots: reserved, metadata range, then packet headers and stack indices
        slot = NRESERVED
        self.meta_start = slot
        for hl in self.headers.values():
            if hl.metadata:
                for fname, _w, _s in hl.fields:
                    hl.slots[fname] = slot
                    slot += 1
                hl.valid_slot = slot
                slot += 1
        self.meta_end = slot
        for hl in self.headers.values():
            if not hl.metadata:
                for fname, _w, _s in hl.fields:
                    hl.slots[fname] = slot
                    slot += 1
                hl.valid_slot = slot
                slot += 1
        for st in self.stacks.values():
            st.next_slot = slot
            slot += 1
        for ust in self.union_stacks.values():
            ust.next_slot = slot
            slot += 1
        self.scratch_slot = slot  # where a header stack element out of range reads and writes (see gen_expr)
        slot += 1
        self.nslots = slot
        self.union_sibling_slots()
        tpl: list[Any] = [0] * slot
        tpl[P_PAYLOAD] = b""
        tpl[P_ID] = ""
        for hl in self.headers.values():
            if hl.metadata:
                tpl[hl.valid_slot] = 1
        self.template = tpl
        # what BMv2 resets when a packet's PHV is reused (PHV::reset, reset_header_stacks; metadata at receive):
        # slots [0, meta_end) and these; the fields of packet headers keep the last packet's values
        self.reuse_reset = tuple(
            [hl.valid_slot for hl in self.headers.values() if not hl.metadata]
            + [hl.slots[VL_BITS] for hl in self.headers.values() if not hl.metadata and VL_BITS in hl.slots]
            + [st.next_slot for st in self.stacks.values()] + [u.next_slot for u in self.union_stacks.values()]
            + [self.scratch_slot])

        self.aliases: dict[str, tuple[str, str]] = {}
        for a in j.get("field_aliases", []):
            if not isinstance(a, list) or len(a) != 2 or not isinstance(a[1], list) or len(a[1]) != 2:
                raise LoadError(f"malformed field alias {a!r}")
            self.aliases[a[0]] = (a[1][0], a[1][1])
            self.field_slot(a[1][0], a[1][1], f"field alias {a[0]!r}")

        self.errors: dict[str, int] = {}
        for e in j.get("errors", []):
            if not isinstance(e, list) or len(e) != 2:
                raise LoadError(f"malformed error entry {e!r}")
            self.errors[e[0]] = int(e[1])
        used = set(self.errors.values())
        nxt = 0
        for name in CORE_ERRORS:  # BMv2 adds the core errors the JSON does not list
            if name not in self.errors:
                while nxt in used:
                    nxt += 1
                self.errors[name] = nxt
                used.add(nxt)
        self.error_names = {v: k for k, v in self.errors.items()}
        self.enums = {e["name"]: dict(e.get("entries", [])) for e in j.get("enums", [])}

        self.field_lists: dict[int, list[int]] = {}
        self.field_list_names: dict[int, str] = {}
        for fl in j.get("field_lists", []):
            fid = _req(fl, "id", "field_lists")
            slots = []
            for el in fl.get("elements", []):
                if el.get("type") != "field":
                    raise LoadError(f"unsupported element {el!r} in field list {fl.get('name')!r}")
                slots.append(self.field_slot(el["value"][0], el["value"][1], f"field list {fl.get('name')!r}"))
            self.field_lists[fid] = slots
            self.field_list_names[fid] = fl.get("name", str(fid))
        self.learn_lists: dict[int, tuple[str, list[tuple[int, int]]]] = {}
        """learn list id → (name, [(slot, width)]): what a digest carries (BMv2's LearnEngine lists)."""
        for ll in j.get("learn_lists") or []:
            lid, lname = _req(ll, "id", "learn_lists"), ll.get("name", "")
            elements = []
            for el in ll.get("elements", []):
                if el.get("type") != "field":
                    raise LoadError(f"unsupported element {el!r} in learn list {lname!r}")
                where = f"learn list {lname!r}"
                elements.append((self.field_slot(el["value"][0], el["value"][1], where),
                                 self.field_info(el["value"][0], el["value"][1])[0]))
            self.learn_lists[lid] = (lname, elements)

    def load_unions(self, j: dict) -> None:
        """`header_union_types`, `header_unions`, `header_union_stacks`; each member header learns its siblings
        (their valid slots are filled in once slots are assigned, see `union_sibling_slots`)."""
        utypes: dict[str, list[str]] = {}
        for ut in j.get("header_union_types", []):
            name = _req(ut, "name", "header_union_types")
            members = []
            for m in _req(ut, "headers", f"header union type {name!r}"):
                if not isinstance(m, list) or len(m) != 2 or m[1] not in self.header_types:
                    raise LoadError(f"malformed member {m!r} of header union type {name!r}")
                members.append(m[0])
            utypes[name] = members
        self.unions: dict[str, UnionLayout] = {}
        union_by_id: dict[int, UnionLayout] = {}
        for u in j.get("header_unions", []):
            name = _req(u, "name", "header_unions")
            tname = _req(u, "union_type", f"header union {name!r}")
            if tname not in utypes:
                raise LoadError(f"header union {name!r} has unknown union_type {tname!r}")
            ids = _req(u, "header_ids", f"header union {name!r}")
            if len(ids) != len(utypes[tname]):
                raise LoadError(f"header union {name!r} has {len(ids)} headers, its type {len(utypes[tname])}")
            names = []
            for i in ids:
                hl = self.header_by_id.get(i)
                if hl is None or hl.metadata or hl.stack is not None:
                    raise LoadError(f"header union {name!r} refers to a bad header id {i}")
                names.append(hl.name)
            ul = UnionLayout(name, u.get("id", len(self.unions)), tname, names, utypes[tname])
            self.unions[name] = ul
            union_by_id[ul.id] = ul
        self.union_of: dict[str, UnionLayout] = {h: ul for ul in self.unions.values() for h in ul.headers}
        if len(self.union_of) != sum(len(ul.headers) for ul in self.unions.values()):
            raise LoadError("a header belongs to more than one header union")
        self.union_stacks: dict[str, UnionStackLayout] = {}
        for s in j.get("header_union_stacks", []):
            name = _req(s, "name", "header_union_stacks")
            tname = _req(s, "union_type", f"header union stack {name!r}")
            names = []
            for i in _req(s, "header_union_ids", f"header union stack {name!r}"):
                ul = union_by_id.get(i)
                if ul is None or ul.type_name != tname:
                    raise LoadError(f"header union stack {name!r} refers to a bad header union id {i}")
                names.append(ul.name)
            self.union_stacks[name] = UnionStackLayout(name, s.get("id", len(self.union_stacks)), tname, names,
                                                       utypes.get(tname, []))

    def union_sibling_slots(self) -> None:
        for ul in self.unions.values():
            for h in ul.headers:
                self.headers[h].union_siblings = tuple(self.headers[o].valid_slot for o in ul.headers if o != h)

    def union(self, name: str, where: str) -> UnionLayout:
        ul = self.unions.get(name)
        if ul is None:
            raise LoadError(f"unknown header union {name!r} in {where}")
        return ul

    # --- lookups ---------------------------------------------------------------------------------------------
    def header(self, name: str, where: str) -> HeaderLayout:
        hl = self.headers.get(name)
        if hl is None:
            raise LoadError(f"unknown header {name!r} in {where}")
        return hl

    def field_slot(self, hdr: str, fname: str, where: str) -> int:
        """Slot of field `hdr.fname` (`$valid$` included), resolving field aliases."""
        if not isinstance(hdr, str):
            # p4c 1.2.4.8 writes hs[i].isValid() as ["field", [<dereference_header_stack ...>, "$valid$"]]; BMv2's
            # loader takes only a header name there and refuses the program too ("Invalid 'type' in expression")
            raise LoadError(f"unsupported: a field of a header stack element at a run-time index "
                            f"({json.dumps(hdr)[:200]}, field {fname!r}) in {where}; simple_switch refuses it too")
        hl = self.headers.get(hdr)
        if hl is None:
            alias = self.aliases.get(f"{hdr}.{fname}")
            if alias is not None:
                return self.field_slot(alias[0], alias[1], where)
            raise LoadError(f"unknown header {hdr!r} (field {hdr}.{fname}) in {where}")
        if fname == "$valid$":
            return hl.valid_slot
        if fname not in hl.slots:
            raise LoadError(f"unknown field {hdr}.{fname} in {where}")
        return hl.slots[fname]

    def field_info(self, hdr: str, fname: str) -> tuple[int, bool]:
        """(width, signed) of a field; `$valid$` is 1 bit unsigned."""
        hl = self.headers.get(hdr)
        if hl is None:
            alias = self.aliases[f"{hdr}.{fname}"]
            return self.field_info(*alias)
        if fname == "$valid$":
            return 1, False
        for n, w, s in hl.fields:
            if n == fname:
                return w, s
        raise KeyError(fname)

    def lookup_slot(self, name: str) -> int | None:
        """Slot of a dotted field name a target looks for (alias or real), or None when the program lacks it."""
        if name in self.aliases:
            h, f = self.aliases[name]
            return self.field_slot(h, f, name)
        hdr, _, fname = name.partition(".")
        hl = self.headers.get(hdr)
        if hl is None or (fname not in hl.slots and fname != "$valid$"):
            return None
        return hl.valid_slot if fname == "$valid$" else hl.slots[fname]

    def slot_names(self) -> dict[int, str]:
        """slot → dotted field name, for traces."""
        out = {}
        for hl in self.headers.values():
            for f, s in hl.slots.items():
                out[s] = f"{hl.name}.{f}"
            out[hl.valid_slot] = f"{hl.name}.$valid$"
        return out
