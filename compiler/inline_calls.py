"""Calls inlined into the statements that make them, as p4c's front end does.

Runs between type checking and lowering and rewrites the syntax tree in place (recording the types and name
bindings of every node it creates in `TypeInfo`, so the lowering passes see ordinary statements):

* p4c's `FunctionsInlining` (and `InlineActions` for an action calling an action): a call `f(a, b)` becomes,
  before the statement that contains it, a fresh variable per parameter (copy-in of `in`/`inout`/directionless
  arguments, left to right; `out` ones start uninitialized, headers inside them invalid), a copy of the body (its
  locals renamed to fresh variables), the copy-out of `out`/`inout` parameters back to their arguments (left to
  right; for an action also before each `exit`) and a `retval` variable that replaces the call;
* p4c's `SideEffectOrdering`: in an expression holding a call with `out`/`inout` parameters, operands read before
  the call are saved first, and `&&`, `||`, `?:` evaluate their other operands only when needed (as `if`s);
* p4c's `RemoveReturns`: a `return` that is not the last statement (of a function, action or apply block) sets a
  `hasReturned` flag and the statements after it are guarded by `if (!hasReturned)`;
* declarations in the inlined body are moved to its start (p4c's `MoveDeclarations`), so inside actions the `if`s
  can be predicated;
* p4c's `RemoveDontcareArgs`: an `out` argument `_` becomes a fresh variable;
* p4c's parser inlining: `p.apply(...)` of a sub-parser splits the calling state around a copy of its states.

A function whose body is a single `return <expr>;` with only `in`/directionless parameters (and no such call
inside) is left to `compiler.lower_expr`, which substitutes it into the expression (the same result without
temporaries). Control apply calls are inlined by `compiler.lower_control` (with `compiler.lower_calls`).
"""
from __future__ import annotations

import dataclasses

from compiler import ast
from compiler.diagnostics import Diagnostics
from compiler.typecheck import TypeInfo, describe
from compiler.types import BOOL, VOID, BlockT, DontCareT, InfIntT, MethodT, P4Type, StackT, StructLikeT, VoidT

_INFO_TABLES = ("types", "values", "calls", "functions", "actions")


class InlineAbort(Exception):
    """Internal: stop inlining the current statement after an error was recorded."""


def is_simple(info: TypeInfo, fn: ast.FunctionDecl) -> bool:
    """A function lowered by substitution: `return <expr>;` only, `in`/directionless parameters, and calls inside the
    expression only to such functions."""
    stmts = [s for s in fn.body.stmts if not isinstance(s, ast.EmptyStmt)]
    if len(stmts) != 1 or not isinstance(stmts[0], ast.ReturnStmt) or stmts[0].value is None:
        return False
    if any(p.direction in ("out", "inout") for p in fn.params):
        return False
    if isinstance(info.types.get(fn), (StructLikeT, StackT)):  # a header/struct result needs a variable
        return False
    for n in ast.walk(stmts[0].value):
        inner = info.functions.get(n) if isinstance(n, ast.MethodCall) else None
        if inner is not None and (inner is fn or not is_simple(info, inner)):
            return False
    return True


def has_side_effects(fn: ast.FunctionDecl) -> bool:
    """Whether a call of `fn` can change its caller's state (it has `out`/`inout` parameters)."""
    return any(p.direction in ("out", "inout") for p in fn.params)


def header_resets(info: TypeInfo, e: ast.Expr, t: P4Type) -> list[ast.Stmt]:
    """`e.setInvalid();` for every header inside `e` of type `t` (p4c's ResetHeaders)."""
    out: list[ast.Stmt] = []
    if isinstance(t, StructLikeT) and t.kind == "header":
        callee = ast.Member(e.loc, e, "setInvalid")
        call = ast.MethodCall(e.loc, callee, [])
        info.types[callee] = MethodT("setInvalid", [], t)
        info.types[call] = VOID
        info.calls[call] = (t, "setInvalid")
        out.append(ast.MethodCallStmt(e.loc, call))
    elif isinstance(t, StructLikeT):
        for name, ft in t.fields:
            m = ast.Member(e.loc, e, name)
            info.types[m] = ft
            out.extend(header_resets(info, m, ft))
    elif isinstance(t, StackT):
        for i in range(t.size):
            idx = ast.IntLit(e.loc, i)
            info.values[idx] = i
            el = ast.Index(e.loc, e, idx)
            info.types[el] = t.element
            out.extend(header_resets(info, el, t.element))
    return out


def location_path(info: TypeInfo, e: ast.Expr) -> tuple[object, ...] | None:
    """The storage path an lvalue expression names (declaration, then members/indices), or None for a value that is
    not a location. A slice names its whole base (conservative, as p4c's location sets)."""
    if isinstance(e, ast.Name):
        d = info.refs.get(e)
        return (d,) if d is not None else None
    if isinstance(e, ast.Member):
        base = location_path(info, e.expr)
        return base + (e.member,) if base is not None else None
    if isinstance(e, ast.Index):
        base = location_path(info, e.expr)
        idx = info.values.get(e.index)
        if base is None:
            return None
        return base + (idx,) if isinstance(idx, int) else base
    if isinstance(e, ast.Slice):
        return location_path(info, e.expr)
    return None


def aliased_args(info: TypeInfo, params: list[ast.Param], args: list[ast.Expr]) -> set[ast.Param]:
    """The directional parameters whose arguments overlap another argument's storage and so need a temporary (the
    others are substituted directly, as p4c's inliner does). Of an overlapping pair, a read-only (`in`) parameter
    alone needs one: a snapshot taken at the call, while the writable one may stay in place."""
    paths = [(p, location_path(info, a)) for p, a in zip(params, args) if p.direction is not None]
    out: set[ast.Param] = set()
    for i, (p1, l1) in enumerate(paths):
        for p2, l2 in paths[i + 1:]:
            if l1 is None or l2 is None:
                continue
            n = min(len(l1), len(l2))
            if l1[:n] != l2[:n]:
                continue
            ins = {p for p in (p1, p2) if p.direction == "in"}
            out.update(ins or (p1, p2))
    return out


class CallInliner:
    """Inlines the function, action and sub-parser calls of one program (see the module docstring)."""

    def __init__(self, info: TypeInfo, diags: Diagnostics) -> None:
        self.info = info
        self.diags = diags
        self.depth = 0

    # ------------------------------------------------------------------------------------------------ program

    def run(self, program: ast.Program) -> None:
        top = set(program.decls)
        specialized = {t.decl: None for t in self.info.types.values()  # blocks with constructor arguments bound
                       if isinstance(t, BlockT) and isinstance(t.decl, (ast.ControlDecl, ast.ParserDecl))
                       and t.decl not in top}
        for d in list(program.decls) + list(specialized):
            if isinstance(d, ast.ActionDecl):
                d.body.stmts = self.stmts(self.without_returns(d.body.stmts, d), "action")
            elif isinstance(d, ast.ControlDecl):
                self.control(d)
            elif isinstance(d, ast.ParserDecl):
                self.sub_parsers(d)
                for st in d.states:
                    st.stmts = self.stmts(st.stmts, "parser")
                    self.select_keys(st)

    def control(self, d: ast.ControlDecl) -> None:
        moved: list[ast.Stmt] = []
        inits = [x for x in d.locals if isinstance(x, ast.VarDecl) and x.init is not None]
        if any(self.has_inlined_call(x.init) for x in inits):  # type: ignore[arg-type]
            # initializers run at the start of the apply block, in order: move them all there to inline the calls
            for loc in inits:
                moved.append(ast.AssignStmt(loc.loc, self.name_of(loc, loc), loc.init))  # type: ignore[arg-type]
                loc.init = None
        for loc in d.locals:
            if isinstance(loc, ast.ActionDecl):
                loc.body.stmts = self.stmts(self.without_returns(loc.body.stmts, loc), "action")
        d.body.stmts = self.stmts(self.without_returns(moved + d.body.stmts, d.body), "apply")

    def without_returns(self, stmts: list[ast.Stmt], at: ast.Node) -> list[ast.Stmt]:
        """An action body or apply block whose `return;` statements are replaced by a flag (p4c's RemoveReturns)."""
        if not any(isinstance(n, ast.ReturnStmt) for s in stmts for n in ast.walk(s)):
            return stmts
        pre: list[ast.Stmt] = []
        flag = None
        if _needs_flag(stmts):
            flag = self.new_var("hasReturned", ast.BoolType(at.loc), BOOL, at)
            pre = [flag, ast.AssignStmt(at.loc, self.name_of(flag, at), self.bool_lit(False, at))]
        body, _ = self.remove_returns(stmts, None, flag)
        if isinstance(at, ast.ActionDecl):  # predication needs the declarations out of the if statements
            decls: list[ast.Stmt] = []
            body = _move_declarations(self, body, decls)
            pre = decls + pre
        return pre + body

    # ------------------------------------------------------------------------------------------------ sub-parsers

    def sub_parsers(self, d: ast.ParserDecl) -> None:
        """p4c's parser inlining: a state calling `p.apply(args)` is split at the call; it continues with a copy of
        the sub-parser's states (named `<instance>_<state>`), whose `accept` goes on to a new state holding the rest
        of the calling state. Arguments are substituted for the parameters, except those that overlap another
        argument or are values, which go through variables (copy-in before, copy-out after)."""
        info = self.info
        used = {st.name for st in d.states} | {"accept", "reject"}

        def fresh(base: str) -> str:
            name, i = base, 0
            while name in used:
                name, i = f"{base}_{i}", i + 1
            used.add(name)
            return name

        work = list(d.states)
        done: list[ast.ParserState] = []
        budget = 256  # nested sub-parsers cannot recurse (an instance cannot be its own parser), but stay bounded
        while work:
            st = work.pop(0)
            idx = next((i for i, x in enumerate(st.stmts) if isinstance(x, ast.MethodCallStmt)
                        and isinstance(info.calls.get(x.call, (None, ""))[0], BlockT)), None)
            if idx is None:
                done.append(st)
                continue
            budget -= 1
            call = st.stmts[idx].call  # type: ignore[attr-defined]
            owner = info.calls[call][0]
            assert isinstance(owner, BlockT) and isinstance(call.callee, ast.Member)
            sub = owner.decl
            inst = info.refs.get(call.callee.expr)
            if not isinstance(sub, ast.ParserDecl) or not isinstance(inst, ast.Instantiation) or budget < 0:
                self.diags.unsupported(call.loc, f"applying '{describe(call.callee.expr)}' here")
                done.append(st)
                continue
            cont = ast.ParserState(st.loc, fresh(f"{st.name}_0"), st.stmts[idx + 1:], st.transition)
            pre, post, subst = self.sub_parser_args(d, sub, call)
            declmap: dict[ast.Node, ast.Node] = {}
            init: list[ast.Stmt] = []
            for loc in sub.locals:
                if isinstance(loc, ast.ConstDecl):
                    continue
                if not isinstance(loc, (ast.VarDecl, ast.Instantiation)) or \
                        (isinstance(loc, ast.Instantiation) and not isinstance(info.types.get(loc), BlockT)):
                    self.diags.unsupported(loc.loc, f"declaration '{loc.name}' in a sub-parser")
                    continue
                nv = clone(info, loc, declmap, subst)
                declmap[loc] = nv
                if isinstance(nv, ast.VarDecl) and nv.init is not None:
                    init.append(ast.AssignStmt(nv.loc, self.name_of(nv, nv), nv.init))
                    nv.init = None
                d.locals.append(nv)  # type: ignore[arg-type]
            smap = {s.name: fresh(f"{inst.name}_{s.name}") for s in sub.states}
            copies: list[ast.ParserState] = []
            for s in sub.states:
                ns = clone(info, s, declmap, subst)
                assert isinstance(ns, ast.ParserState)
                ns.name = smap[s.name]
                targets = [ns.transition] if isinstance(ns.transition, ast.Name) else \
                    [c.state for c in ns.transition.cases] if isinstance(ns.transition, ast.SelectExpr) else []
                for n in targets:
                    n.name = cont.name if n.name == "accept" else smap.get(n.name, n.name)
                if s.name == "start":
                    ns.stmts = init + ns.stmts
                copies.append(ns)
            st.stmts = st.stmts[:idx] + pre
            st.transition = ast.Name(call.loc, smap["start"])
            cont.stmts = post + cont.stmts
            done.append(st)
            work = copies + [cont] + work
        d.states = done

    def sub_parser_args(self, d: ast.ParserDecl, sub: ast.ParserDecl,
                        call: ast.MethodCall) -> tuple[list[ast.Stmt], list[ast.Stmt], dict[ast.Node, ast.Expr]]:
        """(copy-in statements, copy-out statements, parameter → expression) for one sub-parser call."""
        info = self.info
        aliased = aliased_args(info, sub.params, call.args)
        pre: list[ast.Stmt] = []
        post: list[ast.Stmt] = []
        subst: dict[ast.Node, ast.Expr] = {}
        for p, a in zip(sub.params, call.args):
            t = info.types[p]
            if p.direction is None:
                subst[p] = a  # packet_in, or a compile-time constant
                continue
            if p in aliased or isinstance(a, ast.DontCare) or location_path(info, a) is None:
                tmp = self.new_var(p.name, p.type, t, a)
                d.locals.append(tmp)
                if p.direction in ("in", "inout"):
                    pre.append(ast.AssignStmt(a.loc, self.name_of(tmp, a), a))
                else:
                    pre.extend(header_resets(info, self.name_of(tmp, a), t))
                if p.direction in ("out", "inout") and not isinstance(a, ast.DontCare):
                    post.append(ast.AssignStmt(a.loc, clone(info, a, {}), self.name_of(tmp, a)))  # type: ignore[arg-type]
                subst[p] = self.name_of(tmp, a)
                continue
            subst[p] = a
            if p.direction == "out":
                pre.extend(header_resets(info, clone(info, a, {}), t))  # type: ignore[arg-type]
        return pre, post, subst

    def select_keys(self, st: ast.ParserState) -> None:
        tr = st.transition
        if not isinstance(tr, ast.SelectExpr):
            return
        pre: list[ast.Stmt] = []
        try:
            tr.keys = [self.expr(k, pre, "parser", top=False) for k in tr.keys]
        except InlineAbort:
            return
        st.stmts.extend(pre)

    # ------------------------------------------------------------------------------------------------ statements

    def stmts(self, stmts: list[ast.Stmt], where: str) -> list[ast.Stmt]:
        """`stmts` with every call of a non-simple function inlined; `where` is "apply", "action" or "parser"."""
        out: list[ast.Stmt] = []
        for s in stmts:
            try:
                out.extend(self.stmt(s, where))
            except InlineAbort:
                out.append(s)
        return out

    def stmt(self, s: ast.Stmt, where: str) -> list[ast.Stmt]:
        res = self._stmt(s, where)
        if where == "action":  # predication needs the declarations out of the if statements (MoveDeclarations)
            decls: list[ast.Stmt] = []
            res = _move_declarations(self, res, decls)
            res = decls + res
        return res

    def _stmt(self, s: ast.Stmt, where: str) -> list[ast.Stmt]:
        pre: list[ast.Stmt] = []
        if isinstance(s, ast.AssignStmt):
            self.lvalue_indices(s.lhs, pre, where, snap=self.has_effects(s.rhs))  # the target is evaluated first
            s.rhs = self.expr(s.rhs, pre, where, top=True)
        elif isinstance(s, ast.VarDecl) and s.init is not None:
            s.init = self.expr(s.init, pre, where, top=True)
        elif isinstance(s, ast.MethodCallStmt):
            callee = self.info.actions.get(s.call)
            if callee is not None and where == "action":  # an action calling an action (p4c's InlineActions)
                self.args(s.call, pre, where)
                self.inline(s.call, callee, pre, where)
                return pre
            fn = self.info.functions.get(s.call)
            if fn is not None:
                self.args(s.call, pre, where)
                if not is_simple(self.info, fn):
                    self.inline(s.call, fn, pre, where)
                return pre  # the result of a call used as a statement is discarded
            self.args(s.call, pre, where)
        elif isinstance(s, ast.IfStmt):
            s.cond = self.expr(s.cond, pre, where, top=True)
            s.then = self.block_of(s.then, where)
            if s.else_ is not None:
                s.else_ = self.block_of(s.else_, where)
        elif isinstance(s, ast.BlockStmt):
            s.stmts = self.stmts(s.stmts, where)
        elif isinstance(s, ast.ForStmt):
            if self.has_inlined_call(s.cond):  # its statements would have to run before every test
                self.diags.unsupported(s.cond.loc, "a call with side effects or a body in a for loop's condition")
                raise InlineAbort()
            s.init = self.stmts(s.init, where)
            s.update = self.stmts(s.update, where)
            s.body = self.block_of(s.body, where)
        elif isinstance(s, ast.SwitchStmt):
            s.expr = self.expr(s.expr, pre, where, top=True)
            for case in s.cases:
                if case.body is not None:
                    case.body.stmts = self.stmts(case.body.stmts, where)
        return pre + [s]

    def block_of(self, s: ast.Stmt, where: str) -> ast.Stmt:
        res = self.stmts([s], where)
        return res[0] if len(res) == 1 else ast.BlockStmt(s.loc, res)

    # ------------------------------------------------------------------------------------------------ expressions

    def has_inlined_call(self, e: ast.Node) -> bool:
        for n in ast.walk(e):
            fn = self.info.functions.get(n) if isinstance(n, ast.MethodCall) else None
            if fn is not None and not self.substitutable(n, fn):  # type: ignore[arg-type]
                return True
        return False

    def substitutable(self, call: ast.MethodCall, fn: ast.FunctionDecl) -> bool:
        """Whether `call` is left to the expression lowering: a simple function whose header/struct arguments are
        locations (a value such as `{1, 2}` needs a variable)."""
        if not is_simple(self.info, fn):
            return False
        for p, a in zip(fn.params, call.args):
            if isinstance(self.info.types.get(p), (StructLikeT, StackT)):
                while isinstance(a, (ast.Member, ast.Index)):
                    a = a.expr
                if not isinstance(a, ast.Name):
                    return False
        return True

    def args(self, call: ast.MethodCall, pre: list[ast.Stmt], where: str) -> None:
        callee = self.info.functions.get(call) or self.info.actions.get(call)
        params = callee.params if callee is not None else []
        out = []
        for i, a in enumerate(call.args):
            if i < len(params) and params[i].direction in ("out", "inout"):
                # the argument's location is fixed at the call: a run-time stack index is read once, before it
                self.lvalue_indices(a, pre, where, snap=True)
            out.append(self.expr(self.dont_care(a, pre), pre, where, top=False))
        call.args = out

    def lvalue_indices(self, e: ast.Expr, pre: list[ast.Stmt], where: str, snap: bool) -> None:
        """Inline the calls in the header stack indices of the location `e` (left to right); with `snap`, save each
        run-time index in a fresh variable first, so side effects that follow cannot move the location."""
        while isinstance(e, (ast.Member, ast.Slice, ast.Index)):
            if isinstance(e, ast.Index):
                self.lvalue_indices(e.expr, pre, where, snap)
                e.index = self.expr(e.index, pre, where, top=True)
                if snap:
                    e.index = self.snapshot(e.index, pre, e)
                return
            e = e.expr

    def dont_care(self, a: ast.Expr, pre: list[ast.Stmt]) -> ast.Expr:
        """An `out` argument `_` becomes a fresh variable of the parameter's type (p4c's RemoveDontcareArgs)."""
        t = self.info.types.get(a)
        if not isinstance(a, ast.DontCare) or t is None or isinstance(t, DontCareT):
            return a
        tmp = self.new_var("arg", ast.DontCareType(a.loc), t, a)
        pre.append(tmp)
        return self.name_of(tmp, a)

    def expr(self, e: ast.Expr, pre: list[ast.Stmt], where: str, top: bool) -> ast.Expr:
        """`e` with its inlined calls replaced by their result variables; the inlined code goes to `pre`."""
        if not self.has_inlined_call(e):
            return e
        fn = self.info.functions.get(e) if isinstance(e, ast.MethodCall) else None
        if self.effects_below(e) or (fn is not None and not top and has_side_effects(fn)):
            return self.order(e, pre, where)
        if fn is not None and isinstance(e, ast.MethodCall):
            self.args(e, pre, where)
            return self.call_value(e, fn, pre, where)
        for f in dataclasses.fields(e):
            v = getattr(e, f.name)
            if isinstance(v, ast.Expr):
                setattr(e, f.name, self.expr(v, pre, where, top=False))
            elif isinstance(v, list) and any(isinstance(x, ast.Expr) for x in v):
                setattr(e, f.name, [self.expr(x, pre, where, top=False) if isinstance(x, ast.Expr) else x
                                    for x in v])
        return e

    def call_value(self, e: ast.MethodCall, fn: ast.FunctionDecl, pre: list[ast.Stmt], where: str) -> ast.Expr:
        """The value of the function call `e` (its arguments already ordered): the call itself when the function is
        substituted, else its inlined body goes to `pre` and its result variable is returned."""
        if self.substitutable(e, fn):
            return e
        res = self.inline(e, fn, pre, where)
        if res is None:
            self.diags.error(e.loc, f"void function '{fn.name}' has no value")
            raise InlineAbort()
        return res

    # ------------------------------------------------------------------------------------------------ side effects

    def has_effects(self, e: ast.Node) -> bool:
        """Whether evaluating `e` calls a function with out/inout parameters."""
        for n in ast.walk(e):
            fn = self.info.functions.get(n) if isinstance(n, ast.MethodCall) else None
            if fn is not None and has_side_effects(fn):
                return True
        return False

    def effects_below(self, e: ast.Expr) -> bool:
        """Whether a strict sub-expression of `e` has side effects."""
        return any(self.has_effects(c) for c in e.children() if isinstance(c, ast.Expr))

    def snapshot(self, e: ast.Expr, pre: list[ast.Stmt], at: ast.Node) -> ast.Expr:
        """`e`'s value saved in a fresh variable (unless it is a constant), so later side effects cannot change it."""
        t = self.info.types.get(e)
        if e in self.info.values or t is None or isinstance(t, (InfIntT, DontCareT)):
            return e
        tmp = self.new_var("tmp", ast.DontCareType(at.loc), t, at)
        pre.append(tmp)
        pre.append(ast.AssignStmt(e.loc, self.name_of(tmp, e), e))
        return self.name_of(tmp, e)

    def order(self, e: ast.Expr, pre: list[ast.Stmt], where: str) -> ast.Expr:
        """`e` evaluated left to right with its side effects in `pre` (p4c's SideEffectOrdering): operands read
        before a later side effect are saved first; `&&`, `||` and `?:` evaluate their other operands only when
        needed (as `if` statements)."""
        if not self.has_effects(e):
            return self.expr(e, pre, where, top=False)
        if isinstance(e, ast.Binary) and e.op in ("&&", "||"):
            tmp = self.new_var("tmp", ast.BoolType(e.loc), BOOL, e)
            pre.append(tmp)
            pre.append(ast.AssignStmt(e.loc, self.name_of(tmp, e), self.order(e.left, pre, where)))
            rest: list[ast.Stmt] = []
            rest.append(ast.AssignStmt(e.loc, self.name_of(tmp, e), self.order(e.right, rest, where)))
            cond: ast.Expr = self.name_of(tmp, e)
            if e.op == "||":
                cond = ast.Unary(e.loc, "!", cond)
                self.info.types[cond] = BOOL
            pre.append(ast.IfStmt(e.loc, cond, ast.BlockStmt(e.loc, rest)))
            return self.name_of(tmp, e)
        if isinstance(e, ast.Ternary):
            t = self.info.types[e]
            tmp = self.new_var("tmp", ast.DontCareType(e.loc), t, e)
            pre.append(tmp)
            cond = self.order(e.cond, pre, where)
            then: list[ast.Stmt] = []
            then.append(ast.AssignStmt(e.loc, self.name_of(tmp, e), self.order(e.then, then, where)))
            else_: list[ast.Stmt] = []
            else_.append(ast.AssignStmt(e.loc, self.name_of(tmp, e), self.order(e.else_, else_, where)))
            pre.append(ast.IfStmt(e.loc, cond, ast.BlockStmt(e.loc, then), ast.BlockStmt(e.loc, else_)))
            return self.name_of(tmp, e)
        fn = self.info.functions.get(e) if isinstance(e, ast.MethodCall) else None
        if fn is not None and isinstance(e, ast.MethodCall):
            dirs = [p.direction for p in fn.params]
            args = list(e.args)
            for i, a in enumerate(args):
                later = any(self.has_effects(x) for x in args[i + 1:])
                if dirs[i] in ("out", "inout"):
                    args[i] = self.dont_care(a, pre)  # a location: written back at return
                    continue
                a = self.order(a, pre, where)
                args[i] = self.snapshot(a, pre, e) if later else a
            e.args = args
            return self.call_value(e, fn, pre, where)
        if isinstance(e, ast.MethodCall):
            self.diags.unsupported(e.loc, "side effects inside the arguments of this call")
            raise InlineAbort()
        # operands (list and struct expression elements too) in evaluation order: (container, key, value)
        slots: list[tuple[object, object, ast.Expr]] = []
        for f in dataclasses.fields(e):
            v = getattr(e, f.name)
            if isinstance(v, ast.Expr):
                slots.append((e, f.name, v))
            elif isinstance(v, list):
                slots.extend((v, i, x) for i, x in enumerate(v) if isinstance(x, ast.Expr))
        for i, (where_, key, v) in enumerate(slots):
            later = any(self.has_effects(x) for _, _, x in slots[i + 1:])
            v = self.order(v, pre, where)
            v = self.snapshot(v, pre, e) if later else v
            if isinstance(where_, list):
                where_[key] = v  # type: ignore[index]
            else:
                setattr(where_, key, v)  # type: ignore[arg-type]
        return e

    # ------------------------------------------------------------------------------------------------ inlining

    def name_of(self, d: ast.Node, at: ast.Node) -> ast.Name:
        n = ast.Name(at.loc, getattr(d, "name", "tmp"))
        self.info.refs[n] = d
        self.info.types[n] = self.info.types[d]
        return n

    def new_var(self, name: str, type_: ast.Type, t: P4Type, at: ast.Node) -> ast.VarDecl:
        v = ast.VarDecl(at.loc, name, type_)
        self.info.types[v] = t
        return v

    def inline(self, call: ast.MethodCall, fn: ast.FunctionDecl | ast.ActionDecl, pre: list[ast.Stmt],
               where: str) -> ast.Name | None:
        """Append the inlined body of function or action `fn` for `call` to `pre`; returns the variable holding the
        result (None for a void function or an action)."""
        if self.depth > 64:
            self.diags.error(call.loc, f"function '{fn.name}' is nested too deeply")
            raise InlineAbort()
        info = self.info
        declmap: dict[ast.Node, ast.Node] = {}
        copy_out: list[ast.Stmt] = []
        for p, a in zip(fn.params, call.args):
            t = info.types[p]
            tmp = self.new_var(p.name, p.type, t, a)
            declmap[p] = tmp
            pre.append(tmp)
            if p.direction in ("in", "inout", None):
                pre.append(ast.AssignStmt(a.loc, self.name_of(tmp, a), a))
            else:
                pre.extend(header_resets(info, self.name_of(tmp, a), t))
            if p.direction in ("out", "inout") and not isinstance(a, ast.DontCare):
                copy_out.append(ast.AssignStmt(a.loc, clone(info, a, {}), self.name_of(tmp, a)))
        rt = info.types.get(fn)
        ret = None if rt is None or isinstance(rt, VoidT) else self.new_var("retval", fn.return_type, rt, call)
        if ret is not None:
            pre.append(ret)
        body = [clone(info, s, declmap) for s in fn.body.stmts]
        if isinstance(fn, ast.ActionDecl) and copy_out:
            body = [_before_exits(info, s, copy_out) for s in body]
        flag = None
        if _needs_flag(body):
            flag = self.new_var("hasReturned", ast.BoolType(call.loc), BOOL, call)
            pre.append(flag)
            pre.append(ast.AssignStmt(call.loc, self.name_of(flag, call), self.bool_lit(False, call)))
        body, _ = self.remove_returns(body, ret, flag)
        decls: list[ast.Stmt] = []
        body = _move_declarations(self, body, decls)
        if where == "parser" and any(isinstance(n, ast.IfStmt) for s in body for n in ast.walk(s)):
            self.diags.unsupported(call.loc, f"function '{fn.name}' with conditional code called in a parser state")
            raise InlineAbort()
        self.depth += 1
        try:
            pre.extend(decls)
            pre.extend(self.stmts(body, where))
        finally:
            self.depth -= 1
        pre.extend(copy_out)
        return self.name_of(ret, call) if ret is not None else None

    def bool_lit(self, v: bool, at: ast.Node) -> ast.BoolLit:
        b = ast.BoolLit(at.loc, v)
        self.info.types[b] = BOOL
        self.info.values[b] = v
        return b

    def remove_returns(self, stmts: list[ast.Stmt], ret: ast.VarDecl | None,
                       flag: ast.VarDecl | None, in_loop: bool = False) -> tuple[list[ast.Stmt], str]:
        """p4c's RemoveReturns on a statement list: ("never" | "maybe" | "always") returns. Inside a loop a return
        also breaks out of it, and after an inner loop that may have returned, `if (hasReturned) break;` leaves the
        outer one."""
        out: list[ast.Stmt] = []
        for i, s in enumerate(stmts):
            status = "never"
            if isinstance(s, ast.IfStmt) and isinstance(self.info.values.get(s.cond), bool):
                live = s.then if self.info.values[s.cond] else s.else_  # constant-folded, as p4c does first
                s = live if live is not None else ast.EmptyStmt(s.loc)
                if not isinstance(s, ast.BlockStmt):
                    s = ast.BlockStmt(s.loc, [s])
            if isinstance(s, ast.ReturnStmt):
                if s.value is not None and ret is not None:
                    out.append(ast.AssignStmt(s.loc, self.name_of(ret, s), s.value))
                if flag is not None:
                    out.append(ast.AssignStmt(s.loc, self.name_of(flag, s), self.bool_lit(True, s)))
                if in_loop:
                    out.append(ast.BreakStmt(s.loc))
                return out, "always"
            if isinstance(s, ast.IfStmt):
                then, st = self.remove_returns([s.then], ret, flag, in_loop)
                else_, se = self.remove_returns([s.else_], ret, flag, in_loop) if s.else_ is not None \
                    else ([], "never")
                out.append(ast.IfStmt(s.loc, s.cond, ast.BlockStmt(s.then.loc, then),
                                      ast.BlockStmt(s.else_.loc, else_) if s.else_ is not None else None))
                status = "always" if st == se == "always" else "never" if st == se == "never" else "maybe"
            elif isinstance(s, ast.BlockStmt):
                inner, status = self.remove_returns(s.stmts, ret, flag, in_loop)
                out.append(ast.BlockStmt(s.loc, inner))
            elif isinstance(s, ast.ForStmt):
                body, st = self.remove_returns([s.body], ret, flag, in_loop=True)
                s.body = ast.BlockStmt(s.body.loc, body)
                out.append(s)
                if st != "never":
                    status = "maybe"  # the body may not run
                    if in_loop:
                        assert flag is not None
                        out.append(ast.IfStmt(s.loc, self.name_of(flag, s), ast.BreakStmt(s.loc)))
            elif isinstance(s, ast.SwitchStmt):
                for case in s.cases:
                    if case.body is not None:
                        body, st = self.remove_returns(case.body.stmts, ret, flag, in_loop)
                        case.body.stmts = body
                        status = "maybe" if st != "never" else status
                out.append(s)
            else:
                out.append(s)
            if status == "always":
                return out, "always"
            if status == "maybe":
                rest, _ = self.remove_returns(stmts[i + 1:], ret, flag, in_loop)
                if rest:
                    assert flag is not None
                    cond = ast.Unary(s.loc, "!", self.name_of(flag, s))
                    self.info.types[cond] = BOOL
                    out.append(ast.IfStmt(s.loc, cond, ast.BlockStmt(s.loc, rest)))
                return out, "maybe"
        return out, "never"


def _before_exits(info: TypeInfo, s: ast.Stmt, copy_out: list[ast.Stmt]) -> ast.Stmt:
    """`s` with the copy-out statements inserted before every `exit` (p4c's InsertBeforeExits)."""
    if isinstance(s, ast.ExitStmt):
        return ast.BlockStmt(s.loc, [clone(info, c, {}) for c in copy_out] + [s])  # type: ignore[misc]
    if isinstance(s, ast.BlockStmt):
        s.stmts = [_before_exits(info, x, copy_out) for x in s.stmts]
    elif isinstance(s, ast.IfStmt):
        s.then = _before_exits(info, s.then, copy_out)
        if s.else_ is not None:
            s.else_ = _before_exits(info, s.else_, copy_out)
    elif isinstance(s, ast.ForStmt):
        s.body = _before_exits(info, s.body, copy_out)
    return s


def _needs_flag(body: list[ast.Stmt]) -> bool:
    """Whether some `return` is not the last top-level statement (then later code must be guarded)."""
    last = body[-1] if body else None
    return any(isinstance(n, ast.ReturnStmt) and n is not last for s in body for n in ast.walk(s))


def _move_declarations(ci: CallInliner, stmts: list[ast.Stmt], decls: list[ast.Stmt]) -> list[ast.Stmt]:
    """Declarations moved to `decls` (p4c's MoveDeclarations); an initializer stays as an assignment in place."""
    out: list[ast.Stmt] = []
    for s in stmts:
        if isinstance(s, ast.VarDecl):
            decls.append(s)
            if s.init is not None:
                out.append(ast.AssignStmt(s.loc, ci.name_of(s, s), s.init))
                s.init = None
            continue
        if isinstance(s, ast.BlockStmt):
            s.stmts = _move_declarations(ci, s.stmts, decls)
        elif isinstance(s, ast.IfStmt):
            s.then = ast.BlockStmt(s.then.loc, _move_declarations(ci, [s.then], decls))
            if s.else_ is not None:
                s.else_ = ast.BlockStmt(s.else_.loc, _move_declarations(ci, [s.else_], decls))
        elif isinstance(s, ast.ForStmt):
            s.init = _move_declarations(ci, s.init, decls)
            s.body = ast.BlockStmt(s.body.loc, _move_declarations(ci, [s.body], decls))
        out.append(s)
    return out


def clone(info: TypeInfo, n: object, declmap: dict[ast.Node, ast.Node],
          subst: dict[ast.Node, ast.Expr] | None = None) -> object:
    """A deep copy of a subtree with its type information; names bound to a key of `declmap` are rebound to the
    value; cloned declarations are added to `declmap` (their uses follow them); a name bound to a key of `subst` is
    replaced by a copy of that expression."""
    if isinstance(n, list):
        return [clone(info, x, declmap, subst) for x in n]
    if isinstance(n, dict):
        return {k: clone(info, v, declmap, subst) for k, v in n.items()}
    if not isinstance(n, ast.Node):
        return n
    if subst and isinstance(n, ast.Name) and info.refs.get(n) in subst:
        return clone(info, subst[info.refs[n]], {})
    kw = {f.name: clone(info, getattr(n, f.name), declmap, subst) for f in dataclasses.fields(n)}
    new = type(n)(**kw)
    for table in _INFO_TABLES:
        m = getattr(info, table)
        if n in m:
            m[new] = m[n]
    if n in info.refs:
        d = info.refs[n]
        info.refs[new] = declmap.get(d, d)
    if n in info.owner:
        info.owner[new] = info.owner[n]
    if isinstance(n, (ast.VarDecl, ast.ConstDecl)):
        declmap[n] = new
    return new
