"""Name resolution, type checking and constant folding for the supported P4_16 subset.

`check(program, diags) -> TypeInfo` walks the whole program once. It resolves every name to its declaration
(`TypeInfo.refs`), gives every expression a semantic type (`TypeInfo.types`, see `compiler.types`) and folds
compile-time constants (`TypeInfo.values`). Errors go to `diags` with the position of the offending node; a valid
P4 construct outside the subset is reported as `unsupported: ...`.

Width rules follow the P4_16 spec: no implicit conversion between different `bit<W>`/`int<W>` types (only untyped
integer literals and constants adapt to the other operand), `bool` and `bit<1>` never mix, `++` adds widths,
slices give `bit<hi-lo+1>`, comparisons give `bool`, shifts keep the left operand's type.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import Iterable

from compiler import ast
from compiler.diagnostics import Diagnostics
from compiler.types import (
    BOOL,
    DONTCARE,
    ERROR,
    INFINT,
    MATCH_KIND,
    STRING,
    VOID,
    ActionRunT,
    ActionT,
    ApplyResultT,
    BitsT,
    BlockT,
    BoolT,
    DontCareT,
    EnumT,
    ErrorT,
    ExternT,
    InfIntT,
    MatchKindT,
    MethodT,
    P4Type,
    StackT,
    StringT,
    StructLikeT,
    TableT,
    TupleT,
    TypeT,
    TypeVarT,
    ValueSetT,
    VarbitT,
    VoidT,
    same_type,
    width_of,
)

MATCH_KINDS_SUPPORTED = ("exact", "lpm", "ternary", "range", "optional", "selector")
MAX_WIDTH = 4096  # widths, shift amounts and stack sizes beyond this are refused (keeps folding bounded)


class CheckAbort(Exception):
    """Internal: stop checking the current construct after an error was recorded."""


class Scope:
    """A lexical scope: name → declaration, with a parent."""

    def __init__(self, parent: Scope | None = None, owner: ast.Node | None = None) -> None:
        self.parent = parent
        self.owner = owner
        self.names: dict[str, ast.Node] = {}

    def lookup(self, name: str) -> ast.Node | None:
        s: Scope | None = self
        while s is not None:
            d = s.names.get(name)
            if d is not None:
                return d
            s = s.parent
        return None

    def root(self) -> Scope:
        s = self
        while s.parent is not None:
            s = s.parent
        return s


@dataclass
class TypeInfo:
    """What the checker learned: types of expressions/declarations, name bindings, constant values."""

    types: dict[ast.Node, P4Type] = field(default_factory=dict)
    refs: dict[ast.Node, ast.Node] = field(default_factory=dict)
    values: dict[ast.Node, int | bool] = field(default_factory=dict)
    type_bindings: dict[ast.MethodCall, dict[str, P4Type]] = field(default_factory=dict)
    """The type arguments an extern function call bound (`digest<T>`: T)."""
    errors: list[str] = field(default_factory=list)
    error_decls: dict[str, ast.EnumMember] = field(default_factory=dict)
    match_kinds: list[str] = field(default_factory=list)
    global_scope: Scope = field(default_factory=Scope)
    # declaration → the control/parser that contains it (None for globals)
    owner: dict[ast.Node, ast.Decl | None] = field(default_factory=dict)
    # method call → (receiver type, method name) for extern/builtin methods
    calls: dict[ast.MethodCall, tuple[P4Type | None, str]] = field(default_factory=dict)
    # ActionRef / direct action call → resolved action
    actions: dict[ast.Node, ast.ActionDecl] = field(default_factory=dict)
    # prototype of a (single-return) function → its declaration; call → function (for inlining)
    functions: dict[ast.Node, ast.FunctionDecl] = field(default_factory=dict)
    # a control specialized for control-instance constructor arguments → {parameter name: the instance it stands
    # for} (a shared instance: the same tables and externs wherever it is applied)
    ctor_instances: dict[ast.Node, dict[str, ast.Instantiation]] = field(default_factory=dict)

    def type_of(self, node: ast.Node) -> P4Type:
        return self.types[node]

    def decl_of(self, node: ast.Node) -> ast.Node | None:
        return self.refs.get(node)

    def value_of(self, node: ast.Node) -> int | bool | None:
        return self.values.get(node)


def _mask(width: int) -> int:
    return (1 << width) - 1


def wrap_value(value: int, t: P4Type) -> int:
    """`value` reduced to the range of `t` (two's complement for `int<W>`)."""
    if isinstance(t, BitsT):
        v = value & _mask(t.width)
        if t.signed and t.width > 0 and v >> (t.width - 1):
            v -= 1 << t.width
        return v
    return value


def describe(e: ast.Expr) -> str:
    """Short source-like text of an expression, for messages."""
    if isinstance(e, ast.Name):
        return ("." if e.top_level else "") + e.name
    if isinstance(e, ast.Member):
        return f"{describe(e.expr)}.{e.member}"
    if isinstance(e, ast.IntLit):
        return e.text or str(e.value)
    if isinstance(e, ast.BoolLit):
        return "true" if e.value else "false"
    if isinstance(e, ast.Index):
        return f"{describe(e.expr)}[{describe(e.index)}]"
    if isinstance(e, ast.Slice):
        return f"{describe(e.expr)}[{describe(e.hi)}:{describe(e.lo)}]"
    if isinstance(e, ast.MethodCall):
        return f"{describe(e.callee)}({', '.join(describe(a) for a in e.args)})"
    if isinstance(e, ast.Binary):
        return f"{describe(e.left)} {e.op} {describe(e.right)}"
    if isinstance(e, ast.Unary):
        return f"{e.op}{describe(e.operand)}"
    if isinstance(e, ast.Cast):
        return f"({'...'}){describe(e.expr)}"
    if isinstance(e, ast.StringLit):
        return repr(e.value)
    return type(e).__name__


def start_of(e: ast.Node) -> ast.Node:
    """The leftmost sub-expression of `e` (whose position is where the expression's text starts)."""
    while True:
        if isinstance(e, (ast.Member, ast.Index, ast.Slice)):
            e = e.expr
        elif isinstance(e, ast.Binary):
            e = e.left
        elif isinstance(e, ast.Ternary):
            e = e.cond
        elif isinstance(e, ast.MethodCall):
            e = e.callee
        else:
            return e


def _untyped_int(e: ast.Expr) -> bool:
    """An integer literal without a width, possibly negated or parenthesized (an `int` until its context types it)."""
    while isinstance(e, ast.Unary) and e.op in ("-", "+"):
        e = e.operand
    return isinstance(e, ast.IntLit) and e.width is None


def _fixed_leaves(st: StructLikeT) -> bool:
    """Whether every field of struct `st`, nested structs included, is bit<W>, int<W>, bool or a serializable enum
    (what p4c accepts as a struct-typed header field)."""
    for _, ft in st.fields:
        if isinstance(ft, StructLikeT) and ft.kind == "struct":
            if not _fixed_leaves(ft):
                return False
        elif not (isinstance(ft, (BitsT, BoolT)) or (isinstance(ft, EnumT) and ft.underlying is not None)):
            return False
    return True


@dataclass
class _Ctx:
    """Where the checker currently is."""

    scope: Scope
    block: ast.Decl | None = None  # enclosing parser/control
    action: ast.ActionDecl | None = None
    in_parser: bool = False
    in_apply: bool = False
    table: ast.TableDecl | None = None
    function: ast.FunctionDecl | None = None  # enclosing function (its body allows `return`)
    in_loop: bool = False  # inside a `for` body (`break` and `continue` allowed)

    def child(self, **kw: object) -> _Ctx:
        c = _Ctx(Scope(self.scope), self.block, self.action, self.in_parser, self.in_apply, self.table, self.function,
                 self.in_loop)
        for k, v in kw.items():
            setattr(c, k, v)
        return c


class Checker:
    """Type checker for one program; see the module docstring."""

    def __init__(self, program: ast.Program, diags: Diagnostics) -> None:
        self.program = program
        self.diags = diags
        self.info = TypeInfo()
        self.tuple_structs: set[int] = set()  # ids of the structs tuple locals became (indexable)
        self._overloads: dict[ast.Node, list[ast.ExternFunctionDecl]] = {}
        self._function_protos: dict[ast.FunctionDecl, ast.MethodDecl] = {}
        self._functions_failed: set[ast.FunctionDecl] = set()
        self._checking_functions: list[ast.FunctionDecl] = []
        self._specialized_functions: dict[tuple[ast.FunctionDecl, tuple[str, ...]], ast.FunctionDecl] = {}
        self._last_bindings: dict[str, P4Type] = {}
        self._specialized: dict[tuple[ast.Decl, tuple[int | bool, ...]], ast.ControlDecl | ast.ParserDecl] = {}
        self._type_cache: dict[ast.Node, P4Type] = {}
        self._resolving: set[ast.Node] = set()

    # ------------------------------------------------------------------------------------------------ helpers

    def error(self, node: ast.Node, msg: str) -> CheckAbort:
        self.diags.error(node.loc, msg)
        return CheckAbort()

    def unsupported(self, node: ast.Node, what: str) -> CheckAbort:
        self.diags.unsupported(node.loc, what)
        return CheckAbort()

    def declare(self, scope: Scope, name: str, decl: ast.Node, owner: ast.Decl | None = None) -> None:
        prev = scope.names.get(name)
        if prev is not None and prev is not decl:
            if isinstance(prev, ast.Param) and not isinstance(decl, ast.Param):
                self.diags.error(decl.loc, f"declaration of '{name}' shadows a parameter '{name}'")
            else:
                self.diags.error(decl.loc, f"redeclaration of '{name}'")
            return
        if not isinstance(decl, ast.Param):  # p4c (ResolveReferences): a local may not hide a parameter
            outer = scope.parent
            while outer is not None:
                p = outer.names.get(name)
                if isinstance(p, ast.Param):
                    self.diags.error(decl.loc, f"declaration of '{name}' shadows a parameter '{name}'")
                    return
                outer = outer.parent
        scope.names[name] = decl
        self.info.owner[decl] = owner

    # ------------------------------------------------------------------------------------------------ program

    def run(self) -> TypeInfo:
        g = self.info.global_scope
        for d in self.program.decls:
            if isinstance(d, ast.ErrorDecl):
                for m in d.members:
                    if m.name in self.info.error_decls:
                        self.diags.error(m.loc, f"redeclaration of error '{m.name}'")
                        continue
                    self.info.error_decls[m.name] = m
                    self.info.errors.append(m.name)
                    self.info.types[m] = ERROR
                continue
            if isinstance(d, ast.MatchKindDecl):
                for m in d.members:
                    if m.name not in self.info.match_kinds:
                        self.info.match_kinds.append(m.name)
                    self.declare(g, m.name, m)
                    self.info.types[m] = MATCH_KIND
                continue
            if isinstance(d, ast.ExternFunctionDecl):
                prev = g.names.get(d.name)
                if isinstance(prev, ast.ExternFunctionDecl):
                    # overloads: keep a list on the first declaration
                    self._overloads.setdefault(prev, [prev]).append(d)
                    continue
            self.declare(g, d.name, d)
        for d in self.program.decls:
            try:
                self.check_global(d)
            except CheckAbort:
                pass
        return self.info

    def check_global(self, d: ast.Decl) -> None:
        ctx = _Ctx(self.info.global_scope)
        if isinstance(d, (ast.HeaderDecl, ast.StructDecl, ast.HeaderUnionDecl, ast.TypedefDecl, ast.EnumDecl)):
            self.resolve_named(d)
        elif isinstance(d, ast.ConstDecl):
            self.check_const(d, ctx)
        elif isinstance(d, ast.ActionDecl):
            self.check_action(d, ctx)
        elif isinstance(d, ast.ParserDecl):
            self.check_parser(d, ctx)
        elif isinstance(d, ast.ControlDecl):
            self.check_control(d, ctx)
        elif isinstance(d, ast.Instantiation):
            self.check_instantiation(d, ctx)
        elif isinstance(d, ast.FunctionDecl):
            self.check_function(d, ctx)
        # extern, parser/control/package type declarations, errors, match kinds: nothing to check

    # ------------------------------------------------------------------------------------------------ types

    def const_int(self, e: ast.Expr, ctx: _Ctx, what: str) -> int:
        self.expr(e, ctx)
        v = self.info.values.get(e)
        if not isinstance(v, int) or isinstance(v, bool):
            raise self.error(e, f"{what} must be a compile-time integer constant")
        return v

    def resolve_type(self, t: ast.Type, scope: Scope, allow_typevars: Iterable[str] = ()) -> P4Type:
        if isinstance(t, ast.BitType):
            w = self.const_int(t.width, _Ctx(scope), "bit width")
            if w <= 0:
                raise self.error(t, f"bit width must be positive, not {w}")
            if w > MAX_WIDTH:
                raise self.unsupported(t, f"bit width {w} (at most {MAX_WIDTH})")
            return BitsT(w, False)
        if isinstance(t, ast.IntType):
            if t.width is None:
                return INFINT
            w = self.const_int(t.width, _Ctx(scope), "int width")
            if w <= 0:
                raise self.error(t, f"int width must be positive, not {w}")
            if w > MAX_WIDTH:
                raise self.unsupported(t, f"int width {w} (at most {MAX_WIDTH})")
            return BitsT(w, True)
        if isinstance(t, ast.BoolType):
            return BOOL
        if isinstance(t, ast.ErrorType):
            return ERROR
        if isinstance(t, ast.StringType):
            return STRING
        if isinstance(t, ast.VoidType):
            return VOID
        if isinstance(t, ast.MatchKindType):
            return MATCH_KIND
        if isinstance(t, ast.DontCareType):
            return DONTCARE
        if isinstance(t, ast.VarbitType):
            return VarbitT(self.const_int(t.max_width, _Ctx(scope), "varbit width"))
        if isinstance(t, ast.HeaderStackType):
            el = self.resolve_type(t.element, scope, allow_typevars)
            if not (isinstance(el, StructLikeT) and el.kind in ("header", "header_union")):
                raise self.error(t, f"header stack element must be a header, not {el}")
            size = self.const_int(t.size, _Ctx(scope), "header stack size")
            if size <= 0:
                raise self.error(t.size, "header stack size must be positive")
            if size > MAX_WIDTH:
                raise self.unsupported(t.size, f"header stack of {size} elements (at most {MAX_WIDTH})")
            return StackT(el, size)
        if isinstance(t, ast.TupleType):
            return TupleT(tuple(self.resolve_type(x, scope, allow_typevars) for x in t.elements))
        if isinstance(t, ast.TypeName):
            if t.name in allow_typevars:
                return TypeVarT(t.name)
            d = self.info.global_scope.lookup(t.name) if t.top_level else scope.lookup(t.name)
            if d is None:
                raise self.error(t, f"undeclared type '{t.name}'")
            if isinstance(d, ast.ExternDecl):
                args = [self.resolve_type(a, scope, allow_typevars) for a in t.type_args]
                if len(args) > len(d.type_params):
                    raise self.error(t, f"extern '{d.name}' takes {len(d.type_params)} type argument(s)")
                # a missing trailing type argument (the index type I of register<T, I>, counter<I>) is inferred
                # at each call site from the argument, as p4c does
                return ExternT(d, args)
            if t.type_args and isinstance(d, ast.PackageTypeDecl):  # V1Switch<H, M>(...): checked by the back end
                if len(t.type_args) != len(d.type_params):
                    raise self.error(t, f"package '{d.name}' takes {len(d.type_params)} type argument(s), got "
                                        f"{len(t.type_args)}")
                args = tuple(self.resolve_type(a, scope, allow_typevars) for a in t.type_args)
                return BlockT("package", d, args)
            if t.type_args:
                raise self.unsupported(t, f"generic type '{t.name}<...>'")
            return self.resolve_named(d, t)
        raise self.unsupported(t, f"type {type(t).__name__}")

    def resolve_named(self, d: ast.Node, use: ast.Node | None = None) -> P4Type:
        cached = self._type_cache.get(d)
        if cached is not None:
            return cached
        where = use or d
        if isinstance(d, (ast.HeaderDecl, ast.StructDecl, ast.HeaderUnionDecl)):
            kind = {ast.HeaderDecl: "header", ast.StructDecl: "struct", ast.HeaderUnionDecl: "header_union"}[type(d)]
            if d.type_params:
                raise self.unsupported(d, f"generic {kind} '{d.name}'")
            if d in self._resolving:
                raise self.error(where, f"recursive type '{d.name}'")
            self._resolving.add(d)
            st = StructLikeT(kind, d.name, [], d)
            seen: set[str] = set()
            try:
                for f in d.fields:
                    if f.name in seen:
                        self.diags.error(f.loc, f"duplicate field '{f.name}' in {kind} '{d.name}'")
                        continue
                    seen.add(f.name)
                    ft = self.resolve_type(f.type, self.info.global_scope)
                    self.check_field_type(kind, d, f, ft)
                    self.info.types[f] = ft
                    st.fields.append((f.name, ft))
            finally:
                self._resolving.discard(d)
            self._type_cache[d] = st
            return st
        if isinstance(d, ast.TypedefDecl):
            if d in self._resolving:
                raise self.error(where, f"recursive typedef '{d.name}'")
            self._resolving.add(d)
            try:
                t = self.resolve_type(d.type, self.info.global_scope)
            finally:
                self._resolving.discard(d)
            self._type_cache[d] = t
            return t
        if isinstance(d, ast.EnumDecl):
            et = EnumT(d.name, [m.name for m in d.members], None, {}, d)
            self._type_cache[d] = et
            if d.underlying is not None:
                ut = self.resolve_type(d.underlying, self.info.global_scope)
                if not isinstance(ut, BitsT):
                    raise self.error(d.underlying, f"enum underlying type must be bit<W> or int<W>, not {ut}")
                et.underlying = ut
                for m in d.members:
                    if m.value is None:
                        self.diags.error(m.loc, f"serializable enum member '{m.name}' needs a value")
                        continue
                    self.expr(m.value, _Ctx(self.info.global_scope), ut)
                    v = self.info.values.get(m.value)
                    if not isinstance(v, int) or isinstance(v, bool):
                        self.diags.error(m.value.loc, "enum member value must be a compile-time integer constant")
                        continue
                    et.values[m.name] = wrap_value(v, ut)
            for m in d.members:
                self.info.types[m] = et
            return et
        if isinstance(d, (ast.ParserDecl, ast.ParserTypeDecl)):
            return BlockT("parser", d)
        if isinstance(d, (ast.ControlDecl, ast.ControlTypeDecl)):
            return BlockT("control", d)
        if isinstance(d, ast.PackageTypeDecl):
            return BlockT("package", d)
        if isinstance(d, ast.ExternDecl):
            return ExternT(d, [])
        name = getattr(d, "name", "?")
        raise self.error(where, f"'{name}' is not a type")

    def check_field_type(self, kind: str, d: ast.Decl, f: ast.Field, ft: P4Type) -> None:
        if kind == "header":
            if isinstance(ft, StructLikeT) and ft.kind == "struct" and _fixed_leaves(ft):
                return  # p4c flattens it into the header (FlattenHeaders)
            if not isinstance(ft, (BitsT, BoolT, VarbitT)) and not (isinstance(ft, EnumT) and ft.underlying):
                self.diags.error(f.type.loc, f"header field '{f.name}' must be bit<W>, int<W>, varbit or bool, not {ft}")
            if isinstance(ft, VarbitT) and any(isinstance(self.info.types.get(g), VarbitT) for g in d.fields
                                               if g is not f and d.fields.index(g) < d.fields.index(f)):
                self.diags.unsupported(f.type.loc, f"a second varbit field ('{f.name}') in header '{d.name}'")
        elif kind == "header_union":
            if not (isinstance(ft, StructLikeT) and ft.kind == "header"):
                self.diags.error(f.type.loc, f"header_union field '{f.name}' must be a header")
        else:
            if isinstance(ft, (ExternT, BlockT, VoidT, StringT, MatchKindT, InfIntT)):
                self.diags.error(f.type.loc, f"struct field '{f.name}' cannot have type {ft}")
            if isinstance(ft, VarbitT):
                self.diags.unsupported(f.type.loc, f"{kind} field '{f.name}' of type {ft} (varbit outside a header)")

    # ------------------------------------------------------------------------------------------------ decls

    def check_const(self, d: ast.ConstDecl, ctx: _Ctx) -> None:
        t = self.resolve_type(d.type, ctx.scope)
        self.info.types[d] = t
        vt = self.expr(d.value, ctx, t)
        self.require_assignable(d.value, vt, t, f"constant '{d.name}'")
        v = self.info.values.get(d.value)
        if v is None:
            raise self.error(d.value, f"initializer of constant '{d.name}' is not a compile-time constant")
        self.info.values[d] = wrap_value(v, t) if not isinstance(v, bool) else v

    def check_function(self, d: ast.FunctionDecl, ctx: _Ctx) -> None:
        """A function (inlined at each call by `compiler.inline_calls`, as p4c's front end does)."""
        if d in self._function_protos or d in self._functions_failed:
            return
        self._functions_failed.add(d)  # until proven fine (also stops recursion)
        if d.type_params:  # checked once per distinct type-argument list at its calls (see `specialize_function`)
            self._check_type_variable_members(d)
            self._functions_failed.discard(d)
            self._function_protos[d] = ast.MethodDecl(d.loc, d.name, d.return_type, d.params, list(d.type_params))
            self.info.functions[self._function_protos[d]] = d
            return
        fctx = _Ctx(Scope(ctx.scope, d), None, None, False, False)
        self.check_params(d.params, fctx, None)
        rt = self.resolve_type(d.return_type, ctx.scope)
        self.info.types[d] = rt
        fctx.function = d
        errors_before = len(self.diags.errors)
        self._checking_functions.append(d)
        try:
            self.block(d.body, fctx, new_scope=False)
        finally:
            self._checking_functions.pop()
        if len(self.diags.errors) != errors_before:
            raise CheckAbort()
        if not isinstance(rt, VoidT) and not _always_returns(d.body.stmts):
            raise self.error(d, f"function '{d.name}' does not return a value on all paths")
        self._functions_failed.discard(d)
        self._function_protos[d] = ast.MethodDecl(d.loc, d.name, d.return_type, d.params)
        self.info.functions[self._function_protos[d]] = d

    def check_params(self, params: list[ast.Param], ctx: _Ctx, owner: ast.Decl | None,
                     typevars: Iterable[str] = ()) -> None:
        for p in params:
            t = self.resolve_type(p.type, ctx.scope, typevars)
            self.info.types[p] = t
            self.declare(ctx.scope, p.name, p, owner)

    def check_action(self, d: ast.ActionDecl, ctx: _Ctx) -> None:
        actx = ctx.child(action=d, in_apply=False)
        self.info.owner[d] = ctx.block
        seen_dirless = False
        for p in d.params:
            if p.direction is None:
                seen_dirless = True
            elif seen_dirless:
                self.diags.error(p.loc, f"action '{d.name}': directional parameter '{p.name}' after directionless ones")
        self.check_params(d.params, actx, ctx.block)
        for p in d.params:
            t = self.info.types[p]
            if p.direction is None and not isinstance(t, (BitsT, BoolT)) and not (isinstance(t, EnumT) and t.underlying):
                self.diags.unsupported(p.loc, f"action parameter '{p.name}' of type {t}")
        self.block(d.body, actx)

    def check_parser(self, d: ast.ParserDecl, ctx: _Ctx) -> None:
        if d.type_params:
            raise self.unsupported(d, f"parser '{d.name}' with type parameters")
        if d.ctor_params:
            return  # checked once per instantiation, with the constructor arguments bound (see `specialize`)
        pctx = _Ctx(Scope(ctx.scope, d), d, None, True, False)
        self.check_params(d.params, pctx, d)
        for loc in d.locals:
            self.local_decl(loc, pctx)
        states: dict[str, ast.ParserState] = {}
        for s in d.states:
            if s.name in states:
                self.diags.error(s.loc, f"redeclaration of state '{s.name}'")
            if s.name in ("accept", "reject"):
                self.diags.error(s.loc, f"state '{s.name}' cannot be declared")
            states[s.name] = s
            self.info.owner[s] = d
        if "start" not in states:
            self.diags.error(d.loc, f"parser '{d.name}' has no 'start' state")
        for s in d.states:
            sctx = pctx.child()
            try:
                for st in s.stmts:
                    try:
                        self.stmt(st, sctx)
                    except CheckAbort:
                        pass
                self.transition(s, states, sctx)
            except CheckAbort:
                pass

    def transition(self, s: ast.ParserState, states: dict[str, ast.ParserState], ctx: _Ctx) -> None:
        tr = s.transition
        if tr is None:
            return  # no transition statement: reject (p4c: to reject)

        def target(n: ast.Name) -> None:
            if n.name in ("accept", "reject"):
                return
            st = states.get(n.name)
            if st is None:
                self.diags.error(n.loc, f"undeclared state '{n.name}'")
            else:
                self.info.refs[n] = st

        if isinstance(tr, ast.Name):
            target(tr)
            return
        if not isinstance(tr, ast.SelectExpr):
            raise self.error(tr, "transition must name a state or be a select expression")
        key_types = [self.expr(k, ctx) for k in tr.keys]
        for kt, k in zip(key_types, tr.keys):
            if not isinstance(kt, (BitsT, BoolT)) and not (isinstance(kt, EnumT) and kt.underlying):
                self.diags.unsupported(k.loc, f"select key of type {kt}")
        for case in tr.cases:
            keys = case.keys
            if len(keys) == 1 and isinstance(keys[0], (ast.DefaultExpr, ast.DontCare)):
                self.info.types[keys[0]] = DONTCARE
            elif len(keys) == 1 and self.value_set_case(keys[0], key_types, ctx):
                pass
            elif len(keys) != len(key_types):
                self.diags.error(case.loc, f"select case has {len(keys)} values, the select has {len(key_types)} keys")
            else:
                for k, kt in zip(keys, key_types):
                    try:
                        self.keyset(k, kt, ctx)
                    except CheckAbort:
                        pass
            target(case.state)

    def check_value_set(self, d: ast.ValueSetDecl, ctx: _Ctx) -> None:
        """`value_set<T>(size)`: T is bit<W>, int<W>, a serializable enum or a struct of those (one select key
        each, as p4c's BMv2 back end takes them)."""
        t = self.resolve_type(d.element_type, ctx.scope)
        size = self.const_int(d.size, ctx, "value_set size")
        fields = t.fields if isinstance(t, StructLikeT) and t.kind == "struct" else [("", t)]
        for _n, ft in fields:
            if not (isinstance(ft, BitsT) or isinstance(ft, EnumT) and ft.underlying is not None):
                raise self.unsupported(d.element_type, f"value_set of {t}")
        if size < 0:
            raise self.error(d.size, "value_set size must not be negative")
        self.info.types[d] = ValueSetT(d, t, size)

    def value_set_case(self, k: ast.Expr, key_types: list[P4Type], ctx: _Ctx) -> bool:
        """Whether `k` (a case's only label) names a value set; then it must fit the select's keys."""
        if not isinstance(k, ast.Name):
            return False
        d = ctx.scope.lookup(k.name)
        if not isinstance(d, ast.ValueSetDecl):
            return False
        vt = self.info.types.get(d)
        if not isinstance(vt, ValueSetT):
            raise CheckAbort()
        self.info.refs[k] = d
        self.info.types[k] = vt
        el = vt.element
        widths = [width_of(ft) for _n, ft in el.fields] if isinstance(el, StructLikeT) else [width_of(el)]
        if widths != [width_of(kt) for kt in key_types]:
            raise self.error(k, f"value set '{d.name}' of {el} does not fit the select's keys "
                                f"({', '.join(str(kt) for kt in key_types)})")
        return True

    def keyset(self, k: ast.Expr, kt: P4Type, ctx: _Ctx) -> None:
        if isinstance(k, (ast.DefaultExpr, ast.DontCare)):
            self.info.types[k] = DONTCARE
            return
        if isinstance(k, ast.MaskExpr):
            self.keyset_value(k.value, kt, ctx)
            # a serializable enum's key masks with a number of its underlying type (as p4c accepts)
            self.keyset_value(k.mask, kt.underlying if isinstance(kt, EnumT) and kt.underlying else kt, ctx)
            self.info.types[k] = kt
            return
        if isinstance(k, ast.RangeExpr):
            self.keyset_value(k.lo, kt, ctx)
            self.keyset_value(k.hi, kt, ctx)
            self.info.types[k] = kt
            return
        self.keyset_value(k, kt, ctx)

    def keyset_value(self, e: ast.Expr, kt: P4Type, ctx: _Ctx) -> None:
        t = self.expr(e, ctx, kt)
        self.require_assignable(e, t, kt, "select/entry key")
        if e not in self.info.values:
            raise self.error(e, f"'{describe(e)}' is not a compile-time constant")

    def check_control(self, d: ast.ControlDecl, ctx: _Ctx) -> None:
        if d.type_params:
            raise self.unsupported(d, f"control '{d.name}' with type parameters")
        if d.ctor_params:
            return  # checked once per instantiation, with the constructor arguments bound (see `specialize`)
        cctx = _Ctx(Scope(ctx.scope, d), d, None, False, False)
        self.check_params(d.params, cctx, d)
        cctx.scope.names.update(self.info.ctor_instances.get(d, {}))
        for loc in d.locals:
            self.local_decl(loc, cctx)
        actx = cctx.child(in_apply=True)
        self.block(d.body, actx, new_scope=False)

    def local_decl(self, loc: ast.Decl, ctx: _Ctx) -> None:
        try:
            if isinstance(loc, ast.ActionDecl):
                self.declare(ctx.scope, loc.name, loc, ctx.block)
                self.check_action(loc, ctx)
            elif isinstance(loc, ast.TableDecl):
                self.declare(ctx.scope, loc.name, loc, ctx.block)
                self.check_table(loc, ctx)
            elif isinstance(loc, ast.Instantiation):
                self.declare(ctx.scope, loc.name, loc, ctx.block)
                self.check_instantiation(loc, ctx)
            elif isinstance(loc, (ast.VarDecl, ast.ConstDecl)):
                self.stmt(loc, ctx)
            elif isinstance(loc, ast.ValueSetDecl):
                self.check_value_set(loc, ctx)
                self.declare(ctx.scope, loc.name, loc, ctx.block)
            else:
                raise self.unsupported(loc, f"local declaration {type(loc).__name__}")
        except CheckAbort:
            pass

    def check_instantiation(self, d: ast.Instantiation, ctx: _Ctx) -> None:
        t = self.resolve_type(d.type, ctx.scope)
        self.info.owner[d] = ctx.block
        self.info.types[d] = t
        if isinstance(t, ExternT):
            ctors = [m for m in t.decl.methods if m.return_type is None and m.name == t.decl.name]
            if not ctors:
                raise self.error(d, f"extern '{t.name}' has no constructor")
            self.call_args(d, ctors, d.args, ctx, {tp: a for tp, a in zip(t.decl.type_params, t.type_args)},
                           f"constructor of {t.name}")
            return
        if isinstance(t, BlockT):
            if t.kind == "package":
                for a in d.args:
                    self.expr(a, ctx)
                return
            if t.kind == "control" and isinstance(t.decl, ast.ControlDecl) and \
                    (isinstance(ctx.block, ast.ControlDecl) or ctx.block is None):
                if t.decl is ctx.block:
                    raise self.error(d, f"control '{t.name}' cannot instantiate itself")
                self.info.types[d] = BlockT("control", self.specialize(t.decl, d.args, ctx, d))
                return  # a sub-control: its apply() is inlined by the back end, as p4c does
            if t.kind == "parser" and isinstance(t.decl, ast.ParserDecl) and \
                    (ctx.block is None or isinstance(ctx.block, ast.ParserDecl)):
                if t.decl is ctx.block:
                    raise self.error(d, f"parser '{t.name}' cannot instantiate itself")
                self.info.types[d] = BlockT("parser", self.specialize(t.decl, d.args, ctx, d))
                return  # a V1Switch argument given by name, or a sub-parser (inlined by compiler.inline_calls)
            raise self.unsupported(d, f"instantiation of {t.kind} '{t.name}' here")
        raise self.error(d, f"cannot instantiate {t}")

    def specialize(self, decl: ast.ControlDecl | ast.ParserDecl, args: list[ast.Expr], ctx: _Ctx,
                   where: ast.Node) -> ast.ControlDecl | ast.ParserDecl:
        """The control or parser `decl` with its constructor parameters bound to the compile-time constants `args`:
        a copy in which each becomes a local constant (p4c's specialization of parameterized blocks), checked once
        per distinct list of values."""
        kind = "control" if isinstance(decl, ast.ControlDecl) else "parser"
        if len(args) != len(decl.ctor_params):
            raise self.error(where, f"{kind} '{decl.name}' expects {len(decl.ctor_params)} constructor argument(s), "
                                    f"got {len(args)}")
        if not args:
            return decl
        values: list[int | bool] = []
        instances: dict[str, ast.Instantiation] = {}
        anonymous: list[ast.Instantiation] = []
        for p, a in zip(decl.ctor_params, args):
            pt = self.resolve_type(p.type, self.info.global_scope)
            if isinstance(pt, BlockT) and pt.kind == "control" and kind == "control":
                inst = self.control_argument(p, a, pt, ctx)
                if isinstance(a, ast.ConstructorCall):
                    anonymous.append(inst)
                else:
                    instances[p.name] = inst
                values.append(id(inst))
                continue
            if not isinstance(pt, (BitsT, BoolT, InfIntT)):
                raise self.unsupported(p, f"constructor parameter '{p.name}' of type {pt}")
            at = self.expr(a, ctx, pt)
            self.require_assignable(a, at, pt, f"constructor parameter '{p.name}' of {kind} '{decl.name}'")
            v = self.info.values.get(a)
            if v is None:
                raise self.error(start_of(a), f"constructor argument '{describe(a)}' must be a compile-time constant")
            values.append(v)
        key = (decl, tuple(values))
        spec = self._specialized.get(key)
        if spec is None:
            spec = copy.deepcopy(decl)
            consts: list[ast.Decl] = []
            for p, v in zip(spec.ctor_params, values):
                if p.name in instances or any(i.name == p.name for i in anonymous):
                    continue
                lit = ast.BoolLit(p.loc, v) if isinstance(v, bool) else ast.IntLit(p.loc, int(v))
                consts.append(ast.ConstDecl(p.loc, p.name, p.type, lit))
            spec.ctor_params = []
            spec.locals = consts + anonymous + spec.locals
            self._specialized[key] = spec
            if instances:
                self.info.ctor_instances[spec] = instances
            if isinstance(spec, ast.ControlDecl):
                self.check_control(spec, _Ctx(self.info.global_scope))
            else:
                self.check_parser(spec, _Ctx(self.info.global_scope))
        return spec

    def control_argument(self, p: ast.Param, a: ast.Expr, pt: BlockT, ctx: _Ctx) -> ast.Instantiation:
        """The control instance passed for constructor parameter `p`: a declared instance (`C2(c1) c2;`, shared
        with every other use of it) or an anonymous one (`C2(C1()) c2;`, an instance of its own named `p`)."""
        if isinstance(a, ast.ConstructorCall):
            inst = ast.Instantiation(a.loc, p.name, a.type, a.args)
            t = self.resolve_type(a.type, ctx.scope)
        elif isinstance(a, ast.Name):
            d = ctx.scope.lookup(a.name)
            if not isinstance(d, ast.Instantiation) or not isinstance(self.info.types.get(d), BlockT):
                raise self.error(a, f"constructor argument '{a.name}' for '{p.name}' must be a control instance")
            self.info.refs[a] = d
            inst, t = d, self.info.types[d]
        else:
            raise self.unsupported(start_of(a), f"constructor argument '{describe(a)}' of type {pt}")
        if not (isinstance(t, BlockT) and t.kind == "control" and isinstance(t.decl, ast.ControlDecl)):
            raise self.error(start_of(a), f"constructor argument '{describe(a)}' for '{p.name}' must be a control")
        want, have = pt.decl.params, t.decl.params  # type: ignore[attr-defined]
        same = len(want) == len(have) and all(
            w.direction == h.direction and same_type(self.resolve_type(w.type, self.info.global_scope),
                                                     self.resolve_type(h.type, self.info.global_scope))
            for w, h in zip(want, have))
        if not same:
            raise self.error(start_of(a), f"control '{t.name}' does not match the type {pt} of parameter '{p.name}'")
        return inst

    def check_table(self, d: ast.TableDecl, ctx: _Ctx) -> None:
        tctx = ctx.child(table=d)
        names = set()
        for p in d.properties:
            if p.name in names:
                self.diags.error(p.loc, f"table '{d.name}': duplicate property '{p.name}'")
            names.add(p.name)
            if isinstance(ctx.scope.lookup(p.name), ast.Param):  # p4c: a table property is a declaration too
                self.diags.error(p.loc, f"declaration of '{p.name}' shadows a parameter '{p.name}'")
        key_types: list[P4Type] = []
        if d.key is not None:
            for ke in d.key.elements:
                try:
                    kt = self.expr(ke.expr, tctx)
                except CheckAbort:
                    key_types.append(DONTCARE)
                    continue
                key_types.append(kt)
                if ke.match_kind not in self.info.match_kinds:
                    self.diags.error(ke.loc, f"undeclared match kind '{ke.match_kind}'")
                elif ke.match_kind not in MATCH_KINDS_SUPPORTED:
                    self.diags.unsupported(ke.loc, f"match kind '{ke.match_kind}'")
                if not isinstance(kt, (BitsT, BoolT)) and not (isinstance(kt, EnumT) and kt.underlying) \
                        and not isinstance(kt, ErrorT):
                    self.diags.error(ke.expr.loc, f"table key '{describe(ke.expr)}' has type {kt}, not a bit string")
        acts = d.actions
        listed: dict[ast.ActionDecl, ast.ActionRef] = {}
        if acts is None:
            self.diags.error(d.loc, f"table '{d.name}' has no actions property")
        else:
            for ref in acts.actions:
                try:
                    a = self.action_ref(ref, tctx, bind_all=False)
                    if a in listed:
                        self.diags.error(ref.loc, f"action '{a.name}' listed twice in table '{d.name}'")
                    listed[a] = ref
                except CheckAbort:
                    pass
        da = d.default_action
        if da is not None:
            try:
                a = self.action_ref(da.action, tctx, bind_all=True)
                if acts is not None and a not in listed:
                    self.diags.error(da.action.loc,
                                     f"default action '{a.name}' is not in the actions list of table '{d.name}'")
                elif a in listed and listed[a].annotation("tableonly") is not None:
                    self.diags.error(da.action.loc, f"action '{a.name}' is @tableonly and cannot be the default")
            except CheckAbort:
                pass
        ents = d.entries
        if ents is not None and ents.entries and (d.key is None or not d.key.elements):
            # p4c-bm2-ss 1.2.4.8's words (--Werror=type-error)
            self.diags.error(d.loc, f"Entries cannot be specified for a table with no key {d.name}")
        elif ents is not None:  # `entries` without const: initial entries the control plane may change (P4_16 1.2.2)
            for ent in ents.entries:
                try:
                    self.table_entry(d, ent, key_types, listed, tctx)
                except CheckAbort:
                    pass
        for p in d.properties:
            if isinstance(p, ast.ValueProperty):
                try:
                    self.table_value_property(d, p, tctx)
                except CheckAbort:
                    pass

    def table_entry(self, d: ast.TableDecl, ent: ast.Entry, key_types: list[P4Type],
                    listed: dict[ast.ActionDecl, ast.ActionRef], ctx: _Ctx) -> None:
        keys = ent.keys
        if len(keys) == 1 and isinstance(keys[0], (ast.DefaultExpr, ast.DontCare)) and len(key_types) != 1:
            self.info.types[keys[0]] = DONTCARE
        elif len(keys) != len(key_types):
            raise self.error(ent, f"entry has {len(keys)} key values, table '{d.name}' has {len(key_types)} keys")
        else:
            for k, kt in zip(keys, key_types):
                self.keyset(k, kt, ctx)
        if ent.priority is not None:
            if d.entries is not None and d.entries.is_const:
                raise self.error(ent, f"table '{d.name}': a table with 'const' entries cannot have priorities "
                                      "(p4c's BMv2 back end takes an entry's @priority(n) annotation instead)")
            self.const_int(ent.priority, ctx, "entry priority")
        pa = ent.annotation("priority")
        if pa is not None and pa.int_arg() is None:
            raise self.error(pa, "invalid @priority value: it must be one integer constant")
        a = self.action_ref(ent.action, ctx, bind_all=True)
        if a not in listed:
            raise self.error(ent.action, f"action '{a.name}' is not in the actions list of table '{d.name}'")
        if listed[a].annotation("defaultonly") is not None:
            raise self.error(ent.action, f"action '{a.name}' is @defaultonly and cannot be used in an entry")

    def table_value_property(self, d: ast.TableDecl, p: ast.ValueProperty, ctx: _Ctx) -> None:
        if p.name == "size":
            v = self.const_int(p.value, ctx, "table size")
            if v < 0:  # p4c-bm2-ss 1.2.4.8 writes -1 as 4294967295; 0 is its default size
                self.diags.error(p.value.loc, "table size must not be negative")
        elif p.name == "counters":
            t = self.expr(p.value, ctx)
            if not (isinstance(t, ExternT) and t.name == "direct_counter"):
                self.diags.error(p.value.loc, f"counters property must name a direct_counter, not {t}")
        elif p.name == "meters":
            t = self.expr(p.value, ctx)
            if not (isinstance(t, ExternT) and t.name == "direct_meter"):
                self.diags.error(p.value.loc, f"meters property must name a direct_meter, not {t}")
        elif p.name == "support_timeout":
            self.expr(p.value, ctx, BOOL)
        elif p.name == "implementation":  # a constructor call became a named instance (name_table_implementations)
            t = self.expr(p.value, ctx)
            if not (isinstance(t, ExternT) and t.name in ("action_profile", "action_selector")):
                self.diags.error(p.value.loc, f"implementation must name an action_profile or action_selector, not {t}")
            else:
                selector_keys = [ke for ke in (d.key.elements if d.key else []) if ke.match_kind == "selector"]
                if t.name == "action_selector" and not selector_keys:
                    self.diags.error(p.loc, f"table '{d.name}': an action_selector needs 'selector' keys")
                if t.name == "action_profile" and selector_keys:
                    self.diags.error(selector_keys[0].loc, f"table '{d.name}': a 'selector' key needs an "
                                                           "action_selector implementation")
        elif p.name == "priority_delta":
            self.diags.unsupported(p.loc, f"table property '{p.name}'")
        elif p.name == "largest_priority_wins":
            t = self.expr(p.value, ctx, BOOL)
            if not isinstance(t, BoolT) or p.value not in self.info.values:
                self.diags.error(p.value.loc, "largest_priority_wins must be a compile-time bool")
        else:
            self.diags.warning(p.loc, f"table '{d.name}': unknown property '{p.name}' ignored")

    def action_ref(self, ref: ast.ActionRef, ctx: _Ctx, bind_all: bool) -> ast.ActionDecl:
        n = ref.name
        if not isinstance(n, ast.Name):
            raise self.error(ref, "expected an action name")
        d = self.info.global_scope.lookup(n.name) if n.top_level else ctx.scope.lookup(n.name)
        if d is None:
            raise self.error(n, f"undeclared action '{n.name}'")
        if not isinstance(d, ast.ActionDecl):
            raise self.error(n, f"'{n.name}' is not an action")
        self.info.refs[n] = d
        self.info.actions[ref] = d
        args = ref.args or []
        directional = [p for p in d.params if p.direction is not None]
        need = d.params if bind_all else directional
        if ref.args is None and need:
            raise self.error(ref, f"action '{d.name}' needs {len(need)} argument(s)")
        if ref.args is not None or bind_all:
            if len(args) != len(need):
                raise self.error(ref, f"action '{d.name}' expects {len(need)} argument(s), got {len(args)}")
            for a, p in zip(args, need):
                pt = self.info.types[p]
                at = self.expr(a, ctx, pt)
                self.require_assignable(a, at, pt, f"argument '{p.name}' of action '{d.name}'")
                if p.direction is None and a not in self.info.values:
                    self.diags.error(a.loc, f"argument '{p.name}' of action '{d.name}' must be a compile-time constant")
                self.directional_arg(a, p, pt, ctx, "action")
        return d

    # ------------------------------------------------------------------------------------------------ statements

    def block(self, b: ast.BlockStmt, ctx: _Ctx, new_scope: bool = True) -> None:
        c = ctx.child() if new_scope else ctx
        for s in b.stmts:
            try:
                self.stmt(s, c)
            except CheckAbort:
                pass

    def stmt(self, s: ast.Stmt, ctx: _Ctx) -> None:
        if isinstance(s, ast.BlockStmt):
            self.block(s, ctx)
        elif isinstance(s, ast.AssignStmt):
            lt = self.expr(s.lhs, ctx)
            self.require_lvalue(s.lhs, ctx)
            rt = self.expr(s.rhs, ctx, lt)
            self.require_assignable(s.rhs, rt, lt, f"'{describe(s.lhs)}'")
        elif isinstance(s, ast.MethodCallStmt):
            self.expr(s.call, ctx)
            if ctx.action is None and not ctx.in_apply and not ctx.in_parser and ctx.function is None:
                raise self.error(s, "method call outside a parser state, action or apply block")
        elif isinstance(s, ast.IfStmt):
            ct = self.expr(s.cond, ctx, BOOL)
            if not isinstance(ct, BoolT):
                self.diags.error(start_of(s.cond).loc, f"if condition must be bool, not {ct}")
            if ctx.in_parser:
                self.diags.unsupported(s.loc, "if statement in a parser state")
            try:
                self.stmt(s.then, ctx.child())
            except CheckAbort:
                pass
            if s.else_ is not None:
                self.stmt(s.else_, ctx.child())
        elif isinstance(s, ast.SwitchStmt):
            self.switch(s, ctx)
        elif isinstance(s, ast.VarDecl):
            t = self.resolve_type(s.type, ctx.scope)
            if isinstance(t, (InfIntT, ExternT, BlockT, VoidT, StringT)):
                raise self.error(s.type, f"variable '{s.name}' cannot have type {t}")
            if isinstance(t, StackT) and not (isinstance(t.element, StructLikeT) and t.element.kind == "header"):
                self.diags.unsupported(s.loc, f"local variable of type {t}")
            if isinstance(t, TupleT):  # as p4c's EliminateTuples: a struct with fields f0, f1, ... (t[i] is t.fi)
                t = StructLikeT("struct", f"tuple_{len(t.elements)}", [(f"f{i}", et) for i, et in enumerate(t.elements)],
                                None)
                self.tuple_structs.add(id(t))
            self.info.types[s] = t
            if s.init is not None:
                it = self.expr(s.init, ctx, t)
                self.require_assignable(s.init, it, t, f"'{s.name}'")
            self.declare(ctx.scope, s.name, s, ctx.block)
        elif isinstance(s, ast.ConstDecl):
            self.check_const(s, ctx)
            self.declare(ctx.scope, s.name, s, ctx.block)
        elif isinstance(s, ast.ExitStmt):
            if ctx.in_parser:
                raise self.error(s, "exit is not allowed in a parser")
            if ctx.function is not None:
                raise self.error(s, "exit is not allowed in a function")
        elif isinstance(s, ast.ReturnStmt):
            if ctx.function is not None:
                self.return_stmt(s, ctx.function, ctx)
            elif ctx.action is None and not ctx.in_apply:
                raise self.error(s, "return statement outside a function, action or apply block")
            elif s.value is not None:
                raise self.error(s.value, "return with a value in an action or apply block")
        elif isinstance(s, ast.ForStmt):
            self.for_stmt(s, ctx)
        elif isinstance(s, (ast.BreakStmt, ast.ContinueStmt)):
            if not ctx.in_loop:  # p4c's ValidateParsedProgram
                word = "break" if isinstance(s, ast.BreakStmt) else "continue"
                raise self.error(s, f"{word} statement must be used in the context of a for statement.")
        elif isinstance(s, ast.EmptyStmt):
            pass
        else:
            raise self.unsupported(s, f"statement {type(s).__name__}")

    def for_stmt(self, s: ast.ForStmt, ctx: _Ctx) -> None:
        """`for (init; cond; update) body`: the initializers' declarations are visible in the rest of the loop only.
        p4c-bm2-ss (from 1.2.5.12) compiles loops inside action bodies (and functions they call) into `_jump`s."""
        if ctx.in_parser:
            raise self.unsupported(s, "'for' loop in a parser state (p4c-bm2-ss compiles loops only inside actions)")
        if ctx.action is None and ctx.function is None:
            raise self.unsupported(s, "'for' loop in an apply block (p4c-bm2-ss compiles loops only inside actions)")
        c = ctx.child()
        for x in s.init:
            self.stmt(x, c)
        ct = self.expr(s.cond, c, BOOL)
        if not isinstance(ct, BoolT):
            self.diags.error(start_of(s.cond).loc, f"for condition must be bool, not {ct}")
        for x in s.update:
            self.stmt(x, c)
        self.stmt(s.body, c.child(in_loop=True))

    def return_stmt(self, s: ast.ReturnStmt, f: ast.FunctionDecl, ctx: _Ctx) -> None:
        rt = self.info.types[f]
        if s.value is None:
            if not isinstance(rt, VoidT):
                raise self.error(s, f"function '{f.name}' must return a value of type {rt}")
            return
        if isinstance(rt, VoidT):
            raise self.error(s.value, f"void function '{f.name}' cannot return a value")
        vt = self.expr(s.value, ctx, rt)
        self.require_assignable(s.value, vt, rt, f"the result of function '{f.name}'")

    def switch(self, s: ast.SwitchStmt, ctx: _Ctx) -> None:
        t = self.expr(s.expr, ctx)
        if not ctx.in_apply or ctx.action is not None:
            raise self.error(s, "switch statement outside an apply block")
        if isinstance(t, (BitsT, EnumT, ErrorT)):
            self.value_switch(s, t, ctx)
            return
        if not isinstance(t, ActionRunT):
            raise self.error(start_of(s.expr), f"cannot switch on a value of type {t}")
        table = t.table
        acts = {}
        if table.actions is not None:
            for ref in table.actions.actions:
                a = self.info.actions.get(ref)
                if a is not None and isinstance(ref.name, ast.Name):
                    acts[ref.name.name] = a
        seen: set[str] = set()
        for i, case in enumerate(s.cases):
            lab = case.label
            if isinstance(lab, ast.DefaultExpr):
                if i != len(s.cases) - 1:
                    self.diags.error(lab.loc, "default label must be the last switch label")
            elif isinstance(lab, ast.Name):
                if lab.name not in acts:
                    self.diags.error(lab.loc, f"'{lab.name}' is not an action of table '{table.name}'")
                else:
                    self.info.refs[lab] = acts[lab.name]
                if lab.name in seen:
                    self.diags.error(lab.loc, f"duplicate switch label '{lab.name}'")
                seen.add(lab.name)
            else:
                self.diags.error(lab.loc, "switch label must be an action name or default")
            if case.body is not None:
                self.block(case.body, ctx)

    def value_switch(self, s: ast.SwitchStmt, t: P4Type, ctx: _Ctx) -> None:
        """`switch (expr) { v1: ... default: ... }` on a bit<W>/int<W>/enum/error value: labels are constants."""
        for sub in ast.walk(s.expr):
            if isinstance(self.info.types.get(sub), ApplyResultT):
                raise self.unsupported(s.expr, "switch on an expression containing a table apply")
        seen: set[object] = set()
        for i, case in enumerate(s.cases):
            lab = case.label
            if isinstance(lab, ast.DefaultExpr):
                if i != len(s.cases) - 1:
                    self.diags.error(lab.loc, "default label must be the last switch label")
            else:
                try:
                    lt = self.expr(lab, ctx, t)
                    self.require_assignable(lab, lt, t, "switch label")
                    v = self.info.values.get(lab)
                    if v is None and not (isinstance(t, EnumT) and isinstance(lab, ast.Member)):
                        raise self.error(lab, f"switch label '{describe(lab)}' is not a compile-time constant")
                    key = v if v is not None else describe(lab)
                    if key in seen:
                        self.diags.error(lab.loc, f"duplicate switch label '{describe(lab)}'")
                    seen.add(key)
                except CheckAbort:
                    pass
            if case.body is not None:
                self.block(case.body, ctx)

    # ------------------------------------------------------------------------------------------------ lvalues

    def require_lvalue(self, e: ast.Expr, ctx: _Ctx) -> None:
        if isinstance(e, ast.Name):
            d = self.info.refs.get(e)
            if isinstance(d, ast.Param):
                if d.direction in ("out", "inout"):
                    return
                kind = "in parameter" if d.direction == "in" else "action data parameter"
                if d.direction is None and not isinstance(self.info.types.get(d), (BitsT, BoolT, EnumT)):
                    kind = "read-only parameter"
                raise self.error(e, f"cannot assign to '{e.name}': it is a read-only {kind}")
            if isinstance(d, ast.VarDecl):
                return
            if isinstance(d, ast.ConstDecl):
                raise self.error(e, f"cannot assign to constant '{e.name}'")
            raise self.error(e, f"'{describe(e)}' cannot be assigned")
        if isinstance(e, ast.Member):
            bt = self.info.types.get(e.expr)
            if isinstance(bt, StackT) and e.member in ("last", "lastIndex", "size"):
                raise self.error(e, f"'{describe(e)}' cannot be assigned")
            if isinstance(bt, (StructLikeT, StackT)):
                self.require_lvalue(e.expr, ctx)
                return
            raise self.error(e, f"'{describe(e)}' cannot be assigned")
        if isinstance(e, (ast.Index, ast.Slice)):
            self.require_lvalue(e.expr, ctx)
            return
        raise self.error(e, f"'{describe(e)}' cannot be assigned")

    def is_compile_time_constant(self, a: ast.Expr) -> bool:
        """A value known at compile time: a folded constant, a string literal, or a member of an enum, error or
        match_kind named through its type (`CounterType.packets`)."""
        if a in self.info.values or isinstance(a, (ast.StringLit, ast.BoolLit)):
            return True
        if isinstance(a, ast.ListExpr):
            return all(self.is_compile_time_constant(x) for x in a.elements)
        if isinstance(a, ast.StructExpr):
            return all(self.is_compile_time_constant(f.value) for f in a.fields)
        if isinstance(a, ast.Cast):
            return self.is_compile_time_constant(a.expr)
        return isinstance(a, ast.Member) and isinstance(self.info.types.get(a.expr), TypeT)

    def directional_arg(self, a: ast.Expr, p: ast.Param, pt: P4Type, ctx: _Ctx, callee: str) -> None:
        """p4c's rules for an argument of a directional parameter: `_` only for `out` (it stands for a fresh
        variable of the parameter's type), a left-value for `out`/`inout`."""
        if isinstance(a, ast.DontCare):
            if p.direction != "out":
                raise self.error(a, "don't care argument is only allowed for out parameters")
            if isinstance(pt, (TypeVarT, DontCareT)):
                raise self.error(a, f"cannot infer the type of '_' for parameter '{p.name}'; give type arguments")
            self.info.types[a] = pt
            return
        if p.direction is None and callee == "function" and not self.is_compile_time_constant(a):
            raise self.error(start_of(a), f"argument used for directionless parameter '{p.name}' must be a "
                                          "compile-time constant")
        if p.direction not in ("out", "inout"):
            return
        try:
            self.require_lvalue(a, ctx)
        except CheckAbort:
            self.diags.items.pop()
            if callee == "action":
                raise self.error(start_of(a), f"'{describe(a)}' must be a left-value") from None
            raise self.error(start_of(a), f"read-only value '{describe(a)}' used for {p.direction} parameter "
                                          f"'{p.name}'") from None

    def require_assignable(self, e: ast.Expr, have: P4Type, want: P4Type, what: str) -> None:
        if self.convertible(have, want):
            return
        raise self.error(start_of(e), f"type mismatch: cannot use a value of type {have} for {what} of type {want}")

    def convertible(self, have: P4Type, want: P4Type) -> bool:
        if same_type(have, want):
            return True
        if isinstance(want, (TypeVarT, DontCareT)) or isinstance(have, DontCareT):
            return True
        if isinstance(have, InfIntT) and isinstance(want, (BitsT, InfIntT)):
            return True
        if isinstance(have, EnumT) and have.underlying is not None and isinstance(want, BitsT):
            return same_type(have.underlying, want)  # p4c: a serializable enum casts implicitly to its type
        if isinstance(have, TupleT) and isinstance(want, (TupleT, StructLikeT)):
            return True
        if isinstance(have, StructLikeT) and have.kind == "struct" and have.decl is None and isinstance(want, StructLikeT):
            return True
        return False

    # ------------------------------------------------------------------------------------------------ expressions

    def expr(self, e: ast.Expr, ctx: _Ctx, expected: P4Type | None = None) -> P4Type:
        t = self._expr(e, ctx, expected)
        self.info.types[e] = t
        return t

    def _expr(self, e: ast.Expr, ctx: _Ctx, expected: P4Type | None) -> P4Type:
        method = getattr(self, "e_" + type(e).__name__, None)
        if method is None:
            raise self.unsupported(e, f"expression {type(e).__name__}")
        return method(e, ctx, expected)

    def e_IntLit(self, e: ast.IntLit, ctx: _Ctx, expected: P4Type | None) -> P4Type:
        if e.width is not None:
            t = BitsT(e.width, e.signed)
            v = wrap_value(e.value, t)
            if v != e.value and not (e.signed and e.value < 0):
                self.diags.warning(e.loc, f"value {e.value} does not fit in {t}; truncated to {v}")
            self.info.values[e] = v
            return t
        if isinstance(expected, BitsT):
            self.info.values[e] = wrap_value(e.value, expected)
            if e.value >= (1 << expected.width):
                self.diags.warning(e.loc, f"value {e.value} does not fit in {expected}; truncated")
            return expected
        self.info.values[e] = e.value
        return INFINT

    def e_BoolLit(self, e: ast.BoolLit, ctx: _Ctx, expected: P4Type | None) -> P4Type:
        self.info.values[e] = e.value
        return BOOL

    def e_StringLit(self, e: ast.StringLit, ctx: _Ctx, expected: P4Type | None) -> P4Type:
        return STRING

    def e_DontCare(self, e: ast.DontCare, ctx: _Ctx, expected: P4Type | None) -> P4Type:
        return DONTCARE

    def e_DefaultExpr(self, e: ast.DefaultExpr, ctx: _Ctx, expected: P4Type | None) -> P4Type:
        return DONTCARE

    def e_Name(self, e: ast.Name, ctx: _Ctx, expected: P4Type | None) -> P4Type:
        if e.name == "error" and not e.top_level:
            return TypeT(ERROR)
        d = self.info.global_scope.lookup(e.name) if e.top_level else ctx.scope.lookup(e.name)
        if d is None:
            raise self.error(e, f"undeclared name '{e.name}'")
        self.info.refs[e] = d
        if isinstance(d, (ast.Param, ast.VarDecl)):
            t = self.info.types.get(d)
            if t is None:
                raise CheckAbort()
            return t
        if isinstance(d, ast.ConstDecl):
            if d not in self.info.types:
                self.check_const(d, _Ctx(self.info.global_scope))
            v = self.info.values.get(d)
            t = self.info.types[d]
            if v is not None:
                if isinstance(t, InfIntT) and isinstance(expected, BitsT):
                    self.info.values[e] = wrap_value(v, expected)
                    return expected
                self.info.values[e] = v
            return t
        if isinstance(d, ast.ActionDecl):
            return ActionT(d)
        if isinstance(d, ast.TableDecl):
            return TableT(d)
        if isinstance(d, ast.Instantiation):
            t = self.info.types.get(d)
            if t is None:
                raise CheckAbort()
            return t
        if isinstance(d, ast.ExternFunctionDecl):
            decls = [x.proto for x in self._overloads.get(d, [d])]
            return MethodT(d.name, decls, None)
        if isinstance(d, ast.EnumMember) and d in self.info.types and isinstance(self.info.types[d], MatchKindT):
            return MATCH_KIND
        if isinstance(d, (ast.EnumDecl, ast.HeaderDecl, ast.StructDecl, ast.HeaderUnionDecl, ast.TypedefDecl,
                          ast.ExternDecl, ast.ParserDecl, ast.ControlDecl, ast.PackageTypeDecl)):
            return TypeT(self.resolve_named(d, e))
        if isinstance(d, ast.FunctionDecl):
            proto = self._function_protos.get(d)
            if proto is None and d in self._checking_functions:
                raise self.error(e, f"function '{d.name}' calls itself (recursion is not allowed in P4)")
            if proto is None:  # not checked (yet, or it failed)
                self.check_function(d, _Ctx(self.info.global_scope))
                proto = self._function_protos.get(d)
                if proto is None:
                    raise CheckAbort()
            return MethodT(d.name, [proto], None)
        raise self.error(e, f"'{e.name}' cannot be used as a value")

    def e_Member(self, e: ast.Member, ctx: _Ctx, expected: P4Type | None) -> P4Type:
        bt = self.expr(e.expr, ctx)
        m = e.member
        if isinstance(bt, TypeT):
            of = bt.of
            if isinstance(of, ErrorT):
                if m not in self.info.error_decls:
                    raise self.error(e, f"undeclared error '{m}'")
                self.info.values[e] = self.info.errors.index(m)
                return ERROR
            if isinstance(of, EnumT):
                if m not in of.members:
                    raise self.error(e, f"enum '{of.name}' has no member '{m}'")
                if of.underlying is not None and m in of.values:
                    self.info.values[e] = of.values[m]
                return of
            raise self.error(e, f"type {of} has no member '{m}'")
        if isinstance(bt, StructLikeT):
            ft = bt.field(m)
            if ft is not None:
                return ft
            if bt.kind == "header" and m in ("isValid", "setValid", "setInvalid") or \
                    bt.kind == "header_union" and m == "isValid":  # a union has no setValid/setInvalid (p4c)
                return MethodT(m, [], bt)
            raise self.error(e, f"{bt.kind} '{bt.name}' has no field '{m}'")
        if isinstance(bt, StackT):
            if m in ("next", "last"):
                if not ctx.in_parser:  # p4c's type checker: only a parser has a stack's next index
                    raise self.error(start_of(e), f"{describe(e)}: 'last', and 'next' for stacks can only be used "
                                                  "in a parser")
                return bt.element
            if m == "lastIndex" and not ctx.in_parser:
                raise self.error(start_of(e), f"{describe(e)}: 'lastIndex' for stacks can only be used in a parser")
            if m in ("lastIndex", "size"):
                self.info.values.pop(e, None)
                if m == "size":
                    self.info.values[e] = bt.size
                return BitsT(32, False)
            if m in ("push_front", "pop_front"):
                return MethodT(m, [], bt)
            raise self.error(e, f"header stack has no member '{m}'")
        if isinstance(bt, ExternT):
            ms = [x for x in bt.decl.methods if x.name == m and x.return_type is not None]
            if not ms:
                raise self.error(e, f"extern '{bt.name}' has no method '{m}'")
            return MethodT(m, ms, bt)
        if isinstance(bt, TableT):
            if m == "apply":
                return MethodT("apply", [], bt)
            raise self.error(e, f"table '{bt.decl.name}' has no member '{m}'")
        if isinstance(bt, ApplyResultT):
            if m in ("hit", "miss"):
                return BOOL
            if m == "action_run":
                return ActionRunT(bt.table)
            raise self.error(e, f"table apply result has no member '{m}'")
        if isinstance(bt, BlockT) and m == "apply":
            if not isinstance(bt.decl, (ast.ControlDecl, ast.ParserDecl)):
                raise self.unsupported(e, f"applying {bt.kind} '{bt.name}' from another block")
            return MethodT("apply", [], bt)
        raise self.error(e, f"'{describe(e.expr)}' of type {bt} has no member '{m}'")

    def e_Index(self, e: ast.Index, ctx: _Ctx, expected: P4Type | None) -> P4Type:
        bt = self.expr(e.expr, ctx)
        if isinstance(bt, (TupleT, StructLikeT)) and (isinstance(bt, TupleT) or id(bt) in self.tuple_structs):
            i = self.const_int(e.index, ctx, "tuple index")
            n = len(bt.elements) if isinstance(bt, TupleT) else len(bt.fields)
            if not 0 <= i < n:
                raise self.error(e.index, f"index {i} out of bounds for a tuple of {n} elements")
            if isinstance(bt, TupleT):
                raise self.unsupported(e, "indexing a tuple value that is not a local variable")
            return bt.fields[i][1]
        if not isinstance(bt, StackT):
            raise self.error(e, f"'{describe(e.expr)}' is not a header stack")
        it = self.expr(e.index, ctx, BitsT(32, False))
        if isinstance(it, EnumT) and it.underlying is not None:  # a serializable enum: its number
            it = it.underlying
        if not isinstance(it, (BitsT, InfIntT)):
            raise self.error(e.index, f"header stack index must be an integer, not {it}")
        v = self.info.values.get(e.index)
        if v is None:  # a run-time index: BMv2's dereference_header_stack (out of range: see switch/README)
            return bt.element
        if not 0 <= v < bt.size:
            raise self.error(e.index, f"index {v} out of bounds for header stack of size {bt.size}")
        return bt.element

    def e_Slice(self, e: ast.Slice, ctx: _Ctx, expected: P4Type | None) -> P4Type:
        bt = self.expr(e.expr, ctx)
        hi = self.const_int(e.hi, ctx, "slice bound")
        lo = self.const_int(e.lo, ctx, "slice bound")
        if isinstance(bt, InfIntT):
            v = self.info.values.get(e.expr)
            if isinstance(v, int):
                if hi < lo or lo < 0:
                    raise self.error(e, f"invalid slice [{hi}:{lo}]")
                self.info.values[e] = (v >> lo) & _mask(hi - lo + 1)
                return BitsT(hi - lo + 1, False)
        if not isinstance(bt, BitsT):
            raise self.error(e, f"cannot slice a value of type {bt}")
        if hi < lo or lo < 0 or hi >= bt.width:
            raise self.error(e, f"slice [{hi}:{lo}] out of range for {bt}")
        v = self.info.values.get(e.expr)
        if isinstance(v, int) and not isinstance(v, bool):
            self.info.values[e] = ((v & _mask(bt.width)) >> lo) & _mask(hi - lo + 1)
        return BitsT(hi - lo + 1, False)

    def e_Cast(self, e: ast.Cast, ctx: _Ctx, expected: P4Type | None) -> P4Type:
        to = self.resolve_type(e.type, ctx.scope)
        if isinstance(e.expr, (ast.ListExpr, ast.StructExpr)) and isinstance(to, StructLikeT):
            self.expr(e.expr, ctx, to)
            return to
        ft = self.expr(e.expr, ctx, to if isinstance(to, BitsT) else None)
        v = self.info.values.get(e.expr)
        if not self.cast_ok(ft, to):
            raise self.error(e, f"illegal cast from {ft} to {to}")
        if v is not None:
            if isinstance(to, BitsT):
                if isinstance(v, bool):
                    v = int(v)
                elif isinstance(ft, BitsT) and ft.signed and not to.signed:
                    v = v & _mask(ft.width)
                self.info.values[e] = wrap_value(v, to)
            elif isinstance(to, BoolT):
                self.info.values[e] = bool(v)
            elif isinstance(to, EnumT) and to.underlying is not None:
                self.info.values[e] = wrap_value(int(v), to.underlying)
        return to

    def cast_ok(self, f: P4Type, t: P4Type) -> bool:
        if same_type(f, t):
            return True
        if isinstance(f, InfIntT) and isinstance(t, (BitsT, BoolT)):
            return True
        if isinstance(f, BitsT) and isinstance(t, BitsT):
            return f.signed == t.signed or f.width == t.width
        if isinstance(f, BitsT) and isinstance(t, BoolT):
            return f.width == 1 and not f.signed
        if isinstance(f, BoolT) and isinstance(t, BitsT):
            return t.width == 1 and not t.signed
        if isinstance(f, EnumT) and f.underlying is not None and isinstance(t, BitsT):
            return self.cast_ok(f.underlying, t)
        if isinstance(t, EnumT) and t.underlying is not None and isinstance(f, (BitsT, InfIntT)):
            return isinstance(f, InfIntT) or self.cast_ok(f, t.underlying)
        return False

    def e_Unary(self, e: ast.Unary, ctx: _Ctx, expected: P4Type | None) -> P4Type:
        t = self.expr(e.operand, ctx, expected if e.op in ("-", "+", "~") else BOOL)
        v = self.info.values.get(e.operand)
        if e.op == "!":
            if not isinstance(t, BoolT):
                raise self.error(e, f"'!' needs a bool operand, not {t}")
            if v is not None:
                self.info.values[e] = not v
            return BOOL
        if e.op == "~":
            if isinstance(t, InfIntT):
                raise self.error(e, "'~' cannot be applied to an untyped integer; give it a width")
            if not isinstance(t, BitsT):
                raise self.error(e, f"'~' needs a bit<W> or int<W> operand, not {t}")
            if v is not None:
                self.info.values[e] = wrap_value(~v, t)
            return t
        if e.op in ("-", "+"):
            if not isinstance(t, (BitsT, InfIntT)):
                raise self.error(e, f"'{e.op}' needs a numeric operand, not {t}")
            if v is not None:
                self.info.values[e] = wrap_value(-v if e.op == "-" else v, t)
            return t
        raise self.unsupported(e, f"operator '{e.op}'")

    def _unify(self, e: ast.Binary, ctx: _Ctx, expected: P4Type | None) -> tuple[P4Type, P4Type]:
        """Type both operands; an untyped literal side takes the other side's type."""
        lt = self.expr(e.left, ctx)
        rt = self.expr(e.right, ctx)
        if isinstance(lt, InfIntT) and isinstance(rt, BitsT):
            lt = self.expr(e.left, ctx, rt)
        elif isinstance(rt, InfIntT) and isinstance(lt, BitsT):
            rt = self.expr(e.right, ctx, lt)
        elif isinstance(lt, InfIntT) and isinstance(rt, InfIntT) and isinstance(expected, BitsT) \
                and e.op not in ("==", "!=", "<", "<=", ">", ">="):
            lt = self.expr(e.left, ctx, expected)
            rt = self.expr(e.right, ctx, expected)
        # p4c: a serializable enum meets a value of its underlying type as that type (an implicit cast)
        if isinstance(lt, EnumT) and lt.underlying is not None and isinstance(rt, BitsT) \
                and same_type(lt.underlying, rt):
            lt = rt
        elif isinstance(rt, EnumT) and rt.underlying is not None and isinstance(lt, BitsT) \
                and same_type(rt.underlying, lt):
            rt = lt
        return lt, rt

    def e_Binary(self, e: ast.Binary, ctx: _Ctx, expected: P4Type | None) -> P4Type:
        op = e.op
        if op in ("&&", "||"):
            lt = self.expr(e.left, ctx, BOOL)
            rt = self.expr(e.right, ctx, BOOL)
            if not isinstance(lt, BoolT) or not isinstance(rt, BoolT):
                raise self.error(e, f"'{op}' needs bool operands, not {lt} and {rt}")
            lv, rv = self.info.values.get(e.left), self.info.values.get(e.right)
            if lv is not None and rv is not None:
                self.info.values[e] = (lv and rv) if op == "&&" else (lv or rv)
            return BOOL
        if op == "++":
            lt = self.expr(e.left, ctx)
            rt = self.expr(e.right, ctx)
            for side, t in ((e.left, lt), (e.right, rt)):
                if isinstance(t, InfIntT):
                    raise self.error(side, f"'++' operand '{describe(side)}' needs a width (e.g. 8w{describe(side)})")
                if not isinstance(t, BitsT):
                    raise self.error(side, f"'++' needs bit<W> or int<W> operands, not {t}")
            assert isinstance(lt, BitsT) and isinstance(rt, BitsT)
            res = BitsT(lt.width + rt.width, lt.signed)
            lv, rv = self.info.values.get(e.left), self.info.values.get(e.right)
            if isinstance(lv, int) and isinstance(rv, int):
                self.info.values[e] = wrap_value(((lv & _mask(lt.width)) << rt.width) | (rv & _mask(rt.width)), res)
            return res
        if op in ("<<", ">>"):
            lt = self.expr(e.left, ctx, expected)
            rt = self.expr(e.right, ctx)
            if isinstance(rt, BitsT) and rt.signed:
                raise self.error(e.right, f"shift amount must be unsigned, not {rt}")
            if not isinstance(rt, (BitsT, InfIntT)):
                raise self.error(e.right, f"shift amount must be an unsigned integer, not {rt}")
            rv = self.info.values.get(e.right)
            if isinstance(rt, InfIntT) and isinstance(rv, int) and rv < 0:
                raise self.error(e.right, "shift amount must not be negative")
            if not isinstance(lt, (BitsT, InfIntT)):
                raise self.error(e.left, f"cannot shift a value of type {lt}")
            lv = self.info.values.get(e.left)
            if isinstance(lt, InfIntT) and lv is None:
                raise self.error(e, "shifted untyped integer must be a constant")
            if isinstance(lt, InfIntT) and rv is None:
                raise self.error(e, f"'{describe(e.left)}' needs a width when shifted by a non-constant amount")
            if isinstance(rv, int) and rv > MAX_WIDTH:
                if isinstance(lt, InfIntT):
                    raise self.unsupported(e.right, f"shift amount {rv} (at most {MAX_WIDTH})")
                rv = MAX_WIDTH  # shifting a bit<W> by >= W bits gives 0 (or the sign, for >> of int<W>)
            if isinstance(lv, int) and isinstance(rv, int):
                self.info.values[e] = wrap_value(lv << rv if op == "<<" else lv >> rv, lt)
            return lt
        lt, rt = self._unify(e, ctx, expected)
        if op in ("==", "!="):
            if not (same_type(lt, rt) or (isinstance(lt, InfIntT) and isinstance(rt, InfIntT))):
                raise self.error(e, f"'{op}': cannot compare values of different types {lt} and {rt}")
            if isinstance(lt, TupleT):
                raise self.unsupported(e, f"comparison of {lt} values")
            if isinstance(lt, (StructLikeT, StackT)):  # expanded when lowered (p4c's RemoveComplexComparisons)
                return BOOL
            if not isinstance(lt, (BitsT, InfIntT, BoolT, ErrorT, EnumT, VarbitT)):
                raise self.error(e, f"'{op}' cannot compare values of type {lt}")
            lv, rv = self.info.values.get(e.left), self.info.values.get(e.right)
            if lv is not None and rv is not None:
                self.info.values[e] = (lv == rv) if op == "==" else (lv != rv)
            return BOOL
        if op in ("<", "<=", ">", ">="):
            if not (isinstance(lt, (BitsT, InfIntT)) and isinstance(rt, (BitsT, InfIntT))):
                raise self.error(e, f"'{op}' needs numeric operands, not {lt} and {rt}")
            if not (same_type(lt, rt) or (isinstance(lt, InfIntT) and isinstance(rt, InfIntT))):
                raise self.error(e, f"'{op}': cannot compare values of different types {lt} and {rt}")
            lv, rv = self.info.values.get(e.left), self.info.values.get(e.right)
            if isinstance(lv, int) and isinstance(rv, int):
                self.info.values[e] = {"<": lv < rv, "<=": lv <= rv, ">": lv > rv, ">=": lv >= rv}[op]
            return BOOL
        if op in ("+", "-", "*", "/", "%", "&", "|", "^", "|+|", "|-|"):
            for side, t in ((e.left, lt), (e.right, rt)):
                if not isinstance(t, (BitsT, InfIntT)):
                    raise self.error(side, f"'{op}' needs bit<W> or int<W> operands, not {t} ('{describe(side)}')")
            if not same_type(lt, rt) and not (isinstance(lt, InfIntT) and isinstance(rt, InfIntT)):
                raise self.error(e, f"'{op}': cannot operate on values of different types {lt} and {rt}")
            t = lt
            if op in ("/", "%"):
                if isinstance(t, BitsT) and t.signed:
                    raise self.unsupported(e, f"'{op}' on signed values")
                rv = self.info.values.get(e.right)
                lv = self.info.values.get(e.left)
                if rv == 0:
                    raise self.error(e, "division by zero")
                if (lv is None or rv is None) and not (isinstance(rv, int) and rv > 0 and rv & (rv - 1) == 0) \
                        and lv != 0:  # p4c's strength reduction: 0 / x and 0 % x are 0
                    # BMv2 has no division; p4c turns x / 2^k and x % 2^k into a shift and a mask
                    raise self.unsupported(e, f"'{op}' by a value that is not a constant power of two")
            if op in ("|+|", "|-|") and isinstance(t, InfIntT):
                raise self.error(e, f"'{op}' needs operands with a width")
            lv, rv = self.info.values.get(e.left), self.info.values.get(e.right)
            if isinstance(lv, int) and isinstance(rv, int) and not isinstance(lv, bool):
                self.info.values[e] = self.fold(op, lv, rv, t)
            return t
        raise self.unsupported(e, f"operator '{op}'")

    @staticmethod
    def fold(op: str, a: int, b: int, t: P4Type) -> int:
        if op == "+":
            r = a + b
        elif op == "-":
            r = a - b
        elif op == "*":
            r = a * b
        elif op == "/":
            r = a // b
        elif op == "%":
            r = a % b
        elif op == "&":
            r = a & b
        elif op == "|":
            r = a | b
        elif op == "^":
            r = a ^ b
        elif op in ("|+|", "|-|"):
            assert isinstance(t, BitsT)
            r = a + b if op == "|+|" else a - b
            lo = -(1 << (t.width - 1)) if t.signed else 0
            hi = (1 << (t.width - 1)) - 1 if t.signed else (1 << t.width) - 1
            return max(lo, min(hi, r))
        else:
            raise AssertionError(op)
        return wrap_value(r, t)

    def e_Ternary(self, e: ast.Ternary, ctx: _Ctx, expected: P4Type | None) -> P4Type:
        ct = self.expr(e.cond, ctx, BOOL)
        if not isinstance(ct, BoolT):
            raise self.error(e.cond, f"condition of '?:' must be bool, not {ct}")
        tt = self.expr(e.then, ctx, expected)
        et = self.expr(e.else_, ctx, expected)
        # an untyped integer branch takes the other branch's type (p4c), not the context's: `c ? 2 : 3w1` is bit<3>
        if not same_type(tt, et) and _untyped_int(e.then) and isinstance(et, BitsT):
            tt = self.expr(e.then, ctx, et)
        elif not same_type(tt, et) and _untyped_int(e.else_) and isinstance(tt, BitsT):
            et = self.expr(e.else_, ctx, tt)
        if isinstance(tt, InfIntT) and isinstance(et, BitsT):
            tt = self.expr(e.then, ctx, et)
        elif isinstance(et, InfIntT) and isinstance(tt, BitsT):
            et = self.expr(e.else_, ctx, tt)
        if not same_type(tt, et):
            raise self.error(e, f"'?:' branches have different types {tt} and {et}")
        if isinstance(tt, InfIntT):
            raise self.error(e, "'?:' with untyped integer branches needs a width")
        cv = self.info.values.get(e.cond)
        if cv is not None:
            v = self.info.values.get(e.then if cv else e.else_)
            if v is not None:
                self.info.values[e] = v
        return tt

    def e_ListExpr(self, e: ast.ListExpr, ctx: _Ctx, expected: P4Type | None) -> P4Type:
        return TupleT(tuple(self.expr(x, ctx) for x in e.elements))

    def e_StructExpr(self, e: ast.StructExpr, ctx: _Ctx, expected: P4Type | None) -> P4Type:
        fields: list[tuple[str, P4Type]] = []
        for f in e.fields:
            want = expected.field(f.name) if isinstance(expected, StructLikeT) else None
            fields.append((f.name, self.expr(f.value, ctx, want)))
        if isinstance(expected, StructLikeT):
            return expected
        return StructLikeT("struct", "", fields, None)

    def e_NamedArg(self, e: ast.NamedArg, ctx: _Ctx, expected: P4Type | None) -> P4Type:
        return self.expr(e.value, ctx, expected)

    def e_TypeExpr(self, e: ast.TypeExpr, ctx: _Ctx, expected: P4Type | None) -> P4Type:
        return TypeT(self.resolve_type(e.type, ctx.scope))

    def e_MaskExpr(self, e: ast.MaskExpr, ctx: _Ctx, expected: P4Type | None) -> P4Type:
        raise self.error(e, "'&&&' is only allowed in select cases and table entries")

    def e_RangeExpr(self, e: ast.RangeExpr, ctx: _Ctx, expected: P4Type | None) -> P4Type:
        raise self.error(e, "'..' is only allowed in select cases and table entries")

    def e_ConstructorCall(self, e: ast.ConstructorCall, ctx: _Ctx, expected: P4Type | None) -> P4Type:
        t = self.resolve_type(e.type, ctx.scope)
        if isinstance(t, BlockT):
            if isinstance(t.decl, (ast.ControlDecl, ast.ParserDecl)):
                return BlockT(t.kind, self.specialize(t.decl, e.args, ctx, e))
            if e.args:
                raise self.unsupported(e, f"{t.kind} constructor arguments")
            return t
        if isinstance(t, ExternT):
            raise self.unsupported(e, f"anonymous instantiation of extern '{t.name}'")
        raise self.error(e, f"cannot construct {t}")

    def e_SelectExpr(self, e: ast.SelectExpr, ctx: _Ctx, expected: P4Type | None) -> P4Type:
        raise self.error(e, "select expression outside a transition")

    # ------------------------------------------------------------------------------------------------ calls

    def e_MethodCall(self, e: ast.MethodCall, ctx: _Ctx, expected: P4Type | None) -> P4Type:
        ct = self.expr(e.callee, ctx)
        if isinstance(ct, ActionT):
            return self.direct_action_call(e, ct.decl, ctx)
        if not isinstance(ct, MethodT):
            raise self.error(e, f"'{describe(e.callee)}' is not callable")
        owner = ct.owner
        name = ct.name
        self.info.calls[e] = (owner, name)
        if isinstance(owner, StructLikeT):  # header builtins
            if e.args:
                raise self.error(e, f"{name}() takes no arguments")
            if name == "isValid":
                return BOOL
            assert isinstance(e.callee, ast.Member)
            self.require_lvalue(e.callee.expr, ctx)
            if ctx.action is None and not ctx.in_apply and not ctx.in_parser and ctx.function is None:
                raise self.error(e, f"{name}() outside an action, apply block, parser or function")
            return VOID
        if isinstance(owner, StackT):
            if len(e.args) != 1:
                raise self.error(e, f"{name}() takes one argument")
            self.const_int(e.args[0], ctx, f"{name}() count")
            assert isinstance(e.callee, ast.Member)
            self.require_lvalue(e.callee.expr, ctx)
            return VOID
        if isinstance(owner, BlockT) and isinstance(owner.decl, ast.ParserDecl):
            return self.sub_parser_apply(e, owner.decl, ctx)
        if isinstance(owner, BlockT):
            return self.sub_control_apply(e, owner, ctx)
        if isinstance(owner, TableT):
            if e.args:
                raise self.error(e, "apply() takes no arguments")
            if not ctx.in_apply or ctx.action is not None:
                raise self.error(e, "tables can only be applied in a control's apply block")
            return ApplyResultT(owner.decl)
        # extern method or extern function
        if owner is not None:
            assert isinstance(owner, ExternT)
            bindings = {tp: a for tp, a in zip(owner.decl.type_params, owner.type_args)}
        else:
            bindings = {}
        if owner is None and len(ct.decls) == 1 and ct.decls[0] in self.info.functions:
            self.fill_defaults(e, ct.decls[0].params)
        t = self.call_args(e, ct.decls, e.args, ctx, bindings, f"'{describe(e.callee)}'", e.type_args)
        if owner is None:
            self.info.type_bindings[e] = dict(self._last_bindings)
        if owner is None and ct.decls and ct.decls[0] in self.info.functions:
            fn = self.info.functions[ct.decls[0]]
            if fn.type_params:
                fn = self.specialize_function(fn, self._last_bindings, e)
            self.info.functions[e] = fn
        if owner is not None and owner.name == "packet_in":
            if not ctx.in_parser:
                raise self.error(e, f"packet_in.{name}() is only allowed in a parser")
            if name == "extract":
                at = self.info.types.get(e.args[0])
                if not (isinstance(at, StructLikeT) and at.kind == "header"):
                    raise self.error(e.args[0], f"extract needs a header, not {at}")
                varbit = any(isinstance(ft, VarbitT) for _, ft in at.fields)
                if len(e.args) == 2 and not varbit:
                    raise self.error(e, f"extract with a size needs a header with a varbit field; {at} has none")
                if len(e.args) == 1 and varbit:
                    raise self.error(e, f"{at} has a varbit field: extract it with its size, extract(h, bits)")
            if name == "length":
                raise self.unsupported(e, "packet_in.length()")
        if owner is not None and owner.name == "packet_out" and ctx.in_parser:
            raise self.error(e, "packet_out.emit() is only allowed in a deparser")
        return t

    def fill_defaults(self, e: ast.MethodCall, params: list[ast.Param]) -> None:
        """Put named arguments in parameter order and append the default values of the parameters `e` leaves out
        (p4c's DefaultArguments), each a copy of its own, so every call site is typed by itself."""
        if self.bind_named(e, e.args, params, strict=True):
            return
        if len(e.args) < len(params) and all(p.default is not None for p in params[len(e.args):]):
            e.args.extend(copy.deepcopy(p.default) for p in params[len(e.args):])  # type: ignore[misc]

    def bind_named(self, where: ast.Node, args: list[ast.Expr], params: list[ast.Param], strict: bool) -> bool:
        """Rewrite `args` in place from `name = value` form to positional (P4_16 8.20: all arguments named or none;
        an omitted parameter takes its default). False when no argument is named; with `strict=False`, also when the
        names do not fit `params` (another overload may take them)."""
        if not any(isinstance(a, ast.NamedArg) for a in args):
            return False
        if not all(isinstance(a, ast.NamedArg) for a in args):
            raise self.error(where, "either all arguments are named or none")
        named: dict[str, ast.Expr] = {}
        for a in args:
            assert isinstance(a, ast.NamedArg)
            if a.name in named:
                raise self.error(a, f"argument '{a.name}' given twice")
            named[a.name] = a.value
        names = [p.name for p in params]
        unknown = [n for n in named if n not in names]
        missing = [p.name for p in params if p.name not in named and p.default is None]
        if unknown or missing:
            if not strict:
                return False
            if unknown:
                raise self.error(where, f"no parameter named '{unknown[0]}'")
            raise self.error(where, f"no argument for parameter '{missing[0]}'")
        args[:] = [named[p.name] if p.name in named else copy.deepcopy(p.default)  # type: ignore[misc]
                   for p in params]
        return True

    def sub_control_apply(self, e: ast.MethodCall, owner: BlockT, ctx: _Ctx) -> P4Type:
        """`inst.apply(args)` of a control instance: arguments checked against the control's parameters."""
        decl = owner.decl
        assert isinstance(decl, ast.ControlDecl)
        if not ctx.in_apply or ctx.action is not None:
            raise self.error(e, f"control '{decl.name}' can only be applied from an apply block")
        self.fill_defaults(e, decl.params)
        if len(e.args) != len(decl.params):
            raise self.error(e, f"control '{decl.name}' expects {len(decl.params)} argument(s), got {len(e.args)}")
        for a, p in zip(e.args, decl.params):
            pt = self.info.types.get(p)
            if pt is None:  # declared further down: resolve its parameter types now
                pt = self.info.types[p] = self.resolve_type(p.type, self.info.global_scope)
            at = self.expr(a, ctx, pt)
            self.require_assignable(a, at, pt, f"argument '{p.name}' of control '{decl.name}'")
            self.directional_arg(a, p, pt, ctx, "control")
        return VOID

    def sub_parser_apply(self, e: ast.MethodCall, decl: ast.ParserDecl, ctx: _Ctx) -> P4Type:
        """`inst.apply(args)` of a parser instance in a parser state (inlined by compiler.inline_calls, as p4c does)."""
        if not ctx.in_parser:
            raise self.error(e, f"parser '{decl.name}' can only be applied from a parser state")
        self.fill_defaults(e, decl.params)
        if len(e.args) != len(decl.params):
            raise self.error(e, f"parser '{decl.name}' expects {len(decl.params)} argument(s), got {len(e.args)}")
        for a, p in zip(e.args, decl.params):
            pt = self.info.types.get(p)
            if pt is None:
                pt = self.info.types[p] = self.resolve_type(p.type, self.info.global_scope)
            at = self.expr(a, ctx, pt)
            self.require_assignable(a, at, pt, f"argument '{p.name}' of parser '{decl.name}'")
            self.directional_arg(a, p, pt, ctx, "parser")
        return VOID

    def direct_action_call(self, e: ast.MethodCall, d: ast.ActionDecl, ctx: _Ctx) -> P4Type:
        if not ctx.in_apply and ctx.action is None:  # from an action: inlined by compiler.inline_calls
            raise self.error(e, f"action '{d.name}' can only be called from an apply block or an action")
        if e.type_args:
            raise self.error(e, f"action '{d.name}' has no type parameters")
        self.fill_defaults(e, d.params)
        if len(e.args) != len(d.params):
            raise self.error(e, f"action '{d.name}' expects {len(d.params)} argument(s), got {len(e.args)}")
        self.info.actions[e] = d
        for a, p in zip(e.args, d.params):
            pt = self.info.types[p]
            at = self.expr(a, ctx, pt)
            self.require_assignable(a, at, pt, f"argument '{p.name}' of action '{d.name}'")
            self.directional_arg(a, p, pt, ctx, "action")
        return VOID

    def call_args(self, call: ast.Node, decls: list[ast.MethodDecl], args: list[ast.Expr], ctx: _Ctx,
                  bindings: dict[str, P4Type], what: str, type_args: list[ast.Type] | None = None) -> P4Type:
        if any(isinstance(a, ast.NamedArg) for a in args):
            decls = [m for m in decls if self.bind_named(call, list(args), m.params, strict=False)][:1] or decls[:1]
            self.bind_named(call, args, decls[0].params, strict=True)
        cands = [m for m in decls if sum(1 for p in m.params if p.default is None) <= len(args) <= len(m.params)]
        if not cands:
            counts = sorted({len(m.params) for m in decls})
            raise self.error(call, f"{what} expects {' or '.join(map(str, counts))} argument(s), got {len(args)}")
        errors_before = len(self.diags.items)
        last_exc: CheckAbort | None = None
        for m in cands:
            try:
                return self._bind_call(m, args, ctx, dict(bindings), type_args or [], what)
            except CheckAbort as exc:
                last_exc = exc
                if len(cands) > 1 and m is not cands[-1]:
                    del self.diags.items[errors_before:]
        raise last_exc or CheckAbort()

    def _bind_call(self, m: ast.MethodDecl, args: list[ast.Expr], ctx: _Ctx, bindings: dict[str, P4Type],
                   type_args: list[ast.Type], what: str) -> P4Type:
        tps = list(m.type_params)
        for tp, ta in zip(tps, type_args):
            bindings[tp] = self.resolve_type(ta, ctx.scope)
        if len(type_args) > len(tps):
            raise self.error(args[0] if args else m, f"{what}: too many type arguments")
        allvars = set(tps) | set(bindings) | self._extern_typevars(m)
        for a, p in zip(args, m.params):
            pt = self.resolve_type(p.type, self.info.global_scope, allvars)
            pt = self.subst(pt, bindings)
            at = self.expr(a, ctx, pt if not isinstance(pt, TypeVarT) else None)
            if isinstance(pt, TypeVarT):
                if isinstance(at, InfIntT) and isinstance(a, ast.IntLit) is False and a not in self.info.values:
                    raise self.error(a, f"cannot infer a width for argument '{p.name}' of {what}")
                bindings[pt.name] = at
            else:
                self.require_assignable(a, at, pt, f"argument '{p.name}' of {what}")
                if isinstance(at, InfIntT) and isinstance(pt, BitsT):
                    self.expr(a, ctx, pt)
            self.directional_arg(a, p, bindings.get(pt.name, pt) if isinstance(pt, TypeVarT) else pt, ctx,
                                 "function")
        self._last_bindings = bindings
        if m.return_type is None:
            return VOID
        rt = self.resolve_type(m.return_type, self.info.global_scope, allvars)
        rt = self.subst(rt, bindings)
        if isinstance(rt, TypeVarT):
            raise self.error(args[0] if args else m, f"{what}: cannot infer the result type; give type arguments")
        return rt

    def _check_type_variable_members(self, d: ast.FunctionDecl) -> None:
        """A value of a type parameter has no fields or methods to reach (`h.isValid()` for `in H h`): p4c checks a
        generic body against its type variables, before any call binds them, and refuses that; so do we, rather than
        accept what only some type arguments would allow."""
        tvars = set(d.type_params)

        def of_type_var(ty: ast.Type) -> str | None:
            return ty.name if isinstance(ty, ast.TypeName) and ty.name in tvars and not ty.type_args else None

        typed = {p.name: tv for p in d.params if (tv := of_type_var(p.type))}
        for n in ast.walk(d):
            if isinstance(n, ast.VarDecl) and (tv := of_type_var(n.type)):
                typed[n.name] = tv
        for n in ast.walk(d):
            if isinstance(n, ast.Member) and isinstance(n.expr, ast.Name) and n.expr.name in typed:
                raise self.error(n, f"cannot extract field '{n.member}' from '{n.expr.name}', which has type "
                                    f"'{typed[n.expr.name]}' (a type parameter of '{d.name}')")

    def specialize_function(self, fn: ast.FunctionDecl, bindings: dict[str, P4Type],
                            call: ast.MethodCall) -> ast.FunctionDecl:
        """A copy of generic function `fn` with its type parameters replaced by the types bound at `call` (p4c's
        SpecializeGenericFunctions), checked once per distinct list of types."""
        types = []
        for tp in fn.type_params:
            t = bindings.get(tp)
            if t is None or isinstance(t, (TypeVarT, InfIntT, DontCareT)):
                raise self.error(call, f"cannot infer type argument '{tp}' of function '{fn.name}'; give it "
                                       f"explicitly ({fn.name}<...>(...))")
            types.append(t)
        key = (fn, tuple(str(t) for t in types))
        spec = self._specialized_functions.get(key)
        if spec is not None:
            return spec
        asts = {tp: _type_ast(t, call) for tp, t in zip(fn.type_params, types)}
        if any(a is None for a in asts.values()):
            raise self.unsupported(call, f"calling generic function '{fn.name}' with these type arguments")
        spec = copy.deepcopy(fn)
        spec.type_params = []
        for n in ast.walk(spec):
            for f in dataclasses.fields(n):
                v = getattr(n, f.name)
                if isinstance(v, ast.TypeName) and v.name in asts and not v.type_args:
                    setattr(n, f.name, asts[v.name])
                elif isinstance(v, list):
                    setattr(n, f.name, [asts[x.name] if isinstance(x, ast.TypeName) and x.name in asts
                                        and not x.type_args else x for x in v])
        self._specialized_functions[key] = spec
        self.check_function(spec, _Ctx(self.info.global_scope))
        if spec not in self._function_protos:
            raise CheckAbort()
        return spec

    def _extern_typevars(self, m: ast.MethodDecl) -> set[str]:
        for d in self.program.decls:
            if isinstance(d, ast.ExternDecl) and m in d.methods:
                return set(d.type_params)
        return set()

    def subst(self, t: P4Type, b: dict[str, P4Type]) -> P4Type:
        if isinstance(t, TypeVarT) and t.name in b:
            return b[t.name]
        if isinstance(t, ExternT) and t.type_args:
            return ExternT(t.decl, [self.subst(x, b) for x in t.type_args])
        return t


def _type_ast(t: P4Type, at: ast.Node) -> ast.Type | None:
    """A type expression denoting `t` (for a specialized copy of a generic function), or None."""
    if isinstance(t, BitsT):
        w = ast.IntLit(at.loc, t.width)
        return ast.IntType(at.loc, w) if t.signed else ast.BitType(at.loc, w)
    if isinstance(t, BoolT):
        return ast.BoolType(at.loc)
    if isinstance(t, ErrorT):
        return ast.ErrorType(at.loc)
    decl = getattr(t, "decl", None)
    if isinstance(t, (StructLikeT, EnumT)) and decl is not None:
        return ast.TypeName(at.loc, decl.name, top_level=True)
    return None


def _always_returns(stmts: list[ast.Stmt]) -> bool:
    """Whether every path through `stmts` ends in a `return` (p4c: a function must return on all paths)."""
    for s in stmts:
        if isinstance(s, ast.ReturnStmt):
            return True
        if isinstance(s, ast.BlockStmt) and _always_returns(s.stmts):
            return True
        if isinstance(s, ast.IfStmt) and s.else_ is not None and _always_returns([s.then]) \
                and _always_returns([s.else_]):
            return True
    return False


def check(program: ast.Program, diags: Diagnostics) -> TypeInfo:
    """Type-check `program`, recording problems in `diags`; returns what was learned (valid if no errors)."""
    return Checker(program, diags).run()
