"""Expressions → BMv2 JSON, with p4c's arithmetic conventions.

BMv2 evaluates expressions with unbounded integers and truncates only when it writes a field, so p4c makes the P4
width semantics explicit; this module does the same:

* every arithmetic result of type `bit<W>` (`+ - * << >>`, unary `-` and `~`, casts) is masked with `& 0xff..`;
  of type `int<W>` it is wrapped with `two_comp_mod`; `& | ^` need no fix-up;
* `-x` is `0 - x`; `a[h:l]` is `(a >> l)` narrowed to `h-l+1` bits; `a ++ b` is `((cast)a << |b|) | ((cast)b & mask)`;
* bool ↔ bit casts become `!= 0` / `c ? 1 : 0`; reading a bool field or `isValid()` goes through `d2b`, storing a bool
  through `b2d`;
* constants are `hexstr` padded to whole bytes of their width; compile-time constant subexpressions are folded;
* inside actions, action parameters are `runtime_data` at the top of a primitive argument and `local` inside
  expression trees; an argument that is an expression is wrapped in one more `{"type": "expression"}` object.
"""

from __future__ import annotations

from compiler import ast
from compiler.lower_context import (
    DynFieldRef,
    DynHeaderRef,
    FieldRef,
    HeaderRef,
    Json,
    LowerAbort,
    LowerContext,
    RuntimeData,
    StackFieldRef,
    StackRef,
    Storage,
    StructRef,
    UnionRef,
    UnionStackRef,
    expr_json,
    hexval,
)
from compiler.inline_calls import is_simple
from compiler.typecheck import describe, start_of
from compiler.types import (
    ActionRunT,
    BitsT,
    BoolT,
    EnumT,
    ErrorT,
    InfIntT,
    P4Type,
    StackT,
    StructLikeT,
    TypeT,
    header_layout,
    width_of,
)

ARITH_OPS = {"+", "-", "*", "<<", ">>"}
MAX_SHIFT_WIDTH = 8  # p4c's LowerExpressions::maxShiftWidth
BITWISE_OPS = {"&", "|", "^"}
COMPARE_OPS = {"==", "!=", "<", "<=", ">", ">="}


def _mask(w: int) -> int:
    return (1 << w) - 1


class ExprLowerer:
    """Converts typed expressions of one block (parser, control or action) to BMv2 JSON."""

    def __init__(self, lc: LowerContext, params: dict[ast.Node, Storage] | None = None) -> None:
        self.lc = lc
        self.info = lc.info
        # extra bindings (action parameters, locals) on top of lc.roots
        self.params: dict[ast.Node, Storage] = params if params is not None else {}
        # while inlining a function: its parameters → (caller's lowerer, argument expression)
        self.args: dict[ast.Node, tuple[ExprLowerer, ast.Expr]] = {}
        self.inlining: list[ast.FunctionDecl] = []
        # in a parser statement: `set` ops computing looked-ahead bits used inside an expression into temporaries
        # (p4c's SideEffectOrdering + ExpandLookahead), to run before the statement
        self.hoisted: list[Json] | None = None
        self.subst: dict[ast.Expr, ast.Expr] = {}
        self.dynamic_index_ok = True  # run-time header stack indices (BMv2 parsers have no such operand)  # expressions computed into temporaries beforehand
        self._la_width: dict[int, int] = {}   # id of a lookahead operand → width of the whole lookahead<T>()

    # ------------------------------------------------------------------------------------------------ storage

    def root(self, decl: ast.Node, use: ast.Node) -> Storage:
        s = self.params.get(decl)
        if s is None:
            s = self.lc.roots.get(decl)
        if s is None:
            if self.lc.diags.has_errors:  # most likely its declaration already failed: don't pile up
                raise LowerAbort()
            raise self.lc.unsupported(use, f"reference to '{getattr(decl, 'name', '?')}' here")
        return s

    def locate(self, e: ast.Expr) -> Storage:
        """The storage an lvalue-like expression denotes."""
        if isinstance(e, ast.Name):
            d = self.info.refs.get(e)
            if d is None:
                raise self.lc.error(e, f"cannot resolve '{e.name}'")
            if d in self.args:  # a header/struct parameter of a function being substituted: its argument
                caller, arg = self.args[d]
                return caller.locate(arg)
            return self.root(d, e)
        if isinstance(e, ast.Member):
            base_t = self.info.types.get(e.expr)
            if isinstance(base_t, StackT) and base_t.element.kind == "header_union" and e.member != "next":
                raise self.lc.unsupported(e, f"'{e.member}' of a header union stack")
            if isinstance(base_t, StackT) and e.member == "last":
                base = self.locate(e.expr)
                assert isinstance(base, StackRef)
                return StackLast(base)
            if isinstance(e.expr, ast.Member) and isinstance(self.info.types.get(e.expr.expr), StackT) \
                    and e.expr.member == "last":
                stack = self.locate(e.expr.expr)
                if isinstance(stack, UnionStackRef):
                    raise self.lc.unsupported(e.expr, "'last' of a header union stack")
                assert isinstance(stack, StackRef)
                field = next((n for p, n, _t in header_layout(stack.type.element) if p == (e.member,)), None)
                if field is None:
                    raise self.lc.unsupported(e, f"'{e.member}' of {stack.type.element}.last")
                return StackFieldRef(stack.name, field, self.info.types[e])
            base = self.locate(e.expr)
            if isinstance(base, StructRef):
                m = base.members.get(e.member)
                if m is None:
                    raise self.lc.unsupported(e, f"member '{e.member}' of {base.type}")
                return m
            if isinstance(base, HeaderRef):
                m = self.lc.header_member(base, e.member)
                if m is None:
                    raise self.lc.error(e, f"no field '{e.member}'")
                return m
            if isinstance(base, DynHeaderRef):
                layout = header_layout(base.type)
                pos = next((i for i, (path, _n, _t) in enumerate(layout) if path == (e.member,)), None)
                if pos is None:
                    raise self.lc.unsupported(e, f"'{e.member}' of a header stack element at a run-time index")
                return DynFieldRef(base, pos, self.info.types[e])
            if isinstance(base, StackRef):
                if e.member == "next":
                    return StackNext(base)
                raise self.lc.unsupported(e, f"header stack member '{e.member}' here")
            if isinstance(base, UnionRef) and e.member in base.members:
                return base.members[e.member]
            if isinstance(base, UnionStackRef) and e.member == "next":
                return UnionStackNext(base, "")
            if isinstance(base, UnionStackNext) and not base.member:
                return UnionStackNext(base.stack, e.member)
            raise self.lc.unsupported(e, f"'{e.member}' of this value")
        if isinstance(e, ast.Index):
            base = self.locate(e.expr)
            if isinstance(base, UnionStackRef):
                idx = self.info.values.get(e.index)
                if not isinstance(idx, int):
                    raise self.lc.unsupported(start_of(e.index), "non-constant header union stack index")
                el = base.type.element
                name = f"{base.name}[{idx}]"
                return UnionRef(name, el, {m: HeaderRef(f"{name}.{m}", mt) for m, mt in el.fields  # type: ignore
                                           }, in_stack=True)
            if isinstance(base, StructRef) and isinstance(self.info.values.get(e.index), int) \
                    and f"f{self.info.values[e.index]}" in base.members:  # a tuple local (typecheck: t[i] is t.fi)
                return base.members[f"f{self.info.values[e.index]}"]
            if not isinstance(base, StackRef):
                raise self.lc.unsupported(e, "indexing this value")
            idx = self.info.values.get(e.index)
            if not isinstance(idx, int):
                if not self.dynamic_index_ok:
                    raise self.lc.unsupported(start_of(e.index),
                                              "header stack index that is not a compile-time constant here")
                assert isinstance(base.type.element, StructLikeT)
                return DynHeaderRef(base.name, self.convert(e.index), base.type.element)
            return HeaderRef(f"{base.name}[{idx}]", base.type.element)
        raise self.lc.unsupported(e, f"'{_short(e)}' as a storage location")

    # ------------------------------------------------------------------------------------------------ lvalues

    def lvalue(self, e: ast.Expr) -> Json:
        """A primitive's destination. A stack element at a run-time index is an expression parameter, whose value
        BMv2 reads as an expression node: `{"type": "expression", "value": {"type": "expression", ...}}`, the form
        p4c writes (bm_sim/P4Objects.cpp build_expression; the single form fails to load on simple_switch)."""
        return self.param_json(self.locate(e), e)

    def param_json(self, s: Storage, e: ast.Node) -> Json:
        """`storage_json` of s as a whole primitive parameter (see `lvalue`)."""
        j = self.storage_json(s, e)
        if isinstance(s, (DynHeaderRef, DynFieldRef)):
            return {"type": "expression", "value": j}
        return j

    def storage_json(self, s: Storage, e: ast.Node) -> Json:
        if isinstance(s, FieldRef):
            return {"type": "field", "value": [s.header, s.field]}
        if isinstance(s, StackFieldRef):
            return {"type": "stack_field", "value": [s.stack, s.field]}
        if isinstance(s, HeaderRef):
            return {"type": "header", "value": s.name}
        if isinstance(s, UnionRef) and not s.in_stack:
            return {"type": "header_union", "value": s.name}
        if isinstance(s, UnionStackRef):
            return {"type": "header_union_stack", "value": s.name}
        if isinstance(s, StackRef):
            return {"type": "header_stack", "value": s.name}
        if isinstance(s, RuntimeData):
            return {"type": "runtime_data", "value": s.index}
        if isinstance(s, (DynHeaderRef, DynFieldRef)):
            return s.json()
        raise self.lc.unsupported(e, "this value as an operand")

    # ------------------------------------------------------------------------------------------------ rvalues

    def convert(self, e: ast.Expr, wrap: bool = False, convert_bool: bool = False) -> Json:
        """p4c's `ExpressionConverter::convert(e, doFixup=true, wrap, convertBool)`."""
        j = self.rvalue(e)
        self.check_lookahead(j, e)
        return self.finish(j, self.info.types.get(e), wrap, convert_bool)

    @staticmethod
    def finish(j: Json, t: P4Type | None, wrap: bool = False, convert_bool: bool = False) -> Json:
        """The operand form of an rvalue: a boolean as data (`b2d`) and/or wrapped as an `expression`."""
        if convert_bool and isinstance(t, BoolT):
            j = expr_json("b2d", None, j)
        if wrap and isinstance(j, dict) and j.get("type") in ("expression", "stack_field"):
            j = {"type": "expression", "value": j}
        return j

    def cond(self, e: ast.Expr) -> Json:
        """A boolean condition (conditionals, verify, if_cond): not wrapped."""
        j = self.rvalue(e)
        self.check_lookahead(j, e)
        return j

    def check_lookahead(self, j: Json, e: ast.Expr) -> None:
        """BMv2 reads `lookahead` only as a whole operand (a select key or the source of a parser `set`)."""
        def nested(x: Json) -> bool:
            if isinstance(x, dict):
                if x.get("type") == "lookahead":
                    return True
                return any(nested(v) for v in x.values() if isinstance(v, (dict, list)))
            if isinstance(x, list):
                return any(nested(v) for v in x)
            return False

        if not isinstance(j, dict):
            return
        partial = j.get("type") == "lookahead" and self._la_width.get(id(j), j["value"][1]) != j["value"][1]
        if partial or (j.get("type") != "lookahead" and nested(j)):
            if self.hoisted is None:
                raise self.lc.unsupported(e, "lookahead inside an expression (assign it to a variable first)")
            self.hoist_lookaheads(j)

    def hoist_lookaheads(self, x: Json) -> None:
        """Replace each `lookahead` operand inside `x` (or `x` itself) by a read of a temporary set from the whole
        looked-ahead value first: p4c hoists `pkt.lookahead<T>()` out of any larger expression (SideEffectOrdering)
        and reads all of T (ExpandLookahead), so a packet too short for T fails with PacketTooShort even when the
        bits used are there."""
        if isinstance(x, list):
            for v in x:
                self.hoist_lookaheads(v)
            return
        if not isinstance(x, dict):
            return
        if x.get("type") == "lookahead":
            off, w = x["value"]
            total = self._la_width.get(id(x), off + w)
            tmp = self.lc.add_scalar("tmp", BitsT(total))
            assert self.hoisted is not None
            self.hoisted.append({"parameters": [{"type": "field", "value": [tmp.header, tmp.field]},
                                                {"type": "lookahead", "value": [0, total]}], "op": "set"})
            j: Json = {"type": "field", "value": [tmp.header, tmp.field]}
            shift = total - off - w
            if shift:
                j = expr_json(">>", j, hexval(shift))
            if w != total:
                j = expr_json("&", j, hexval(_mask(w), w))
            x.clear()
            x.update(j)
            return
        for v in x.values():
            if isinstance(v, (dict, list)):
                self.hoist_lookaheads(v)

    def local(self, j: Json) -> Json:
        """p4c's `fixLocal`: runtime data inside an expression is `local`."""
        if isinstance(j, dict) and j.get("type") == "runtime_data":
            return {"type": "local", "value": j["value"]}
        return j

    def fix(self, j: Json, t: P4Type | None) -> Json:
        """p4c's `ArithmeticFixup`: truncate an arithmetic result to its type."""
        if isinstance(t, BitsT):
            if t.signed:
                return expr_json("two_comp_mod", self.local(j), hexval(t.width))
            return expr_json("&", self.local(j), hexval(_mask(t.width), t.width))
        return j

    def const(self, v: int | bool, t: P4Type | None) -> Json:
        if isinstance(v, bool) or isinstance(t, BoolT):
            return {"type": "bool", "value": bool(v)}
        w = width_of(t) if t is not None and not isinstance(t, InfIntT) else None
        if isinstance(t, EnumT) and t.underlying is None:
            w = 32
        return hexval(int(v), w)

    def rvalue(self, e: ast.Expr) -> Json:
        e = self.subst.get(e, e)
        t = self.info.types.get(e)
        v = self.info.values.get(e)
        if v is not None:
            if isinstance(t, ErrorT):
                return hexval(self.lc.error_code(self.info.errors[int(v)]))
            return self.const(v, t)
        if isinstance(t, EnumT) and t.underlying is None and isinstance(e, ast.Member) \
                and isinstance(self.info.types.get(e.expr), TypeT):
            return hexval(t.members.index(e.member), 32)
        m = getattr(self, "r_" + type(e).__name__, None)
        if m is None:
            raise self.lc.unsupported(e, f"expression '{_short(e)}' on this target")
        return m(e, t)

    def _read(self, s: Storage, t: P4Type | None, e: ast.Node) -> Json:
        j = self.storage_json(s, e)
        if isinstance(t, BoolT) and (j.get("type") in ("field", "stack_field") or isinstance(s, DynFieldRef)):
            return expr_json("d2b", None, j)
        return j

    def r_Name(self, e: ast.Name, t: P4Type | None) -> Json:
        d = self.info.refs.get(e)
        if d is not None and d in self.args:  # a parameter of a function being inlined
            caller, arg = self.args[d]
            return caller.rvalue(arg)
        return self._read(self.locate(e), t, e)

    def r_Member(self, e: ast.Member, t: P4Type | None) -> Json:
        la = self.lookahead_bits(e)
        if la is not None:
            return self.lookahead_operand(e, la)
        bt = self.info.types.get(e.expr)
        if isinstance(bt, StackT) and e.member == "lastIndex":
            return expr_json("last_stack_index", None, self.storage_json(self.locate(e.expr), e))
        if isinstance(bt, ActionRunT):
            raise self.lc.unsupported(e, "action_run outside a switch statement")
        if type(bt).__name__ == "ApplyResultT":
            raise self.lc.unsupported(e, "table hit/miss outside an if condition")
        return self._read(self.locate(e), t, e)

    def r_Index(self, e: ast.Index, t: P4Type | None) -> Json:
        return self._read(self.locate(e), t, e)

    def r_MethodCall(self, e: ast.MethodCall, t: P4Type | None) -> Json:
        fn = self.info.functions.get(e)
        if fn is not None:
            return self.inline_function(e, fn)
        owner, name = self.info.calls.get(e, (None, ""))
        if isinstance(owner, StructLikeT) and name == "isValid":
            assert isinstance(e.callee, ast.Member)
            h = self.locate(e.callee.expr)
            if isinstance(h, UnionRef):
                if h.in_stack:  # p4c refers to the element as a header ("u[0]"), which BMv2 fails to load
                    raise self.lc.unsupported(e, "isValid() of a header union stack element")
                return expr_json("valid_union", None, self.storage_json(h, e))
            if isinstance(h, DynHeaderRef):
                return expr_json("d2b", None, expr_json("valid", None, h.json()))
            if not isinstance(h, HeaderRef):
                raise self.lc.unsupported(e, "isValid() of this value")
            return expr_json("d2b", None, {"type": "field", "value": [h.name, "$valid$"]})
        if owner is not None and getattr(owner, "name", "") == "packet_in" and name == "lookahead":
            if not isinstance(t, BitsT):
                raise self.lc.unsupported(e, f"lookahead of {t} (use bit<W>, a slice of it, or a header field)")
            return {"type": "lookahead", "value": [0, t.width]}
        raise self.lc.unsupported(e, f"call '{_short(e)}' inside an expression")

    def inline_function(self, call: ast.MethodCall, fn: ast.FunctionDecl) -> Json:
        """A call of a single-return function: its expression, with each parameter standing for the argument (the
        arguments are evaluated here, in the caller's context; P4 functions have no side effects in this subset)."""
        if len(self.inlining) > 16:
            raise self.lc.error(call, f"function '{fn.name}' calls itself")
        if not is_simple(self.info, fn):  # statement bodies are inlined before lowering, where a statement can go
            raise self.lc.unsupported(call, f"a call of function '{fn.name}' here (its body is not a single "
                                            "return of an expression)")
        ret = next(s for s in fn.body.stmts if isinstance(s, ast.ReturnStmt))
        assert ret.value is not None
        inner = ExprLowerer(self.lc, self.params)
        inner.dynamic_index_ok = self.dynamic_index_ok
        inner.inlining = self.inlining + [fn]
        inner.args = {p: (self, a) for p, a in zip(fn.params, call.args)}
        j = inner.rvalue(ret.value)
        rt = self.info.types.get(ret.value)
        return j if rt == self.info.types.get(call) else self.fix(j, self.info.types.get(call))

    def r_Cast(self, e: ast.Cast, t: P4Type | None) -> Json:
        ft = self.info.types.get(e.expr)
        inner = self.rvalue(e.expr)
        if isinstance(t, BoolT) and isinstance(ft, BitsT):
            return expr_json("!=", self.local(inner), hexval(0, ft.width))
        if isinstance(t, BitsT) and isinstance(ft, BoolT):
            return expr_json("?", hexval(1, t.width), hexval(0, t.width), cond=self.local(inner))
        if isinstance(t, EnumT) or isinstance(ft, EnumT):
            tt = t.underlying if isinstance(t, EnumT) else t
            return self.fix(inner, tt)
        if isinstance(t, BitsT):
            return self.fix(inner, t)
        return inner

    def lookahead_operand(self, e: ast.Expr, la: tuple[int, int]) -> Json:
        j: Json = {"type": "lookahead", "value": [la[0], la[1]]}
        root = e
        while isinstance(root, (ast.Member, ast.Slice)):
            root = root.expr
        w = width_of(self.info.types[root])
        if w is not None:
            self._la_width[id(j)] = w
        return j

    def lookahead_bits(self, e: ast.Expr) -> tuple[int, int] | None:
        """(bit offset, width) when `e` reads bits ahead in the packet: `pkt.lookahead<T>()`, a slice of it, or a
        field of a looked-ahead header (p4c turns these into one `lookahead` operand)."""
        if isinstance(e, ast.MethodCall):
            owner, name = self.info.calls.get(e, (None, ""))
            if getattr(owner, "name", "") == "packet_in" and name == "lookahead":
                w = width_of(self.info.types[e])
                return (0, w) if w is not None else None
            return None
        if isinstance(e, ast.Slice):
            inner = self.lookahead_bits(e.expr)
            if inner is None:
                return None
            hi, lo = int(self.info.values[e.hi]), int(self.info.values[e.lo])
            return inner[0] + inner[1] - 1 - hi, hi - lo + 1
        if isinstance(e, ast.Member):
            inner = self.lookahead_bits(e.expr)
            ht = self.info.types.get(e.expr)
            if inner is None or not isinstance(ht, StructLikeT):
                return None
            off = inner[0]
            for fname, ft in ht.fields:
                w = width_of(ft) or 0
                if fname == e.member:
                    return off, w
                off += w
        return None

    def r_Slice(self, e: ast.Slice, t: P4Type | None) -> Json:
        la = self.lookahead_bits(e)
        if la is not None:
            return self.lookahead_operand(e, la)
        bt = self.info.types.get(e.expr)
        lo = self.info.values[e.lo]
        hi = self.info.values[e.hi]
        assert isinstance(lo, int) and isinstance(hi, int)
        j = self.rvalue(e.expr)
        if lo:
            j = self.fix(expr_json(">>", self.local(j), hexval(lo)), bt)
        res = BitsT(hi - lo + 1, isinstance(bt, BitsT) and bt.signed)
        j = self.fix(j, res)
        if res.signed:
            j = self.fix(j, BitsT(res.width, False))
        return j

    def r_Unary(self, e: ast.Unary, t: P4Type | None) -> Json:
        inner = self.rvalue(e.operand)
        if e.op == "!":
            return expr_json("not", None, self.local(inner))
        if e.op == "~":
            return self.fix(expr_json("~", None, self.local(inner)), t)
        if e.op == "-":
            return self.fix(expr_json("-", hexval(0, width_of(t) if isinstance(t, BitsT) else None),
                                      self.local(inner)), t)
        if e.op == "+":
            return inner
        raise self.lc.unsupported(e, f"operator '{e.op}'")

    def r_Binary(self, e: ast.Binary, t: P4Type | None) -> Json:
        op = e.op
        if op == "++":
            assert isinstance(t, BitsT)
            rt = self.info.types[e.right]
            wb = width_of(rt) or 0
            left = self.fix(self.rvalue(e.left), t)
            right = self.fix(self.rvalue(e.right), t)
            sh = self.fix(expr_json("<<", self.local(left), hexval(wb)), t)
            and0 = expr_json("&", self.local(right), hexval(_mask(wb), t.width))
            return expr_json("|", sh, and0)
        if op in ("|+|", "|-|"):
            assert isinstance(t, BitsT)
            inner = expr_json("+" if op == "|+|" else "-", self.local(self.rvalue(e.left)),
                              self.local(self.rvalue(e.right)))
            return expr_json("sat_cast" if t.signed else "usat_cast", inner, hexval(t.width))
        if op in ("==", "!=") and isinstance(self.info.types.get(e.left), (StructLikeT, StackT)):
            j = self.compare(self.locate(e.left), self.locate(e.right), e)
            return expr_json("not", None, j) if op == "!=" else j
        jop = {"&&": "and", "||": "or"}.get(op, op)
        rv = self.info.values.get(e.right)
        if op in ("<<", ">>"):
            if self.info.values.get(e.left) == 0 and not isinstance(rv, int):  # p4c's strength reduction: 0 >> x
                return hexval(0, width_of(t) if isinstance(t, BitsT) else None)
            self.check_shift(e, rv)
        if op == "-" and isinstance(t, BitsT) and not t.signed and isinstance(rv, int) and not isinstance(rv, bool):
            # p4c's strength reduction: x - c == x + (2^W - c) modulo 2^W
            j = expr_json("+", self.local(self.rvalue(e.left)), hexval((-rv) & _mask(t.width), t.width))
            return self.fix(j, t)
        left = self.local(self.rvalue(e.left))
        right = self.local(self.rvalue(e.right))
        if op in ("/", "%"):
            if self.info.values.get(e.left) == 0 and not isinstance(rv, int):  # p4c's strength reduction
                return hexval(0, width_of(t) if isinstance(t, BitsT) else None)
            assert isinstance(rv, int) and rv > 0 and rv & (rv - 1) == 0  # checked by the type checker
            k = rv.bit_length() - 1
            if op == "/":
                return self.fix(expr_json(">>", left, hexval(k)), t)
            return expr_json("&", left, hexval(rv - 1, width_of(t) if isinstance(t, BitsT) else None))
        j = expr_json(jop, left, right)
        if op in ARITH_OPS:
            return self.fix(j, t)
        return j

    def compare(self, a: Storage, b: Storage, e: ast.Binary) -> Json:
        """`a == b` of headers, unions, structs or stacks, expanded as p4c's RemoveComplexComparisons does: two
        headers are equal when both are invalid, or both are valid with equal fields; unions, structs and stacks
        when all their members are."""
        def both(x: Json | None, y: Json) -> Json:
            return y if x is None else expr_json("and", x, y)

        if isinstance(a, HeaderRef) and isinstance(b, HeaderRef):
            # a varbit field compares by value, whatever the widths (BMv2's Data ==), as p4c leaves it
            lv = expr_json("d2b", None, {"type": "field", "value": [a.name, "$valid$"]})
            rv = expr_json("d2b", None, {"type": "field", "value": [b.name, "$valid$"]})
            valid = expr_json("and", lv, rv)
            for fname, _ft in a.type.fields:
                fa, fb = self.lc.header_member(a, fname), self.lc.header_member(b, fname)
                assert fa is not None and fb is not None
                valid = expr_json("and", valid, self.compare(fa, fb, e))
            invalid = expr_json("and", expr_json("not", None, lv), expr_json("not", None, rv))
            return expr_json("or", invalid, valid)
        result: Json | None = None
        if isinstance(a, (StructRef, UnionRef)) and isinstance(b, (StructRef, UnionRef)) and type(a) is type(b):
            for m, sa in a.members.items():
                result = both(result, self.compare(sa, b.members[m], e))  # type: ignore[union-attr]
            return result if result is not None else {"type": "bool", "value": True}
        if isinstance(a, StackRef) and isinstance(b, StackRef):
            for i in range(a.type.size):
                result = both(result, self.compare(HeaderRef(f"{a.name}[{i}]", a.type.element),
                                                   HeaderRef(f"{b.name}[{i}]", b.type.element), e))
            return result if result is not None else {"type": "bool", "value": True}
        if isinstance(a, (FieldRef, StackFieldRef)) and isinstance(b, (FieldRef, StackFieldRef)):
            return expr_json("==", self.local(self._read(a, a.type, e)), self.local(self._read(b, b.type, e)))
        raise self.lc.unsupported(e, f"comparison of these {self.info.types.get(e.left)} values")

    def check_shift(self, e: ast.Binary, amount: int | bool | None) -> None:
        """p4c's BMv2 back end (LowerExpressions::shift) limits shift amounts: a bit<W> amount needs W <= 8, a
        constant one must be at most 256."""
        rt = self.info.types.get(e.right)
        if isinstance(rt, BitsT) and rt.width > MAX_SHIFT_WIDTH:
            raise self.lc.error(e, f"shift amount limited to {MAX_SHIFT_WIDTH} bits on this target "
                                   f"(the amount is {rt}; cast it to bit<{MAX_SHIFT_WIDTH}>)")
        if isinstance(rt, InfIntT) and isinstance(amount, int) and amount > (1 << MAX_SHIFT_WIDTH):
            raise self.lc.error(e, f"shift amount limited to {1 << MAX_SHIFT_WIDTH} on this target")

    def r_Ternary(self, e: ast.Ternary, t: P4Type | None) -> Json:
        c = self.local(self.rvalue(e.cond))
        a = self.local(self.rvalue(e.then))
        b = self.local(self.rvalue(e.else_))
        return expr_json("?", a, b, cond=c)

    def r_BoolLit(self, e: ast.BoolLit, t: P4Type | None) -> Json:
        return {"type": "bool", "value": e.value}

    def r_IntLit(self, e: ast.IntLit, t: P4Type | None) -> Json:
        return self.const(e.value, t)


class StackNext(Storage):
    """`stack.next` (only valid as an extract target)."""

    def __init__(self, stack: StackRef) -> None:
        self.stack = stack


class UnionStackNext(Storage):
    """`stack.next` of a header union stack, then `stack.next.member` (only valid as an extract target)."""

    def __init__(self, stack: UnionStackRef, member: str) -> None:
        self.stack = stack
        self.member = member


class StackLast(Storage):
    """`stack.last` (only valid with a field access)."""

    def __init__(self, stack: StackRef) -> None:
        self.stack = stack


def _short(e: ast.Node) -> str:
    return describe(e) if isinstance(e, ast.Expr) else type(e).__name__
