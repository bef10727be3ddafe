"""Vector headers: a header of many bit<32> fields kept as one numpy array from parse to deparse (untraced code).

A payload header such as SwitchML's 64 x bit<32> elements costs the generated code one Python int per field at
parse, one add and mask per field at each register update and one pack argument per field at deparse. In a program
with such a header and a bit<32> register, whose register windows over the header (`values[base + k] += hdr.d_k`,
optimize.py rewrites 4v and 4c) can then be array operations, the untraced code keeps the header's fields as one
array in an extra PHV slot `F[vslot]`:

- parse: `F[vslot]` is a read-only big-endian view of the frame (`_vload`), no copy;
- register windows: one numpy operation on a view of the register (`RV<id>`, the same array as `R<id>`), modulo
  2^32 by uint32 arithmetic, exactly BMv2's truncation of a bit<32> result;
- deparse: the array's bytes (`_vbytes`).

The arrays are never changed in place once stored in `F` (a new array replaces the old one), so the PHV copies of
multicast, clone and resubmit may share them; a whole-header copy between two vector headers is one reference.
Every other access to the header's fields (a condition on one element, a table key, a checksum over them) is
rewritten by `finish_module` into an element access on the array: exact, only slower. So a header accessed element
by element in a straight-line run of more than MAX_HOT_ELEMENTS accesses on a common path (anywhere but the
out-of-range branch of a register window or bounds check) stays scalar, and so does every header of a program with
an access `finish_module` cannot prove safe (a computed PHV index, a slice cutting through a header):
`NotVectorizable` names them and the switch builds again without them. Registers a window turned into numpy arrays
(`RegisterArray.vectorize`, or the columns of one 2-D array: `join_columns`) stay arrays; scalar reads of them
anywhere, traced code included, become `int(R[i])`, so no numpy scalar leaks into Python-int arithmetic.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from switch.sim.program import HeaderLayout, Program

MIN_VECTOR = 8        # fields that make an array worth it (numpy calls cost ~0.3 us each)
MAX_HOT_ELEMENTS = 8  # element accesses in one statement list (outside window fallbacks) a vector header may have
BE32 = np.dtype(">u4")
U32 = np.dtype(np.uint32)


class NotVectorizable(Exception):
    """The generated module accesses vector headers in a way `finish_module` does not rewrite (`headers` None), or
    works on the named ones element by element on its common paths (then build with the others only)."""

    def __init__(self, why: str, headers: set[str] | None = None) -> None:
        super().__init__(why)
        self.headers = headers


@dataclass(frozen=True)
class VectorHeader:
    """A header stored as one array: fields in slots [first, first + n) of the scalar layout, the array in `vslot`."""

    name: str
    first: int
    n: int
    vslot: int

    def owns(self, slot: int) -> bool:
        return self.first <= slot < self.first + self.n


def candidates(prog: Program) -> list[HeaderLayout]:
    """Headers that can be vector headers: packet headers (not metadata, not in a stack or union, no varbit field)
    of at least MIN_VECTOR fields, all bit<32>, in consecutive slots; only when some register is bit<32>."""
    regs = prog.json.get("register_arrays", [])
    if not any(r.get("bitwidth") == 32 for r in regs):
        return []
    out = []
    for hl in prog.headers.values():
        if hl.metadata or hl.stack is not None or hl.union_siblings or hl.vl or len(hl.fields) < MIN_VECTOR:
            continue
        if any(w != 32 or signed for _n, w, signed in hl.fields):
            continue
        slots = [hl.slots[n] for n, _w, _s in hl.fields]
        if slots != list(range(slots[0], slots[0] + len(slots))):
            continue
        if any(hl.name in st.headers for st in prog.stacks.values()):
            continue
        out.append(hl)
    return out


# --- run-time helpers (in the generated module's namespace) ----------------------------------------------------
def _vbytes_fn() -> Callable[[np.ndarray], bytes]:
    """`_vbytes(a)`: the header's bytes on the wire. The replicas of a multicast share the array (arrays in F are
    never changed in place), so the bytes of the last array are kept and handed out again for the same object."""
    last: list[Any] = [None, b""]  # holding the array keeps its id from being reused

    def _vbytes(a: np.ndarray) -> bytes:
        if a is last[0]:
            return last[1]
        b = a.astype(BE32, copy=False).tobytes()
        last[0], last[1] = a, b
        return b
    return _vbytes


def _vput(a: np.ndarray, k: int, v: int) -> np.ndarray:
    """A copy of `a` with element k set to v (arrays in F are never changed in place)."""
    b = a.astype(U32)
    b[k] = v
    return b


def _vsplice(a: np.ndarray, k: int, values: Any) -> np.ndarray:
    """A copy of `a` with elements k.. replaced by `values`."""
    b = a.astype(U32)
    b[k:k + len(values)] = values
    return b


_INT32_MIN, _INT32_MAX = np.int64(-2**31), np.int64(2**31 - 1)


def _vsat32(cells: np.ndarray, fields: np.ndarray) -> None:
    """cells := (bit<32>)((int<32>)fields |+| (int<32>)cells), in place: the sum saturates at int<32>'s bounds."""
    s = cells.view(np.int32).astype(np.int64)
    s += fields.astype(U32, copy=False).view(np.int32)
    np.maximum(s, _INT32_MIN, out=s)  # not np.clip: its Python wrapper costs 4x the two ufuncs per packet
    np.minimum(s, _INT32_MAX, out=s)
    cells[:] = s.astype(np.int32).view(U32)


@functools.cache
def _vfill(n: int, c: int) -> np.ndarray:
    """The n-element array of constant c (a header zeroed by add_header, or every field set to one constant),
    read-only and shared: arrays in F are never changed in place."""
    a = np.full(n, c, dtype=U32)
    a.setflags(write=False)
    return a


def _vtake(values: Any) -> np.ndarray:
    """A new array from n Python ints or an array."""
    return np.array(values, dtype=U32)


def _vload_fn(n: int) -> Callable[[Any, int], np.ndarray]:
    """`_vload(data, pos)`: the n big-endian words at pos, a read-only view when data is bytes."""
    frombuffer = np.frombuffer

    def _vload(data: Any, pos: int) -> np.ndarray:
        a = frombuffer(data, BE32, n, pos)
        return a if type(data) is bytes else a.copy()
    return _vload


def _vzero(n: int) -> np.ndarray:
    """The array of a header that was never extracted (all fields 0), read-only."""
    z = np.zeros(n, dtype=BE32)
    z.setflags(write=False)
    return z


def join_columns(regs: list[Any]) -> np.ndarray:
    """One (size, len(regs)) uint32 array whose column k holds register regs[k] (RegisterArray), which from now on
    is a view of it; the values are kept. Registers already joined in this order keep their array."""
    shared = regs[0].columns
    if shared is not None and all(ra.columns is shared for ra in regs) and shared.shape[1] == len(regs):
        return shared
    sizes = {ra.size for ra in regs}
    if len(sizes) != 1 or any(ra.bitwidth != 32 for ra in regs):
        raise NotVectorizable("column registers of different sizes or widths")
    g = np.empty((sizes.pop(), len(regs)), dtype=U32)
    for k, ra in enumerate(regs):
        g[:, k] = ra.values
    for k, ra in enumerate(regs):
        ra.values = g[:, k]
        ra.columns = g
    return g


def namespace(vectors: list[VectorHeader]) -> dict[str, Any]:
    ns: dict[str, Any] = {"_vbytes": _vbytes_fn(), "_vput": _vput, "_vsplice": _vsplice, "_vtake": _vtake,
                          "_vsat32": _vsat32, "_vfill": _vfill}
    for v in vectors:
        ns[f"_vload{v.n}"] = _vload_fn(v.n)
    return ns


def template(tpl: list[Any], vectors: list[VectorHeader]) -> list[Any]:
    """The PHV template extended by the vector slots (zero arrays)."""
    out = list(tpl)
    for v in sorted(vectors, key=lambda v: v.vslot):
        while len(out) <= v.vslot:
            out.append(0)
        out[v.vslot] = _vzero(v.n)
    return out


# --- the module pass -----------------------------------------------------------------------------------------------
def _const_slot(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _phv_slot(node: ast.AST) -> int | None:
    """k of `F[k]` with a constant k."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "F":
        return _const_slot(node.slice)
    return None


def _call(fn: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Name(fn, ast.Load()), args=list(args), keywords=[])


def _vec_ref(v: VectorHeader, ctx: ast.expr_context | None = None) -> ast.Subscript:
    return ast.Subscript(value=ast.Name("F", ast.Load()), slice=ast.Constant(v.vslot), ctx=ctx or ast.Load())


class _Rewriter(ast.NodeTransformer):
    """Element accesses to vector headers and scalar reads of numpy registers (see module docstring)."""

    def __init__(self, vectors: list[VectorHeader], numpy_regs: set[str]) -> None:
        self.vectors = vectors
        self.numpy_regs = numpy_regs
        self.busy: set[str] = set()  # headers with a straight-line run of many element accesses on a common path
        self.cold = 0
        self.counts: list[dict[str, int]] = []  # element accesses per vector of each open statement list

    def count(self, v: VectorHeader) -> None:
        if not self.cold and self.counts:
            c = self.counts[-1]
            c[v.name] = c.get(v.name, 0) + 1
            if c[v.name] > MAX_HOT_ELEMENTS:
                self.busy.add(v.name)

    def visit_If(self, node: ast.If) -> ast.AST:
        node.test = self.visit(node.test)
        node.body = self.block(node.body)
        # out-of-range branches run rarely: of a hoisted window (optimize.py rewrite 3: `lo <= base <= hi`) and of a
        # register bounds check (`i < size`)
        t = node.test
        cold = isinstance(t, ast.Compare) and (
            (len(t.ops) == 2 and all(isinstance(o, ast.LtE) for o in t.ops)
             and isinstance(t.left, (ast.Constant, ast.UnaryOp)))
            or (len(t.ops) == 1 and isinstance(t.ops[0], ast.Lt) and isinstance(t.left, ast.Name)
                and t.left.id == "i" and isinstance(t.comparators[0], ast.Constant)))
        self.cold += cold
        node.orelse = self.block(node.orelse)
        self.cold -= cold
        return node

    def generic_visit(self, node: ast.AST) -> ast.AST:
        """As NodeTransformer's, with statement lists going through `block`."""
        for name, value in ast.iter_fields(node):
            if isinstance(value, list):
                if value and isinstance(value[0], ast.stmt):
                    setattr(node, name, self.block(value))
                else:
                    setattr(node, name, [self.visit(x) if isinstance(x, ast.AST) else x for x in value])
            elif isinstance(value, ast.AST):
                setattr(node, name, self.visit(value))
        return node

    def block(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        """A statement list with whole-header copies between vector headers collapsed, then rewritten."""
        self.counts.append({})
        try:
            return self._block(stmts)
        finally:
            self.counts.pop()

    def _block(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        i = 0
        while i < len(stmts):
            fill = self.header_fill(stmts, i)
            if fill is not None:
                v, c = fill
                value = _call("_vfill", ast.Constant(v.n), ast.Constant(c))
                out.append(ast.copy_location(ast.Assign(targets=[_vec_ref(v, ast.Store())], value=value), stmts[i]))
                i += v.n
                continue
            copy = self.header_copy(stmts, i)
            if copy is not None:
                dst, src = copy
                out.append(ast.copy_location(ast.Assign(targets=[_vec_ref(dst, ast.Store())], value=_vec_ref(src)),
                                             stmts[i]))
                i += dst.n
                continue
            r = self.visit(stmts[i])
            out.extend(r if isinstance(r, list) else [r])
            i += 1
        return out

    def header_fill(self, stmts: list[ast.stmt], i: int) -> tuple[VectorHeader, int] | None:
        """(header, c) when stmts[i:] start with `F[d + k] = c` for every field k of a vector header and one constant
        c (add_header's zeroing, or a program setting every element): one shared constant array."""
        st = stmts[i]
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.value, ast.Constant)):
            return None
        d, c = _phv_slot(st.targets[0]), st.value.value
        v = next((v for v in self.vectors if v.first == d), None)
        if v is None or type(c) is not int or not 0 <= c < 1 << 32 or i + v.n > len(stmts):
            return None
        for k in range(v.n):
            x = stmts[i + k]
            if not (isinstance(x, ast.Assign) and len(x.targets) == 1 and _phv_slot(x.targets[0]) == d + k
                    and isinstance(x.value, ast.Constant) and x.value.value == c):
                return None
        return v, c

    def header_copy(self, stmts: list[ast.stmt], i: int) -> tuple[VectorHeader, VectorHeader] | None:
        """(dst, src) when stmts[i:] start with `F[d + k] = F[s + k]` for every field k of two vector headers of the
        same size (assign_header): arrays in F are never changed in place, so the copy may share the array."""
        st = stmts[i]
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Subscript)
                and isinstance(st.value, ast.Subscript)):
            return None
        d, s = _phv_slot(st.targets[0]), _phv_slot(st.value)
        dst = next((v for v in self.vectors if v.first == d), None)
        src = next((v for v in self.vectors if v.first == s), None)
        if dst is None or src is None or dst.n != src.n or i + dst.n > len(stmts):
            return None
        for k in range(dst.n):
            x = stmts[i + k]
            if not (isinstance(x, ast.Assign) and len(x.targets) == 1 and _phv_slot(x.targets[0]) == d + k
                    and _phv_slot(x.value) == s + k):
                return None
        return dst, src

    def owner(self, slot: int) -> VectorHeader | None:
        for v in self.vectors:
            if v.owns(slot):
                return v
        return None

    def phv(self, node: ast.Subscript) -> tuple[VectorHeader, int | tuple[int, int]] | None:
        """(vector, element or (lo, hi)) of an F[...] subscript touching a vector header; None when it does not."""
        if not (isinstance(node.value, ast.Name) and node.value.id == "F"):
            return None
        s = node.slice
        k = _const_slot(s)
        if k is not None:
            v = self.owner(k)
            return (v, k - v.first) if v is not None else None
        if isinstance(s, ast.Slice) and s.step is None:
            lo = _const_slot(s.lower) if s.lower is not None else 0
            hi = _const_slot(s.upper) if s.upper is not None else None
            if lo is None or hi is None:
                if self.vectors:
                    raise NotVectorizable("a PHV slice with computed bounds")
                return None
            for v in self.vectors:
                if lo < v.first + v.n and v.first < hi:
                    if lo < v.first or hi > v.first + v.n:
                        raise NotVectorizable(f"a PHV slice [{lo}:{hi}] cuts through vector header {v.name}")
                    return v, (lo - v.first, hi - v.first)
            return None
        if self.vectors:
            raise NotVectorizable("a computed PHV index")
        return None

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        node.value = self.visit(node.value)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
            hit = self.phv(node.targets[0])
            if hit is not None:
                v, at = hit
                self.count(v)
                arr = _vec_ref(v)
                if isinstance(at, int):
                    value: ast.expr = _call("_vput", arr, ast.Constant(at), node.value)
                elif at == (0, v.n):
                    value = _call("_vtake", node.value)
                else:
                    value = _call("_vsplice", arr, ast.Constant(at[0]), node.value)
                return ast.copy_location(ast.Assign(targets=[_vec_ref(v, ast.Store())], value=value), node)
        for t in node.targets:
            for sub in ast.walk(t):
                if isinstance(sub, ast.Subscript) and self.phv(sub) is not None:
                    raise NotVectorizable("a vector header element in a multiple or unpacking assignment")
        node.targets = [self.visit_target(t) for t in node.targets]
        return node

    def visit_target(self, t: ast.expr) -> ast.expr:
        # register stores stay as they are (numpy converts a masked Python int); visit their index expressions
        if isinstance(t, ast.Subscript):
            t.slice = self.visit(t.slice)
            return t
        return self.visit(t)

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        if isinstance(node.target, ast.Subscript) and (self.phv(node.target) is not None or self.reg(node.target)):
            load = ast.Subscript(value=node.target.value, slice=node.target.slice, ctx=ast.Load())
            plain = ast.Assign(targets=[node.target], value=ast.BinOp(left=load, op=node.op, right=node.value))
            return self.visit_Assign(ast.copy_location(plain, node))
        self.generic_visit(node)
        return node

    def reg(self, node: ast.Subscript) -> bool:
        return isinstance(node.value, ast.Name) and node.value.id in self.numpy_regs

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if isinstance(node.ctx, ast.Load):
            hit = self.phv(node)
            if hit is not None:
                v, at = hit
                self.count(v)
                if isinstance(at, int):
                    elem = ast.Subscript(value=_vec_ref(v), slice=ast.Constant(at), ctx=ast.Load())
                    return ast.copy_location(_call("int", elem), node)
                arr: ast.expr = _vec_ref(v)
                if at != (0, v.n):
                    arr = ast.Subscript(value=arr, slice=ast.Slice(ast.Constant(at[0]), ast.Constant(at[1])),
                                        ctx=ast.Load())
                tolist = ast.Attribute(value=arr, attr="tolist", ctx=ast.Load())
                return ast.copy_location(ast.Call(func=tolist, args=[], keywords=[]), node)
            if self.reg(node):
                node.slice = self.visit(node.slice)
                if isinstance(node.slice, ast.Slice):
                    tolist = ast.Attribute(value=node, attr="tolist", ctx=ast.Load())
                    return ast.copy_location(ast.Call(func=tolist, args=[], keywords=[]), node)
                return ast.copy_location(_call("int", node), node)
        self.generic_visit(node)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.numpy_regs and isinstance(node.ctx, ast.Load):
            # bare uses (the subscripts were handled above): the register passed or bound whole
            raise NotVectorizable(f"register {node.id} used other than by index")
        return node


def finish_module(source: str, vectors: list[VectorHeader], numpy_regs: set[str]) -> str:
    """The module with every remaining access to a vector header's scalar slots and every scalar read of a numpy
    register rewritten (module docstring); NotVectorizable if an access cannot be rewritten."""
    if not vectors and not numpy_regs:
        return source
    tree = ast.parse(source)
    rw = _Rewriter(vectors, numpy_regs)
    tree.body = rw.block(tree.body)
    if rw.busy:
        raise NotVectorizable(f"element-wise accesses on the common path of {sorted(rw.busy)}", rw.busy)
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"
