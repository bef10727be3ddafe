"""Copy-in/copy-out of directional parameters (P4_16 spec §6.8), as p4c's `RemoveActionParameters` lowers it.

At a call, every `in`/`inout` argument is evaluated (left to right) and copied into a fresh variable standing for
the parameter; `out` parameters start uninitialized (on BMv2: a fresh scalar, i.e. 0, or an invalid header). When
the callee returns, every `out`/`inout` parameter is copied back to its argument, left to right, so writes the callee
made directly to the argument's storage are overwritten. p4c inserts the copy-out also before each `exit` in the body.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from compiler import ast
from compiler.inline_calls import aliased_args, header_resets, location_path
from compiler.lower_context import LowerContext, Storage
from compiler.typecheck import describe, start_of
from compiler.types import StackT


@dataclass
class CopyInOut:
    """The parameter storages of one call plus the statements that copy the arguments in and out."""

    bind: dict[ast.Node, Storage] = field(default_factory=dict)
    copy_in: list[ast.Stmt] = field(default_factory=list)
    copy_out: list[ast.Stmt] = field(default_factory=list)


def param_ref(lc: LowerContext, p: ast.Param, at: ast.Node) -> ast.Name:
    """A synthetic name expression denoting parameter `p` (typed and resolved like a written one)."""
    n = ast.Name(at.loc, p.name)
    lc.info.refs[n] = p
    lc.info.types[n] = lc.info.types[p]
    return n


def copy_in_out(lc: LowerContext, params: list[ast.Param], args: list[ast.Expr],
                body: ast.Node | None = None, xl: object = None) -> CopyInOut:
    """Fresh storage for each directional parameter in `params` and the copy statements for `args`. A header stack
    argument (no stack temporaries here) is used in place when that cannot be told apart: no other argument overlaps
    it and `body` (the callee) does not name its root; `xl` (an ExprLowerer of the caller) locates it."""
    out = CopyInOut()
    aliased = aliased_args(lc.info, params, args)
    for p, arg in zip(params, args):
        t = lc.info.types[p]
        if isinstance(t, StackT):
            path = location_path(lc.info, arg)
            named = body is not None and path is not None and \
                any(lc.info.refs.get(n) is path[0] for n in ast.walk(body) if isinstance(n, ast.Name))
            if path is None or p in aliased or body is None or named or xl is None:
                raise lc.unsupported(start_of(arg), f"header stack argument '{describe(arg)}' for {p.direction} "
                                                    f"parameter '{p.name}' here")
            out.bind[p] = xl.locate(arg)  # type: ignore[attr-defined]
            continue
        out.bind[p] = lc.local_storage(p.name, t, p)
        if p.direction in ("in", "inout") or p.direction is None:
            out.copy_in.append(ast.AssignStmt(arg.loc, param_ref(lc, p, arg), arg))
        else:  # out: headers inside it start invalid (p4c's ResetHeaders of the new variable)
            out.copy_in.extend(header_resets(lc.info, param_ref(lc, p, arg), t))
        if p.direction in ("out", "inout") and not isinstance(arg, ast.DontCare):
            out.copy_out.append(ast.AssignStmt(arg.loc, arg, param_ref(lc, p, arg)))
    return out


def insert_before_exits(prims: list[dict], copy_out: list[dict]) -> list[dict]:
    """The primitives `prims` with `copy_out` inserted before every `exit` (p4c's InsertBeforeExits)."""
    if not copy_out:
        return prims
    res: list[dict] = []
    for p in prims:
        if p.get("op") == "exit":
            res.extend(copy.deepcopy(copy_out))
        res.append(p)
    return res

