"""Table keys that are expressions, computed into a variable before the table is applied (p4c's SimplifyKey).

BMv2 matches on fields only: a field, a slice of one, `field & mask` or `h.isValid()`. Any other key expression
(`h.a + h.a`, `hdr.ipv6.dstAddr[127:120] == 0xff`, a constant) becomes, as in p4c's mid end, a control-local
variable `key_N` of the key's type that the table matches on, assigned `key_N = <expression>;` right before every
statement that applies the table. p4c's front end requires such a key to be named (`@name("...")`: the name the
control plane uses); without one the program is refused with p4c's message.

Runs between call inlining and lowering and rewrites the syntax tree in place, recording the types and bindings of
the nodes it creates in `TypeInfo`.
"""

from __future__ import annotations

from compiler import ast
from compiler.diagnostics import Diagnostics
from compiler.typecheck import TypeInfo, start_of
from compiler.types import BlockT, StructLikeT

__all__ = ["KeySimplifier", "is_simple_key"]


def is_simple_key(info: TypeInfo, e: ast.Expr) -> bool:
    """A key BMv2 matches directly: a field (or local), a slice of it, `field & constant`, `h.isValid()`."""
    if isinstance(e, ast.Binary) and e.op == "&" and info.values.get(e.right) is not None:
        e = e.left
    elif isinstance(e, ast.Slice):
        e = e.expr
    if isinstance(e, ast.MethodCall):
        return info.calls.get(e, (None, ""))[1] == "isValid" and not _is_union_valid(info, e)
    return isinstance(e, (ast.Name, ast.Member, ast.Index)) and e not in info.values


def _is_union_valid(info: TypeInfo, e: ast.Expr) -> bool:
    """`u.isValid()` of a header union: not a BMv2 match field (p4c's IsValid policy), computed into a variable."""
    if not (isinstance(e, ast.MethodCall) and isinstance(e.callee, ast.Member)
            and info.calls.get(e, (None, ""))[1] == "isValid"):
        return False
    t = info.types.get(e.callee.expr)
    return isinstance(t, StructLikeT) and t.kind == "header_union"


class KeySimplifier:
    """Moves complex table keys of every control into `key_N` variables (see the module)."""

    def __init__(self, info: TypeInfo, diags: Diagnostics) -> None:
        self.info = info
        self.diags = diags
        self.count = 0

    def run(self, program: ast.Program) -> None:
        top = set(program.decls)
        specialized = [t.decl for t in self.info.types.values()
                       if isinstance(t, BlockT) and isinstance(t.decl, ast.ControlDecl) and t.decl not in top]
        seen: set[int] = set()
        for d in list(program.decls) + specialized:
            if isinstance(d, ast.ControlDecl) and id(d) not in seen:
                seen.add(id(d))
                self.control(d)

    def control(self, d: ast.ControlDecl) -> None:
        moved: dict[ast.TableDecl, list[tuple[ast.VarDecl, ast.Expr]]] = {}
        locals_: list[ast.Decl] = []
        taken = {getattr(x, "name", "") for x in d.locals}
        for loc in d.locals:
            if isinstance(loc, ast.TableDecl) and loc.key is not None:
                for ke in loc.key.elements:
                    if is_simple_key(self.info, ke.expr):
                        continue
                    name = ke.annotation("name")
                    if name is None and _is_union_valid(self.info, ke.expr):
                        # p4c's front end names every isValid() key `<expr>.$valid$` (TableKeyNames)
                        assert isinstance(ke.expr, ast.MethodCall) and isinstance(ke.expr.callee, ast.Member)
                        kname = ast.to_p4(ke.expr.callee.expr) + ".$valid$"
                        name = ast.Annotation(ke.expr.loc, "name", [ast.StringLit(ke.expr.loc, kname)])
                        ke.annotations.append(name)
                    if name is None or not name.string_arg():
                        self.diags.error(start_of(ke.expr).loc,
                                         f"{ast.to_p4(ke.expr)}: Complex key expression requires a @name annotation")
                        continue
                    while f"key_{self.count}" in taken:
                        self.count += 1
                    var = ast.VarDecl(ke.expr.loc, f"key_{self.count}", ast.DontCareType(ke.expr.loc))
                    taken.add(var.name)
                    self.count += 1
                    self.info.types[var] = self.info.types[ke.expr]
                    locals_.append(var)
                    moved.setdefault(loc, []).append((var, ke.expr))
                    ke.expr = self.name_of(var, ke.expr)
            locals_.append(loc)
        if not moved:
            return
        d.locals = locals_
        d.body.stmts = self.stmts(d.body.stmts, moved)

    def name_of(self, var: ast.VarDecl, at: ast.Node) -> ast.Name:
        n = ast.Name(at.loc, var.name)
        self.info.refs[n] = var
        self.info.types[n] = self.info.types[var]
        return n

    def applies(self, node: ast.Node | None, tables: dict[ast.TableDecl, list]) -> list[ast.TableDecl]:
        """Tables of `tables` that `node` (an expression) applies."""
        found = []
        if node is None:
            return found
        for n in ast.walk(node):
            if isinstance(n, ast.MethodCall) and isinstance(n.callee, ast.Member) and n.callee.member == "apply":
                t = self.info.refs.get(n.callee.expr) if isinstance(n.callee.expr, ast.Name) else None
                if t in tables and t not in found:
                    found.append(t)
        return found

    def stmts(self, stmts: list[ast.Stmt], tables: dict[ast.TableDecl, list]) -> list[ast.Stmt]:
        out: list[ast.Stmt] = []
        for s in stmts:
            own: ast.Node | None = None
            if isinstance(s, ast.IfStmt):
                own = s.cond
                s.then = self.block(s.then, tables)
                if s.else_ is not None:
                    s.else_ = self.block(s.else_, tables)
            elif isinstance(s, ast.SwitchStmt):
                own = s.expr
                for case in s.cases:
                    if case.body is not None:
                        case.body.stmts = self.stmts(case.body.stmts, tables)
            elif isinstance(s, ast.BlockStmt):
                s.stmts = self.stmts(s.stmts, tables)
            elif isinstance(s, ast.MethodCallStmt):
                own = s.call
            elif isinstance(s, ast.AssignStmt):
                own = s.rhs
            elif isinstance(s, ast.VarDecl):
                own = s.init
            for t in self.applies(own, tables):
                for var, expr in tables[t]:
                    out.append(ast.AssignStmt(s.loc, self.name_of(var, s), expr))
            out.append(s)
        return out

    def block(self, s: ast.Stmt, tables: dict[ast.TableDecl, list]) -> ast.Stmt:
        res = self.stmts([s], tables)
        return res[0] if len(res) == 1 else ast.BlockStmt(s.loc, res)
