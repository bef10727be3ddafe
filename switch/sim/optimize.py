"""Peephole optimisation of generated straight-line action code (a list of Python source lines), on its AST.

Three rewrites, all exact (they change how often the PHV list and the register lists are touched and how often
bounds are tested, never what ends up in them):

1. PHV slots in locals. Within one action body nothing else can observe the PHV list `F` (no calls get `F`, no
   slot index is computed), so a slot used more than once is read into a local once (unless its first use
   is an unconditional store), used and updated there, and stored back at the end (and before any `return` /
   `raise`). Register read-modify-write loops then cost local-variable operations instead of list indexing.
2. Merged bounds checks. `if C: A` ... `M` ... `if C: B` with a pure test `C` over locals that nothing in between
   assigns (the register index `i` of a read-modify-write) becomes `if C: A; M; B` / `else: M`.
3. Hoisted bounds checks. For a run of statements whose register indices are all `i = (b + c) & M` for one local
   base `b` the run never assigns and constants c (an array indexed from a computed base: `r.read(x, base + 5)`),
   one range test of `b` up front proves every index in bounds and every mask a no-op; the run then executes a
   copy without per-access checks and masks, and the original statements otherwise.

A body that does not fit the assumptions (loops, `F` passed to a call, computed slots) is returned unchanged.
"""

from __future__ import annotations

import ast
import copy

_PURE = (ast.Name, ast.Constant, ast.Compare, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Load,
         ast.cmpop, ast.boolop, ast.operator, ast.unaryop)
_MAX_MID = 3  # statements duplicated into the else branch of a merged bounds check


def optimize_body(lines: list[str]) -> list[str]:
    """The body, optimised (see module docstring); unchanged when it does not qualify."""
    if not lines:
        return lines
    try:
        fn = ast.parse("def _body(F, D):\n" + "\n".join("    " + s for s in lines)).body[0]
    except SyntaxError:
        return lines
    assert isinstance(fn, ast.FunctionDef)
    body = _cache_slots(fn.body)
    if body is None:
        return lines
    body = _merge_guards(body)
    body = _hoist_affine_checks(body)
    out: list[str] = []
    for stmt in body:
        out.extend(ast.unparse(ast.fix_missing_locations(stmt)).split("\n"))
    return out


# --- 1. slots in locals ----------------------------------------------------------------------------------------
def _slot(node: ast.AST) -> int | None:
    """k for `F[k]` with a constant int k, else None."""
    if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "F"
            and isinstance(node.slice, ast.Constant) and type(node.slice.value) is int):
        return node.slice.value
    return None


def _qualifies(stmts: list[ast.stmt]) -> bool:
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.While, ast.For, ast.Try, ast.With, ast.FunctionDef, ast.Lambda, ast.Global,
                                 ast.Nonlocal, ast.comprehension, ast.NamedExpr, ast.Delete)):
                return False
            if isinstance(node, ast.Name) and node.id.startswith("_f"):
                return False
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "F":
                if _slot(node) is None:
                    return False
    # every use of the name F must be a constant-slot subscript (F passed to a call could be read or written)
    allowed = {id(n.value) for s in stmts for n in ast.walk(s) if _slot(n) is not None}
    return not any(isinstance(n, ast.Name) and n.id == "F" and id(n) not in allowed
                   for s in stmts for n in ast.walk(s))


def _uses(node: ast.AST) -> list[tuple[int, bool]]:
    """(slot, is_store) of every F[k] under node, in evaluation order of an assignment (value before target)."""
    out = []
    if isinstance(node, ast.Assign):
        for part in [node.value] + node.targets:
            out.extend(_uses(part))
        return out
    if isinstance(node, ast.AugAssign):
        out.extend(_uses(node.value))
        k = _slot(node.target)
        if k is not None:
            return out + [(k, False), (k, True)]
        return out + _uses(node.target)
    for n in ast.walk(node):
        k = _slot(n)
        if k is not None:
            out.append((k, isinstance(n.ctx, ast.Store)))
    return out


def _cache_slots(stmts: list[ast.stmt]) -> list[ast.stmt] | None:
    if not _qualifies(stmts):
        return None
    counts: dict[int, int] = {}
    written: set[int] = set()
    for s in stmts:
        for k, st in _uses(s):
            counts[k] = counts.get(k, 0) + 1
            if st:
                written.add(k)
    cached = {k for k, c in counts.items() if c >= 2}
    if not cached:
        return stmts
    exits = any(isinstance(n, (ast.Return, ast.Raise)) for s in stmts for n in ast.walk(s))
    need_load: set[int] = set()
    defined: set[int] = set()
    for s in stmts:
        if exits:  # an early exit stores every written slot back: all of them must hold a value from the start
            need_load = set(cached)
            break
        simple = (isinstance(s, ast.Assign) and len(s.targets) == 1 and _slot(s.targets[0]) is not None)
        for k, st in _uses(s):
            if k not in cached or k in defined:
                continue
            if st and simple:
                defined.add(k)      # the unconditional store of a plain assignment (its value was read first)
            else:
                need_load.add(k)    # read, or stored conditionally: the local needs the slot's value
    back = sorted(cached & written)

    class Rename(ast.NodeTransformer):
        def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
            k = _slot(node)
            if k is not None and k in cached:
                return ast.copy_location(ast.Name(f"_f{k}", node.ctx), node)
            self.generic_visit(node)
            return node

    def store_back() -> list[ast.stmt]:
        return _moves(back, store=True)

    class Exits(ast.NodeTransformer):
        def visit_Return(self, node: ast.Return) -> list[ast.stmt]:
            return store_back() + [node]

        def visit_Raise(self, node: ast.Raise) -> list[ast.stmt]:
            return store_back() + [node]

    body = [Exits().visit(Rename().visit(s)) for s in stmts]
    flat: list[ast.stmt] = []
    for b in body:
        flat.extend(b if isinstance(b, list) else [b])
    return _moves(sorted(need_load), store=False) + flat + store_back()


def _moves(slots: list[int], store: bool) -> list[ast.stmt]:
    """Statements copying sorted `slots` between F and their locals; runs of consecutive slots move as one slice
    (`_f5, _f6, _f7 = F[5:8]`), which costs far less than one subscript per slot."""
    out: list[str] = []
    k = 0
    while k < len(slots):
        j = k
        while j + 1 < len(slots) and slots[j + 1] == slots[j] + 1:
            j += 1
        run = slots[k:j + 1]
        if len(run) >= 3:
            names = ", ".join(f"_f{x}" for x in run)
            part = f"F[{run[0]}:{run[-1] + 1}]"
            out.append(f"{part} = ({names})" if store else f"{names} = {part}")
        else:
            out.extend(f"F[{x}] = _f{x}" if store else f"_f{x} = F[{x}]" for x in run)
        k = j + 1
    return [ast.parse(line).body[0] for line in out]


# --- 2. merged bounds checks -----------------------------------------------------------------------------------
def _assigned_names(stmts: list[ast.stmt]) -> set[str]:
    return {n.id for s in stmts for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _pure_test(test: ast.expr) -> set[str] | None:
    """Names a side-effect-free test over locals reads, or None when the test is not of that kind."""
    names = set()
    for n in ast.walk(test):
        if not isinstance(n, _PURE):
            return None
        if isinstance(n, ast.Name):
            if n.id == "F" or n.id == "D" or not (n.id == "i" or n.id.startswith("_f")):
                return None  # only the index local and slot locals: globals (registers) could change
            names.add(n.id)
    return names


def _exits(stmts: list[ast.stmt]) -> bool:
    return any(isinstance(n, (ast.Return, ast.Raise)) for s in stmts for n in ast.walk(s))


def _merge_guards(stmts: list[ast.stmt]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    i = 0
    while i < len(stmts):
        s = stmts[i]
        i += 1
        names = _pure_test(s.test) if isinstance(s, ast.If) else None
        if names is None or _exits([s]) or names & _assigned_names(s.body + s.orelse):
            out.append(s)
            continue
        assert isinstance(s, ast.If)
        cur = s
        key = ast.dump(s.test)
        while True:
            j = i
            while j < len(stmts) and j - i <= _MAX_MID and not (
                    isinstance(stmts[j], ast.If) and ast.dump(stmts[j].test) == key):
                j += 1
            if j >= len(stmts) or j - i > _MAX_MID:
                break
            mid, nxt = stmts[i:j], stmts[j]
            assert isinstance(nxt, ast.If)
            if nxt.orelse or _exits(mid + [nxt]) or names & _assigned_names(mid + nxt.body):
                break
            cur = ast.If(test=cur.test, body=cur.body + mid + nxt.body,
                         orelse=(cur.orelse or []) + [copy.deepcopy(m) for m in mid])
            i = j + 1
        if not cur.orelse:
            cur.orelse = []
        out.append(cur)
    return out


# --- 3. hoisted bounds checks ----------------------------------------------------------------------------------
_MIN_HOISTED = 4  # guarded accesses that make a second copy of the body worth it


def _affine(value: ast.expr) -> tuple[str, int, int | None] | None:
    """(base local, c, mask or None) for `b`, `b + c` or `(b + c) & M` (b a local name, c >= 0, M a constant)."""
    mask = None
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.BitAnd) and isinstance(value.right, ast.Constant) \
            and type(value.right.value) is int:
        mask = value.right.value
        value = value.left
    c = 0
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) and isinstance(value.right, ast.Constant) \
            and type(value.right.value) is int and value.right.value >= 0:
        c = value.right.value
        value = value.left
    if isinstance(value, ast.Name) and value.id.startswith("_f"):
        return value.id, c, mask
    return None


def _guard_size(test: ast.expr) -> int | None:
    """S for a test `i < S` or `0 <= i < S`."""
    if not isinstance(test, ast.Compare) or not all(isinstance(o, ast.Lt) for o in test.ops[-1:]):
        return None
    parts = [test.left] + test.comparators
    if len(parts) == 2 and isinstance(parts[0], ast.Name) and parts[0].id == "i":
        size = parts[1]
    elif (len(parts) == 3 and isinstance(test.ops[0], ast.LtE) and isinstance(parts[0], ast.Constant)
          and parts[0].value == 0 and isinstance(parts[1], ast.Name) and parts[1].id == "i"):
        size = parts[2]
    else:
        return None
    return size.value if isinstance(size, ast.Constant) and type(size.value) is int else None


def _is_index_assign(s: ast.stmt) -> bool:
    return (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
            and s.targets[0].id == "i")


def _tests_index(s: ast.stmt) -> bool:
    return isinstance(s, ast.If) and any(isinstance(n, ast.Name) and n.id == "i" for n in ast.walk(s.test))


def _hoist_affine_checks(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """Split the body into runs whose index statements share one base; hoist the checks of each run."""
    out: list[ast.stmt] = []
    seg: list[ast.stmt] = []
    seg_base: str | None = None
    for s in stmts:
        if _is_index_assign(s):
            aff = _affine(s.value)
            b = aff[0] if aff is not None else None
            if b is None or b != seg_base:
                out.extend(_hoist_segment(seg) if seg_base is not None else seg)
                seg, seg_base = [], b
        seg.append(s)
    out.extend(_hoist_segment(seg) if seg_base is not None else seg)
    return out


def _hoist_segment(seg: list[ast.stmt]) -> list[ast.stmt]:
    """`seg` starts with an index statement on base b, and every index statement in it uses b."""
    limit: int | None = None
    cmin: int | None = None
    cur = 0
    base = ""
    guards = 0
    for s in seg:
        if _is_index_assign(s):
            base, cur, mask = _affine(s.value)  # type: ignore[misc]
            cmin = cur if cmin is None else min(cmin, cur)
            if mask is not None:
                limit = mask - cur if limit is None else min(limit, mask - cur)
        elif _tests_index(s):
            size = _guard_size(s.test)  # type: ignore[attr-defined]
            if size is None:
                return seg
            guards += 1
            limit = size - 1 - cur if limit is None else min(limit, size - 1 - cur)
        elif any(isinstance(n, ast.If) and _tests_index(n) for n in ast.walk(s)):
            return seg  # a nested bounds check: keep it simple
    if guards < _MIN_HOISTED or limit is None or cmin is None or limit < -cmin:
        return seg
    others = [s for s in seg if not _is_index_assign(s)]
    if base in _assigned_names(seg) or "i" in _assigned_names(others):
        return seg  # the base must keep its value; only the index statements may set `i`
    fast: list[ast.stmt] = []
    for s in seg:
        if _is_index_assign(s):
            b, c, _m = _affine(s.value)  # type: ignore[misc]
            fast.append(ast.parse(f"i = {b} + {c}" if c else f"i = {b}").body[0])
        elif _tests_index(s):
            fast.extend(copy.deepcopy(s.body))  # type: ignore[attr-defined]
        else:
            fast.append(copy.deepcopy(s))
    test = ast.parse(f"{-cmin} <= {base} <= {limit}", mode="eval").body
    return [ast.If(test=test, body=fast, orelse=seg)]
