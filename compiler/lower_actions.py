"""Statements inside actions (and straight-line code of apply blocks) → BMv2 primitives.

Covers assignments (`assign`, `assign_header`, slice assignments as read-modify-write), header validity
(`add_header`/`remove_header`), header stack `push`/`pop`, `exit`, `if` inside actions (predicated into `?:`
assignments as p4c does before 1.2.5; around a call, `exit` or other statement predication cannot express, and in
any action holding a `for` loop, as `_jump_if_zero` / `_jump` primitives as p4c does from 1.2.5), `for` loops with
`break` / `continue` inside actions, and the v1model externs: register read/write, counter.count, direct counters (implicit),
hash, random, mark_to_drop, clone, clone_preserving_field_list, resubmit/recirculate_preserving_field_list, truncate.
"""

from __future__ import annotations

from typing import Any

from compiler import ast
from compiler.lower_context import (
    STD_META,
    InstanceRef,
    DynHeaderRef,
    FieldRef,
    HeaderRef,
    Json,
    LowerAbort,
    LowerContext,
    StructRef,
    UnionRef,
    expr_json,
    hexstr,
    hexval,
)
from compiler.cpmodel import CPDigest, CPField, CPStruct
from compiler.lower_expr import ExprLowerer, StackLast
from compiler.typecheck import TypeInfo, describe
from compiler.types import (BOOL, BitsT, BoolT, EnumT, ErrorT, ExternT, StackT, StructLikeT, TypeT, VarbitT,
                            width_of)

HASH_ALGOS = {"crc32", "crc32_custom", "crc16", "crc16_custom", "random", "identity", "csum16", "xor16"}


class Label:
    """A jump target in one action's primitives: placed by a `_label` marker, resolved by `resolve_jumps`."""

    __slots__ = ()


END_OF_ACTION = Label()  # resolved to the length of the action's final primitive list (after any copy-out)


def mark(label: Label) -> Json:
    return {"op": "_label", "label": label}


def jump_to(label: Label) -> Json:
    return {"type": "hexstr", "value": label}


def resolve_jumps(prims: list[Json]) -> list[Json]:
    """`prims` without `_label` markers, each jump's target the offset its label marks (p4c's
    convertActionBodyTop: a hex offset into the action's primitive list)."""
    if not any(p.get("op") == "_label" for p in prims):  # every jump sits in an `if` or a loop, which mark labels
        return prims
    out: list[Json] = []
    at: dict[int, int] = {}
    for p in prims:
        if p.get("op") == "_label":
            at[id(p["label"])] = len(out)
        else:
            out.append(p)
    at[id(END_OF_ACTION)] = len(out)
    for p in out:
        if p["op"] in ("_jump", "_jump_if_zero"):
            target = p["parameters"][-1]
            if isinstance(target["value"], Label):
                target["value"] = hexstr(at.get(id(target["value"]), len(out)))
    return out


def needs_jumps(info: TypeInfo, stmts: list[ast.Stmt]) -> bool:
    """Whether an action body is lowered with jumps: it holds a `for` loop, or an `if` around a statement that
    predication cannot express (a call, an `exit`, a slice assignment ...); p4c-bm2-ss compiles those from 1.2.5.0
    (p4c#4999), earlier ones refuse them. Other actions keep p4c's older predication (straight-line code)."""
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, ast.ForStmt):
                return True
            if isinstance(n, ast.IfStmt) and not isinstance(info.values.get(n.cond), bool) and \
                    not all(predicable(info, m) for m in ast.walk(n) if isinstance(m, ast.Stmt)):
                return True
    return False


def predicable(info: TypeInfo, s: ast.Stmt) -> bool:
    """Whether `s` inside an `if` can become `lhs = cond ? rhs : lhs` assignments (see `_predicate`)."""
    if isinstance(s, (ast.BlockStmt, ast.EmptyStmt, ast.IfStmt)):
        return True
    if not isinstance(s, ast.AssignStmt) or isinstance(s.lhs, ast.Slice):
        return False
    lt, rt = info.types.get(s.lhs), info.types.get(s.rhs)
    if isinstance(lt, StructLikeT) and lt.kind == "struct":
        return isinstance(rt, StructLikeT) and rt.decl is lt.decl and isinstance(s.rhs, (ast.Name, ast.Member,
                                                                                          ast.Index))
    if isinstance(lt, StructLikeT) and lt.kind == "header":
        return isinstance(s.rhs, (ast.Name, ast.Member, ast.Index, ast.Ternary))
    return isinstance(lt, (BitsT, BoolT, ErrorT, EnumT))


def prim(op: str, params: list[Json], si: Json | None) -> Json:
    p = {"op": op, "parameters": params}
    if si is not None:
        p["source_info"] = si
    return p


def _may_alias(lhs: ast.Expr, rhs: ast.Expr) -> bool:
    """Whether `rhs` may read what assigning `lhs` writes (a reference to `lhs`, inside it or around it)."""
    target = describe(lhs)
    for n in ast.walk(rhs):
        if isinstance(n, (ast.Name, ast.Member, ast.Index)):
            d = describe(n)
            if d == target or d.startswith((target + ".", target + "[")) or target.startswith((d + ".", d + "[")):
                return True
    return False


class PrimitiveLowerer:
    """Lowers statement lists to primitive lists for one block (`gress` is "ingress", "egress", ... or None)."""

    def __init__(self, lc: LowerContext, xl: ExprLowerer, gress: str | None) -> None:
        self.lc = lc
        self.xl = xl
        self.info = lc.info
        self.gress = gress
        self.jumping = False  # lowering an action body with loops: `if`s become jumps too
        self.loops: list[tuple[Label, Label]] = []  # (break, continue) targets of the enclosing loops
        self.branch_depth = 0  # inside an `if` or a loop: an `exit` must jump over the rest

    def with_jumps(self, stmts: list[ast.Stmt]) -> list[Json]:
        """An action body holding `for` loops, lowered as p4c-bm2-ss does from 1.2.5.12 (p4c#5552; `if`s as from
        1.2.5.0, p4c#4999): `if` and `for` become `_jump_if_zero` / `_jump` primitives to `_label` markers, which
        `resolve_jumps` turns into offsets once the action's primitives are complete."""
        self.jumping = True
        try:
            return self.stmts(stmts)
        finally:
            self.jumping, self.loops, self.branch_depth = False, [], 0

    # ------------------------------------------------------------------------------------------------ statements

    def stmts(self, stmts: list[ast.Stmt]) -> list[Json]:
        out: list[Json] = []
        for s in stmts:
            try:
                out.extend(self.stmt(s))
            except LowerAbort:
                pass
        return out

    def stmt(self, s: ast.Stmt) -> list[Json]:
        if isinstance(s, ast.BlockStmt):
            return self.stmts(s.stmts)
        if isinstance(s, ast.AssignStmt):
            return self.assign(s.lhs, s.rhs, s)
        if isinstance(s, ast.MethodCallStmt):
            return self.call(s.call, s)
        if isinstance(s, ast.VarDecl):
            st = self.lc.local_storage(s.name, self.info.types[s], s)
            self.xl.params[s] = st
            if s.init is not None:
                lhs = ast.Name(s.loc, s.name)
                self.info.refs[lhs] = s
                self.info.types[lhs] = self.info.types[s]
                return self.assign(lhs, s.init, s)
            return []
        if isinstance(s, ast.ConstDecl):
            return []
        if isinstance(s, ast.ExitStmt):
            si = self.lc.source_info(s)
            if self.jumping and self.branch_depth:
                return [prim("exit", [], si), prim("_jump", [jump_to(END_OF_ACTION)], si)]
            return [prim("exit", [], si)]
        if isinstance(s, ast.EmptyStmt):
            return []
        if isinstance(s, ast.IfStmt):
            return self.jump_if(s) if self.jumping else self.predicated_if(s)
        if isinstance(s, ast.ForStmt):
            if not self.jumping:
                raise self.lc.unsupported(s, "'for' loop outside an action body (p4c-bm2-ss compiles loops only "
                                             "inside actions)")
            return self.loop(s)
        if isinstance(s, (ast.BreakStmt, ast.ContinueStmt)) and self.loops:
            brk, cont = self.loops[-1]
            return [prim("_jump", [jump_to(brk if isinstance(s, ast.BreakStmt) else cont)], self.lc.source_info(s))]
        raise self.lc.unsupported(s, f"{type(s).__name__} here")

    def jump_if(self, s: ast.IfStmt) -> list[Json]:
        """`if` inside an action with loops: `_jump_if_zero(cond, else)`, then, `_jump(end)`, else (p4c#4999)."""
        cv = self.info.values.get(s.cond)
        if isinstance(cv, bool):
            branch = s.then if cv else s.else_
            return self.stmt(branch) if branch is not None else []
        si = self.lc.source_info(s)
        else_, end = Label(), Label()
        cond = self.xl.convert(s.cond, wrap=True, convert_bool=True)
        out = [prim("_jump_if_zero", [cond, jump_to(else_ if s.else_ is not None else end)], si)]
        self.branch_depth += 1
        try:
            out.extend(self.stmt(s.then))
            if s.else_ is not None:
                out += [prim("_jump", [jump_to(end)], si), mark(else_)]
                out.extend(self.stmt(s.else_))
        finally:
            self.branch_depth -= 1
        out.append(mark(end))
        return out

    def loop(self, s: ast.ForStmt) -> list[Json]:
        """`for (init; cond; update) body`: init, test: `_jump_if_zero(cond, end)`, body, update (where `continue`
        goes), `_jump(test)`, end (where `break` goes) — p4c#5552's layout."""
        si = self.lc.source_info(s)
        test, update, end = Label(), Label(), Label()
        out = self.stmts(s.init)
        out.append(mark(test))
        out.append(prim("_jump_if_zero", [self.xl.convert(s.cond, wrap=True, convert_bool=True), jump_to(end)], si))
        self.loops.append((end, update))
        self.branch_depth += 1
        try:
            out.extend(self.stmt(s.body))
            out.append(mark(update))
            out.extend(self.stmts(s.update))
        finally:
            self.loops.pop()
            self.branch_depth -= 1
        out += [prim("_jump", [jump_to(test)], si), mark(end)]
        return out

    def assign(self, lhs: ast.Expr, rhs: ast.Expr, s: ast.Node) -> list[Json]:
        si = self.lc.source_info(s)
        lt = self.info.types.get(lhs)
        if isinstance(lhs, ast.Slice):
            return [self.slice_assign(lhs, rhs, si)]
        if isinstance(lt, StructLikeT) and lt.kind == "header":
            left = self.xl.lvalue(lhs)
            if isinstance(rhs, (ast.StructExpr, ast.ListExpr)) or \
                    (isinstance(rhs, ast.Cast) and isinstance(rhs.expr, (ast.StructExpr, ast.ListExpr))):
                # h = {f = a, ...}: the header becomes valid and each field is assigned
                return [prim("add_header", [left], si)] + self.assign_fields(lhs, lt, rhs, s)
            return [prim("assign_header", [left, self.header_operand(rhs)], si)]
        if isinstance(lt, StructLikeT) and lt.kind == "struct":
            return self.assign_fields(lhs, lt, rhs, s)
        if isinstance(lt, StructLikeT) and lt.kind == "header_union":
            return self.assign_union(lhs, lt, rhs, s)
        if isinstance(lt, StructLikeT):
            raise self.lc.unsupported(s, f"assignment of a whole {lt}")
        if isinstance(lt, StackT) and lt.element.kind == "header_union":
            left, right = self.xl.lvalue(lhs), self.xl.lvalue(rhs)
            if self.gress != "parser" or left.get("type") != "header_union_stack" or \
                    right.get("type") != "header_union_stack":
                # p4c's CopyStructures splits it outside parsers into element assignments BMv2 cannot load
                raise self.lc.unsupported(s, "assignment of a whole header union stack here")
            return [prim("assign_union_stack", [left, right], si)]
        if isinstance(lt, StackT):
            left, right = self.xl.lvalue(lhs), self.xl.lvalue(rhs)
            if left.get("type") != "header_stack" or right.get("type") != "header_stack":
                raise self.lc.unsupported(s, "assignment of a whole header stack from this value")
            return [prim("assign_header_stack", [left, right], si)]
        left = self.xl.lvalue(lhs)
        right = self.xl.convert(rhs, wrap=True, convert_bool=isinstance(lt, BoolT))
        return [prim("assign_VL" if isinstance(lt, VarbitT) else "assign", [left, right], si)]

    def assign_union(self, lhs: ast.Expr, lt: StructLikeT, rhs: ast.Expr, s: ast.Node) -> list[Json]:
        """`u1 = u2`: member by member (`u1.h = u2.h`, each an assign_header), as p4c's CopyStructures does."""
        src_t = self.info.types.get(rhs)
        if not isinstance(self.xl.locate(rhs), UnionRef) or not (isinstance(src_t, StructLikeT)
                                                                 and src_t.decl is lt.decl):
            raise self.lc.unsupported(rhs, f"assigning this value to a {lt}")
        out: list[Json] = []
        for name, ft in lt.fields:
            dst, src = ast.Member(lhs.loc, lhs, name), ast.Member(rhs.loc, rhs, name)
            self.info.types[dst] = ft
            self.info.types[src] = ft
            out.extend(self.assign(dst, src, s))
        return out

    def header_operand(self, e: ast.Expr) -> Json:
        """The source of an assign_header: a header, a stack element, or `c ? a : b` of those (BMv2's TERNARY_OP
        on headers, as p4c writes a header-valued conditional), as a whole primitive parameter (an expression
        wrapped once more, as BMv2 reads it)."""
        return param_json(self.header_node(e))

    def header_node(self, e: ast.Expr) -> Json:
        """`header_operand` as an operand inside an expression."""
        if isinstance(e, ast.Ternary):
            cond = self.xl.cond(e.cond)
            return {"type": "expression", "value": {"op": "?", "left": self.header_node(e.then),
                                                    "right": self.header_node(e.else_), "cond": cond}}
        src = self.xl.locate(e)
        if isinstance(src, StackLast):  # `hs.last` as a whole header: the element at lastIndex
            assert isinstance(src.stack.type.element, StructLikeT)
            last = expr_json("last_stack_index", None, {"type": "header_stack", "value": src.stack.name})
            src = DynHeaderRef(src.stack.name, last, src.stack.type.element)
        if not isinstance(src, (HeaderRef, DynHeaderRef)):
            raise self.lc.unsupported(e, "assigning this value to a header")
        return self.xl.storage_json(src, e)

    def assign_fields(self, lhs: ast.Expr, lt: StructLikeT, rhs: ast.Expr, s: ast.Node,
                      fresh: bool = False) -> list[Json]:
        """A struct (or a header from a struct expression) assigned field by field, as p4c's mid end does; `fresh`:
        `lhs` is a new temporary, which nothing else can name."""
        if isinstance(rhs, ast.Cast):
            rhs = rhs.expr
        if isinstance(rhs, (ast.StructExpr, ast.ListExpr)) and not fresh and _may_alias(lhs, rhs):
            # p4c's RemoveAliases: `s = { s.b, s.a }` goes through a temporary, so every value is read first
            decl = ast.VarDecl(s.loc, "tmp", None)  # type: ignore[arg-type]
            self.xl.params[decl] = self.lc.local_storage("tmp", lt, s)
            tmp = ast.Name(s.loc, "tmp")
            self.info.refs[tmp] = decl
            self.info.types[tmp] = lt
            return self.assign_fields(tmp, lt, rhs, s, fresh=True) + self.assign_fields(lhs, lt, tmp, s)
        if isinstance(rhs, ast.StructExpr):
            values = {f.name: f.value for f in rhs.fields}
        elif isinstance(rhs, ast.ListExpr):
            if len(rhs.elements) != len(lt.fields):
                raise self.lc.error(rhs, f"{len(rhs.elements)} values for the {len(lt.fields)} fields of {lt}")
            values = {name: v for (name, _), v in zip(lt.fields, rhs.elements)}
        else:
            values = {}
            src_t = self.info.types.get(rhs)
            if not (isinstance(src_t, StructLikeT) and src_t.decl is lt.decl):
                raise self.lc.unsupported(rhs, f"assigning this value to a {lt}")
            for name, ft in lt.fields:
                m = ast.Member(rhs.loc, rhs, name)
                self.info.types[m] = ft
                values[name] = m
        out: list[Json] = []
        for name, ft in lt.fields:
            if name not in values:
                raise self.lc.error(rhs, f"no value for field '{name}' of {lt}")
            dst = ast.Member(lhs.loc, lhs, name)
            self.info.types[dst] = ft
            out.extend(self.assign(dst, values[name], s))
        return out

    def slice_assign(self, lhs: ast.Slice, rhs: ast.Expr, si: Json | None) -> Json:
        """`x[h:l] = v` → `x = (x & ~mask) | ((v << l) & mask)` (p4c's slice-assignment lowering)."""
        hi, lo = self.info.values[lhs.hi], self.info.values[lhs.lo]
        assert isinstance(hi, int) and isinstance(lo, int)
        base = lhs.expr
        while isinstance(base, ast.Slice):  # x[7:4][3:0] is x[7:4]: bits counted from the inner slice's low bit
            ilo = self.info.values[base.lo]
            assert isinstance(ilo, int)
            hi, lo, base = ilo + hi, ilo + lo, base.expr
        base_t = self.info.types[base]
        assert isinstance(base_t, BitsT)
        w = base_t.width
        mask = ((1 << (hi - lo + 1)) - 1) << lo
        left = self.xl.lvalue(base)
        cur = self.xl.rvalue(base)
        val = self.xl.local(self.xl.rvalue(rhs))
        val = self.xl.fix(val, BitsT(w, False))  # cast to the field width
        if lo:
            val = self.xl.fix(expr_json("<<", val, hexval(lo)), BitsT(w, False))
        keep = expr_json("&", self.xl.local(cur), hexval(~mask & ((1 << w) - 1), w))
        put = expr_json("&", val, hexval(mask, w))
        return prim("assign", [left, {"type": "expression", "value": expr_json("|", keep, put)}], si)

    def predicated_if(self, s: ast.IfStmt) -> list[Json]:
        """An `if` inside an action: every assignment below it becomes `lhs = cond ? rhs : lhs`."""
        out: list[Json] = []
        cv = self.info.values.get(s.cond)
        if isinstance(cv, bool):
            branch = s.then if cv else s.else_
            return self.stmt(branch) if branch is not None else []
        # evaluate the condition once, before any branch assignment can change its inputs
        tmp = self.lc.add_scalar("cond", BOOL)
        out.append(prim("assign", [{"type": "field", "value": [tmp.header, tmp.field]},
                                   self.xl.convert(s.cond, wrap=True, convert_bool=True)], self.lc.source_info(s)))
        c = expr_json("d2b", None, {"type": "field", "value": [tmp.header, tmp.field]})
        out.extend(self._predicate(s.then, c))
        if s.else_ is not None:
            out.extend(self._predicate(s.else_, expr_json("not", None, c)))
        return out

    def _predicate(self, s: ast.Stmt, c: Json) -> list[Json]:
        if isinstance(s, ast.BlockStmt):
            out: list[Json] = []
            for x in s.stmts:
                out.extend(self._predicate(x, c))
            return out
        if isinstance(s, ast.EmptyStmt):
            return []
        if isinstance(s, ast.IfStmt):
            inner = self.predicated_if_nested(s, c)
            return inner
        if isinstance(s, ast.AssignStmt):
            lt = self.info.types.get(s.lhs)
            rt = self.info.types.get(s.rhs)
            if isinstance(lt, StructLikeT) and lt.kind == "struct" and isinstance(rt, StructLikeT) \
                    and rt.decl is lt.decl and isinstance(s.rhs, (ast.Name, ast.Member, ast.Index)):
                # a struct copy is a copy of each field (p4c's CopyStructures), each of them predicated
                out: list[Json] = []
                for name, ft in lt.fields:
                    dst, src = ast.Member(s.lhs.loc, s.lhs, name), ast.Member(s.rhs.loc, s.rhs, name)
                    self.info.types[dst] = self.info.types[src] = ft
                    out.extend(self._predicate(ast.AssignStmt(s.loc, dst, src), c))
                return out
            if isinstance(lt, StructLikeT) and lt.kind == "header" \
                    and isinstance(s.rhs, (ast.Name, ast.Member, ast.Index, ast.Ternary)):
                # h = c ? src : h, BMv2's TERNARY_OP on headers (p4c's Predication of a header copy)
                val = {"type": "expression", "value": {"op": "?", "left": self.header_node(s.rhs),
                                                       "right": self.header_node(s.lhs), "cond": c}}
                return [prim("assign_header", [self.xl.lvalue(s.lhs), param_json(val)], self.lc.source_info(s))]
            if not isinstance(lt, (BitsT, BoolT, ErrorT, EnumT)) or isinstance(s.lhs, ast.Slice):
                raise self.lc.unsupported(s, "this assignment inside an if statement in an action")
            left = self.xl.lvalue(s.lhs)
            new = self.xl.local(self.xl.rvalue(s.rhs))
            old = self.xl.local(self.xl.rvalue(s.lhs))
            val = expr_json("?", new, old, cond=c)
            if isinstance(lt, BoolT):
                val = expr_json("b2d", None, val)
            return [prim("assign", [left, {"type": "expression", "value": val}], self.lc.source_info(s))]
        raise self.lc.unsupported(s, f"'{_stmt_text(s)}' inside an if statement in an action "
                                     "(BMv2 can only predicate assignments)")

    def predicated_if_nested(self, s: ast.IfStmt, outer: Json) -> list[Json]:
        out: list[Json] = []
        tmp = self.lc.add_scalar("cond", BOOL)
        inner = self.xl.local(self.xl.rvalue(s.cond))
        both = expr_json("and", outer, inner)
        out.append(prim("assign", [{"type": "field", "value": [tmp.header, tmp.field]},
                                   {"type": "expression", "value": expr_json("b2d", None, both)}],
                        self.lc.source_info(s)))
        c = expr_json("d2b", None, {"type": "field", "value": [tmp.header, tmp.field]})
        out.extend(self._predicate(s.then, c))
        if s.else_ is not None:
            not_inner = expr_json("and", outer, expr_json("not", None, self.xl.local(self.xl.rvalue(s.cond))))
            tmp2 = self.lc.add_scalar("cond", BOOL)
            out.insert(1, prim("assign", [{"type": "field", "value": [tmp2.header, tmp2.field]},
                                          {"type": "expression", "value": expr_json("b2d", None, not_inner)}],
                               self.lc.source_info(s)))
            c2 = expr_json("d2b", None, {"type": "field", "value": [tmp2.header, tmp2.field]})
            out.extend(self._predicate(s.else_, c2))
        return out

    # ------------------------------------------------------------------------------------------------ calls

    def instance_name(self, call: ast.MethodCall) -> str:
        callee = call.callee
        assert isinstance(callee, ast.Member)
        target = callee.expr
        d = self.info.refs.get(target) if isinstance(target, ast.Name) else None
        ref = self.xl.params.get(d) if d is not None else None
        name = ref.name if isinstance(ref, InstanceRef) else self.lc.instance_names.get(d) if d is not None else None
        if name is None:
            raise self.lc.unsupported(call, f"extern instance '{describe(target)}'")
        return name

    def arg(self, e: ast.Expr) -> Json:
        return self.xl.convert(e, wrap=True)

    def call(self, call: ast.MethodCall, s: ast.Node) -> list[Json]:
        si = self.lc.source_info(s)
        owner, name = self.info.calls.get(call, (None, ""))
        if call in self.info.actions:
            raise self.lc.unsupported(call, "calling an action here")
        if isinstance(owner, StructLikeT):
            assert isinstance(call.callee, ast.Member)
            h = self.xl.locate(call.callee.expr)
            if not isinstance(h, (HeaderRef, DynHeaderRef)):
                raise self.lc.unsupported(call, f"{name}() on this value")
            if name == "setValid":
                return [prim("add_header", [self.xl.param_json(h, call)], si)]
            if name == "setInvalid":
                return [prim("remove_header", [self.xl.param_json(h, call)], si)]
            raise self.lc.unsupported(call, f"'{name}()' as a statement")
        if isinstance(owner, StackT):
            assert isinstance(call.callee, ast.Member)
            st = self.xl.lvalue(call.callee.expr)
            n = self.info.values[call.args[0]]
            op = "push" if name == "push_front" else "pop"
            return [prim(op, [st, hexval(int(n))], si)]
        if isinstance(owner, ExternT):
            return self.extern_method(call, owner, name, si)
        if owner is None and name:
            return self.extern_function(call, name, si)
        raise self.lc.unsupported(call, f"call '{describe(call)}'")

    def extern_method(self, call: ast.MethodCall, owner: ExternT, name: str, si: Json | None) -> list[Json]:
        ext = owner.name
        if ext == "register":
            reg = {"type": "register_array", "value": self.instance_name(call)}
            if name == "read":
                return [prim("register_read", [self.xl.lvalue(call.args[0]), reg, self.arg(call.args[1])], si)]
            if name == "write":
                return [prim("register_write", [reg, self.arg(call.args[0]), self.arg(call.args[1])], si)]
        elif ext == "counter" and name == "count":
            ctr = {"type": "counter_array", "value": self.instance_name(call)}
            return [prim("count", [ctr, self.arg(call.args[0])], si)]
        elif ext == "direct_counter" and name == "count":
            self.instance_name(call)
            return []  # BMv2 counts direct counters on every hit of the owning table
        elif ext == "meter" and name == "execute_meter":
            mtr = {"type": "meter_array", "value": self.instance_name(call)}
            return [prim("execute_meter", [mtr, self.arg(call.args[0]), self.xl.lvalue(call.args[1])], si)]
        elif ext == "direct_meter" and name == "read":
            # BMv2 executes a direct meter on every hit of its table and writes the colour to one field, the
            # meter's result_target; p4c takes that field from the read() calls, which must all name it
            m = self.lc.meter_json(self.instance_name(call))
            target = self.xl.lvalue(call.args[0])
            if target.get("type") != "field":
                raise self.lc.unsupported(call.args[0], "this direct_meter.read() destination")
            if m["result_target"] not in (None, target["value"]):
                raise self.lc.error(call, f"direct_meter '{m['name']}' is read into two different places; BMv2 "
                                          "writes its colour into one field")
            m["result_target"] = target["value"]
            return []
        elif ext in ("packet_in", "packet_out"):
            raise self.lc.error(call, f"{ext}.{name}() is only allowed in a parser or deparser")
        raise self.lc.unsupported(call, f"extern method {ext}.{name}()")

    def enum_member(self, e: ast.Expr) -> str:
        if isinstance(e, ast.Member) and isinstance(self.info.types.get(e.expr), TypeT):
            return e.member
        raise self.lc.unsupported(e, f"'{describe(e)}' (expected an enum constant)")

    def mark_to_drop(self, call: ast.MethodCall, si: Json | None) -> list[Json]:
        """mark_to_drop(sm): simple_switch's primitive on a standard_metadata_t header instance. p4c passes an
        action's or function's copy of standard_metadata (a metadata header of its own); ours lives in scalars, so the
        primitive marks the real one and the copy takes its egress_spec and mcast_grp, the real ones restored after
        (the switch's own drop port, as the primitive writes it; the copy-out then writes them back)."""
        where = self.xl.locate(call.args[0])
        if isinstance(where, HeaderRef):
            return [prim("mark_to_drop", [{"type": "header", "value": where.name}], si)]
        if not (isinstance(where, StructRef) and all(isinstance(where.members.get(f), FieldRef)
                                                     for f in ("egress_spec", "mcast_grp"))):
            raise self.lc.unsupported(call.args[0], f"mark_to_drop of '{describe(call.args[0])}'")
        out: list[Json] = []
        saved = []
        for f in ("egress_spec", "mcast_grp"):
            dst = where.members[f]
            assert isinstance(dst, FieldRef)
            tmp = self.lc.add_scalar(f"mark_to_drop_{f}", dst.type)
            real = {"type": "field", "value": [STD_META, f]}
            out.append(prim("assign", [{"type": "field", "value": [tmp.header, tmp.field]}, real], si))
            saved.append((f, dst, tmp, real))
        out.append(prim("mark_to_drop", [{"type": "header", "value": STD_META}], si))
        for f, dst, tmp, real in saved:
            out.append(prim("assign", [{"type": "field", "value": [dst.header, dst.field]}, real], si))
        for f, dst, tmp, real in saved:
            out.append(prim("assign", [real, {"type": "field", "value": [tmp.header, tmp.field]}], si))
        return out

    def extern_function(self, call: ast.MethodCall, name: str, si: Json | None) -> list[Json]:
        a = call.args
        if self.gress != "parser":
            self.lc.cp.calls_extern_functions = True
        if name == "mark_to_drop":
            if not a:  # v1model's deprecated form: p4c-bm2-ss emits simple_switch's `drop` primitive
                if not any(d.code == "deprecated" and d.loc == call.loc for d in self.lc.diags):  # once per call
                    self.lc.diags.warning(call.loc, "mark_to_drop: Using deprecated feature mark_to_drop. Please use "
                                          "mark_to_drop(standard_metadata) instead.", "deprecated")
                return [prim("drop", [], si)]
            return self.mark_to_drop(call, si)
        if name == "random":
            return [prim("modify_field_rng_uniform", [self.xl.lvalue(a[0]), self.arg(a[1]), self.arg(a[2])], si)]
        if name == "hash":
            algo = self.enum_member(a[1])
            if not isinstance(a[3], ast.ListExpr) and not isinstance(self.info.types.get(a[3]), StructLikeT):
                raise self.lc.error(a[3], f"{describe(a[3])}: expected a struct (hash() takes a list {{...}} of "
                                          "fields, a struct or a header, as p4c-bm2-ss requires)")
            pre: list[Json] = []
            calc = make_calculation(self.lc, self.xl, call, algo, a[3], payload=False, pre=pre)
            return pre + [prim("modify_field_with_hash_based_offset",
                               [self.xl.lvalue(a[0]), self.arg(a[2]), {"type": "calculation", "value": calc},
                                self.arg(a[4])], si)]
        if name in ("clone", "clone_preserving_field_list"):
            kind = self.enum_member(a[0])
            op = "clone_ingress_pkt_to_egress" if kind == "I2E" else "clone_egress_pkt_to_egress"
            if kind == "I2E" and self.gress not in ("ingress", None):
                raise self.lc.error(call, "clone(CloneType.I2E, ...) is only allowed in the ingress control")
            if kind == "E2E" and self.gress not in ("egress", None):
                raise self.lc.error(call, "clone(CloneType.E2E, ...) is only allowed in the egress control")
            fl = self.field_list(call, a[2]) if name == "clone_preserving_field_list" else 0
            return [prim(op, [self.arg(a[1]), hexval(fl)], si)]
        if name in ("resubmit_preserving_field_list", "recirculate_preserving_field_list"):
            fl = self.field_list(call, a[0])
            op = "resubmit" if name.startswith("resubmit") else "recirculate"
            return [prim(op, [hexval(fl)], si)]
        if name == "truncate":
            return [prim("truncate", [self.arg(a[0])], si)]
        if name == "digest":
            return self.digest(call, si)
        if name == "log_msg":
            if not isinstance(a[0], ast.StringLit):
                raise self.lc.unsupported(a[0], "log_msg with a format that is not a string literal")
            values: list[Json] = []
            if len(a) > 1:
                data = a[1]
                items = data.elements if isinstance(data, ast.ListExpr) else \
                    [f.value for f in data.fields] if isinstance(data, ast.StructExpr) else [data]
                values = [self.arg(x) for x in items]
            return [prim("log_msg", [{"type": "string", "value": a[0].value},
                                     {"type": "parameters_vector", "value": values}], si)]
        if name in ("assert", "assume"):
            return [prim(name, [self.xl.convert(a[0], wrap=True, convert_bool=True)], si)]
        if name in ("verify_checksum", "update_checksum", "verify_checksum_with_payload",
                    "update_checksum_with_payload"):
            raise self.lc.error(call, f"{name}() is only allowed in the checksum controls")
        if name == "verify":
            raise self.lc.error(call, "verify() is only allowed in a parser")
        raise self.lc.unsupported(call, f"extern function {name}()")

    def digest(self, call: ast.MethodCall, si: Json | None) -> list[Json]:
        """`digest<T>(receiver, data)`: as p4c, every member of `data` is copied into a temporary at the call (the
        message carries the values of that moment), a `learn_lists` entry named after T lists the temporaries, and
        `generate_digest` names it; simple_switch sends the list of the last such call when ingress ends."""
        if self.gress not in ("ingress", None):
            raise self.lc.error(call, "digest() is only allowed in the ingress control")
        receiver, data = call.args
        t = self.info.type_bindings.get(call, {}).get("T", self.info.types.get(data))
        if not isinstance(t, StructLikeT) or t.kind != "struct":
            if isinstance(data, (ast.ListExpr, ast.StructExpr)):
                raise self.lc.unsupported(data, "digest data whose type is not a struct of its members")
            raise self.lc.unsupported(data, "this digest data (a list {...}, a struct expression or a struct)")
        pre: list[Json] = []
        elements: list[Json] = []
        # as p4c: a struct member of the struct (nested any deep) is flattened into the learn list, member by member
        fields = self._digest_members(data, t, pre, elements, si)
        lid = len(self.lc.learn_lists) + 1
        self.lc.learn_lists.append({"id": lid, "name": t.name, "elements": elements})
        if not any(d.name == t.name for d in self.lc.cp.digests):
            self.lc.cp.digests.append(CPDigest(t.name, fields, [], call.loc))
        rv = self.info.values.get(receiver)
        rj = hexval(int(rv), 32) if isinstance(rv, int) else self.arg(receiver)
        return pre + [prim("generate_digest", [rj, hexval(lid)], si)]

    def _digest_members(self, data: ast.Expr, t: StructLikeT, pre: list[Json], elements: list[Json],
                        si: Json | None) -> list[CPField | CPStruct]:
        """The members of digest data `data` of struct type `t`: each bit/bool member copied into a temporary listed in
        `elements`; the struct's description for the P4Info."""
        items: list[tuple[ast.Expr | None, Any]] = []
        if isinstance(data, (ast.ListExpr, ast.StructExpr)):
            exprs = data.elements if isinstance(data, ast.ListExpr) else [f.value for f in data.fields]
            items = [(e, None) for e in exprs]
        else:
            s = self.xl.locate(data)
            if not isinstance(s, StructRef):
                raise self.lc.unsupported(data, "this digest data (a list {...}, a struct expression or a struct)")
            items = [(None, s.members[fname]) for fname, _ in s.type.fields]
        if len(t.fields) != len(items):
            raise self.lc.unsupported(data, "digest data whose type is not a struct of its members")
        out: list[CPField | CPStruct] = []
        for (e, member), (fname, ft) in zip(items, t.fields):
            if isinstance(ft, StructLikeT) and ft.kind == "struct":
                if e is not None:
                    sub = self._digest_members(e, ft, pre, elements, si)
                elif isinstance(member, StructRef):
                    sub = self._struct_ref_members(member, ft, data, pre, elements, si)
                else:
                    raise self.lc.unsupported(data, f"digest member '{fname}' of type {ft}")
                out.append(CPStruct(fname, ft.name, sub))
                continue
            w = width_of(ft)
            if not isinstance(ft, (BitsT, BoolT)) or w is None:
                raise self.lc.unsupported(data, f"digest member '{fname}' of type {ft}")
            if e is not None:
                src = self.xl.convert(e, wrap=True, convert_bool=isinstance(self.info.types.get(e), BoolT))
            elif isinstance(member, FieldRef):
                src = {"type": "field", "value": [member.header, member.field]}
            else:
                raise self.lc.unsupported(data, f"digest member '{fname}' of type {ft}")
            tmp = self.lc.add_scalar("tmp", ft)
            pre.append(prim("assign", [{"type": "field", "value": [tmp.header, tmp.field]}, src], si))
            elements.append({"type": "field", "value": [tmp.header, tmp.field]})
            out.append(CPField(fname, w))
        return out

    def _struct_ref_members(self, s: StructRef, t: StructLikeT, data: ast.Expr, pre: list[Json],
                            elements: list[Json], si: Json | None) -> list[CPField | CPStruct]:
        """`_digest_members` of a struct in storage."""
        out: list[CPField | CPStruct] = []
        for fname, ft in t.fields:
            m = s.members[fname]
            if isinstance(m, StructRef) and isinstance(ft, StructLikeT):
                out.append(CPStruct(fname, ft.name, self._struct_ref_members(m, ft, data, pre, elements, si)))
                continue
            w = width_of(ft)
            if not isinstance(m, FieldRef) or not isinstance(ft, (BitsT, BoolT)) or w is None:
                raise self.lc.unsupported(data, f"digest member '{fname}' of type {ft}")
            tmp = self.lc.add_scalar("tmp", ft)
            pre.append(prim("assign", [{"type": "field", "value": [tmp.header, tmp.field]},
                                       {"type": "field", "value": [m.header, m.field]}], si))
            elements.append({"type": "field", "value": [tmp.header, tmp.field]})
            out.append(CPField(fname, w))
        return out

    def field_list(self, call: ast.Node, idx_expr: ast.Expr) -> int:
        idx = self.info.values.get(idx_expr)
        if not isinstance(idx, int):
            raise self.lc.error(idx_expr, "field list index must be a compile-time constant")
        return self.lc_field_list_id(idx)

    # hooks implemented by the program lowering (bmv2.py) through the context
    def lc_field_list_id(self, idx: int) -> int:
        lc = self.lc
        if idx not in lc.field_list_ids:
            fid = len(lc.field_lists) + 1
            lc.field_list_ids[idx] = fid
            lc.field_lists.append({"id": fid, "name": f"field_list{idx}",
                                   "elements": list(lc.field_list_members.get(idx, []))})
        return lc.field_list_ids[idx]

    def lc_calculation(self, node: ast.Node, algo: str, data: ast.Expr, payload: bool) -> str:
        return make_calculation(self.lc, self.xl, node, algo, data, payload)


def param_json(node: Json) -> Json:
    """An operand node as a whole primitive parameter: BMv2 reads an expression parameter's value as an expression
    node, so an expression is wrapped once more (`{"type": "expression", "value": {"type": "expression", ...}}`)."""
    return {"type": "expression", "value": node} if node.get("type") == "expression" else node


def calc_inputs(lc: LowerContext, xl: ExprLowerer, data: ast.Expr, pre: list[Json] | None = None) -> list[Json]:
    """The `input` list of a calculation: fields, headers and constants (with bitwidth) of a list expression.

    With `pre` (the `hash()` extern), every element is first copied into a temporary by an assignment added to
    `pre`, as p4c's side-effect ordering does for the data argument of an extern call: a field into a scalar, a
    header into a header temporary (`assign_header`, which copies the validity too). The difference shows in BMv2,
    whose calculations leave out the fields of invalid headers: p4c's temporaries are always valid, so `{ipv4.src,
    tcp.srcPort}` hashes 6 bytes whether or not `tcp` is valid. A nested list is flattened (p4c writes it nested,
    which BMv2 refuses), and a bool becomes a bit<1> temporary (p4c writes an expression, which BMv2 refuses).
    Checksum calculations (`pre` None) name the fields themselves, as p4c's do."""
    out: list[Json] = []
    elems = data.elements if isinstance(data, ast.ListExpr) else [data]
    for e in elems:
        if isinstance(e, ast.ListExpr):
            out.extend(calc_inputs(lc, xl, e, pre))
            continue
        t = lc.info.types.get(e)
        v = lc.info.values.get(e)
        if isinstance(t, StructLikeT) and t.kind == "header":
            h = xl.locate(e)
            if not isinstance(h, HeaderRef):
                raise lc.unsupported(e, "this header in a field list")
            if pre is not None:
                tmp = lc.local_storage("tmp", t, e)
                assert isinstance(tmp, HeaderRef)
                pre.append(prim("assign_header", [{"type": "header", "value": tmp.name},
                                                  {"type": "header", "value": h.name}], lc.source_info(e)))
                h = tmp
            out.append({"type": "header", "value": h.name})
            continue
        if isinstance(t, StructLikeT):
            raise lc.unsupported(e, "a struct in a field list")
        if pre is not None and isinstance(t, (BitsT, BoolT)):
            if v is not None and width_of(t) is None:
                raise lc.error(e, f"constant '{describe(e)}' in a field list needs a width")
            tmp = lc.add_scalar("tmp", t)
            pre.append(prim("assign", [{"type": "field", "value": [tmp.header, tmp.field]},
                                       xl.convert(e, wrap=True, convert_bool=isinstance(t, BoolT))],
                            lc.source_info(e)))
            out.append({"type": "field", "value": [tmp.header, tmp.field]})
            continue
        if v is not None:
            w = width_of(t) if t is not None else None
            if w is None:
                raise lc.error(e, f"constant '{describe(e)}' in a field list needs a width")
            out.append({"type": "hexstr", "value": hexval(int(v), w)["value"], "bitwidth": w})
            continue
        s = xl.locate(e)
        if not isinstance(s, FieldRef):
            raise lc.unsupported(e, f"'{describe(e)}' in a field list")
        out.append({"type": "field", "value": [s.header, s.field]})
    return out


def make_calculation(lc: LowerContext, xl: ExprLowerer, node: ast.Node, algo: str, data: ast.Expr,
                     payload: bool, pre: list[Json] | None = None) -> str:
    if algo not in HASH_ALGOS:
        raise lc.unsupported(node, f"hash algorithm '{algo}'")
    if algo == "random":
        raise lc.unsupported(node, f"hash algorithm '{algo}' on this target")
    name = lc.names.new("calc")
    inputs = calc_inputs(lc, xl, data, pre)
    if payload:
        inputs.append({"type": "payload", "value": None})
    c: Json = {"name": name, "id": len(lc.calculations)}
    si = lc.source_info(node)
    if si is not None:
        c["source_info"] = si
    c["algo"] = algo
    c["input"] = inputs
    lc.calculations.append(c)
    return name


def _stmt_text(s: ast.Stmt) -> str:
    if isinstance(s, ast.MethodCallStmt):
        return describe(s.call)
    if isinstance(s, ast.ExitStmt):
        return "exit"
    return type(s).__name__
