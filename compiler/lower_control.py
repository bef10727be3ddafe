"""A v1model ingress/egress control → one BMv2 pipeline (tables, conditionals) plus its actions.

The apply block becomes a graph of tables and conditionals, as p4c builds it:
* `t.apply()` is a table node; `if (t.apply().hit)` / `.miss` use the `__HIT__` / `__MISS__` next-table labels;
  `switch (t.apply().action_run)` gives per-action `next_tables`;
* `if (cond)` is a conditional node `node_N`;
* a run of other statements (assignments, extern calls, exit) becomes a synthesized action named after its first
  statement's file and line (`switchml120`) applied by a keyless table `tbl_switchml120` whose constant default
  action it is; a direct action call `a(...)` becomes a keyless
  table `tbl_a` with `a` as constant default action (all its arguments bound inside that copy, as p4c does).
Tables get p4c's fully qualified names (`MyIngress.ipv4_lpm`), `@name` honoured; the default size is 1024; a table
without `default_action` gets `NoAction` added (as p4c's front end does). An action's directional parameters are
copied in and out at each use (`compiler.lower_calls`). A control instantiated inside another one is inlined where
it is applied, as p4c's inliner does: its parameters stand for the arguments (through temporaries copied in and out
when arguments overlap or are values) and its objects are named `<control>.<instance>.<name>`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from compiler import ast
from compiler.inline_calls import aliased_args, header_resets, location_path
from compiler.lower_actions import PrimitiveLowerer, needs_jumps, resolve_jumps
from compiler.lower_calls import copy_in_out, insert_before_exits
from compiler.lower_context import (
    MAX_SIZE,
    FieldRef,
    HeaderRef,
    InstanceRef,
    Json,
    LowerAbort,
    LowerContext,
    RuntimeData,
    Storage,
    StructRef,
    SubControlRef,
    control_plane_name,
    expr_json,
    hexstr,
)
from compiler.lower_expr import ExprLowerer
from compiler.typecheck import describe, start_of
from compiler.types import (
    ActionRunT,
    ApplyResultT,
    BitsT,
    BlockT,
    BoolT,
    EnumT,
    ErrorT,
    StackT,
    StructLikeT,
    TableT,
    VarbitT,
    width_of,
)

DEFAULT_TABLE_SIZE = 1024
DATA_TYPES = (BitsT, BoolT, EnumT, ErrorT, StackT, StructLikeT, VarbitT)  # what a read of a location can have


def _p4c_constants(text: str) -> str:
    """An expression's text with its hex constants as p4c prints them (lowercase digits: `& 0xF1` -> `& 0xf1`), for
    the P4Info names p4c derives from key expressions."""
    return re.sub(r"\b0[xX][0-9a-fA-F_]+", lambda m: m.group(0).lower(), text)


@dataclass
class ActionRecord:
    """One JSON action (a P4 action localized into one control, or a synthesized one)."""

    name: str
    decl: ast.ActionDecl | None
    params: list[tuple[str, int]]
    primitives: list[Json]
    order: tuple[object, ...]
    json_id: int = -1
    hidden: bool = False
    annotations: list[ast.Annotation] = field(default_factory=list)


def _n_directional(a: ast.ActionDecl) -> int:
    """How many leading parameters of `a` have a direction (they come before the action-data ones)."""
    return sum(1 for p in a.params if p.direction is not None)


class NodeRef:
    """A node of the control-flow graph (table or conditional) whose name is fixed at the end, in source order."""

    def __init__(self, kind: str, pos: tuple[int, int], name: str | None = None, json: Json = None,
                 rec: ActionRecord | None = None, base: str = "") -> None:
        self.kind = kind  # "table", "act", "call" or "cond"
        self.pos = pos
        self.name = name
        self.json = json
        self.rec = rec
        self.base = base

    def __repr__(self) -> str:
        return f"NodeRef({self.kind}, {self.name})"


def synthesized_name(at: ast.Node) -> str:
    """p4c's name for an action synthesized from statements (SynthesizeActions' createName): the source file's base
    name without extension, leading non-letters and characters other than letters, digits and `_`, an `l` if that
    ends in a digit, then the statement's line: `forloop-bmv2.p4` line 99 → `forloopbmv2l99` (`act` without one)."""
    file, line = at.loc.file, at.loc.line
    if not file or line <= 0:
        return "act"
    base = file.rsplit("/", 1)[-1].lstrip()
    base = re.sub(r"^[^A-Za-z]*", "", base).split(".", 1)[0]
    name = re.sub(r"[^A-Za-z0-9_]", "", base)
    if not name:
        return "act"
    return f"{name}{'l' if name[-1].isdigit() else ''}{line}"


def _bound_data_args(info: object, a: ast.ActionDecl, use: object, n_dir: int) -> list[ast.Expr] | None:
    """The arguments of `a`'s directionless parameters when `use` is a direct call: they are bound like `in`
    parameters (p4c's RemoveActionParameters removes every parameter of a directly called action, so its copy has no
    action data and, if no table lists the action, P4Info shows it without parameters)."""
    if not isinstance(use, ast.MethodCall) or use not in info.actions:  # type: ignore[attr-defined]
        return None
    rest = use.args[n_dir:]
    return list(rest) if rest else None


def _live_nodes(info: object, node: ast.Node) -> Iterator[ast.Node]:
    """`ast.walk(node)` without the branches of `if`s whose condition is a constant that never takes them."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, ast.IfStmt) and isinstance(info.values.get(n.cond), bool):  # type: ignore[attr-defined]
            live = n.then if info.values[n.cond] else n.else_  # type: ignore[attr-defined]
            if live is not None:
                stack.append(live)
            continue
        stack.extend(reversed(list(n.children())))


def _ref_name(x: object) -> object:
    return x.name if isinstance(x, NodeRef) else x


def _storage_sig(s: object) -> object:
    """What a parameter binding names: the same fields give the same signature."""
    if isinstance(s, FieldRef):
        return ("field", s.header, s.field)
    if isinstance(s, HeaderRef):
        return ("header", s.name)
    if isinstance(s, StructRef):
        return ("struct", tuple(sorted((k, _storage_sig(v)) for k, v in s.members.items())))
    return ("object", id(s))


class ControlLowerer:
    """Lowers one control of the V1Switch package to a pipeline."""

    def __init__(self, lc: LowerContext, decl: ast.ControlDecl, pipeline: str, block_index: int,
                 parent: ControlLowerer | None = None, prefix: str | None = None,
                 bindings: dict[ast.Node, Storage] | None = None, inst_order: tuple[int, ...] = ()) -> None:
        self.lc = lc
        self.info = lc.info
        self.decl = decl
        self.pipeline = pipeline
        self.prefix = prefix if prefix is not None else control_plane_name(decl, None)
        self.block_index = block_index
        self.inst_order = inst_order  # where this (inlined) control's instance is declared, for p4c's orders
        # names visible in this control: its parameters (bound by the caller for a sub-control), locals, instances
        self.xl = ExprLowerer(lc, dict(bindings or {}))
        # where the parameters live: one BMv2 table cannot serve two applications that bind them differently
        self.binding_sig = tuple(sorted((id(p), _storage_sig(s)) for p, s in (bindings or {}).items()))
        self.pl = PrimitiveLowerer(lc, self.xl, pipeline)
        if parent is None:
            self.tables: list[tuple[tuple[int, int], Json]] = []
            self.conditionals: list[Json] = []
            self.actions: dict[tuple[ast.ActionDecl, object, str], ActionRecord] = {}
            self.copies: dict[ast.ActionDecl, int] = {}
            self.synth: list[ActionRecord] = []
            self.nodes: list[NodeRef] = []
            self.applied: set[tuple[str, ast.TableDecl]] = set()
            self.emitted: dict[tuple[str, ast.TableDecl], tuple[NodeRef, tuple]] = {}
        else:  # an inlined sub-control adds to its parent's graph
            self.tables, self.conditionals = parent.tables, parent.conditionals
            self.actions, self.copies, self.synth = parent.actions, parent.copies, parent.synth
            self.nodes, self.applied, self.emitted = parent.nodes, parent.applied, parent.emitted

    # ------------------------------------------------------------------------------------------------ entry

    def lower(self) -> NodeRef | None:
        return self.lower_body(None)

    def lower_body(self, nxt: NodeRef | None) -> NodeRef | None:
        """Declare the locals, then lower the apply block ending in `nxt`; returns the entry node."""
        for loc in self.decl.locals:
            try:
                self.local(loc)
            except LowerAbort:
                pass
        init_stmts: list[ast.Stmt] = [
            ast.AssignStmt(v.loc, ast.Name(v.loc, v.name), v.init)
            for v in self.decl.locals if isinstance(v, ast.VarDecl) and v.init is not None
        ]
        for s in init_stmts:  # the synthetic names resolve to the local variable
            assert isinstance(s, ast.AssignStmt) and isinstance(s.lhs, ast.Name)
            var = next(v for v in self.decl.locals if isinstance(v, ast.VarDecl) and v.name == s.lhs.name)
            self.info.refs[s.lhs] = var
            self.info.types[s.lhs] = self.info.types[var]
        for n in ast.walk(self.decl.body):  # the graph is built back to front: declare apply-block locals first
            if isinstance(n, ast.VarDecl):
                self.declare_local(n)
        self.failed = False
        self.number_action_uses(self.decl.body)
        if self.failed:
            raise LowerAbort()
        return self.block(init_stmts + list(self.decl.body.stmts), nxt)

    def number_action_uses(self, body: ast.Node) -> None:
        """Create the per-use action copies in source order (the first use keeps the original, as in p4c); reject a
        table applied twice (BMv2 tables have a single place in the control flow). Branches of an `if` whose
        condition is a compile-time constant are skipped (p4c's mid end removes them with what only they use)."""
        for n in _live_nodes(self.info, body):
            if not isinstance(n, ast.MethodCall):
                continue
            owner, _ = self.info.calls.get(n, (None, ""))
            if isinstance(owner, TableT):
                if (self.prefix, owner.decl) in self.applied:
                    continue  # applied again: one node if every application continues alike (apply_table)
                self.applied.add((self.prefix, owner.decl))
            try:
                if n in self.info.actions:
                    a = self.info.actions[n]
                    self.action(a, n, n.args[:_n_directional(a)])
                    continue
                owner, _ = self.info.calls.get(n, (None, ""))
                if isinstance(owner, TableT) and owner.decl.actions is not None:
                    for ref in owner.decl.actions.actions:
                        self.action(self.info.actions[ref], owner.decl, ref.args)
            except (LowerAbort, KeyError):
                pass

    def local(self, d: ast.Decl) -> None:
        if isinstance(d, ast.VarDecl):
            self.xl.params[d] = self.lc.local_storage(d.name, self.info.types[d], d)
        elif isinstance(d, ast.Instantiation):
            t = self.info.types.get(d)
            if isinstance(t, BlockT):
                assert isinstance(t.decl, ast.ControlDecl)
                self.xl.params[d] = SubControlRef(t.decl, control_plane_name(d, self.prefix))
            else:
                name = self.lc.instantiate(d, self.prefix)
                self.xl.params[d] = InstanceRef(name)
                self.lc.extern_order[name] = (self.block_index, self.inst_order, self.decl.locals.index(d))
        # actions are lowered when referenced; tables when applied

    # ------------------------------------------------------------------------------------------------ actions

    def action(self, a: ast.ActionDecl, use: object, dir_args: list[ast.Expr] | None = None) -> ActionRecord:
        """The JSON action for one use of `a` (a table, or a direct call): p4c's front end gives every table and
        every direct call its own copy of an action used in several places (same control-plane name, new id).
        `dir_args` are the arguments of its directional parameters at that use (copied in and out, see lower_calls)."""
        key = (a, use, self.prefix)
        rec = self.actions.get(key)
        if rec is not None:
            return rec
        owner = self.info.owner.get(a)
        name = control_plane_name(a, self.prefix if owner is not None else None)
        params: list[tuple[str, int]] = []
        bind: dict[ast.Node, Storage] = {}
        directional = [p for p in a.params if p.direction is not None]
        args = list(dir_args or [])
        if len(args) != len(directional):
            raise self.lc.error(a, f"action '{a.name}': no arguments for its directional parameters at this use")
        data_args = _bound_data_args(self.info, a, use, len(directional))
        if data_args is not None:  # a direct call: all parameters bound, as p4c does
            directional = list(a.params)
            args += data_args
        cio = copy_in_out(self.lc, directional, args, a.body, self.xl)
        bind.update(cio.bind)
        for p in a.params:
            if p in bind:
                continue
            t = self.info.types[p]
            w = width_of(t)
            if w is None:
                raise self.lc.unsupported(p, f"parameter '{p.name}' of action '{a.name}'")
            bind[p] = RuntimeData(len(params), t)
            params.append((p.name, w))
        xl = ExprLowerer(self.lc, {**self.xl.params, **bind})
        pl = PrimitiveLowerer(self.lc, xl, self.pipeline)
        copy_out = pl.stmts(cio.copy_out)
        body = pl.with_jumps(a.body.stmts) if needs_jumps(self.info, a.body.stmts) else pl.stmts(a.body.stmts)
        prims = resolve_jumps(pl.stmts(cio.copy_in) + insert_before_exits(body, copy_out) + copy_out)
        copy = self.copies.get(a, 0)
        self.copies[a] = copy + 1
        order = (0 if owner is None else 1, self.inst_order, a.loc.line, a.loc.col, copy)
        rec = ActionRecord(name, a, params, prims, order, annotations=list(a.annotations))
        self.actions[key] = rec
        return rec

    def synthesize(self, stmts: list[ast.Stmt]) -> ActionRecord:
        prims = self.pl.stmts(stmts)
        first = stmts[0]
        rec = ActionRecord("act", None, [], prims, (2, self.inst_order, first.loc.line, first.loc.col, 0), hidden=True)
        self.synth.append(rec)
        return rec

    # ------------------------------------------------------------------------------------------------ graph

    def is_simple(self, s: ast.Stmt) -> bool:
        if isinstance(s, (ast.AssignStmt, ast.ExitStmt, ast.EmptyStmt, ast.VarDecl, ast.ConstDecl)):
            return True
        if isinstance(s, ast.MethodCallStmt):
            c = s.call
            if c in self.info.actions:
                return False
            owner, _ = self.info.calls.get(c, (None, ""))
            return not isinstance(owner, (TableT, BlockT))
        return False

    def block(self, stmts: list[ast.Stmt], nxt: str | None) -> str | None:
        """Lower `stmts` to nodes ending in `nxt`; return the entry node name (or `nxt` if nothing to do)."""
        cur = nxt
        run: list[ast.Stmt] = []
        for s in reversed(stmts):
            if self.is_simple(s) and self.applies_in(s) and not isinstance(s, ast.ConstDecl) \
                    and (not isinstance(s, ast.VarDecl) or s.init is not None):
                if run:
                    cur = self.act_table(run, cur)
                    run = []
                if isinstance(s, ast.VarDecl):
                    self.declare_local(s)
                try:
                    cur = self.lift_applies(s, cur)
                except LowerAbort:
                    pass
                continue
            if self.is_simple(s):
                if isinstance(s, ast.VarDecl):
                    self.declare_local(s)
                    if s.init is None:
                        continue
                if isinstance(s, (ast.EmptyStmt, ast.ConstDecl)):
                    continue
                run.insert(0, s)
                continue
            if run:
                cur = self.act_table(run, cur)
                run = []
            try:
                cur = self.stmt(s, cur)
            except LowerAbort:
                pass
        if run:
            cur = self.act_table(run, cur)
        return cur

    def declare_local(self, s: ast.VarDecl) -> None:
        if s not in self.xl.params:
            self.xl.params[s] = self.lc.local_storage(s.name, self.info.types[s], s)

    def act_table(self, run: list[ast.Stmt], nxt: str | None) -> str:
        # local declarations with initializers are assignments here
        stmts: list[ast.Stmt] = []
        for s in run:
            if isinstance(s, ast.VarDecl):
                assert s.init is not None
                lhs = ast.Name(s.loc, s.name)
                self.info.refs[lhs] = s
                self.info.types[lhs] = self.info.types[s]
                stmts.append(ast.AssignStmt(s.loc, lhs, s.init))
            else:
                stmts.append(s)
        rec = self.synthesize(stmts)
        return self.add_keyless_table("act", rec, [], stmts[0], nxt)

    def add_keyless_table(self, kind: str, rec: ActionRecord, data: list[str], at: ast.Node,
                          nxt: NodeRef | None) -> NodeRef:
        node = NodeRef(kind, (at.loc.line, at.loc.col), rec=rec,
                       base=rec.decl.name if rec.decl is not None else synthesized_name(at))
        t = {
            "name": node,
            "id": -1,
            "source_info": self.lc.source_info(at),
            "key": [],
            "match_type": "exact",
            "type": "simple",
            "max_size": 1024,
            "with_counters": False,
            "support_timeout": False,
            "direct_meters": None,
            "action_ids": [rec],
            "actions": [rec.name],
            "base_default_next": nxt,
            "next_tables": {rec.name: nxt},
            "default_entry": {"action_id": rec, "action_const": True, "action_data": data,
                              "action_entry_const": True},
        }
        if t["source_info"] is None:
            del t["source_info"]
        node.json = t
        self.nodes.append(node)
        self.tables.append(((at.loc.line, at.loc.col), t))
        return node

    def stmt(self, s: ast.Stmt, nxt: str | None) -> str | None:
        if isinstance(s, ast.BlockStmt):
            return self.block(s.stmts, nxt)
        if isinstance(s, ast.MethodCallStmt):
            c = s.call
            if c in self.info.actions:
                return self.direct_call(c, s, nxt)
            owner, _ = self.info.calls.get(c, (None, ""))
            if isinstance(owner, TableT):
                return self.apply_table(owner.decl, s, nxt, {}, nxt, False)
            if isinstance(owner, BlockT):
                return self.inline(c, nxt)
            raise self.lc.unsupported(s, "this statement in an apply block")
        if isinstance(s, ast.IfStmt):
            return self.if_stmt(s, nxt)
        if isinstance(s, ast.SwitchStmt):
            return self.switch(s, nxt)
        if isinstance(s, ast.ForStmt):  # from a function inlined here
            raise self.lc.unsupported(s, "'for' loop in an apply block (p4c-bm2-ss compiles loops only inside "
                                         "actions)")
        raise self.lc.unsupported(s, f"{type(s).__name__} in an apply block")

    def inline(self, c: ast.MethodCall, nxt: NodeRef | None) -> NodeRef | None:
        """`inst.apply(args)` of a sub-control, inlined as p4c does: its parameters alias the arguments, its tables,
        actions and instances are named `<control>.<instance>.<name>`."""
        assert isinstance(c.callee, ast.Member)
        inst = self.info.refs.get(c.callee.expr) if isinstance(c.callee.expr, ast.Name) else None
        sub = self.xl.params.get(inst) if inst is not None else None
        if not isinstance(sub, SubControlRef):
            raise self.lc.unsupported(c, f"applying '{describe(c.callee.expr)}'")
        bindings: dict[ast.Node, Storage] = {}
        aliased = aliased_args(self.info, sub.decl.params, c.args)
        temps: list[tuple[ast.Param, ast.Expr]] = []
        resets: list[ast.Stmt] = []
        for p, a in zip(sub.decl.params, c.args):
            if p in aliased or (p.direction in ("in", "inout") and location_path(self.info, a) is None):
                temps.append((p, a))  # copied in and out through a temporary
                continue
            try:
                bindings[p] = self.xl.locate(a)
            except LowerAbort:
                self.lc.diags.items.pop()
                temps.append((p, a))  # a slice, say: copied in (and out) through a temporary, as p4c copies it
                continue
            if p.direction == "out":
                resets.extend(header_resets(self.info, a, self.info.types[p]))
        for inst in self.info.ctor_instances.get(sub.decl, {}).values():
            shared = self.xl.params.get(inst)  # a control instance given as a constructor argument
            if shared is None:
                raise self.lc.unsupported(c, f"the control instance '{inst.name}' given to '{describe(c.callee.expr)}'"
                                             " here")
            bindings[inst] = shared
        cio = copy_in_out(self.lc, [p for p, _ in temps], [a for _, a in temps])
        bindings.update(cio.bind)
        self.xl.params.update(cio.bind)  # the copy statements run in this control
        pos = self.decl.locals.index(inst) if inst in self.decl.locals else 0
        child = ControlLowerer(self.lc, sub.decl, self.pipeline, self.block_index, parent=self, prefix=sub.prefix,
                               bindings=bindings, inst_order=self.inst_order + (pos,))
        after = self.block(list(cio.copy_out), nxt)
        entry = child.lower_body(after)
        return self.block(resets + list(cio.copy_in), entry)

    def direct_call(self, c: ast.MethodCall, s: ast.Stmt, nxt: str | None) -> str:
        a = self.info.actions[c]
        rec = self.action(a, c, c.args[:_n_directional(a)])
        data: list[str] = []
        for arg in c.args[_n_directional(a):] if rec.params else []:
            v = self.info.values.get(arg)
            if not isinstance(v, int):
                raise self.lc.unsupported(start_of(arg), f"non-constant argument '{describe(arg)}' in a direct action "
                                                         "call")
            data.append(hexstr(int(v)))
        return self.add_keyless_table("call", rec, data, s, nxt)

    def table_apply_of(self, e: ast.Expr) -> tuple[ast.TableDecl, bool] | None:
        """If `e` is `t.apply().hit`, `.miss` or `!` of one: (table, on_hit)."""
        neg = False
        while isinstance(e, ast.Unary) and e.op == "!":
            neg = not neg
            e = e.operand
        if isinstance(e, ast.Member) and e.member in ("hit", "miss") \
                and isinstance(self.info.types.get(e.expr), ApplyResultT):
            t = self.info.types[e.expr]
            assert isinstance(t, ApplyResultT)
            hit = (e.member == "hit") != neg
            return t.table, hit
        return None

    def if_stmt(self, s: ast.IfStmt, nxt: str | None) -> str | None:
        cv = self.info.values.get(s.cond)
        if isinstance(cv, bool):  # a constant condition is folded away, as p4c's mid end does
            branch = s.then if cv else s.else_
            return self.block([branch], nxt) if branch is not None else nxt
        then_entry = self.block([s.then], nxt)
        else_entry = self.block([s.else_], nxt) if s.else_ is not None else nxt
        if self.applies_in(s.cond):
            return self.cond_entry(s.cond, then_entry, else_entry, s, nxt)
        return self.conditional(s.cond, (s.loc.line, s.loc.col), then_entry, else_entry)

    def conditional(self, e: ast.Expr, pos: tuple[int, int], t_next: str | None, f_next: str | None) -> NodeRef:
        """A conditional node testing `e` (no table apply inside)."""
        cond_json = self.xl.cond(e)
        name = NodeRef("cond", pos)
        self.nodes.append(name)
        c: Json = {"name": name, "id": -1}
        si = self.lc.source_info(e, describe(e))
        if si is not None:
            c["source_info"] = si
        c["expression"] = cond_json
        c["true_next"] = t_next
        c["false_next"] = f_next
        self.conditionals.append(c)
        return name

    def applies_in(self, e: ast.Node) -> bool:
        """Whether `e` applies a table somewhere inside."""
        return any(isinstance(self.info.types.get(n), ApplyResultT) for n in ast.walk(e))

    def cond_entry(self, e: ast.Expr, t_next: str | None, f_next: str | None, at: ast.Stmt,
                   nxt: str | None) -> str | None:
        """Nodes evaluating the boolean `e`, which applies tables, left to right with short-circuits, going to
        `t_next` or `f_next`: `t.apply().hit` is the table's `__HIT__`/`__MISS__` edges, `&&`, `||`, `!` and `?:`
        become edges between the operands' nodes (p4c reaches the same order with temporaries: SideEffectOrdering,
        then TableHit)."""
        cv = self.info.values.get(e)
        if isinstance(cv, bool):
            return t_next if cv else f_next
        if not self.applies_in(e):
            return self.conditional(e, (e.loc.line, e.loc.col), t_next, f_next)
        ta = self.table_apply_of(e)
        if ta is not None:
            table, on_hit = ta
            hit_next, miss_next = (t_next, f_next) if on_hit else (f_next, t_next)
            return self.apply_table(table, at, nxt, {"__HIT__": hit_next, "__MISS__": miss_next}, nxt, False)
        if isinstance(e, ast.Unary) and e.op == "!":
            return self.cond_entry(e.operand, f_next, t_next, at, nxt)
        if isinstance(e, ast.Binary) and e.op == "&&":
            return self.cond_entry(e.left, self.cond_entry(e.right, t_next, f_next, at, nxt), f_next, at, nxt)
        if isinstance(e, ast.Binary) and e.op == "||":
            return self.cond_entry(e.left, t_next, self.cond_entry(e.right, t_next, f_next, at, nxt), at, nxt)
        if isinstance(e, ast.Ternary):
            return self.cond_entry(e.cond, self.cond_entry(e.then, t_next, f_next, at, nxt),
                                   self.cond_entry(e.else_, t_next, f_next, at, nxt), at, nxt)
        raise self.lc.unsupported(e, f"table apply inside '{describe(e)}'")

    def lift_applies(self, s: ast.Stmt, nxt: str | None) -> str | None:
        """`s` (an assignment, a local with an initializer or a call) whose expressions apply tables: each largest
        boolean part that applies one is computed first into a temporary `tmp` (true/false assignments on the
        part's edges), then `s` runs with the temporaries in its place."""
        exprs: list[ast.Expr]
        if isinstance(s, ast.AssignStmt):
            if self.applies_in(s.lhs):
                raise self.lc.unsupported(s.lhs, "table apply in the target of an assignment")
            exprs = [s.rhs]
        elif isinstance(s, ast.VarDecl):
            assert s.init is not None
            exprs = [s.init]
        else:
            assert isinstance(s, ast.MethodCallStmt)
            exprs = [s.call]
        parts: list[ast.Expr] = []
        reads: list[tuple[int, ast.Expr]] = []  # (number of parts before it, a non-constant read)

        def visit(e: ast.Node) -> None:
            if isinstance(e, ast.Expr) and self.applies_in(e) and (
                    isinstance(self.info.types.get(e), BoolT)
                    or isinstance(e, ast.Ternary) and isinstance(self.info.types.get(e), DATA_TYPES)):
                parts.append(e)
                return
            if isinstance(e, ast.Expr) and e in self.info.values:
                return
            if isinstance(e, (ast.Name, ast.Member, ast.Index)) and not self.applies_in(e) \
                    and isinstance(self.info.types.get(e), DATA_TYPES):
                reads.append((len(parts), e))
                return
            for c in e.children():
                visit(c)

        for e in exprs:
            visit(e)
        for n, r in reads:
            if n < len(parts):  # read before a table that could change it: p4c would copy it first
                raise self.lc.unsupported(r, f"'{describe(r)}' read before a table apply in the same expression")
        if not parts:
            raise self.lc.unsupported(s, "table apply inside this expression")
        for part in parts:
            decl = ast.VarDecl(part.loc, "tmp", ast.BoolType(part.loc))  # (the AST type is not looked at)
            self.info.types[decl] = self.info.types[part]
            self.xl.params[decl] = self.lc.local_storage("tmp", self.info.types[part], part)
            self.xl.subst[part] = self.tmp_ref(decl, part)
        cur = self.act_table([s], nxt)
        for part in reversed(parts):
            decl = self.info.refs[self.xl.subst[part]]
            if isinstance(self.info.types[part], BoolT):
                set_true, set_false = (self.assign_entry(self.tmp_ref(decl, part), self.bool_lit(v, part), cur)
                                       for v in (True, False))
                cur = self.cond_entry(part, set_true, set_false, s, cur)
            else:  # c ? a : b applying a table in a branch: if (c) tmp = a; else tmp = b;
                assert isinstance(part, ast.Ternary)
                cur = self.cond_entry(part.cond, self.assign_entry(self.tmp_ref(decl, part), part.then, cur),
                                      self.assign_entry(self.tmp_ref(decl, part), part.else_, cur), s, cur)
        return cur

    def assign_entry(self, lhs: ast.Expr, rhs: ast.Expr, nxt: str | None) -> str | None:
        """Nodes for `lhs = rhs;`."""
        st = ast.AssignStmt(rhs.loc, lhs, rhs)
        return self.lift_applies(st, nxt) if self.applies_in(rhs) else self.act_table([st], nxt)

    def tmp_ref(self, decl: ast.VarDecl, at: ast.Node) -> ast.Name:
        """A name expression for the temporary `decl`."""
        n = ast.Name(at.loc, decl.name)
        self.info.refs[n] = decl
        self.info.types[n] = self.info.types[decl]
        return n

    def bool_lit(self, v: bool, at: ast.Node) -> ast.BoolLit:
        lit = ast.BoolLit(at.loc, v)
        self.info.types[lit] = BoolT()
        self.info.values[lit] = v
        return lit

    def switch(self, s: ast.SwitchStmt, nxt: str | None) -> str | None:
        e = s.expr
        if not isinstance(self.info.types.get(e), ActionRunT):
            return self.value_switch(s, nxt)
        assert isinstance(e, ast.Member)
        rt = self.info.types[e.expr]
        assert isinstance(rt, ApplyResultT)
        labels: dict[str, str | None] = {}
        default_entry: str | None = nxt
        pending: list[ast.Expr] = []
        for case in s.cases:
            pending.append(case.label)
            if case.body is None:
                continue
            entry = self.block(case.body.stmts, nxt)
            for lab in pending:
                if isinstance(lab, ast.DefaultExpr):
                    default_entry = entry
                elif isinstance(lab, ast.Name):
                    labels[lab.name] = entry
            pending = []
        return self.apply_table(rt.table, s, nxt, labels, default_entry, True)

    def value_switch(self, s: ast.SwitchStmt, nxt: NodeRef | None) -> NodeRef | None:
        """A switch on a value becomes a chain of conditionals `expr == label || ...`, as p4c lowers it."""
        groups: list[tuple[list[ast.Expr], ast.BlockStmt]] = []
        pending: list[ast.Expr] = []
        default_body: ast.BlockStmt | None = None
        for case in s.cases:
            pending.append(case.label)
            if case.body is None:
                continue
            if any(isinstance(lab, ast.DefaultExpr) for lab in pending):
                default_body = case.body  # labels sharing the default body are subsumed by it
            else:
                groups.append((pending, case.body))
            pending = []
        entry = self.block(default_body.stmts, nxt) if default_body is not None else nxt
        subject = self.xl.local(self.xl.rvalue(s.expr))
        for labels, body in reversed(groups):
            body_entry = self.block(body.stmts, nxt)
            cond: Json = None
            for lab in labels:
                one = expr_json("==", subject, self.xl.local(self.xl.rvalue(lab)))
                cond = one if cond is None else expr_json("or", cond, one)
            node = NodeRef("cond", (labels[0].loc.line, labels[0].loc.col))
            self.nodes.append(node)
            c: Json = {"name": node, "id": -1}
            si = self.lc.source_info(s.expr, describe(s.expr))
            if si is not None:
                c["source_info"] = si
            c.update({"expression": cond, "true_next": body_entry, "false_next": entry})
            self.conditionals.append(c)
            entry = node
        return entry

    # ------------------------------------------------------------------------------------------------ tables

    def property_instance(self, t: ast.TableDecl, prop: str) -> str | None:
        """The control-plane name of the extern instance a table property (`counters`, `meters`,
        `implementation`) names; None without the property."""
        p = t.get_property(prop)
        if not isinstance(p, ast.ValueProperty):
            return None
        d = self.info.refs.get(p.value) if isinstance(p.value, ast.Name) else None
        ref = self.xl.params.get(d) if d is not None else None
        name = ref.name if isinstance(ref, InstanceRef) else self.lc.instance_names.get(d) if d is not None else None
        if name is None:
            raise self.lc.unsupported(p, f"this {prop} property")
        return name

    def apply_table(self, t: ast.TableDecl, at: ast.Node, nxt: str | None, labels: dict[str, str | None],
                    default_entry: str | None, is_switch: bool) -> str:
        name = control_plane_name(t, self.prefix)
        # a BMv2 table is one node with one set of successors: a table applied in several places is that node
        # when every application continues to the same nodes (p4c's check, with its messages); the graph is built
        # back to front, so a later application was emitted first
        sig = (id(nxt), tuple(sorted((k, id(v)) for k, v in labels.items())), id(default_entry), is_switch,
               self.binding_sig)
        seen = self.emitted.get((self.prefix, t))
        if seen is not None:
            if seen[1] == sig:
                return seen[0]
            if seen[0] is nxt or any(v is seen[0] for v in labels.values()):
                raise self.lc.error(t, f"Program can not be implemented on this target since it contains a path "
                                       f"from table {name} back to itself")
            raise self.lc.error(t, f"Program is not supported by this target, because table {name} has multiple "
                                   "successors")
        refs = list(t.actions.actions) if t.actions is not None else []
        recs: list[ActionRecord] = []
        scopes: list[str] = []
        for ref in refs:
            a = self.info.actions[ref]
            recs.append(self.action(a, t, ref.args))
            scope = "TABLE_AND_DEFAULT"
            if ref.annotation("tableonly") is not None:
                scope = "TABLE_ONLY"
            elif ref.annotation("defaultonly") is not None:
                scope = "DEFAULT_ONLY"
            scopes.append(scope)
        # p4c's front end: no default_action → `@defaultonly NoAction` added and made the default
        da = t.default_action
        default_rec: ActionRecord
        default_data: list[str] = []
        default_const = False
        if da is None:
            noaction = self.lc.info.global_scope.lookup("NoAction")
            if not isinstance(noaction, ast.ActionDecl):
                raise self.lc.error(t, "table without default_action needs NoAction from core.p4")
            default_rec = self.action(noaction, t)
            if default_rec not in recs:
                recs.append(default_rec)
                scopes.append("DEFAULT_ONLY")
        else:
            da_decl = self.info.actions[da.action]
            default_rec = self.action(da_decl, t, (da.action.args or [])[:_n_directional(da_decl)])
            default_const = da.is_const
            for arg in (da.action.args or [])[_n_directional(da_decl):]:
                v = self.info.values.get(arg)
                default_data.append(hexstr(int(v) if v is not None else 0))
        key_json, cp_keys = self.keys(t)
        match_type = "exact"
        kinds = [k["match_type"] for k in key_json]
        if "range" in kinds:
            match_type = "range"
        elif "ternary" in kinds or "optional" in kinds:
            match_type = "ternary"
        elif "lpm" in kinds:
            match_type = "lpm"
        if kinds.count("lpm") > 1:
            raise self.lc.error(t, f"table '{t.name}' has more than one lpm key")
        size = DEFAULT_TABLE_SIZE
        sp = t.get_property("size")
        if isinstance(sp, ast.ValueProperty):
            size = int(self.info.values.get(sp.value, DEFAULT_TABLE_SIZE)) or DEFAULT_TABLE_SIZE  # p4c: 0 = default
            if not 0 < size < MAX_SIZE:
                raise self.lc.error(sp.value, f"table size must be in 0..{MAX_SIZE - 1}")
        json_size = size
        ents = t.get_property("entries")
        if not isinstance(sp, ast.ValueProperty) and isinstance(ents, ast.EntriesProperty) and ents.entries:
            json_size = len(ents.entries)  # p4c-bm2-ss: a table with entries and no size holds them (P4Info: 1024)
        counters = self.property_instance(t, "counters")
        if counters is not None:
            self.lc.bind_direct_counter(counters, name, t.get_property("counters"))
        implementation = self.property_instance(t, "implementation")
        if implementation is not None:
            selector_input = [{"type": "field", "value": k["target"]} for k in key_json
                              if k["match_type"] == "selector"]
            self.lc.bind_action_profile(implementation, name, selector_input, t.get_property("implementation"))
            self.lc.diags.warning(t.loc, f"Target does not support default_action for {name} (due to action "
                                         "profiles)", "unsupported")
        # selector keys feed the selector's hash; in a table without one p4c drops them (issue1560-bmv2.p4)
        key_json = [k for k in key_json if k["match_type"] != "selector"]
        cp_keys = [k for k in cp_keys if k[2] != "selector"]
        meters = self.property_instance(t, "meters")
        if meters is not None:
            self.lc.bind_direct_meter(meters, name, size, t.get_property("meters"))
        timeout = t.get_property("support_timeout")
        support_timeout = bool(isinstance(timeout, ast.ValueProperty) and self.info.values.get(timeout.value))
        next_tables: dict[str, str | None] = {}
        base_default_next = nxt
        if "__HIT__" in labels:
            next_tables = {"__HIT__": labels["__HIT__"], "__MISS__": labels["__MISS__"]}
            base_default_next = None  # p4c: hit/miss tables have no base_default_next
        else:
            for rec in recs:
                short = rec.decl.name if rec.decl is not None else rec.name
                next_tables[rec.name] = labels.get(short, default_entry) if is_switch else nxt
        ref = NodeRef("table", (at.loc.line, at.loc.col), name)
        self.nodes.append(ref)
        j: Json = {"name": name, "id": -1}
        si = self.lc.source_info(t, t.name)
        if si is not None:
            j["source_info"] = si
        j.update({
            "key": key_json,
            "match_type": match_type,
            "type": "simple" if implementation is None else ("indirect_ws" if any(
                "selector" in ap for ap in self.lc.action_profiles if ap["name"] == implementation) else "indirect"),
            **({"action_profile": implementation} if implementation is not None else {}),
            "max_size": json_size,
            "with_counters": counters is not None,
            "support_timeout": support_timeout,
            "direct_meters": meters,
            "action_ids": list(recs),
            "actions": [r.name for r in recs],
            "base_default_next": base_default_next,
            "next_tables": next_tables,
            "default_entry": {"action_id": default_rec, "action_const": default_const,
                              "action_data": default_data, "action_entry_const": default_const},
        })
        ents = t.entries
        if ents is not None:
            j["entries"] = self.const_entries(t, ents, key_json)
        self.tables.append(((at.loc.line, at.loc.col), j))
        self.lc.cp_table(self, t, name, cp_keys, recs, scopes, size, default_rec if default_const else None,
                         ents is not None, counters, meters, implementation)
        self.emitted[(self.prefix, t)] = (ref, sig)
        return ref

    def keys(self, t: ast.TableDecl) -> tuple[list[Json], list[tuple[str, int, str, ast.KeyElement]]]:
        out: list[Json] = []
        cp: list[tuple[str, int, str, ast.KeyElement]] = []
        if t.key is None:
            return out, cp
        for ke in t.key.elements:
            e = ke.expr
            mask: int | None = None
            kt = self.info.types[e]
            width = width_of(kt) or 0
            target: Json
            base = e
            if isinstance(e, ast.Binary) and e.op == "&" and self.info.values.get(e.right) is not None:
                mask = int(self.info.values[e.right])
                base = e.left
            elif isinstance(e, ast.Slice):
                hi, lo = int(self.info.values[e.hi]), int(self.info.values[e.lo])
                base = e.expr
                mask = ((1 << (hi - lo + 1)) - 1) << lo
            if isinstance(base, ast.MethodCall) and self.info.calls.get(base, (None, ""))[1] == "isValid":
                assert isinstance(base.callee, ast.Member)
                h = self.xl.locate(base.callee.expr)
                target = [getattr(h, "name", "?"), "$valid$"]
                kname = ast.to_p4(base.callee.expr) + ".$valid$"  # p4c's name for an isValid() key
                if base is not e:
                    kname = ast.to_p4(e).replace(ast.to_p4(base), kname, 1)
            else:
                s = None
                if isinstance(base, (ast.Name, ast.Member, ast.Index)):
                    try:
                        s = self.xl.locate(base)
                    except LowerAbort:
                        self.lc.diags.items.pop()
                if not hasattr(s, "field"):
                    raise self.lc.unsupported(start_of(e), f"table key '{describe(e)}' (a key must be a field, "
                                                           "a field slice, 'field & mask' or isValid())")
                target = [s.header, s.field]  # type: ignore[attr-defined]
                kname = _p4c_constants(ast.to_p4(e))
            bt = self.info.types[base] if not isinstance(base, ast.MethodCall) else kt
            bw = width_of(bt) or width
            a = ke.annotation("name")
            if a is not None and a.string_arg():
                kname = a.string_arg() or kname
            # p4c-bm2-ss 1.2.4.8 writes an optional key as ternary into the BMv2 JSON (P4Info keeps OPTIONAL)
            kind = "ternary" if ke.match_kind == "optional" else ke.match_kind
            out.append({"match_type": kind, "name": kname, "target": target,
                        "mask": hexstr(mask, bw) if mask is not None else None})
            cp.append((kname, width if mask is None or isinstance(e, ast.Binary) else width, ke.match_kind, ke))
        return out, cp

    def const_entries(self, t: ast.TableDecl, ents: ast.EntriesProperty, key_json: list[Json]) -> list[Json]:
        out: list[Json] = []
        assert t.key is not None or not ents.entries
        elems = t.key.elements if t.key is not None else []
        # As p4c's BMv2 back end: an entry's JSON priority is its @priority(n) annotation (a p4c extension), else its
        # 1-based position; BMv2 picks the matching entry with the smallest priority, the earlier one on a tie.
        for i, ent in enumerate(ents.entries):
            match_key: list[Json] = []
            keys = ent.keys
            if len(keys) == 1 and isinstance(keys[0], (ast.DefaultExpr, ast.DontCare)) and len(elems) != 1:
                keys = [keys[0]] * len(elems)
            for k, ke in zip(keys, elems):
                w = width_of(self.info.types[ke.expr]) or 0
                # a sliced key's entry values are slice values, as p4c emits them (the switch shifts by the mask)
                match_key.append(self.entry_key(k, ke.match_kind, w))
            a = self.info.actions[ent.action]
            rec = self.action(a, t, (ent.action.args or [])[:_n_directional(a)])
            data = [hexstr(int(self.info.values.get(x, 0)))  # p4c: unpadded, as a default entry's
                    for x in (ent.action.args or [])[_n_directional(a):]]
            e: Json = {}
            si = self.lc.source_info(ent, None)
            if si is not None:
                e["source_info"] = si
            e["match_key"] = match_key
            e["action_entry"] = {"action_id": rec, "action_data": data}
            e["priority"] = entry_priority(ent, i + 1)
            out.append(e)
        return out

    def entry_key(self, k: ast.Expr, kind: str, w: int) -> Json:
        full = (1 << w) - 1
        if isinstance(k, (ast.DefaultExpr, ast.DontCare)):
            if kind == "exact":
                raise self.lc.error(k, "exact key cannot be a wildcard")
            if kind == "lpm":
                return {"match_type": "lpm", "key": hexstr(0, w), "prefix_length": 0}
            if kind == "range":
                return {"match_type": "range", "start": hexstr(0, w), "end": hexstr(full, w)}
            return {"match_type": "ternary", "key": hexstr(0, w), "mask": hexstr(0, w)}
        if isinstance(k, ast.MaskExpr):
            v = int(self.info.values[k.value]) & full
            m = int(self.info.values[k.mask]) & full
            if kind == "lpm":
                plen = bin(m).count("1")
                if m != (full >> (w - plen) << (w - plen)) & full:
                    raise self.lc.error(k, "lpm entry mask is not a prefix")
                return {"match_type": "lpm", "key": hexstr(v & m, w), "prefix_length": plen}
            if kind in ("ternary", "optional"):
                return {"match_type": "ternary", "key": hexstr(v & m, w), "mask": hexstr(m, w)}
            raise self.lc.error(k, f"'&&&' in a {kind} key")
        if isinstance(k, ast.RangeExpr):
            if kind != "range":
                raise self.lc.error(k, f"'..' in a {kind} key")
            return {"match_type": "range", "start": hexstr(int(self.info.values[k.lo]) & full, w),
                    "end": hexstr(int(self.info.values[k.hi]) & full, w)}
        v = self.info.values.get(k)
        if isinstance(v, bool):
            v = int(v)
        if not isinstance(v, int):
            raise self.lc.error(k, "entry key must be a compile-time constant")
        v &= full
        if kind == "exact":
            return {"match_type": "exact", "key": hexstr(v, w)}
        if kind == "lpm":
            return {"match_type": "lpm", "key": hexstr(v, w), "prefix_length": w}
        if kind in ("ternary", "optional"):
            return {"match_type": "ternary", "key": hexstr(v, w), "mask": hexstr(full, w)}
        return {"match_type": "range", "start": hexstr(v, w), "end": hexstr(v, w)}


    # ------------------------------------------------------------------------------------------------ naming

    def finalize(self, init: NodeRef | None) -> str | None:
        """Name the nodes in source order (p4c numbers CFG nodes as it builds them: entry, exit, then each node;
        synthesized actions are named after their first statement's file and line, their tables `tbl_` + that),
        then replace node references
        by names. Returns the name of the entry node."""
        self.lc.cfg_counter += 2  # the CFG's entry and exit nodes
        for node in sorted(self.nodes, key=lambda n: n.pos):
            number = self.lc.cfg_counter
            self.lc.cfg_counter += 1
            if node.kind == "cond":
                node.name = f"node_{number}"
            elif node.kind in ("act", "call"):
                rec = node.rec
                assert rec is not None
                if node.kind == "act":
                    rec.name = node.base = self.lc.names.new(node.base)
                node.name = self.lc.names.new(f"tbl_{node.base}")
                node.json["actions"] = [rec.name]
        for node in self.nodes:
            j = node.json
            if node.kind in ("act", "call") and j is not None:
                rec = node.rec
                assert rec is not None
                j["next_tables"] = {rec.name: j["next_tables"][next(iter(j["next_tables"]))]}
        for _, t in self.tables:
            t["name"] = _ref_name(t["name"])
            t["base_default_next"] = _ref_name(t["base_default_next"])
            t["next_tables"] = {str(_ref_name(k)): _ref_name(v) for k, v in t["next_tables"].items()}
        for c in self.conditionals:
            c["name"] = _ref_name(c["name"])
            c["true_next"] = _ref_name(c["true_next"])
            c["false_next"] = _ref_name(c["false_next"])
        return _ref_name(init)  # type: ignore[return-value]


def entry_priority(ent: ast.Entry, position: int) -> int:
    """The BMv2 JSON priority p4c gives a const entry: `@priority(n)` (checked by the type checker), else position."""
    a = ent.annotation("priority")
    value = a.int_arg() if a is not None else None
    return position if value is None else value
