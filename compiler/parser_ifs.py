"""`if` statements in parser states, turned into states as p4c's front end does (BMv2 parsers have no conditionals):
the state evaluates the condition into a `bit<1>` temporary and selects on it, `<state>_true` and `<state>_false`
hold the branches, and `<state>_join` the statements after the `if` with the original transition. Variables declared
in such a state become parser locals (renamed apart), so every new state reaches them; their initializers become
assignments where they stood. Runs on the syntax tree, before type checking.
"""

from __future__ import annotations

from compiler import ast

__all__ = ["split_parser_ifs"]


def split_parser_ifs(program: ast.Program) -> None:
    """Rewrite every parser of the program whose states hold `if` statements, in place."""
    for d in program.decls:
        if isinstance(d, ast.ParserDecl) and any(_has_if(s) for st in d.states for s in st.stmts):
            _Splitter(d).run()


def _has_if(s: ast.Stmt) -> bool:
    return isinstance(s, ast.IfStmt) or (isinstance(s, ast.BlockStmt) and any(_has_if(x) for x in s.stmts))


def _flat(stmts: list[ast.Stmt]) -> list[ast.Stmt]:
    out: list[ast.Stmt] = []
    for s in stmts:
        out.extend(_flat(s.stmts) if isinstance(s, ast.BlockStmt) and not s.annotations else [s])
    return out


class _Splitter:
    def __init__(self, parser: ast.ParserDecl) -> None:
        self.parser = parser
        self.taken = {st.name for st in parser.states} | {x.name for x in parser.locals} | \
            {p.name for p in parser.params + parser.ctor_params}

    def fresh(self, base: str) -> str:
        name, k = base, 0
        while name in self.taken:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        return name

    def run(self) -> None:
        out: list[ast.ParserState] = []
        for st in self.parser.states:
            if any(_has_if(s) for s in st.stmts):
                self.hoist_locals(st)
                out.extend(self.split(st))
            else:
                out.append(st)
        self.parser.states[:] = out

    def hoist_locals(self, st: ast.ParserState) -> None:
        """Declarations of the state (at any depth) become parser locals with fresh names."""
        renames: dict[str, str] = {}

        def strip(stmts: list[ast.Stmt]) -> list[ast.Stmt]:
            out: list[ast.Stmt] = []
            for s in stmts:
                if isinstance(s, ast.VarDecl):
                    new = self.fresh(s.name)
                    renames[s.name] = new
                    self.parser.locals.append(ast.VarDecl(s.loc, new, s.type, None, annotations=s.annotations))
                    if s.init is not None:
                        out.append(ast.AssignStmt(s.loc, ast.Name(s.loc, s.name), s.init))
                elif isinstance(s, ast.BlockStmt):
                    s.stmts[:] = strip(s.stmts)
                    out.append(s)
                elif isinstance(s, ast.IfStmt):
                    s.then = _block(strip([s.then]), s.then.loc)
                    if s.else_ is not None:
                        s.else_ = _block(strip([s.else_]), s.else_.loc)
                    out.append(s)
                else:
                    out.append(s)
            return out

        st.stmts[:] = strip(st.stmts)
        if renames:
            roots: list[ast.Node] = list(st.stmts) + ([st.transition] if st.transition is not None else [])
            for root in roots:
                for n in ast.walk(root):
                    if isinstance(n, ast.Name) and not n.top_level and n.name in renames:
                        n.name = renames[n.name]

    def split(self, st: ast.ParserState) -> list[ast.ParserState]:
        stmts = _flat(st.stmts)
        k = next((i for i, s in enumerate(stmts) if isinstance(s, ast.IfStmt)), None)
        if k is None:
            st.stmts[:] = stmts
            return [st]
        cond = stmts[k]
        assert isinstance(cond, ast.IfStmt)
        loc = cond.loc
        tmp = self.fresh("tmp")
        self.parser.locals.append(ast.VarDecl(loc, tmp, ast.BitType(loc, ast.IntLit(loc, 1))))
        names = [self.fresh(f"{st.name}_{part}") for part in ("true", "false", "join")]
        one, zero = ast.IntLit(loc, 1, 1, text="1w1"), ast.IntLit(loc, 0, 1, text="1w0")
        head = ast.ParserState(loc, st.name, stmts[:k] + [ast.AssignStmt(loc, ast.Name(loc, tmp),
                                                                         ast.Ternary(loc, cond.cond, one, zero))],
                               ast.SelectExpr(loc, [ast.Name(loc, tmp)], [
                                   ast.SelectCase(loc, [ast.IntLit(loc, 1, 1, text="1w1")], ast.Name(loc, names[0])),
                                   ast.SelectCase(loc, [ast.DefaultExpr(loc)], ast.Name(loc, names[1]))]),
                               annotations=st.annotations)
        then = ast.ParserState(cond.then.loc, names[0], [cond.then], ast.Name(loc, names[2]))
        else_loc = cond.else_.loc if cond.else_ is not None else loc
        other = ast.ParserState(else_loc, names[1], [cond.else_] if cond.else_ is not None else [],
                                ast.Name(loc, names[2]))
        join = ast.ParserState(loc, names[2], stmts[k + 1:], st.transition)
        return [head] + self.split(then) + self.split(other) + self.split(join)


def _block(stmts: list[ast.Stmt], loc: ast.SourceLoc) -> ast.Stmt:
    return stmts[0] if len(stmts) == 1 else ast.BlockStmt(loc, stmts)
