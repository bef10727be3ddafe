"""State shared by the BMv2 lowering passes: storage locations, fresh names, ids, source_info.

Every P4 value the program can name lives somewhere in the BMv2 JSON: a header instance, a field of one (user
metadata scalars live in the `scalars` metadata header, as p4c lays them out), a header stack, or action data.
`Storage` objects describe those places; `LowerContext.locate` maps an lvalue expression to one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compiler import ast
from compiler.diagnostics import Diagnostics
from compiler.typecheck import TypeInfo, describe
from compiler.types import BitsT, BoolT, EnumT, ErrorT, P4Type, StackT, StructLikeT, VarbitT, header_layout, width_of

Json = Any
SCALARS = "scalars"
MAX_SIZE = 1 << 31  # P4Info sizes are int32
STD_META = "standard_metadata"


class LowerAbort(Exception):
    """Internal: stop lowering the current construct after an error was recorded."""


# ---------------------------------------------------------------------------------------------------- storage


class Storage:
    """Base of places a P4 value can live in BMv2."""


@dataclass
class HeaderRef(Storage):
    """A header (or metadata) instance `name` of type `type`."""

    name: str
    type: StructLikeT


@dataclass
class StackRef(Storage):
    """A header stack `name`."""

    name: str
    type: StackT


@dataclass
class UnionRef(Storage):
    """A header union `name`; each member is a header instance of its own, named `name.member` (as p4c does)."""

    name: str
    type: StructLikeT
    members: dict[str, HeaderRef]
    in_stack: bool = False  # an element `s[i]` of a union stack (p4c names it like a header, see r_MethodCall)


@dataclass
class UnionStackRef(Storage):
    """A header union stack `name` (elements `name[i]`)."""

    name: str
    type: StackT


@dataclass
class FieldRef(Storage):
    """Field `field` of instance `header` (`["header", "field"]` in JSON)."""

    header: str
    field: str
    type: P4Type


@dataclass
class StackFieldRef(Storage):
    """`stack.last.field` (`stack_field` in JSON)."""

    stack: str
    field: str
    type: P4Type


@dataclass
class DynHeaderRef(Storage):
    """A header stack element at a run-time index (`hs[i]`, `i` not a constant): p4c's `dereference_header_stack`
    expression, evaluated wherever it is used."""

    stack: str
    index: Json
    type: StructLikeT

    def json(self) -> Json:
        return {"type": "expression", "value": {"op": "dereference_header_stack",
                                                "left": {"type": "header_stack", "value": self.stack},
                                                "right": self.index}}


@dataclass
class DynFieldRef(Storage):
    """Field number `offset` (in the JSON header type) of a `DynHeaderRef`: p4c's `access_field` expression."""

    header: DynHeaderRef
    offset: int
    type: P4Type

    def json(self) -> Json:
        return {"type": "expression", "value": {"op": "access_field", "left": self.header.json(),
                                                "right": self.offset}}


@dataclass
class StructRef(Storage):
    """A struct whose members live in several places (headers struct, user metadata, struct locals)."""

    type: StructLikeT
    members: dict[str, Storage]


@dataclass
class InstanceRef(Storage):
    """An extern instance (register, counter, ...) with its JSON/control-plane name."""

    name: str


@dataclass
class SubControlRef(Storage):
    """A control instantiated inside another control; `prefix` is its control-plane name prefix."""

    decl: ast.ControlDecl
    prefix: str


@dataclass
class RuntimeData(Storage):
    """Action parameter number `index` (control-plane data)."""

    index: int
    type: P4Type


# ---------------------------------------------------------------------------------------------------- names


class NameGen:
    """p4c's `newName`: a base name if unused, else `base_0`, `base_1`, ... (one namespace per program)."""

    def __init__(self, used: set[str] | None = None) -> None:
        self.used: set[str] = set(used or ())
        self.counters: dict[str, int] = {}

    def new(self, base: str) -> str:
        if base not in self.used:
            self.used.add(base)
            return base
        i = self.counters.get(base, 0)
        while f"{base}_{i}" in self.used:
            i += 1
        self.counters[base] = i + 1
        name = f"{base}_{i}"
        self.used.add(name)
        return name


def hexstr(value: int, width: int | None = None) -> str:
    """p4c's `stringRepr`: `0x` + hex digits padded to whole bytes of `width` (negative values get a `-`)."""
    sign = "-" if value < 0 else ""
    digits = format(abs(value), "x")
    if width:
        nbytes = (width + 7) // 8
        digits = digits.rjust(2 * nbytes, "0")
    return f"{sign}0x{digits}"


def hexval(value: int, width: int | None = None) -> Json:
    return {"type": "hexstr", "value": hexstr(value, width)}


def expr_json(op: str, left: Json, right: Json, **extra: Json) -> Json:
    v = {"op": op, "left": left, "right": right}
    v.update(extra)
    return {"type": "expression", "value": v}


def control_plane_name(decl: ast.Decl, prefix: str | None) -> str:
    """p4c's control-plane name: `@name("x")` (absolute if it starts with '.'), else the declared name, prefixed by
    the enclosing control's name."""
    a = decl.annotation("name")
    name = a.string_arg() if a is not None else None
    if name is None:
        name = decl.name
    elif name.startswith("."):
        return name[1:]
    return f"{prefix}.{name}" if prefix else name



# ---------------------------------------------------------------------------------------------------- context


@dataclass
class LowerContext:
    """Everything the passes share for one program."""

    program: ast.Program
    info: TypeInfo
    diags: Diagnostics
    cp: Any  # compiler.cpmodel.CPModel, filled by the passes
    program_name: str = ""
    names: NameGen = field(default_factory=NameGen)
    header_types: list[Json] = field(default_factory=list)
    header_type_names: set[str] = field(default_factory=set)
    headers: list[Json] = field(default_factory=list)
    header_stacks: list[Json] = field(default_factory=list)
    header_union_types: list[Json] = field(default_factory=list)
    header_unions: list[Json] = field(default_factory=list)
    header_union_stacks: list[Json] = field(default_factory=list)
    scalar_fields: list[list[Json]] = field(default_factory=list)
    scalar_width: int = 0
    field_lists: list[Json] = field(default_factory=list)
    learn_lists: list[Json] = field(default_factory=list)
    field_list_ids: dict[int, int] = field(default_factory=dict)  # @field_list index → JSON id
    field_list_members: dict[int, list[Json]] = field(default_factory=dict)
    errors: list[tuple[str, int]] = field(default_factory=list)
    error_codes: dict[str, int] = field(default_factory=dict)
    actions: list[Json] = field(default_factory=list)
    calculations: list[Json] = field(default_factory=list)
    checksums: list[Json] = field(default_factory=list)
    counter_arrays: list[Json] = field(default_factory=list)
    meter_arrays: list[Json] = field(default_factory=list)
    action_profiles: list[Json] = field(default_factory=list)
    """`action_profile` / `action_selector` instances (p4c puts each in the pipeline of the tables using it)."""
    register_arrays: list[Json] = field(default_factory=list)
    parse_vsets: list[Json] = field(default_factory=list)
    # param/variable declaration → storage root
    roots: dict[ast.Node, Storage] = field(default_factory=dict)
    # extern instance declaration → JSON/control-plane name
    instance_names: dict[ast.Node, str] = field(default_factory=dict)
    cfg_counter: int = 0
    extern_order: dict[str, tuple[object, ...]] = field(default_factory=dict)  # P4Info order of extern instances  # p4c's CFG node numbering (node_N names), shared by ingress and egress
    sources: dict[str, list[str]] = field(default_factory=dict)

    # -------------------------------------------------------------------------------------------- errors

    def error(self, node: ast.Node, msg: str) -> LowerAbort:
        self.diags.error(node.loc, msg)
        return LowerAbort()

    def unsupported(self, node: ast.Node, what: str) -> LowerAbort:
        self.diags.unsupported(node.loc, what)
        return LowerAbort()

    # -------------------------------------------------------------------------------------------- source_info

    def source_info(self, node: ast.Node, fragment: str | None = None) -> Json | None:
        loc = node.loc
        if loc.line <= 0:
            return None
        if fragment is None:
            fragment = self.fragment(node)
        return {"filename": loc.file, "line": loc.line, "column": loc.col, "source_fragment": fragment}

    def fragment(self, node: ast.Node) -> str:
        """The source text of a statement/declaration: from its position up to the `;` or `{` that ends it (outside
        parentheses), continuation lines joined with single spaces."""
        parts: list[str] = []
        depth = 0
        line_no, col = node.loc.line, node.loc.col
        for _ in range(50):  # a statement longer than this is cut
            line = self.diags.source_line(ast.SourceLoc(node.loc.file, line_no, 1))
            if line is None:
                break
            text = line[col - 1:]
            for i, ch in enumerate(text):
                if ch in "([":
                    depth += 1
                elif ch in ")]":
                    depth -= 1
                elif ch in ";{" and depth <= 0:
                    parts.append(text[:i])
                    return " ".join(p.strip() for p in parts if p.strip())
            parts.append(text)
            line_no, col = line_no + 1, 1
        text = " ".join(p.strip() for p in parts if p.strip())
        if not text and isinstance(node, ast.Expr):
            return describe(node)
        return text

    # -------------------------------------------------------------------------------------------- layout

    def add_header_type(self, name: str, fields: list[list[Json]], max_length: int = 0) -> None:
        """A BMv2 header type; `max_length` (bytes) only for a header with a varbit field, as p4c writes it."""
        if name in self.header_type_names:
            return
        self.header_type_names.add(name)
        ht: Json = {"name": name, "id": len(self.header_types), "fields": fields}
        if max_length:
            ht["max_length"] = max_length
        self.header_types.append(ht)

    def struct_fields(self, st: StructLikeT) -> list[list[Json]]:
        """BMv2 header-type fields; structs are padded to whole bytes, headers must already be (as p4c requires)."""
        out: list[list[Json]] = []
        total = 0
        where = st.decl if st.decl is not None else self.program
        fields = [(n, t) for _p, n, t in header_layout(st)] if st.kind == "header" else st.fields
        for fname, ft in fields:
            if isinstance(ft, VarbitT) and st.kind == "header":
                out.append([fname, "*"])   # p4c writes a varbit field as a 2-tuple; its width counts at most
                total += ft.max_width
                continue
            w = width_of(ft)
            if w is None:
                raise self.unsupported(where, f"field '{fname}' of type {ft} in {st}")
            signed = isinstance(ft, BitsT) and ft.signed
            if isinstance(ft, EnumT) and ft.underlying is not None:
                signed = ft.underlying.signed
            out.append([fname, w, signed])
            total += w
        if st.kind == "struct" and total % 8:
            out.append([self.names.new("_padding"), 8 - total % 8, False])
        elif st.kind == "header" and total % 8:
            raise self.error(where, f"header '{st.name}' has fields totaling {total} bits; BMv2 only supports "
                                    "headers whose size is a multiple of 8 bits")
        return out

    @staticmethod
    def max_length(st: StructLikeT) -> int:
        """BMv2's `max_length` of a header type: its largest size in bytes when it has a varbit field, else 0."""
        if not any(isinstance(ft, VarbitT) for _, ft in st.fields):
            return 0
        return sum(ft.max_width if isinstance(ft, VarbitT) else (width_of(ft) or 0) for _, ft in st.fields) // 8

    @staticmethod
    def header_member(h: HeaderRef, member: str) -> Storage | None:
        """Storage of `h.member`: a field, or (a struct-typed field, flattened as p4c does) a struct of fields."""
        layout = header_layout(h.type)
        ft = h.type.field(member)
        if ft is None:
            return None
        if not isinstance(ft, StructLikeT):
            return next(FieldRef(h.name, n, t) for p, n, t in layout if p == (member,))

        def struct(path: tuple[str, ...], t: StructLikeT) -> StructRef:
            members: dict[str, Storage] = {}
            for n, mt in t.fields:
                sub = path + (n,)
                members[n] = struct(sub, mt) if isinstance(mt, StructLikeT) else \
                    next(FieldRef(h.name, jn, jt) for p, jn, jt in layout if p == sub)
            return StructRef(t, members)

        return struct((member,), ft)

    def add_union_type(self, t: StructLikeT) -> None:
        """p4c's addHeaderType of a header_union: its members' header types, then the union type."""
        if any(u["name"] == t.name for u in self.header_union_types):
            return
        for _fname, ft in t.fields:
            assert isinstance(ft, StructLikeT)
            self.add_header_type(ft.name, self.struct_fields(ft), self.max_length(ft))
        self.header_union_types.append({"name": t.name, "id": len(self.header_union_types),
                                        "headers": [[fname, ft.name] for fname, ft in t.fields]})

    def add_union(self, name: str, t: StructLikeT, in_stack: bool = False) -> UnionRef:
        """A header union instance: one header instance per member (`name.member`), then the union."""
        members: dict[str, HeaderRef] = {}
        ids = []
        for fname, ft in t.fields:
            assert isinstance(ft, StructLikeT)
            ids.append(self.add_header(f"{name}.{fname}", ft.name, False))
            members[fname] = HeaderRef(f"{name}.{fname}", ft)
        self.header_unions.append({"name": name, "id": len(self.header_unions), "union_type": t.name,
                                   "header_ids": ids, "pi_omit": True})
        return UnionRef(name, t, members, in_stack)

    def add_union_stack(self, name: str, t: StackT) -> UnionStackRef:
        el = t.element
        self.add_union_type(el)
        ids = []
        for i in range(t.size):
            self.add_union(f"{name}[{i}]", el, in_stack=True)
            ids.append(len(self.header_unions) - 1)
        self.header_union_stacks.append({"name": name, "id": len(self.header_union_stacks), "union_type": el.name,
                                         "size": t.size, "header_union_ids": ids})
        return UnionStackRef(name, t)

    def add_header(self, name: str, type_name: str, metadata: bool) -> int:
        hid = len(self.headers)
        self.headers.append({"name": name, "id": hid, "header_type": type_name, "metadata": metadata,
                             "pi_omit": True})
        return hid

    def add_scalar(self, base: str, t: P4Type, unique: bool = True) -> FieldRef:
        name = self.names.new(base) if unique else base
        w = width_of(t)
        assert w is not None, t
        signed = isinstance(t, BitsT) and t.signed
        self.scalar_fields.append([name, w, signed])
        self.scalar_width += w
        return FieldRef(SCALARS, name, t)

    def local_storage(self, name: str, t: P4Type, node: ast.Node) -> Storage:
        """Storage for a local variable (control, parser or action local, or a temporary)."""
        if isinstance(t, (BitsT, BoolT, ErrorT, EnumT)):
            return self.add_scalar(name, t)
        if isinstance(t, StructLikeT) and t.kind == "header":
            hname = self.names.new(name)
            self.add_header_type(t.name, self.struct_fields(t), self.max_length(t))
            self.add_header(hname, t.name, False)
            return HeaderRef(hname, t)
        if isinstance(t, StructLikeT) and t.kind == "header_union":
            self.add_union_type(t)
            return self.add_union(self.names.new(name), t)
        if isinstance(t, StackT) and isinstance(t.element, StructLikeT) and t.element.kind == "header":
            # a header stack of its own: elements `name[i]` (invalid at first, as every header), `next` at 0
            sname = self.names.new(name)
            el = t.element
            self.add_header_type(el.name, self.struct_fields(el), self.max_length(el))
            ids = [self.add_header(f"{sname}[{i}]", el.name, False) for i in range(t.size)]
            self.header_stacks.append({"name": sname, "id": len(self.header_stacks), "header_type": el.name,
                                       "size": t.size, "header_ids": ids})
            return StackRef(sname, t)
        if isinstance(t, VarbitT):
            # as p4c: a metadata instance of its own, type `struct$varbitW` with one varbit field named `field`
            tname = f"struct$varbit{t.max_width}"
            self.add_header_type(tname, [["field", "*"]], (t.max_width + 7) // 8)
            hname = self.names.new(name)
            self.add_header(hname, tname, True)
            return FieldRef(hname, "field", t)
        if isinstance(t, StructLikeT) and t.kind == "struct":
            members: dict[str, Storage] = {}
            for fname, ft in t.fields:
                members[fname] = self.local_storage(f"{name}_{fname}", ft, node)
            return StructRef(t, members)
        raise self.unsupported(node, f"local variable of type {t}")

    def error_code(self, name: str) -> int:
        return self.error_codes[name]

    # -------------------------------------------------------------------------------------------- externs

    def instantiate(self, d: ast.Instantiation, prefix: str | None) -> str:
        """Declare an extern instance: register/counter/direct_counter arrays and their control-plane entries."""
        from compiler.types import ExternT

        t = self.info.types.get(d)
        if not isinstance(t, ExternT):
            raise self.unsupported(d, f"instantiation of '{d.name}' here")
        name = control_plane_name(d, prefix)
        if self.instance_names.get(d) == name:
            return name  # a shared control instance, lowered again where it is applied again
        self.instance_names[d] = name
        si = self.source_info(d, d.name)
        ext = t.name
        if ext == "register":
            size = self.info.values.get(d.args[0]) if d.args else None
            if not isinstance(size, int) or not 0 < size < MAX_SIZE:
                raise self.error(d, f"register size must be a compile-time constant in 1..{MAX_SIZE - 1}")
            w = width_of(t.type_args[0]) if t.type_args else None
            if w is None:
                raise self.unsupported(d, f"register of {t.type_args[0] if t.type_args else '?'}")
            j: Json = {"name": name, "id": len(self.register_arrays)}
            if si is not None:
                j["source_info"] = si
            j.update({"size": size, "bitwidth": w})
            self.register_arrays.append(j)
            self.cp_extern("register", name, d, size=size, bitwidth=w)
        elif ext == "counter":
            size = self.info.values.get(d.args[0]) if d.args else None
            if not isinstance(size, int) or not 0 < size < MAX_SIZE:
                raise self.error(d, f"counter size must be a compile-time constant in 1..{MAX_SIZE - 1}")
            unit = self.counter_unit(d.args[1]) if len(d.args) > 1 else "BOTH"
            j = {"name": name, "id": len(self.counter_arrays)}
            if si is not None:
                j["source_info"] = si
            j.update({"is_direct": False, "size": size})
            self.counter_arrays.append(j)
            self.cp_extern("counter", name, d, size=size, unit=unit)
        elif ext == "direct_counter":
            unit = self.counter_unit(d.args[0]) if d.args else "BOTH"
            j = {"name": name, "id": len(self.counter_arrays), "is_direct": True, "binding": None}
            if si is not None:
                j["source_info"] = si
            self.counter_arrays.append(j)
            self.cp_extern("direct_counter", name, d, unit=unit)
        elif ext in ("action_profile", "action_selector"):
            sel = ext == "action_selector"
            size = self.info.values.get(d.args[1 if sel else 0]) if len(d.args) > (1 if sel else 0) else None
            if not isinstance(size, int) or not 0 < size < MAX_SIZE:
                raise self.error(d, f"{ext} size must be a compile-time constant in 1..{MAX_SIZE - 1}")
            j = {"name": name, "id": len(self.action_profiles)}
            if si is not None:
                j["source_info"] = si
            j["max_size"] = size
            if sel:
                algo = d.args[0].member if isinstance(d.args[0], ast.Member) else ""
                if algo not in ("crc16", "crc32", "identity", "csum16", "xor16", "crc16_custom", "crc32_custom"):
                    raise self.unsupported(d.args[0], f"selector hash algorithm '{algo}'")
                j["selector"] = {"algo": algo, "input": []}
            self.action_profiles.append(j)
            self.cp_extern("action_profile", name, d, size=size, with_selector=sel)
        elif ext in ("meter", "direct_meter"):
            direct = ext == "direct_meter"
            unit = self.meter_unit(d.args[0 if direct else 1] if len(d.args) > (0 if direct else 1) else None, d)
            j = {"name": name, "id": len(self.meter_arrays)}
            if si is not None:
                j["source_info"] = si
            if direct:  # p4c: the size is the owning table's, the result field the one direct_meter.read() writes
                j.update({"is_direct": True, "rate_count": 2, "type": unit.lower(), "size": 0, "binding": None,
                          "result_target": None})
                self.cp_extern("direct_meter", name, d, unit=unit)
            else:
                size = self.info.values.get(d.args[0]) if d.args else None
                if not isinstance(size, int) or not 0 < size < MAX_SIZE:
                    raise self.error(d, f"meter size must be a compile-time constant in 1..{MAX_SIZE - 1}")
                j.update({"is_direct": False, "size": size, "rate_count": 2, "type": unit.lower()})
                self.cp_extern("meter", name, d, size=size, unit=unit)
            self.meter_arrays.append(j)
        else:
            raise self.unsupported(d, f"extern '{ext}'")
        return name

    def bind_action_profile(self, profile: str, table: str, selector_input: list[Json], where: ast.Node) -> None:
        j = next(p for p in self.action_profiles if p["name"] == profile)
        if "selector" in j:
            if j["selector"]["input"] and j["selector"]["input"] != selector_input:
                raise self.error(where, f"action_selector '{profile}' is used by tables with different selector keys")
            j["selector"]["input"] = selector_input
        self.cp_action_profile_binding(profile, table)

    def meter_unit(self, e: ast.Expr | None, where: ast.Node) -> str:
        m = e.member if isinstance(e, ast.Member) else ""
        if m not in ("packets", "bytes"):
            raise self.error(e or where, "a meter's type must be MeterType.packets or MeterType.bytes")
        return m.upper()

    def meter_json(self, name: str) -> Json:
        return next(m for m in self.meter_arrays if m["name"] == name)

    def bind_direct_meter(self, meter: str, table: str, size: int, where: ast.Node) -> None:
        m = self.meter_json(meter)
        if m["binding"] not in (None, table):
            raise self.error(where, f"direct_meter '{meter}' is already attached to table '{m['binding']}'")
        m["binding"], m["size"] = table, size
        self.cp_direct_meter_binding(meter, table)

    def counter_unit(self, e: ast.Expr) -> str:
        m = e.member if isinstance(e, ast.Member) else ""
        return {"packets": "PACKETS", "bytes": "BYTES", "packets_and_bytes": "BOTH"}.get(m, "BOTH")

    def bind_direct_counter(self, counter: str, table: str, where: ast.Node) -> None:
        for c in self.counter_arrays:
            if c["name"] == counter and c.get("is_direct"):
                if c["binding"] not in (None, table):
                    raise self.error(where, f"direct_counter '{counter}' is already attached to table "
                                            f"'{c['binding']}'")
                c["binding"] = table
        self.cp_direct_counter_binding(counter, table)

    # -------------------------------------------------------------------------------------------- control plane
    # Implemented by compiler.bmv2.ProgramLowering (fills compiler.cpmodel).

    def cp_extern(self, kind: str, name: str, d: ast.Decl, **kw: Any) -> None:
        pass

    def cp_direct_counter_binding(self, counter: str, table: str) -> None:
        pass

    def cp_direct_meter_binding(self, meter: str, table: str) -> None:
        pass

    def cp_action_profile_binding(self, profile: str, table: str) -> None:
        pass

    def cp_table(self, cl: Any, t: ast.TableDecl, name: str, keys: list[Any], recs: list[Any], scopes: list[str],
                 size: int, const_default: Any, has_entries: bool, counter: str | None,
                 meter: str | None = None, implementation: str | None = None) -> None:
        pass
