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

4. Register windows as slices. In the checked copy of a hoisted run whose accesses all go to one register `R` at
   `b + c` for every c of a contiguous range (a register array holding a vector: `values[base + e]`), each element
   reads its own cell before writing it, so the run reads the window once (`_v0, _v1, ... = R[b + c0:b + c1]`),
   works on locals and writes it back once (`R[b + c0:b + c1] = (...)`): two list operations in C instead of one
   subscript per access. The bounds are the ones the hoisted test already proved.
5. Forwarded temporaries. In straight-line code, `t = E` whose value the next statement reads once and nothing
   reads afterwards (t is assigned again before any other use) is substituted into that statement; `t = E`
   followed only by copies `X1 = t; X2 = t` of a then dead `t` becomes `X1 = X2 = E`. Register
   read-modify-write sequences (`t = R[i]; t = t + h & M; R[i] = t; h = t`) shrink to one statement.

4v. Vector windows. With vector headers (vectors.py: a header of bit<32> fields kept as one array in `F[vslot]`),
   a window whose every element is the same plain operation between a bit<32> register cell and consecutive
   fields of one vector header becomes one numpy operation on a view of the register (`RV<id>`): a store of the
   fields, a load into them, or `t = R[i]; h = h + t & 0xFFFFFFFF; R[i] = h` (uint32 addition wraps modulo 2^32,
   and `t` ends with the last cell's old value, as the scalar run leaves it), also with a saturating signed add
   (`_vsat32`) and flags set when a sum equals a constant (ATP's overflow flag: `any()` over the window).

4c. Column windows. A straight-line run that, at one proven-in-range index `i`, adds consecutive fields of a vector
   header into as many bit<32> registers of one size (`t = R_k[i]; t = (t + h_k) & 0xFFFFFFFF; R_k[i] = t; h_k = t`,
   a register per element) keeps those registers as the columns of one 2-D array and adds the fields to its row i
   at once (`t` ends with the last sum, as the scalar run leaves it).

7. Propagated constants (first, on every block). A local assigned an int constant (`_f17 = 0`: our compiler's
   copy-in of an action argument into metadata) is read as that constant by the statements after it until it is
   assigned again, so `i = _f14 + _f17 & M` becomes the affine index `_f14 + 0 & M` that rewrites 3 and 4 prove.

6. Common subexpressions. An operation over locals and constants that a run of statements computes more than
   once, while none of its names is assigned from its first use to its last, is computed once into a local
   `_c<n>` before the first use. p4c's copy propagation writes `meta.keep = E; ... r & meta.keep` as `r & E` at
   every use: sixty-four recomputations of E in a 64-element aggregation action. Only operations that cannot
   raise qualify (no division, no shift by a computed or negative amount), so evaluating one early, even where
   its use sits in a branch not taken, changes nothing.

A body that does not fit the assumptions (loops, `F` passed to a call, computed slots) is returned unchanged.
`fuse_regions` applies the same rewrites to the straight-line runs of a whole generated pipeline function (the
inlined bodies of p4c's synthesized tables and the conditionals between them), as if they were one action.
"""

from __future__ import annotations

import ast
import copy
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

_PURE = (ast.Name, ast.Constant, ast.Compare, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Load,
         ast.cmpop, ast.boolop, ast.operator, ast.unaryop)
_MAX_MID = 3  # statements duplicated into the else branch of a merged bounds check


@dataclass(frozen=True)
class VectorInfo:
    """Vector headers as (first slot, fields, array slot) and the `R<id>` names of bit<32> registers."""

    headers: tuple[tuple[int, int, int], ...]
    registers: frozenset[str]
    slots: frozenset[int] = field(init=False)
    columns: dict[tuple[str, ...], str] = field(default_factory=dict, compare=False)
    """Register groups used as the columns of one 2-D array (rewrite 4c), by the name the code uses for it."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "slots", frozenset(k for a, n, _v in self.headers for k in range(a, a + n)))


def optimize_body(lines: list[str], vec: VectorInfo | None = None) -> list[str]:
    """The body, optimised (see module docstring); unchanged when it does not qualify. With `vec`, the slots of its
    vector headers stay in F (never cached in locals) and register windows over them become array operations."""
    if not lines:
        return lines
    try:
        fn = ast.parse("def _body(F, D):\n" + "\n".join("    " + s for s in lines)).body[0]
    except SyntaxError:
        return lines
    assert isinstance(fn, ast.FunctionDef)
    body = _cache_slots(fn.body, vec.slots if vec is not None else frozenset())
    if body is None:
        return lines
    body = _blockwise(body, lambda b: _block_rewrites(b, vec))
    body = _forward_temporaries(body)
    body = _cse_tree(body, set(), itertools.count(_cse_serial(body)))
    out: list[str] = []
    for stmt in body:
        out.extend(ast.unparse(ast.fix_missing_locations(stmt)).split("\n"))
    return out


def _block_rewrites(body: list[ast.stmt], vec: VectorInfo | None) -> list[ast.stmt]:
    """Rewrites 7 and 2-4 on one straight-line block."""
    body = _propagate_constants(body)
    body = _merge_guards(body)
    body = _hoist_affine_checks(body, vec)
    if vec is not None:
        body = _column_windows(body, vec)
    return body


def _blockwise(stmts: list[ast.stmt], rewrite: Callable[[list[ast.stmt]], list[ast.stmt]]) -> list[ast.stmt]:
    """`rewrite` on the blocks nested in `stmts` (the branches of its `if`s, innermost first), then on `stmts`
    itself: a fused pipeline region nests action bodies under conditionals; one action's body is one block."""
    for st in stmts:
        if isinstance(st, ast.If):
            st.body = _blockwise(st.body, rewrite) or [ast.Pass()]
            st.orelse = _blockwise(st.orelse, rewrite)
    return rewrite(stmts)


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


def _cache_slots(stmts: list[ast.stmt], keep: frozenset[int] = frozenset()) -> list[ast.stmt] | None:
    if not _qualifies(stmts):
        return None
    counts: dict[int, int] = {}
    written: set[int] = set()
    for s in stmts:
        for k, st in _uses(s):
            counts[k] = counts.get(k, 0) + 1
            if st:
                written.add(k)
    cached = {k for k, c in counts.items() if c >= 2 and k not in keep}
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


def _small(s: ast.If) -> bool:
    """A guard's size: a few simple statements (a bounds check's access), not a fused region's branch."""
    return len(s.body) + len(s.orelse) <= 8 and not any(
        isinstance(x, (ast.If, ast.For, ast.While, ast.With, ast.Try)) for x in s.body + s.orelse)


def _merge_guards(stmts: list[ast.stmt]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    i = 0
    while i < len(stmts):
        s = stmts[i]
        i += 1
        names = _pure_test(s.test) if isinstance(s, ast.If) and _small(s) else None
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


def _hoist_affine_checks(stmts: list[ast.stmt], vec: VectorInfo | None = None) -> list[ast.stmt]:
    """Split the body into runs whose index statements share one base; hoist the checks of each run."""
    out: list[ast.stmt] = []
    seg: list[ast.stmt] = []
    seg_base: str | None = None
    for s in stmts:
        if _is_index_assign(s):
            aff = _affine(s.value)
            b = aff[0] if aff is not None else None
            if b is None or b != seg_base:
                out.extend(_hoist_segment(seg, vec) if seg_base is not None else seg)
                seg, seg_base = [], b
        seg.append(s)
    out.extend(_hoist_segment(seg, vec) if seg_base is not None else seg)
    return out


def _hoist_segment(seg: list[ast.stmt], vec: VectorInfo | None = None) -> list[ast.stmt]:
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
    window = (_vector_window(fast, base, vec) if vec is not None else None) or _register_window(fast, base)
    return [ast.If(test=test, body=window or fast, orelse=seg)]


# --- 4. register windows as slices -----------------------------------------------------------------------------
_MIN_WINDOW = 4  # elements that make a slice worth it


def _register_subscripts(s: ast.stmt) -> list[ast.Subscript]:
    """Every `X[i]` subscript in s (X any name)."""
    return [n for n in ast.walk(s) if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Name)
            and n.slice.id == "i"]


def _index_groups(fast: list[ast.stmt], base: str) -> list[tuple[int, list[ast.stmt]]] | None:
    """The checked run `fast` as (c, statements after `i = base + c`) per index statement; None when it does not
    start with one or an index statement is not `base + c`."""
    groups: list[tuple[int, list[ast.stmt]]] = []
    for s in fast:
        if _is_index_assign(s):
            aff = _affine(s.value)  # type: ignore[attr-defined]
            if aff is None or aff[0] != base or aff[2] is not None:
                return None
            groups.append((aff[1], []))
        elif not groups:
            return None
        else:
            groups[-1][1].append(s)
    return groups


def _register_window(fast: list[ast.stmt], base: str) -> list[ast.stmt] | None:
    """The checked run `fast` (index statements `i = base` / `i = base + c`, every access proven in bounds) with its
    accesses to one register turned into one slice read and one slice write; None when it does not qualify: more
    than one register or a register accessed other than at `i`, c not one contiguous range, anything but plain
    assignments (a call or branch could observe a cell between the original access and the slice access)."""
    groups = _index_groups(fast, base)
    if groups is None:
        return None
    reg: str | None = None
    for s in (s for _c, stmts in groups for s in stmts):
        if not isinstance(s, ast.Assign):
            return None
        for n in ast.walk(s):
            if isinstance(n, (ast.Call, ast.NamedExpr, ast.Lambda, ast.IfExp)):
                return None
        subs = _register_subscripts(s)
        for sub in subs:
            if not (isinstance(sub.value, ast.Name) and sub.value.id.startswith("R")) or sub.value.id == "F":
                return None
            if reg is None:
                reg = sub.value.id
            elif sub.value.id != reg:
                return None
        if any(isinstance(n, ast.Name) and n.id == "i" for n in ast.walk(s)) and \
                len([n for n in ast.walk(s) if isinstance(n, ast.Name) and n.id == "i"]) != len(subs):
            return None  # `i` used other than as the register index
    if reg is None or len(groups) < _MIN_WINDOW:
        return None
    offsets = sorted(c for c, _ in groups)
    c0 = offsets[0]
    if offsets != list(range(c0, c0 + len(offsets))):
        return None
    if any(isinstance(n, ast.Name) and n.id == reg for s in fast for n in ast.walk(s)
           if not any(n is sub.value for sub in _register_subscripts(s))):
        return None  # the register is also used as a whole
    n = len(offsets)
    reads = writes = False

    class Cells(ast.NodeTransformer):
        def __init__(self, k: int) -> None:
            self.k = k

        def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
            nonlocal reads, writes
            if isinstance(node.slice, ast.Name) and node.slice.id == "i":
                if isinstance(node.ctx, ast.Store):
                    writes = True
                else:
                    reads = True
                return ast.copy_location(ast.Name(f"_v{self.k}", node.ctx), node)
            self.generic_visit(node)
            return node

    body: list[ast.stmt] = []
    for c, stmts in groups:
        body.extend(Cells(c - c0).visit(copy.deepcopy(st)) for st in stmts)
    lo = f"{base} + {c0}" if c0 else base
    window = f"{reg}[{lo}:{base} + {c0 + n}]"
    names = [f"_v{k}" for k in range(n)]
    out: list[ast.stmt] = []
    if reads:
        out.append(ast.parse(f"{', '.join(names)} = {window}").body[0])
    elif writes:  # cells the run does not write keep their value: start from the window
        unwritten = set(range(n)) - {int(t.id[2:]) for st in body for t in ast.walk(st)
                                     if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)
                                     and t.id.startswith("_v")}
        if unwritten:
            out.append(ast.parse(f"{', '.join(names)} = {window}").body[0])
    if not writes and _copies_out(body, n):
        # a plain load of the window into n places: one unpacking (or slice) assignment
        targets = [st.targets[0] for st in body]  # type: ignore[attr-defined]
        out = [ast.Assign(targets=[_consecutive_slots(targets) or ast.Tuple(elts=targets, ctx=ast.Store())],
                          value=ast.parse(window, mode="eval").body)]
    else:
        values = _forward_into_tuple(body, names)
        out.extend(body)
        if writes:
            tup = _consecutive_slots(values) or ast.Tuple(elts=values, ctx=ast.Load())
            out.append(ast.Assign(targets=[ast.parse(window, mode="eval").body], value=tup))
    last = groups[-1][0]
    out.append(ast.parse(f"i = {base} + {last}" if last else f"i = {base}").body[0])  # `i` as the run left it
    return out


_MASK32 = 0xFFFFFFFF


def _is_cell(node: ast.AST) -> str | None:
    """R for a register cell `R[i]`."""
    if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id.startswith("R")
            and isinstance(node.slice, ast.Name) and node.slice.id == "i"):
        return node.value.id
    return None


@dataclass(frozen=True)
class _VecOp:
    """One element of a vector window (see `_vector_op`)."""

    kind: str                       # "w" store, "r" load, "a" wrapping add, "s" saturating signed add
    reg: str
    slot: int                       # the header field
    temp: ast.expr | None = None    # the register value's temporary ("a", "s")
    flags: tuple[tuple[ast.expr, tuple[int, ...]], ...] = ()  # (target, constants): target |= (field == c) each

    def shape(self) -> tuple:
        """What every element of one window must share."""
        return (self.kind, self.reg, ast.dump(self.temp) if self.temp is not None else None,
                tuple((ast.dump(t), cs) for t, cs in self.flags))


def _phv(slot: int) -> str:
    return f"F[{slot}]"


def _wrap_add(x: str, t: str) -> str:
    """The generated scalar code of a bit<32> sum."""
    return f"({x} + {t}) & {_MASK32}"


def _is_sum(value: ast.expr, x: str, t: str, form: Callable[[str, str], str]) -> bool:
    """Whether value is form(x, t) or form(t, x), as generated code spells it."""
    got = ast.dump(value)
    return any(got == ast.dump(ast.parse(form(a, b), mode="eval").body) for a, b in ((x, t), (t, x)))


def _sat_add(x: str, t: str) -> str:
    """The generated scalar code of `(bit<32>)((int<32>)x |+| (int<32>)t)` (gen_expr: casts and _sat)."""
    def signed(v: str) -> str:
        return f"((({v}) + (1 << (32 - 1))) & ((1 << 32) - 1)) - (1 << (32 - 1))"
    return f"(_sat({signed(x)} + {signed(t)}, 32) & 4294967295)"


def _flag_terms(value: ast.expr, slot: int) -> tuple[ast.expr, tuple[int, ...]] | None:
    """(Y, constants) when value is `Y | (1 if F[slot] == c1 else 0) | ...` (Y a local or a constant slot)."""
    consts: list[int] = []
    node = value
    while isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        term = node.right
        if not (isinstance(term, ast.IfExp) and isinstance(term.body, ast.Constant) and term.body.value == 1
                and isinstance(term.orelse, ast.Constant) and term.orelse.value == 0
                and isinstance(term.test, ast.Compare) and len(term.test.ops) == 1
                and isinstance(term.test.ops[0], ast.Eq) and _slot(term.test.left) == slot
                and isinstance(term.test.comparators[0], ast.Constant)
                and type(term.test.comparators[0].value) is int):
            return None
        consts.append(term.test.comparators[0].value)
        node = node.left
    if not consts or not (isinstance(node, ast.Name) or _slot(node) is not None):
        return None
    return node, tuple(reversed(consts))


def _vector_op(stmts: list[ast.stmt]) -> _VecOp | None:
    """One element of a vector window, or None: "w" `R[i] = F[s]`, "r" `F[s] = R[i]`, "a" `t = R[i];
    F[s] = (F[s] + t) & 0xFFFFFFFF; R[i] = F[s]`, "s" the same with a saturating signed add (ATP's
    `(bit<32>)((int<32>)F[s] |+| (int<32>)t)`); "a" and "s" may update flags `Y = Y | (1 if F[s] == c else 0)`
    between the sum and the store."""
    if not stmts or not all(isinstance(s, ast.Assign) and len(s.targets) == 1 for s in stmts):
        return None
    if len(stmts) == 1:
        st = stmts[0]
        assert isinstance(st, ast.Assign)
        reg, slot = _is_cell(st.targets[0]), _slot(st.value)
        if reg is not None and slot is not None:
            return _VecOp("w", reg, slot)
        reg, slot = _is_cell(st.value), _slot(st.targets[0])
        if reg is not None and slot is not None:
            return _VecOp("r", reg, slot)
        return None
    if len(stmts) < 3:
        return None
    load, op, store = stmts[0], stmts[1], stmts[-1]
    assert isinstance(load, ast.Assign) and isinstance(op, ast.Assign) and isinstance(store, ast.Assign)
    reg = _is_cell(load.value)
    t = load.targets[0]
    if reg is None or not (isinstance(t, ast.Name) or _slot(t) is not None):
        return None
    slot = _slot(op.targets[0])
    if slot is None or _slot(store.value) != slot or _is_cell(store.targets[0]) != reg or _slot(t) == slot:
        return None
    tsrc = t.id if isinstance(t, ast.Name) else _phv(_slot(t))  # type: ignore[arg-type]
    x = _phv(slot)
    if _is_sum(op.value, x, tsrc, _wrap_add):
        kind = "a"
    elif _is_sum(op.value, x, tsrc, _sat_add):
        kind = "s"
    else:
        return None
    flags = []
    for st in stmts[2:-1]:
        assert isinstance(st, ast.Assign)
        terms = _flag_terms(st.value, slot)
        tgt = st.targets[0]
        if terms is None or ast.dump(terms[0]) != ast.dump(_as_load(tgt)) or ast.dump(_as_load(tgt)) in (
                ast.dump(_as_load(t)), ast.dump(_as_load(op.targets[0]))):
            return None  # the flag must be neither the field nor the temporary
        flags.append((tgt, terms[1]))
    return _VecOp(kind, reg, slot, t, tuple(flags))


def _as_load(node: ast.expr) -> ast.expr:
    """node (a Name or F[k] target) as it reads."""
    if isinstance(node, ast.Name):
        return ast.Name(node.id, ast.Load())
    return ast.Subscript(value=ast.Name("F", ast.Load()), slice=ast.Constant(_slot(node)), ctx=ast.Load())


def _fields_span(vec: VectorInfo, first: int, n: int) -> tuple[str, Callable[[str], str]] | None:
    """For fields [first, first + n) of one vector header: the expression reading them as an array, and the
    statement storing an array `src` into them (a copy: arrays in F are never changed in place); None when they do
    not lie in one vector header."""
    for a, hn, vs in vec.headers:
        if a <= first and first + n <= a + hn:
            k0 = first - a
            if k0 == 0 and n == hn:
                return f"F[{vs}]", lambda src: f"F[{vs}] = {src}.copy()"
            return f"F[{vs}][{k0}:{k0 + n}]", lambda src: f"F[{vs}] = _vsplice(F[{vs}], {k0}, {src})"
    return None


def _vector_window(fast: list[ast.stmt], base: str, vec: VectorInfo) -> list[ast.stmt] | None:
    """The checked run `fast` as one array operation (rewrite 4v), or None when it is not a vector window."""
    groups = _index_groups(fast, base)
    if groups is None or len(groups) < _MIN_WINDOW:
        return None
    ops = [_vector_op(stmts) for _c, stmts in groups[:-1]]
    if any(op is None for op in ops):
        return None
    # the last element's statements may be followed by others of the run (`hdr.last = meta.tmp`): they run after it
    last_stmts = groups[-1][1]
    tail: list[ast.stmt] = []
    for size in range(1, len(last_stmts) + 1):
        op = _vector_op(last_stmts[:size])
        if op is not None and (not ops or op.shape() == ops[0].shape()):  # type: ignore[union-attr]
            ops.append(op)
            tail = last_stmts[size:]
            break
    if len(ops) != len(groups):
        return None
    first_op = ops[0]
    assert first_op is not None
    if any(op.shape() != first_op.shape() for op in ops) or first_op.reg not in vec.registers:  # type: ignore[union-attr]
        return None
    n = len(groups)
    c0, first = groups[0][0], first_op.slot
    if [c for c, _ in groups] != list(range(c0, c0 + n)) or \
            [op.slot for op in ops] != list(range(first, first + n)):  # type: ignore[union-attr]
        return None
    span = _fields_span(vec, first, n)
    others = [first_op.temp] + [t for t, _c in first_op.flags]
    if span is None or any(x is not None and _slot(x) in vec.slots for x in others):
        return None
    fields, store = span
    lo = f"{base} + {c0}" if c0 else base
    cells = f"RV{first_op.reg[1:]}[{lo}:{base} + {c0 + n}]"
    kind = first_op.kind
    if kind == "w":
        lines = [f"{cells} = {fields}"]
    elif kind == "r":
        lines = [store(cells)]
    else:
        assert first_op.temp is not None
        lines = ["_vw = " + cells, f"{ast.unparse(first_op.temp)} = int(_vw[{n - 1}])",
                 f"_vw += {fields}" if kind == "a" else f"_vsat32(_vw, {fields})"]
        for tgt, consts in first_op.flags:
            y = ast.unparse(tgt)
            lines.append(f"{y} = {y}" + "".join(f" | (1 if (_vw == {c}).any() else 0)" for c in consts))
        lines.append(store("_vw"))
    last = groups[-1][0]
    lines.append(f"i = {base} + {last}" if last else f"i = {base}")
    return [ast.parse(x).body[0] for x in lines] + tail


def _column_op(stmts: list[ast.stmt], after: ast.stmt | None = None) -> tuple[str, int, str] | None:
    """(register, field slot, temporary's dump) of `t = R[i]; t = (t + F[s]) & M; R[i] = t; F[s] = t`; with three
    statements, the fourth is `after` (the statement after the enclosing bounds check, where merged guards leave
    the last element's field store)."""
    if len(stmts) == 3 and after is not None:
        stmts = stmts + [after]
    if len(stmts) != 4 or not all(isinstance(s, ast.Assign) and len(s.targets) == 1 for s in stmts):
        return None
    load, add, store, back = stmts
    assert isinstance(load, ast.Assign) and isinstance(add, ast.Assign) and isinstance(store, ast.Assign) \
        and isinstance(back, ast.Assign)
    reg = _is_cell(load.value)
    t = load.targets[0]
    if reg is None or not (isinstance(t, ast.Name) or _slot(t) is not None):
        return None
    tl = ast.dump(_as_load(t))
    slot = _slot(back.targets[0])
    if slot is None or _slot(t) == slot or ast.dump(add.targets[0]) != ast.dump(t) or ast.dump(back.value) != tl:
        return None
    if _is_cell(store.targets[0]) != reg or ast.dump(store.value) != tl:
        return None
    if not _is_sum(add.value, _phv(slot), ast.unparse(_as_load(t)), _wrap_add):
        return None
    return reg, slot, tl


def _column_windows(stmts: list[ast.stmt], vec: VectorInfo, after: ast.stmt | None = None) -> list[ast.stmt]:
    """Rewrite 4c on a body: runs of `_column_op` elements at the register index `i` (unguarded: the generator
    proved it in range, or inside `if i < size:`), also in nested branches."""
    out: list[ast.stmt] = []
    k = 0
    while k < len(stmts):
        s = stmts[k]
        if isinstance(s, ast.If):
            nxt = stmts[k + 1] if k + 1 < len(stmts) else None
            s.body = _column_windows(s.body, vec, nxt)
            s.orelse = _column_windows(s.orelse, vec)
        ops: list[tuple[str, int, str]] = []
        j = k
        while j < len(stmts):
            op = _column_op(stmts[j:j + 4]) if j + 4 <= len(stmts) else None
            step = 4
            if op is None and j + 3 == len(stmts):
                op, step = _column_op(stmts[j:j + 3], after), 3
            if op is None or (ops and op[2] != ops[0][2]):
                break
            ops.append(op)
            j += step
        n = len(ops)
        regs = tuple(r for r, _s, _t in ops)
        first = ops[0][1] if ops else -1
        span = _fields_span(vec, first, n)
        t = stmts[k].targets[0] if ops else None  # type: ignore[attr-defined]
        if (n < _MIN_WINDOW or len(set(regs)) != n or not set(regs) <= vec.registers or span is None
                or [sl for _r, sl, _t in ops] != list(range(first, first + n))
                or (_slot(t) is not None and _slot(t) in vec.slots)):  # type: ignore[arg-type]
            out.append(s)
            k += 1
            continue
        fields, store = span  # type: ignore[misc]
        name = vec.columns.setdefault(regs, f"RC{len(vec.columns)}")
        lines = [f"_vw = {name}[i]", f"_vw += {fields}", store("_vw"),
                 f"{ast.unparse(_as_load(t))} = int(_vw[{n - 1}])"]  # type: ignore[arg-type]
        out.extend(ast.parse(x).body[0] for x in lines)
        k = j
    return out


def _copies_out(body: list[ast.stmt], n: int) -> bool:
    """Whether body is exactly `X0 = _v0; ...; X(n-1) = _v(n-1)` with distinct targets that are locals or constant
    slots, none read by another (a load of the window, nothing else)."""
    if len(body) != n:
        return False
    seen = set()
    for k, st in enumerate(body):
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.value, ast.Name)
                and st.value.id == f"_v{k}"):
            return False
        t = st.targets[0]
        key = t.id if isinstance(t, ast.Name) else _slot(t)
        if key is None or key in seen or (isinstance(key, str) and key.startswith("_v")):
            return False
        seen.add(key)
    return True


def _consecutive_slots(items: list[ast.expr]) -> ast.expr | None:
    """`F[a:a + n]` when items are F[a], F[a + 1], ..., else None."""
    slots = [_slot(x) for x in items]
    if not slots or slots[0] is None or slots != list(range(slots[0], slots[0] + len(slots))):
        return None
    ctx = items[0].ctx  # type: ignore[attr-defined]
    return ast.Subscript(value=ast.Name("F", ast.Load()), slice=ast.Slice(ast.Constant(slots[0]),
                                                                          ast.Constant(slots[0] + len(slots))), ctx=ctx)


def _forward_into_tuple(body: list[ast.stmt], names: list[str]) -> list[ast.expr]:
    """The values to write back for the cells `names`: a cell whose last store is a copy `_vk = X` (X a local or a
    constant slot that nothing stores to afterwards, _vk not read afterwards) is written from X and the copy is
    dropped from body (in place)."""
    values: list[ast.expr] = [ast.Name(nm, ast.Load()) for nm in names]
    drop: set[int] = set()
    for k, nm in enumerate(names):
        last = None
        for j, st in enumerate(body):
            if any(isinstance(t, ast.Name) and t.id == nm for x in st.targets for t in ast.walk(x)):  # type: ignore[attr-defined]
                last = j
        if last is None:
            continue
        st = body[last]
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)):
            continue
        src = st.value
        key: str | int | None = src.id if isinstance(src, ast.Name) else _slot(src)
        if key is None or (isinstance(key, str) and key.startswith("_v")):
            continue
        later = body[last + 1:]
        if any(isinstance(n, ast.Name) and n.id == nm for x in later for n in ast.walk(x)):
            continue  # _vk read again
        stored = (any(isinstance(n, ast.Name) and n.id == key and isinstance(n.ctx, ast.Store)
                      for x in later for n in ast.walk(x)) if isinstance(key, str)
                  else any(_slot(t) == key for x in later for t in ast.walk(x)))
        if stored:
            continue
        values[k] = copy.deepcopy(src)
        drop.add(last)
    body[:] = [st for j, st in enumerate(body) if j not in drop]
    return values


# --- 5. forwarded temporaries ----------------------------------------------------------------------------------
def _names(node: ast.AST, ctx: type) -> list[ast.Name]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)]


def _simple(s: ast.stmt) -> bool:
    """A plain assignment without calls (its evaluation has no effect but its stores)."""
    return isinstance(s, ast.Assign) and not any(
        isinstance(n, (ast.Call, ast.NamedExpr, ast.Lambda, ast.Await, ast.Yield, ast.YieldFrom))
        for n in ast.walk(s))


def _temp(s: ast.stmt) -> str | None:
    """t for a plain `t = E` with t a generated local."""
    if _simple(s) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):  # type: ignore[attr-defined]
        t = s.targets[0].id  # type: ignore[attr-defined]
        if t.startswith(("_f", "_v")):
            return t
    return None


def _dead_after(stmts: list[ast.stmt], start: int, t: str) -> bool:
    """Whether the value of local t is never read from stmts[start:] on: the first statement that mentions t must
    assign it without reading it. A t nobody mentions again may still be read after the block: live."""
    for s in stmts[start:]:
        if not any(isinstance(n, ast.Name) and n.id == t for n in ast.walk(s)):
            continue
        if not _simple(s):
            return False
        reads = any(n.id == t for n in _names(s, ast.Load))
        return not reads and any(isinstance(x, ast.Name) and x.id == t for x in s.targets)  # type: ignore[attr-defined]
    return False


def _forward_temporaries(stmts: list[ast.stmt]) -> list[ast.stmt]:
    out = list(stmts)
    for s in out:  # nested blocks first
        if isinstance(s, ast.If):
            s.body = _forward_temporaries(s.body)
            s.orelse = _forward_temporaries(s.orelse)
    k = 0
    while k < len(out) - 1:
        s, nxt = out[k], out[k + 1]
        t = _temp(s)
        if t is None or not _simple(nxt):
            k += 1
            continue
        uses = [n for n in _names(nxt.value, ast.Load) if n.id == t]  # type: ignore[attr-defined]
        in_targets = any(n.id == t for x in nxt.targets for n in ast.walk(x)  # type: ignore[attr-defined]
                         if isinstance(n, ast.Name) and not (x is n))
        redefined = any(isinstance(x, ast.Name) and x.id == t for x in nxt.targets)  # type: ignore[attr-defined]
        # A: substitute t = E into the one use in the next statement
        if len(uses) == 1 and not in_targets and (redefined or _dead_after(out, k + 2, t)):
            value = s.value  # type: ignore[attr-defined]

            class Sub(ast.NodeTransformer):
                def visit_Name(self, node: ast.Name) -> ast.AST:
                    return value if node is uses[0] else node

            nxt.value = Sub().visit(nxt.value)  # type: ignore[attr-defined]
            del out[k]
            continue
        # B: t = E; X1 = t; ...; Xm = t with t dead afterwards -> X1 = ... = Xm = E
        j = k + 1
        targets: list[ast.expr] = []
        while j < len(out) and _simple(out[j]) and len(out[j].targets) == 1 \
                and isinstance(out[j].value, ast.Name) and out[j].value.id == t \
                and not any(isinstance(n, ast.Name) and n.id == t for n in ast.walk(out[j].targets[0])):  # type: ignore[attr-defined]
            targets.append(out[j].targets[0])  # type: ignore[attr-defined]
            j += 1
        if targets and _dead_after(out, j, t):
            out[k:j] = [ast.Assign(targets=targets, value=s.value)]  # type: ignore[attr-defined]
        k += 1
    return out


# --- 6. common subexpressions -----------------------------------------------------------------------------------
_SAFE_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.BitAnd, ast.BitOr, ast.BitXor)


class _Expr:
    """A pure operation over locals and constants: its structural key, the names it reads, its operator count and
    its occurrences (node, top-level statement index)."""

    __slots__ = ("key", "names", "ops", "size", "where")

    def __init__(self, key: tuple, names: frozenset[str], ops: int, size: int) -> None:
        self.key, self.names, self.ops, self.size = key, names, ops, size
        self.where: list[tuple[ast.expr, int]] = []


def _scan(node: ast.AST, k: int, found: dict[tuple, _Expr]) -> tuple | None:
    """The structural key of `node` when it is a pure operation over locals and constants (one that cannot raise),
    recording every such operation with two or more operators under `found`; None otherwise (its operands are
    still scanned)."""
    if isinstance(node, ast.Name):
        if node.id in ("F", "D") or not (node.id.startswith(("_f", "_c")) or node.id == "i"):
            return None  # globals (registers, tables) could change under a call
        return ("n", node.id)
    if isinstance(node, ast.Constant):
        return ("k", node.value) if type(node.value) is int else None
    if isinstance(node, ast.BinOp):
        left, right = _scan(node.left, k, found), _scan(node.right, k, found)
        op = node.op
        ok = isinstance(op, _SAFE_BINOPS) or (
            isinstance(op, (ast.LShift, ast.RShift)) and isinstance(node.right, ast.Constant)
            and type(node.right.value) is int and 0 <= node.right.value < 256)
        if left is None or right is None or not ok:
            return None
        key = (type(op).__name__, left, right)
    elif isinstance(node, ast.UnaryOp):
        inner = _scan(node.operand, k, found)
        if inner is None or not isinstance(node.op, (ast.Invert, ast.USub, ast.Not)):
            return None
        key = (type(node.op).__name__, inner)
    else:
        for child in ast.iter_child_nodes(node):
            _scan(child, k, found)
        return None
    e = found.get(key)
    if e is None:
        names = frozenset(x[1] for x in _key_leaves(key) if x[0] == "n")
        ops = sum(1 for _ in _key_ops(key))
        e = found[key] = _Expr(key, names, ops, ops + sum(1 for _ in _key_leaves(key)))
    if e.ops >= 2:
        e.where.append((node, k))
    return key


def _key_leaves(key: tuple) -> Iterator[tuple]:
    if key[0] in ("n", "k"):
        yield key
    else:
        for sub in key[1:]:
            yield from _key_leaves(sub)


def _key_ops(key: tuple) -> Iterator[str]:
    if key[0] not in ("n", "k"):
        yield key[0]
        for sub in key[1:]:
            yield from _key_ops(sub)


def _cse_tree(stmts: list[ast.stmt], bound: set[str], serial: Iterator[int]) -> list[ast.stmt]:
    """Rewrite 6 in the blocks nested in `stmts` (knowing the names surely bound before each), then on `stmts`."""
    bound = set(bound)
    for st in stmts:
        if isinstance(st, ast.If):
            st.body = _cse_tree(st.body, bound, serial) or [ast.Pass()]
            st.orelse = _cse_tree(st.orelse, bound, serial)
        elif isinstance(st, ast.Assign):
            bound |= {n.id for t in st.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return _common_subexpressions(stmts, serial, bound)


def _common_subexpressions(stmts: list[ast.stmt], serial: Iterator[int] | None = None,
                           bound_before: set[str] = set(), rounds: int = 3) -> list[ast.stmt]:
    """Rewrite 6 over the simple statements at the top level of `stmts` (nested blocks have their own turn, see
    `_cse_tree`); names in `bound_before` are bound before the first statement. Each round takes every repeated
    operation worth sharing, largest first, that no operation already taken in the round contains."""
    out = list(stmts)
    serial = serial if serial is not None else itertools.count(_cse_serial(out))
    for _ in range(rounds):
        found: dict[tuple, _Expr] = {}
        for k, st in enumerate(out):
            if not isinstance(st, (ast.If, ast.For, ast.While, ast.With, ast.Try, ast.FunctionDef)):
                _scan(st, k, found)
        repeated = [e for e in found.values() if len(e.where) >= 2]
        if not repeated:
            return out
        memo: dict[int, set[str]] = {}

        def assigned(k: int) -> set[str]:
            if k not in memo:
                memo[k] = _assigned_names([out[k]])
            return memo[k]

        defined: list[set[str]] = []  # names surely bound before each statement (top-level assignments only)
        bound: set[str] = set(bound_before)
        for st in out:
            defined.append(set(bound))
            if isinstance(st, ast.Assign):
                bound |= {n.id for t in st.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        taken: dict[int, str] = {}     # id(occurrence node) -> the local replacing it
        inside: set[int] = set()       # ids of nodes under a taken occurrence
        inserts: list[tuple[int, str, ast.expr]] = []
        for e in sorted(repeated, key=lambda x: -x.size):
            where = [(n, k) for n, k in e.where if id(n) not in inside]
            if len(where) < 2:
                continue
            first, last = where[0][1], where[-1][1]
            if not e.names <= defined[first] or any(e.names & assigned(k) for k in range(first, last + 1)):
                continue
            name = f"_c{next(serial)}"
            inserts.append((first, name, copy.deepcopy(where[0][0])))
            for n, _k in where:
                taken[id(n)] = name
                inside.update(id(x) for x in ast.walk(n))
        if not inserts:
            return out

        class Replace(ast.NodeTransformer):
            def generic_visit(self, node: ast.AST) -> ast.AST:
                name = taken.get(id(node))
                if name is not None:
                    return ast.copy_location(ast.Name(name, ast.Load()), node)
                return super().generic_visit(node)

        out = [Replace().visit(st) for st in out]
        for first, name, value in sorted(inserts, key=lambda x: -x[0]):
            out.insert(first, ast.Assign([ast.Name(name, ast.Store())], value, lineno=0))
    return out


def _cse_serial(stmts: list[ast.stmt]) -> int:
    """The next free `_c<n>` number in `stmts`."""
    used = [int(n.id[2:]) for s in stmts for n in ast.walk(s) if isinstance(n, ast.Name) and n.id.startswith("_c")
            and n.id[2:].isdigit()]
    return max(used, default=-1) + 1


# --- regions of a pipeline function --------------------------------------------------------------------------
def fuse_regions(lines: list[str], vec: VectorInfo | None = None) -> list[str]:
    """A generated pipeline function (`def pipe_<n>(F):` and its body) with each maximal run of statements that
    qualify as one action body (no call gets `F`, constant slots only) optimised as one; the rest (table
    lookups that call an entry's function) unchanged, their nested blocks searched for runs of their own."""
    try:
        fn = ast.parse("\n".join(lines)).body[0]
    except SyntaxError:
        return lines
    if not isinstance(fn, ast.FunctionDef):
        return lines
    fn.body = _fuse_block(fn.body, vec) or [ast.Pass()]
    return ast.unparse(ast.fix_missing_locations(fn)).split("\n")


def _fuse_block(stmts: list[ast.stmt], vec: VectorInfo | None, ok: dict[int, bool] | None = None) -> list[ast.stmt]:
    ok = _qualifying(stmts, {}) if ok is None else ok
    out: list[ast.stmt] = []
    run: list[ast.stmt] = []

    def flush() -> None:
        if run:
            text = [line for st in run for line in ast.unparse(ast.fix_missing_locations(st)).split("\n")]
            done = optimize_body(text, vec)
            out.extend(ast.parse("\n".join(done)).body if done is not text else run)
            run.clear()

    for st in stmts:
        if ok[id(st)]:
            run.append(st)
            continue
        flush()
        if isinstance(st, ast.If):
            st.body = _fuse_block(st.body, vec, ok) or [ast.Pass()]
            st.orelse = _fuse_block(st.orelse, vec, ok)
        out.append(st)
    flush()
    return out


def _qualifying(stmts: list[ast.stmt], ok: dict[int, bool]) -> dict[int, bool]:
    """id(statement) -> whether it qualifies as part of one action body (`_qualifies`), for `stmts` and every
    statement nested in them, each node examined once."""
    for st in stmts:
        if isinstance(st, ast.If):
            _qualifying(st.body, ok)
            _qualifying(st.orelse, ok)
            ok[id(st)] = (_qualifies([ast.Expr(st.test)]) and all(ok[id(x)] for x in st.body)
                          and all(ok[id(x)] for x in st.orelse))
        else:
            ok[id(st)] = _qualifies([st])
    return ok


# --- 7. propagated constants -------------------------------------------------------------------------------------
def _propagate_constants(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """Rewrite 7 over the top level of one block: reads of a local holding a known int constant become it."""
    known: dict[str, int] = {}

    class Subst(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if isinstance(node.ctx, ast.Load) and node.id in known:
                return ast.copy_location(ast.Constant(known[node.id]), node)
            return node

    out = []
    for st in stmts:
        if not known:
            pass
        elif isinstance(st, ast.Assign):
            st.value = Subst().visit(st.value)
            for t in st.targets:
                if not isinstance(t, ast.Name):
                    Subst().visit(t)   # a register subscript's index
        elif isinstance(st, ast.AugAssign):
            st.value = Subst().visit(st.value)
        elif isinstance(st, ast.If):
            st.test = Subst().visit(st.test)
        elif isinstance(st, ast.Expr):
            st.value = Subst().visit(st.value)
        for name in _assigned_names([st]):
            known.pop(name, None)
        if (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
                and isinstance(st.value, ast.Constant) and type(st.value.value) is int
                and (st.targets[0].id.startswith("_f") or st.targets[0].id == "i")):
            known[st.targets[0].id] = st.value.value
        out.append(st)
    return out
