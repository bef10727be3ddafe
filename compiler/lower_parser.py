"""The v1model parser → the BMv2 `parsers[0]` object.

Each state's statements become `parser_ops` (`extract`, `set`, `verify`, `advance`, `primitive` for header validity
and extern calls); `transition select(...)` becomes a `transition_key` plus `transitions` whose values and masks are
the concatenation of the byte-padded key values (p4c's encoding: keys 12 + 2 bits, values 0xaba, 0x3 → `0x0aba03`).
A select key that is not a plain field or lookahead is first computed into a `scalars` temporary, as p4c's mid end
does. `accept` is `next_state: null`; an explicit transition to `reject` also ends parsing (p4c warns that
BMv2 does not support it and emits the same).
"""

from __future__ import annotations

import itertools

from compiler import ast
from compiler.lower_actions import PrimitiveLowerer
from compiler.cpmodel import CPMatchField, CPValueSet
from compiler.lower_context import (
    HeaderRef,
    Json,
    LowerAbort,
    LowerContext,
    control_plane_name,
    expr_json,
    hexstr,
    hexval,
)
from compiler.lower_expr import ExprLowerer, StackNext, UnionStackNext
from compiler.typecheck import describe
from compiler.types import (
    BitsT,
    BlockT,
    BoolT,
    ExternT,
    P4Type,
    StackT,
    StructLikeT,
    ValueSetT,
    header_layout,
    width_of,
)


class ParserLowerer:
    """Lowers one parser declaration."""

    def __init__(self, lc: LowerContext, decl: ast.ParserDecl) -> None:
        self.lc = lc
        self.info = lc.info
        self.decl = decl
        self.xl = ExprLowerer(lc, {})
        self.xl.dynamic_index_ok = False
        self.pl = PrimitiveLowerer(lc, self.xl, "parser")

    def lower(self) -> Json:
        for loc in self.decl.locals:
            try:
                if isinstance(loc, ast.VarDecl):
                    self.lc.roots[loc] = self.lc.local_storage(loc.name, self.info.types[loc], loc)
                    if loc.init is not None:
                        raise self.lc.unsupported(loc, "initialized parser-local variable")
                elif isinstance(loc, ast.Instantiation) and isinstance(self.info.types.get(loc), BlockT):
                    pass  # a sub-parser: its states were inlined where it is applied (compiler.inline_calls)
                elif isinstance(loc, ast.Instantiation):
                    self.lc.instantiate(loc, None)
                elif isinstance(loc, ast.ConstDecl):
                    pass
                elif isinstance(loc, ast.ValueSetDecl):
                    self.value_set(loc)
                else:
                    raise self.lc.unsupported(loc, f"parser-local {type(loc).__name__}")
            except LowerAbort:
                pass
        states: list[Json] = []
        for st in self.decl.states:
            try:
                states.append(self.state(st, len(states)))
            except LowerAbort:
                pass
        return {"name": "parser", "id": 0, "init_state": "start", "parse_states": states}

    def value_set(self, d: ast.ValueSetDecl) -> None:
        """p4c's parse_vsets entry (compressed_bitwidth: the element's width) and the P4Info value set (one match
        field per struct field, `@match` giving its kind, else exact; unnamed for a bit<W> element)."""
        vt = self.info.types[d]
        assert isinstance(vt, ValueSetT)
        name = control_plane_name(d, self.decl.name)
        self.lc.instance_names[d] = name
        el = vt.element
        width = width_of(el)
        assert width is not None
        self.lc.parse_vsets.append({"name": name, "id": len(self.lc.parse_vsets), "compressed_bitwidth": width,
                                    "max_size": vt.size})
        fields: list[tuple[str, P4Type, list[ast.Annotation]]]
        if isinstance(el, StructLikeT):
            decl = el.decl
            annos = {f.name: list(f.annotations) for f in getattr(decl, "fields", [])}
            fields = [(n, ft, annos.get(n, [])) for n, ft in el.fields]
        else:
            fields = [("", el, [])]
        match = []
        for n, ft, annos in fields:
            kind = "exact"
            m = next((a for a in annos if a.name == "match"), None)
            if m is not None and m.args and isinstance(m.args[0], ast.Name):
                kind = m.args[0].name
            w = width_of(ft)
            assert w is not None
            match.append(CPMatchField(n, w, kind, [a for a in annos if a.name != "match"]))
        self.lc.cp.value_sets.append(CPValueSet(name, match, vt.size, list(d.annotations), d.loc))

    def state(self, st: ast.ParserState, sid: int) -> Json:
        ops: list[Json] = []
        for s in st.stmts:
            try:
                ops.extend(self.stmt(s))
            except LowerAbort:
                pass
        transitions: list[Json]
        key: list[Json] = []
        tr = st.transition
        if tr is None:
            transitions = [self.default(None, st)]
        elif isinstance(tr, ast.Name):
            transitions = [self.default(tr, st)]
        else:
            assert isinstance(tr, ast.SelectExpr)
            key, widths, pre = self.select_key(tr)
            ops.extend(pre)
            transitions = [t for c in tr.cases for t in self.case(c, widths)]
        out: Json = {"name": st.name, "id": sid, "parser_ops": ops, "transitions": transitions,
                     "transition_key": key}
        return out

    def next_state(self, n: ast.Name | None) -> str | None:
        if n is None or n.name == "accept":
            return None
        if n.name == "reject":
            self.lc.diags.warning(n.loc, "explicit transition to reject not supported on this target")
            return None
        return n.name

    def default(self, n: ast.Name | None, st: ast.ParserState) -> Json:
        return {"type": "default", "value": None, "mask": None, "next_state": self.next_state(n)}

    # ------------------------------------------------------------------------------------------------ select

    def select_key(self, sel: ast.SelectExpr) -> tuple[list[Json], list[int], list[Json]]:
        key: list[Json] = []
        widths: list[int] = []
        pre: list[Json] = []
        for k in sel.keys:
            t = self.info.types[k]
            w = width_of(t)
            if w is None:
                raise self.lc.unsupported(k, f"select key '{describe(k)}'")
            widths.append(w)
            j = self.xl.rvalue(k)
            outer, self.xl.hoisted = self.xl.hoisted, []
            try:
                self.xl.check_lookahead(j, k)   # may move looked-ahead bits into temporaries set first
                pre.extend(self.xl.hoisted)
            finally:
                self.xl.hoisted = outer
            if isinstance(t, BoolT) and j.get("type") == "expression" and j["value"].get("op") == "d2b" \
                    and j["value"]["right"].get("type") == "field":
                j = j["value"]["right"]
            if j.get("type") in ("field", "stack_field"):
                key.append(j)
                continue
            if j.get("type") == "lookahead":
                # as p4c writes it: the bits set into a temporary first, then the temporary is the key. BMv2 checks
                # the packet's length for a set from lookahead (PacketTooShort past its end), not for a lookahead key
                tmp = self.lc.add_scalar("tmp", t if not isinstance(t, BoolT) else BitsT(1))
                pre.append({"parameters": [{"type": "field", "value": [tmp.header, tmp.field]}, j], "op": "set"})
                key.append({"type": "field", "value": [tmp.header, tmp.field]})
                continue
            tmp = self.lc.add_scalar("tmp", t if not isinstance(t, BoolT) else BitsT(1))
            right = self.xl.finish(j, t, wrap=True, convert_bool=True)
            pre.append({"parameters": [{"type": "field", "value": [tmp.header, tmp.field]}, right], "op": "set"})
            key.append({"type": "field", "value": [tmp.header, tmp.field]})
        return key, widths, pre

    def simple_key(self, k: ast.Expr, w: int) -> tuple[int, int | None]:
        """(value, mask) of one keyset element; mask None = exact, 0 = don't care."""
        full = (1 << w) - 1
        if isinstance(k, (ast.DefaultExpr, ast.DontCare)):
            return 0, 0
        if isinstance(k, ast.MaskExpr):
            v, m = self.info.values.get(k.value), self.info.values.get(k.mask)
            if not isinstance(v, int) or not isinstance(m, int):
                raise self.lc.error(k, "select mask must be a compile-time constant")
            return int(v) & full, int(m) & full
        v = self.info.values.get(k)
        if v is None:
            raise self.lc.error(k, f"select case '{describe(k)}' is not a compile-time constant")
        return int(v) & full, None

    def key_options(self, k: ast.Expr, w: int) -> list[tuple[int, int | None]]:
        """The (value, mask) pairs one keyset element stands for: one, or a range's masks (p4c's
        ReplaceSelectRange: aligned power-of-two blocks, a signed range split at zero; empty if hi < lo)."""
        if not isinstance(k, ast.RangeExpr):
            return [self.simple_key(k, w)]
        lo, hi = self.info.values.get(k.lo), self.info.values.get(k.hi)
        if not isinstance(lo, int) or not isinstance(hi, int):
            raise self.lc.unsupported(k, "range boundaries that are not compile-time constants")
        if hi < lo:
            self.lc.diags.warning(k.loc, f"{lo}..{hi}: range with end less than start is treated as an empty range")
            return []
        t = self.info.types.get(k)  # the select key's type
        if isinstance(t, BitsT) and t.signed and lo < 0 <= hi:
            return range_masks(lo, -1, w) + range_masks(0, hi, w)
        return range_masks(lo, hi, w)

    def case(self, c: ast.SelectCase, widths: list[int]) -> list[Json]:
        """The transitions of one select case (several where a range expands into masks, as p4c does)."""
        nxt = self.next_state(c.state)
        keys = c.keys
        if len(keys) == 1 and isinstance(self.info.types.get(keys[0]), ValueSetT):
            d = self.info.refs[keys[0]]
            return [{"type": "parse_vset", "value": self.lc.instance_names[d], "mask": None, "next_state": nxt}]
        if len(keys) == 1 and isinstance(keys[0], ast.DefaultExpr) or \
                (len(keys) == 1 and isinstance(keys[0], ast.DontCare) and len(widths) != 1):
            return [{"type": "default", "value": None, "mask": None, "next_state": nxt}]
        out = []
        for combo in itertools.product(*(self.key_options(k, w) for k, w in zip(keys, widths))):
            value = 0
            mask = 0
            nbytes = 0
            no_mask = True
            all_dc = True
            for (v, m), w in zip(combo, widths):
                bits = 8 * ((w + 7) // 8)
                nbytes += (w + 7) // 8
                if m is None:
                    m = (1 << w) - 1
                else:
                    no_mask = False
                if m != 0:
                    all_dc = False
                value = (value << bits) | v
                mask = (mask << bits) | m
            if all_dc:
                out.append({"type": "default", "value": None, "mask": None, "next_state": nxt})
            else:
                out.append({"type": "hexstr", "value": hexstr(value, nbytes * 8),
                            "mask": None if no_mask else hexstr(mask, nbytes * 8), "next_state": nxt})
        return out

    # ------------------------------------------------------------------------------------------------ statements

    def stmt(self, s: ast.Stmt) -> list[Json]:
        if isinstance(s, ast.BlockStmt):
            out: list[Json] = []
            for x in s.stmts:
                out.extend(self.stmt(x))
            return out
        outer, self.xl.hoisted = self.xl.hoisted, []
        try:
            ops = self.leaf_stmt(s)
            return self.xl.hoisted + ops
        finally:
            self.xl.hoisted = outer

    def leaf_stmt(self, s: ast.Stmt) -> list[Json]:
        if isinstance(s, ast.EmptyStmt) or isinstance(s, ast.ConstDecl):
            return []
        if isinstance(s, ast.VarDecl):
            self.lc.roots[s] = self.lc.local_storage(s.name, self.info.types[s], s)
            if s.init is None:
                return []
            lhs = ast.Name(s.loc, s.name)
            self.info.refs[lhs] = s
            self.info.types[lhs] = self.info.types[s]
            return self.stmt(ast.AssignStmt(s.loc, lhs, s.init))
        if isinstance(s, ast.AssignStmt):
            lt = self.info.types[s.lhs]
            if isinstance(lt, StructLikeT) and lt.kind in ("header", "struct") \
                    and self.xl.lookahead_bits(s.rhs) is not None:
                return self.lookahead_into(s.lhs, lt)
            if isinstance(lt, (StructLikeT, StackT)) or isinstance(s.lhs, ast.Slice):
                return [{"op": "primitive", "parameters": [p]} for p in self.pl.assign(s.lhs, s.rhs, s)]
            left = self.xl.lvalue(s.lhs)
            right = self.xl.convert(s.rhs, wrap=True, convert_bool=isinstance(lt, BoolT))
            return [{"parameters": [left, right], "op": "set"}]
        if isinstance(s, ast.MethodCallStmt):
            return self.call(s.call, s)
        raise self.lc.unsupported(s, f"{type(s).__name__} in a parser state")

    def lookahead_into(self, lhs: ast.Expr, t: StructLikeT) -> list[Json]:
        """`h = pkt.lookahead<T>()` of a header or struct T, as p4c's ExpandLookahead: all of T's bits into a
        temporary, then (a header becomes valid) each field from its bits."""
        fields = header_layout(t) if t.kind == "header" else [((n,), n, ft) for n, ft in t.fields]
        widths = [width_of(ft) for _p, _n, ft in fields]
        if any(w is None or isinstance(ft, StructLikeT) for w, (_p, _n, ft) in zip(widths, fields)):
            raise self.lc.unsupported(lhs, f"lookahead of {t} (a field of it has no fixed width)")
        total = sum(w for w in widths if w is not None)
        tmp = self.lc.add_scalar("tmp", BitsT(total))
        tmp_j: Json = {"type": "field", "value": [tmp.header, tmp.field]}
        ops: list[Json] = [{"parameters": [tmp_j, {"type": "lookahead", "value": [0, total]}], "op": "set"}]
        if t.kind == "header":
            ops.append({"op": "primitive", "parameters": [
                {"op": "add_header", "parameters": [self.xl.lvalue(lhs)]}]})
        target = self.xl.locate(lhs)
        shift = total
        for (path, _n, _ft), w in zip(fields, widths):
            assert w is not None
            shift -= w
            dst = self.lc.header_member(target, path[0]) if isinstance(target, HeaderRef) else \
                target.members[path[0]] if hasattr(target, "members") else None
            if dst is None:
                raise self.lc.unsupported(lhs, f"lookahead into '{describe(lhs)}'")
            val = expr_json(">>", tmp_j, hexval(shift)) if shift else tmp_j
            val = expr_json("&", val, hexval((1 << w) - 1, w))
            # a parser `set` reads its source's value as an expression node: wrapped once more, as p4c writes it
            ops.append({"parameters": [self.xl.storage_json(dst, lhs), {"type": "expression", "value": val}],
                        "op": "set"})
        return ops

    def call(self, c: ast.MethodCall, s: ast.Stmt) -> list[Json]:
        owner, name = self.info.calls.get(c, (None, ""))
        if isinstance(owner, ExternT) and owner.name == "packet_in":
            if name == "extract":
                arg = c.args[0]
                target = self.xl.locate(arg)
                if isinstance(target, StackNext):
                    params: list[Json] = [{"type": "stack", "value": target.stack.name}]
                elif isinstance(target, HeaderRef):
                    params = [{"type": "regular", "value": target.name}]
                elif isinstance(target, UnionStackNext) and target.member:
                    params = [{"type": "union_stack", "value": [target.stack.name, target.member]}]
                else:
                    raise self.lc.unsupported(arg, f"extract into '{describe(arg)}'")
                if len(c.args) == 1:
                    return [{"parameters": params, "op": "extract"}]
                # the varbit field's size in bits, always wrapped as an expression (as p4c writes it)
                size = {"type": "expression", "value": self.xl.convert(c.args[1])}
                return [{"parameters": params + [size], "op": "extract_VL"}]
            if name == "advance":
                return [{"parameters": [self.xl.convert(c.args[0])], "op": "advance"}]
            if name == "lookahead":
                # p4c's BMv2 back end assigns a bare lookahead to a fresh temporary (RemoveComplexExpressions), so a
                # packet too short for it still ends parsing with PacketTooShort
                w = width_of(self.info.types[c])
                if w is None or w == 0:
                    raise self.lc.unsupported(c, f"lookahead of {self.info.types[c]}")
                tmp = self.lc.add_scalar("tmp", BitsT(w))
                return [{"parameters": [{"type": "field", "value": [tmp.header, tmp.field]},
                                        {"type": "lookahead", "value": [0, w]}], "op": "set"}]
            raise self.lc.unsupported(c, f"packet_in.{name}()")
        if owner is None and name == "verify":
            cond = self.xl.cond(c.args[0])
            err = self.xl.convert(c.args[1])
            return [{"parameters": [cond, err], "op": "verify"}]
        prims = self.pl.call(c, s)
        return [{"parameters": [p], "op": "primitive"} for p in prims]


def range_masks(lo: int, hi: int, width: int) -> list[tuple[int, int]]:
    """(value, mask) pairs covering lo..hi (both on one side of zero) with aligned power-of-two blocks, as p4c's
    midend/replaceSelectRange.cpp expandRange: negative bounds become their two's-complement bit patterns."""
    size_mask = (1 << width) - 1
    if lo < 0:
        lo, hi = lo + size_mask + 1, hi + size_mask + 1
    out = []
    remaining = hi - lo + 1
    while remaining > 0:
        stride = 1 << ((hi + 1).bit_length() - 1 if lo == 0 else (lo & -lo).bit_length() - 1)
        while stride > remaining:
            stride >>= 1
        out.append((lo, ~(stride - 1) & size_mask))
        remaining -= stride
        lo += stride
    return out
