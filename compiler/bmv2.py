"""A type-checked v1model program → BMv2 JSON (format 2.23) and the control-plane model, as p4c-bm2-ss lays it out.

Header layout follows p4c's `HeaderConverter`: `scalars` (type `scalars_0`) holds user-metadata fields as
`<MetaStruct>.<field>` (nested structs flattened as `<MetaStruct>._<member>_<field><N>`), locals and temporaries;
`standard_metadata` is its own metadata instance; header instances are named after the headers-struct member,
stack elements `name[i]`. Errors are numbered in declaration order from 1, as the p4c 2.23 output we compared
against does. `__meta__` is version [2, 23].
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from compiler import ast
from compiler.cpmodel import (
    CPAction,
    CPActionProfile,
    CPActionRef,
    CPControllerHeader,
    CPCounter,
    CPDirectCounter,
    CPDirectMeter,
    CPField,
    CPMatchField,
    CPMeter,
    CPModel,
    CPRegister,
    CPTable,
)
from compiler.diagnostics import Diagnostics
from compiler.lower_actions import make_calculation
from compiler.lower_context import (
    SCALARS,
    STD_META,
    FieldRef,
    HeaderRef,
    Json,
    LowerAbort,
    LowerContext,
    NameGen,
    StackRef,
    Storage,
    StructRef,
    UnionRef,
    UnionStackRef,
)
from compiler.lower_control import ControlLowerer
from compiler.lower_expr import ExprLowerer
from compiler.lower_parser import ParserLowerer
from compiler.typecheck import TypeInfo, describe
from compiler.types import (
    BitsT,
    BlockT,
    BoolT,
    EnumT,
    ErrorT,
    StackT,
    StructLikeT,
    width_of,
)

BMV2_VERSION = [2, 23]
COMPILER_URL = "https://github.com/p4lang/p4c"
ROLES = ("parser", "verify_checksum", "ingress", "egress", "compute_checksum", "deparser")
ERROR_BASE = 0
"""p4c numbers the error constants from 0 (NoError) in declaration order (DiscoverStructure)."""


class ProgramLowering(LowerContext):
    """Lowers a whole V1Switch program; also fills the control-plane model."""

    _pending_direct: dict[str, CPDirectCounter]

    # -------------------------------------------------------------------------------------------- control plane

    def cp_extern(self, kind: str, name: str, d: ast.Decl, **kw: Any) -> None:
        cp: CPModel = self.cp
        if kind == "register":
            t = self.info.types.get(d)
            signed = bool(getattr(t, "type_args", None) and isinstance(t.type_args[0], BitsT)  # type: ignore[union-attr]
                          and t.type_args[0].signed)  # type: ignore[union-attr]
            cp.registers.append(CPRegister(name, kw["size"], kw["bitwidth"], signed, list(d.annotations), d.loc))
        elif kind == "counter":
            cp.counters.append(CPCounter(name, kw["size"], kw["unit"], list(d.annotations), d.loc))
        elif kind == "direct_counter":
            dc = CPDirectCounter(name, "", kw["unit"], list(d.annotations), d.loc)
            self._pending_direct[name] = dc
        elif kind == "action_profile":
            cp.action_profiles.append(CPActionProfile(name, kw["size"], kw["with_selector"], [], list(d.annotations),
                                                      d.loc))
        elif kind == "meter":
            cp.meters.append(CPMeter(name, kw["size"], kw["unit"], list(d.annotations), d.loc))
        elif kind == "direct_meter":
            self._pending_meters[name] = CPDirectMeter(name, "", kw["unit"], list(d.annotations), d.loc)

    def cp_action_profile_binding(self, profile: str, table: str) -> None:
        ap = next(a for a in self.cp.action_profiles if a.name == profile)
        if table not in ap.tables:
            ap.tables.append(table)

    def cp_direct_meter_binding(self, meter: str, table: str) -> None:
        dm = self._pending_meters.get(meter)
        if dm is not None and not dm.table:
            dm.table = table
            self.cp.direct_meters.append(dm)

    def cp_direct_counter_binding(self, counter: str, table: str) -> None:
        dc = self._pending_direct.get(counter)
        if dc is not None and not dc.table:
            dc.table = table
            self.cp.direct_counters.append(dc)

    def sort_control_plane(self) -> None:
        """P4Info lists tables per control in package order, then declaration order (p4c's order); the graph was
        built back to front, so restore it. Direct counters follow their declaration order."""
        self.cp.tables.sort(key=lambda t: self._cp_order.get(t.name, (99, (), 0)))
        def extern_key(name: str) -> tuple[object, ...]:
            return self.extern_order.get(name, (-1, (), 0))

        self.cp.direct_counters.sort(key=lambda d: extern_key(d.name))
        self.cp.meters.sort(key=lambda m: extern_key(m.name))
        self.cp.action_profiles.sort(key=lambda a: extern_key(a.name))
        self.cp.direct_meters.sort(key=lambda m: extern_key(m.name))
        self.cp.counters.sort(key=lambda c: extern_key(c.name))
        self.cp.registers.sort(key=lambda r: extern_key(r.name))

    def _serializable_enum(self, expr: Any) -> tuple[str, int, list[tuple[str, int]]] | None:
        """(name, underlying width, members and values) when a key's type is a serializable enum."""
        t = self.info.types.get(expr)
        if isinstance(t, EnumT) and t.underlying is not None:
            return t.name, t.underlying.width, [(m, t.values[m]) for m in t.members]
        return None

    def cp_table(self, cl: Any, t: ast.TableDecl, name: str, keys: list[Any], recs: list[Any], scopes: list[str],
                 size: int, const_default: Any, has_entries: bool, counter: str | None,
                 meter: str | None = None, implementation: str | None = None) -> None:
        fields = [CPMatchField(kname, w, kind, list(ke.annotations), enum=self._serializable_enum(ke.expr))
                  for kname, w, kind, ke in keys]
        refs: list[CPActionRef] = []
        aref = {id(self.info.actions.get(r)): r for r in (t.actions.actions if t.actions else [])}
        for rec, scope in zip(recs, scopes):
            ref = aref.get(id(rec.decl))
            if ref is not None:
                annos = list(ref.annotations)
            else:  # the NoAction p4c's front end adds to a table without default_action, as `@defaultonly NoAction`
                annos = [ast.Annotation(t.loc, "defaultonly")] if scope == "DEFAULT_ONLY" else []
            refs.append(CPActionRef(rec.name, scope, annos))
        ents = t.entries
        timeout = t.get_property("support_timeout")
        order = cl.decl.locals.index(t) if t in cl.decl.locals else 0
        self._cp_order[name] = (cl.block_index, cl.inst_order, order)
        self.cp.tables.append(CPTable(
            name=name, match_fields=fields, action_refs=refs,
            const_default_action=const_default.name if const_default is not None else None,
            size=size, is_const_table=bool(ents is not None and ents.is_const), has_initial_entries=has_entries,
            direct_counter=counter, direct_meter=meter, implementation=implementation,
            support_timeout=bool(isinstance(timeout, ast.ValueProperty) and self.info.values.get(timeout.value)),
            annotations=list(t.annotations), hidden=False, loc=t.loc))

    # -------------------------------------------------------------------------------------------- program

    def run(self) -> Json:
        self._pending_direct = {}
        self._pending_meters: dict[str, CPDirectMeter] = {}
        self._cp_order: dict[str, tuple[object, ...]] = {}
        self.names = NameGen(_identifiers(self.program))
        self.names.used.update({"scalars", "scalars_0", "standard_metadata"})
        for i, e in enumerate(self.info.errors):
            self.error_codes[e] = i + ERROR_BASE
            self.errors.append((e, i + ERROR_BASE))
        blocks = self.find_main()
        self.layout(blocks)
        for d in self.program.decls:
            if isinstance(d, ast.Instantiation) and not isinstance(self.info.types.get(d), BlockT):
                try:
                    self.instantiate(d, None)
                except LowerAbort:
                    pass
        self.controller_headers()
        parser_json = ParserLowerer(self, blocks["parser"]).lower()  # type: ignore[arg-type]
        self.checksum_control(blocks["verify_checksum"], verify=True)  # type: ignore[arg-type]
        pipelines: list[Json] = []
        lowerers: list[ControlLowerer] = []
        for pid, role in enumerate(("ingress", "egress")):
            decl = blocks[role]
            assert isinstance(decl, ast.ControlDecl)
            cl = ControlLowerer(self, decl, role, ROLES.index(role))
            init = None
            try:
                init = cl.lower()
            except LowerAbort:
                pass
            init = cl.finalize(init)
            lowerers.append(cl)
            pj: Json = {"name": role, "id": pid}
            si = self.source_info(decl, decl.name)
            if si is not None:
                pj["source_info"] = si
            pj.update({"init_table": init, "tables": [], "action_profiles": [], "conditionals": cl.conditionals})
            pipelines.append(pj)
        self.checksum_control(blocks["compute_checksum"], verify=False)  # type: ignore[arg-type]
        deparser_json = self.deparser(blocks["deparser"])  # type: ignore[arg-type]
        self.assemble_actions(lowerers, pipelines)
        self.sort_control_plane()
        self.finish_scalars()
        for c in self.counter_arrays:
            if c.get("is_direct") and c.get("binding") is None:
                self.diags.warning(self.program.loc, f"direct_counter '{c['name']}' is not attached to a table")
        for m in self.meter_arrays:
            if m.get("is_direct") and m["binding"] is None:
                self.diags.warning(self.program.loc, f"direct_meter '{m['name']}' is not attached to a table")
            elif m.get("is_direct") and m["result_target"] is None:
                self.diags.error(self.program.loc, f"direct_meter '{m['name']}' of table '{m['binding']}' is never "
                                 "read: BMv2 needs the field its read() writes the colour into")
        self.meter_arrays[:] = [m for m in self.meter_arrays if not m.get("is_direct") or m["binding"] is not None]
        return {
            "header_types": self.header_types,
            "headers": self.headers,
            "header_stacks": self.header_stacks,
            "header_union_types": self.header_union_types,
            "header_unions": self.header_unions,
            "header_union_stacks": self.header_union_stacks,
            "field_lists": self.field_lists,
            "errors": [[n, c] for n, c in self.errors],
            "enums": [],
            "parsers": [parser_json],
            "parse_vsets": self.parse_vsets,
            "deparsers": [deparser_json],
            "meter_arrays": self.meter_arrays,
            "counter_arrays": self.counter_arrays,
            "register_arrays": self.register_arrays,
            "calculations": self.calculations,
            "learn_lists": self.learn_lists,
            "actions": self.actions,
            "pipelines": pipelines,
            "checksums": self.checksums,
            "force_arith": [],
            "extern_instances": [],
            "field_aliases": self.field_aliases(),
            "program": self.program_name,
            "__meta__": {"version": BMV2_VERSION, "compiler": COMPILER_URL},
        }

    def find_main(self) -> dict[str, ast.Decl]:
        main = None
        for d in self.program.decls:
            if isinstance(d, ast.Instantiation) and d.name == "main":
                main = d
        if main is None:
            raise self.error(self.program, "program has no 'main' package instantiation")
        t = self.info.types.get(main)
        if not (isinstance(t, BlockT) and t.kind == "package" and t.name == "V1Switch"):
            raise self.unsupported(main, f"package '{getattr(t, 'name', '?')}' (only V1Switch is supported)")
        if len(main.args) != len(ROLES):
            raise self.error(main, f"V1Switch expects {len(ROLES)} arguments, got {len(main.args)}")
        self.main_type_args = t.type_args
        blocks: dict[str, ast.Decl] = {}
        for role, a in zip(ROLES, main.args):
            decl = None
            at = self.info.types.get(a)  # a constructor call or an instance (a specialized copy if it has arguments)
            if isinstance(a, (ast.ConstructorCall, ast.Name)) and isinstance(at, BlockT):
                decl = at.decl
            elif isinstance(a, ast.ConstructorCall) and isinstance(a.type, ast.TypeName):
                decl = self.info.global_scope.lookup(a.type.name)
            want = ast.ParserDecl if role == "parser" else ast.ControlDecl
            if not isinstance(decl, want):
                raise self.error(a, f"V1Switch argument '{role}' must be a {want.__name__[:-4].lower()} instance")
            blocks[role] = decl
        return blocks

    # -------------------------------------------------------------------------------------------- layout

    def layout(self, blocks: dict[str, ast.Decl]) -> None:
        self.header_types.append({"name": "scalars_0", "id": 0, "fields": self.scalar_fields})
        self.header_type_names.add("scalars_0")
        self.add_header(SCALARS, "scalars_0", True)
        parser = blocks["parser"]
        assert isinstance(parser, ast.ParserDecl)
        if len(parser.params) != 4:
            raise self.error(parser, "the V1Switch parser must have 4 parameters")
        hdr_t = self.info.types.get(parser.params[1])
        meta_t = self.info.types.get(parser.params[2])
        std_t = self.info.types.get(parser.params[3])
        if not isinstance(std_t, StructLikeT) or not isinstance(hdr_t, StructLikeT) or not isinstance(meta_t, StructLikeT):
            raise self.error(parser, "V1Switch parser parameters must be (packet_in, out H, inout M, inout "
                                     "standard_metadata_t)")
        self.std_type = std_t
        for arg_t, have, what in zip(self.main_type_args, (hdr_t, meta_t), ("H", "M")):
            if not (isinstance(arg_t, StructLikeT) and arg_t.decl is have.decl):
                raise self.error(parser, f"V1Switch type argument {what} is {arg_t}, but the parser's is {have}")
        self.add_header_type(STD_META, self.struct_fields(std_t))
        self.add_header(STD_META, STD_META, True)
        std_root = HeaderRef(STD_META, std_t)
        hdr_root = self.headers_struct(hdr_t, parser.params[1])
        meta_root = self.metadata_struct(meta_t)
        roots = {"H": hdr_root, "M": meta_root, "S": std_root}
        layouts = {
            "parser": (None, "H", "M", "S"),
            "verify_checksum": ("H", "M"),
            "ingress": ("H", "M", "S"),
            "egress": ("H", "M", "S"),
            "compute_checksum": ("H", "M"),
            "deparser": (None, "H"),
        }
        want_types = {"H": hdr_t, "M": meta_t, "S": std_t}
        for role, decl in blocks.items():
            params = decl.params  # type: ignore[attr-defined]
            layout = layouts[role]
            if len(params) != len(layout):
                raise self.error(decl, f"'{decl.name}' has {len(params)} parameters; as the V1Switch {role} "
                                       f"it needs {len(layout)}")
            for p, r in zip(params, layout):
                if r is None:
                    continue
                pt = self.info.types.get(p)
                if not (isinstance(pt, StructLikeT) and pt.decl is want_types[r].decl):
                    raise self.error(p, f"parameter '{p.name}' of '{decl.name}' has type {pt}, "
                                        f"expected {want_types[r]}")
                self.roots[p] = roots[r]

    def headers_struct(self, st: StructLikeT, where: ast.Node) -> StructRef:
        members: dict[str, Storage] = {}
        stacks: list[tuple[str, StackT]] = []
        for fname, ft in st.fields:
            if isinstance(ft, StructLikeT) and ft.kind == "header":
                self.add_header_type(ft.name, self.struct_fields(ft), self.max_length(ft))
                self.add_header(fname, ft.name, False)
                members[fname] = HeaderRef(fname, ft)
            elif isinstance(ft, StackT):
                stacks.append((fname, ft))
                members[fname] = StackRef(fname, ft)  # keeps field order; instances added after the headers
            elif isinstance(ft, StructLikeT) and ft.kind == "header_union":
                self.add_union_type(ft)
                members[fname] = self.add_union(fname, ft)
            else:
                raise self.error(where, f"the headers struct '{st.name}' may only contain headers and header "
                                        f"stacks; field '{fname}' has type {ft}")
        for fname, ft in stacks:
            el = ft.element
            if el.kind == "header_union":
                members[fname] = self.add_union_stack(fname, ft)
                continue
            self.add_header_type(el.name, self.struct_fields(el), self.max_length(el))
            ids = [self.add_header(f"{fname}[{i}]", el.name, False) for i in range(ft.size)]
            self.header_stacks.append({"name": fname, "id": len(self.header_stacks), "header_type": el.name,
                                       "size": ft.size, "header_ids": ids})
            members[fname] = StackRef(fname, ft)
        return StructRef(st, members)

    def metadata_struct(self, st: StructLikeT) -> StructRef:
        members: dict[str, Storage] = {}
        counter = [0]

        def field_lists_of(decl_field: ast.Field | None, ref: FieldRef) -> None:
            if decl_field is None:
                return
            for a in decl_field.annotations:
                if a.name == "field_list":
                    for arg in a.args:
                        if isinstance(arg, ast.IntLit):
                            self.field_list_members.setdefault(arg.value, []).append(
                                {"type": "field", "value": [ref.header, ref.field]})

        def decl_fields(s: StructLikeT) -> dict[str, ast.Field]:
            d = s.decl
            return {f.name: f for f in d.fields} if isinstance(d, ast.StructDecl) else {}

        def flatten(s: StructLikeT, prefix: str) -> StructRef:
            out: dict[str, Storage] = {}
            dfs = decl_fields(s)
            for fname, ft in s.fields:
                if isinstance(ft, StructLikeT) and ft.kind == "struct":
                    out[fname] = flatten(ft, f"{prefix}_{fname}")
                elif isinstance(ft, StructLikeT) and ft.kind == "header":
                    self.add_header_type(ft.name, self.struct_fields(ft), self.max_length(ft))
                    self.add_header(fname, ft.name, False)
                    out[fname] = HeaderRef(fname, ft)
                elif isinstance(ft, StackT) and isinstance(ft.element, StructLikeT) and ft.element.kind == "header":
                    out[fname] = self.local_storage(fname, ft, s.decl or self.program)  # a header stack of its own
                elif isinstance(ft, (BitsT, BoolT, ErrorT, EnumT)):
                    if prefix:
                        base = f"{st.name}.{prefix}_{fname}{counter[0]}"
                        counter[0] += 1
                    else:
                        base = f"{st.name}.{fname}"
                    ref = self.add_scalar(base, ft)
                    field_lists_of(dfs.get(fname), ref)
                    out[fname] = ref
                else:
                    raise self.unsupported(s.decl or self.program, f"user metadata field '{fname}' of type {ft}")
            return StructRef(s, out)

        members = flatten(st, "").members
        return StructRef(st, members)

    def finish_scalars(self) -> None:
        pad = self.scalar_width % 8
        if pad:
            self.scalar_fields.append([self.names.new("_padding"), 8 - pad, False])

    def field_aliases(self) -> list[Json]:
        out: list[Json] = []
        decl = getattr(self, "std_type", None)
        d = decl.decl if decl is not None else None
        if isinstance(d, ast.StructDecl):
            for f in d.fields:
                a = f.annotation("alias")
                if a is not None and a.string_arg():
                    out.append([a.string_arg(), [STD_META, f.name]])
        return out

    def controller_headers(self) -> None:
        for d in self.program.decls:
            if isinstance(d, ast.HeaderDecl):
                a = d.annotation("controller_header")
                if a is None:
                    continue
                name = a.string_arg()
                if name is None:
                    self.diags.error(a.loc, "@controller_header needs a string argument")
                    continue
                md = []
                for f in d.fields:
                    ft = self.info.types.get(f)
                    w = width_of(ft) if ft is not None else None
                    if w is None:
                        continue
                    md.append(CPField(f.name, w, list(f.annotations)))
                self.cp.controller_headers.append(CPControllerHeader(name, d.name, md, list(d.annotations), d.loc))

    # -------------------------------------------------------------------------------------------- checksums

    def checksum_control(self, decl: ast.ControlDecl, verify: bool) -> None:
        xl = ExprLowerer(self, {})
        xl.dynamic_index_ok = False
        want = ("verify_checksum", "verify_checksum_with_payload") if verify else \
            ("update_checksum", "update_checksum_with_payload")
        for loc in decl.locals:
            self.diags.unsupported(loc.loc, f"declaration in the {'verify' if verify else 'compute'} checksum "
                                            "control")

        for call, name in self._calls_only(decl.body.stmts, lambda owner, name: owner is None and name in want,
                                           f"statement other than {want[0]}() in this checksum control"):
            self.cp.calls_extern_functions = True
            try:
                self.checksum(call, name, verify, xl)
            except LowerAbort:
                pass

    def _calls_only(self, stmts: list[ast.Stmt], accept: Callable[[Any, str], bool],
                    refusal: str) -> Iterator[tuple[ast.MethodCall, str]]:
        """The method calls of a straight-line body (blocks flattened, empty statements skipped) that `accept`
        (owner, method name) admits; every other statement is reported as unsupported with `refusal`."""
        for s in stmts:
            if isinstance(s, ast.BlockStmt):
                yield from self._calls_only(s.stmts, accept, refusal)
                continue
            if isinstance(s, ast.EmptyStmt):
                continue
            call = s.call if isinstance(s, ast.MethodCallStmt) else None
            owner, name = self.info.calls.get(call, (None, "")) if call is not None else (None, "")
            if call is None or not accept(owner, name):
                self.diags.unsupported(s.loc, refusal)
                continue
            yield call, name

    def checksum(self, call: ast.MethodCall, name: str, verify: bool, xl: ExprLowerer) -> None:
        cond, data, target, algo_e = call.args
        if not (isinstance(algo_e, ast.Member)):
            raise self.unsupported(algo_e, "non-constant checksum algorithm")
        algo = algo_e.member
        tgt = xl.locate(target)
        if not isinstance(tgt, FieldRef):
            raise self.unsupported(target, f"checksum target '{describe(target)}'")
        calc = make_calculation(self, xl, call, algo, data, payload=name.endswith("_with_payload"))
        cv = self.info.values.get(cond)
        if_cond = None if cv is True else xl.cond(cond)
        if cv is False:
            return
        c: Json = {"name": self.names.new("cksum"), "id": len(self.checksums)}
        si = self.source_info(call)
        if si is not None:
            c["source_info"] = si
        c.update({"target": [tgt.header, tgt.field], "type": "generic", "calculation": calc,
                  "verify": verify, "update": not verify, "if_cond": if_cond})
        self.checksums.append(c)

    # -------------------------------------------------------------------------------------------- deparser

    def deparser(self, decl: ast.ControlDecl) -> Json:
        xl = ExprLowerer(self, {})
        xl.dynamic_index_ok = False
        order: list[str] = []

        def emit(s: Storage, where: ast.Node) -> None:
            if isinstance(s, HeaderRef):
                order.append(s.name)
            elif isinstance(s, StackRef):
                order.extend(f"{s.name}[{i}]" for i in range(s.type.size))
            elif isinstance(s, UnionRef):  # p4c's ExpandEmit: every member; BMv2 emits the valid one
                order.extend(h.name for h in s.members.values())
            elif isinstance(s, UnionStackRef):
                order.extend(f"{s.name}[{i}].{m}" for i in range(s.type.size) for m, _t in s.type.element.fields)
            elif isinstance(s, StructRef):
                for m in s.members.values():
                    emit(m, where)
            else:
                self.diags.unsupported(where.loc, "emitting this value")

        for loc in decl.locals:
            self.diags.unsupported(loc.loc, "declaration in the deparser")
        for call, _ in self._calls_only(decl.body.stmts,
                                        lambda owner, name: getattr(owner, "name", "") == "packet_out" and name == "emit",
                                        "statement other than packet.emit() in the deparser"):
            try:
                emit(xl.locate(call.args[0]), call.args[0])
            except LowerAbort:
                pass
        j: Json = {"name": "deparser", "id": 0}
        si = self.source_info(decl, decl.name)
        if si is not None:
            j["source_info"] = si
        j.update({"order": order, "primitives": []})
        return j

    # -------------------------------------------------------------------------------------------- actions

    def assemble_actions(self, lowerers: list[ControlLowerer], pipelines: list[Json]) -> None:
        seen_cp: dict[str, CPAction] = {}
        for cl in lowerers:
            recs = sorted(cl.actions.values(), key=lambda r: r.order) + sorted(cl.synth, key=lambda r: r.order)
            for rec in recs:
                rec.json_id = len(self.actions)
                self.actions.append({"name": rec.name, "id": rec.json_id,
                                     "runtime_data": [{"name": n, "bitwidth": w} for n, w in rec.params],
                                     "primitives": rec.primitives})
                if rec.name not in seen_cp:
                    cpa = CPAction(rec.name, [CPField(n, w) for n, w in rec.params], list(rec.annotations),
                                   rec.hidden, rec.decl.loc if rec.decl is not None else None)
                    seen_cp[rec.name] = cpa
                    self.cp.actions.append(cpa)
                elif rec.params and not seen_cp[rec.name].params:  # a direct call's copy came first (all bound)
                    seen_cp[rec.name].params = [CPField(n, w) for n, w in rec.params]
        tid = 0
        for cl, pj in zip(lowerers, pipelines):
            tables = [t for _, t in sorted(cl.tables, key=lambda x: x[0])]
            for t in tables:
                t["id"] = tid
                tid += 1
                t["action_ids"] = [r.json_id for r in t["action_ids"]]
                if t["type"] != "simple":  # p4c: no default entry for a table with an action profile
                    del t["default_entry"]
                else:
                    de = t["default_entry"]
                    de["action_id"] = de["action_id"].json_id
                for e in t.get("entries", []):
                    e["action_entry"]["action_id"] = e["action_entry"]["action_id"].json_id
                if t["name"].startswith("tbl_") and t["key"] == [] and t.get("default_entry", {}).get("action_const"):
                    self.cp.tables.append(CPTable(name=t["name"], action_refs=[CPActionRef(t["actions"][0])],
                                                  hidden=True))
            pj["tables"] = tables
            used = {t.get("action_profile") for t in tables}
            pj["action_profiles"] = [ap for ap in self.action_profiles if ap["name"] in used]
        cid = 0
        for pj in pipelines:
            for c in pj["conditionals"]:
                c["id"] = cid
                cid += 1


def _identifiers(program: ast.Program) -> set[str]:
    """Every identifier the program declares or uses (p4c's newName never returns one of these)."""
    out: set[str] = set()
    for n in ast.walk(program):
        name = getattr(n, "name", None)
        if isinstance(name, str):
            out.add(name)
    return out


def lower(program: ast.Program, info: TypeInfo, diags: Diagnostics, program_name: str) -> tuple[Json, CPModel]:
    """Lower a checked program; errors are recorded in `diags` (the JSON is meaningless if there are any)."""
    pl = ProgramLowering(program=program, info=info, diags=diags, cp=CPModel(), program_name=program_name)
    try:
        j = pl.run()
    except LowerAbort:
        j = {}
    return j, pl.cp


