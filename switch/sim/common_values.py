"""Common values in an action's primitives (untraced code only): a temporary that recomputes a value another field
already holds is dropped and its reads read that field.

p4c's front end propagates copies, so `meta.slot = hdr.x & 0xff; r0.read(v, meta.slot); r0.write(meta.slot, v)`
reaches the BMv2 JSON as `meta.slot = ...; tmp = hdr.x & 0xff; register_read(v, r0, tmp); tmp_0 = hdr.x & 0xff;
register_write(r0, tmp_0, v)`: a fresh temporary per access, each assigned the same expression. The generated code
then recomputes the index before every access, and the optimiser's register windows (optimize.py), which need one
index, do not apply: agg64 ran 3x slower from p4c's JSON than from ours. After this pass both JSONs give the same
code.

Likewise a temporary assigned an expression once is substituted into its reads (p4c's `tmp_1 = base + 1;
register_read(v, r, tmp_1); register_write(r, tmp_1, x)` becomes `register_read(v, r, base + 1); register_write(r,
base + 1, x)`, the form our compiler writes and the optimiser's hoisted bounds checks and register windows
recognise), when no field the expression reads is written before its last read (and, read more than once, the
expression is small).

Exact by construction. An `assign` of field T is dropped, and T's later reads become reads of field X, only when:
- X was assigned the same value earlier in the action (the same JSON expression), and neither X nor any field that
  expression reads has been written since;
- T is metadata (p4c's "scalars") assigned once in the action and read only after that assignment, and no other
  part of the program (another action, a table key, a condition, a parser, a deparser, a calculation, a field
  list) names T, so its final value is never observed;
- nothing after the assignment writes X (a primitive whose writes are not known counts as writing everything).
"""

from __future__ import annotations

import copy
import json
from typing import Any, Iterator

__all__ = ["simplify_actions"]

Field = tuple[str, str]

_WRITES_FIRST = {"assign", "register_read", "modify_field_with_hash_based_offset", "modify_field_rng_uniform"}
"""Primitives that write exactly their first parameter (a field) and nothing else of the PHV."""
_WRITE_NOTHING = {"register_write", "count", "log_msg", "assert", "assume"}
"""Primitives that write no PHV field."""


def _field_refs(node: Any) -> Iterator[Field]:
    """Every field an (expression) parameter reads, in any nesting."""
    if isinstance(node, dict):
        if node.get("type") == "field" and isinstance(node.get("value"), list) and len(node["value"]) == 2:
            yield (str(node["value"][0]), str(node["value"][1]))
        for v in node.values():
            yield from _field_refs(v)
    elif isinstance(node, list):
        for v in node:
            yield from _field_refs(v)


def _writes(prim: dict) -> set[Field] | None:
    """The fields a primitive writes; None when not known (then anything)."""
    op, ps = prim.get("op"), prim.get("parameters", [])
    if op in _WRITE_NOTHING:
        return set()
    if op in _WRITES_FIRST and ps and ps[0].get("type") == "field":
        return {(str(ps[0]["value"][0]), str(ps[0]["value"][1]))}
    return None


def _first_read(prim: dict) -> int:
    """Index of the first parameter the primitive reads: 1 when the first is the field it writes, else 0 (a
    destination such as a header stack element at a computed index reads that index)."""
    ps = prim.get("parameters", [])
    return 1 if prim.get("op") in _WRITES_FIRST and ps and ps[0].get("type") == "field" else 0


def _reads(prim: dict) -> list[Field]:
    ps = prim.get("parameters", [])
    return [f for p in ps[_first_read(prim):] for f in _field_refs(p)]


def _owners(j: dict) -> dict[Field, set[Any]]:
    """Field -> where it is named: action ids, or "program" for anything outside actions."""
    out: dict[Field, set[Any]] = {}
    for key, part in j.items():
        if key == "actions":
            for a in part:
                for f in _field_refs(a.get("primitives", [])):
                    out.setdefault(f, set()).add(a.get("id"))
        else:
            for f in _field_refs(part):
                out.setdefault(f, set()).add("program")
    return out


def _rename(node: Any, names: dict[Field, Field]) -> Any:
    if isinstance(node, dict):
        if node.get("type") == "field" and isinstance(node.get("value"), list) and len(node["value"]) == 2:
            f = (str(node["value"][0]), str(node["value"][1]))
            if f in names:
                return {**node, "value": list(names[f])}
        return {k: _rename(v, names) for k, v in node.items()}
    if isinstance(node, list):
        return [_rename(v, names) for v in node]
    return node


def _simplify(prims: list[dict], private: set[Field]) -> list[dict] | None:
    """The primitives of one straight-line action with common values shared; None when nothing changes."""
    writes = [_writes(p) for p in prims]
    assigned: dict[Field, int] = {}
    first_read: dict[Field, int] = {}
    for i, p in enumerate(prims):
        for f in _reads(p):
            first_read.setdefault(f, i)
        for f in writes[i] or ():
            assigned[f] = assigned.get(f, 0) + 1

    def written_after(x: Field, i: int) -> bool:
        return any(w is None or x in w for w in writes[i + 1:])

    held: dict[str, Field] = {}  # JSON of a value -> the field holding it
    names: dict[Field, Field] = {}
    out: list[dict] = []
    for i, p in enumerate(prims):
        ps = p.get("parameters", [])
        k = _first_read(p)
        p = {**p, "parameters": ps[:k] + _rename(ps[k:], names)}
        w = writes[i]
        if p["op"] == "assign" and w:
            (t,) = w
            value = p["parameters"][1]
            key = json.dumps(value, sort_keys=True)
            x = held.get(key)
            if (x is not None and x != t and t in private and assigned.get(t) == 1
                    and first_read.get(t, len(prims)) > i and not written_after(x, i)):
                names[t] = x
                continue
        if w is None:
            held.clear()
        else:
            for f in w:
                for key in [k for k, h in held.items() if h == f or f in set(_field_refs(json.loads(k)))]:
                    del held[key]
        if p["op"] == "assign" and w:
            (t,) = w
            value = p["parameters"][1]
            if t not in set(_field_refs(value)) and value.get("type") in ("expression", "field"):
                held.setdefault(json.dumps(value, sort_keys=True), t)
        out.append(p)
    return out if names else None


MAX_INLINED_OPS = 3
"""Operators an expression may have to be substituted into more than one read (recomputing it is then cheaper than
the temporary's store and loads)."""


def _ops(node: Any) -> int:
    if isinstance(node, dict):
        return ("op" in node) + sum(_ops(v) for v in node.values())
    if isinstance(node, list):
        return sum(_ops(v) for v in node)
    return 0


def _inline_temporaries(prims: list[dict], private: set[Field]) -> list[dict] | None:
    """Private temporaries assigned an expression once and read later, with nothing that expression reads written
    before their last read, substituted into their reads (p4c's `tmp_1 = base + 1; register_read(v, r, tmp_1);
    register_write(r, tmp_1, x)`); None when there are none."""
    reads: dict[Field, list[int]] = {}
    assigned: dict[Field, list[int]] = {}
    writes = [_writes(p) for p in prims]
    for i, p in enumerate(prims):
        for f in _reads(p):
            reads.setdefault(f, []).append(i)
        for f in writes[i] or ():
            assigned.setdefault(f, []).append(i)
    subst: dict[int, tuple[Field, dict]] = {}   # reader index -> (temporary, its expression)
    dropped: set[int] = set()
    for i, p in enumerate(prims):
        w = writes[i]
        if p.get("op") != "assign" or not w:
            continue
        (t,) = w
        value = p["parameters"][1]
        at = reads.get(t, [])
        if i in subst:
            continue  # its value reads a temporary substituted away (tmp = ~x; x1 = tmp; y = x1 + x1): keep it
        if (t not in private or assigned.get(t) != [i] or not at or at[0] <= i
                or value.get("type") != "expression" or t in set(_field_refs(value))
                or (len(at) > 1 and _ops(value) > MAX_INLINED_OPS)):
            continue
        last = at[-1]
        inputs = set(_field_refs(value))
        if any(j in subst for j in at) or any(writes[k] is None or inputs & writes[k] for k in range(i + 1, last)):
            continue
        if any(k in dropped for k in range(i + 1, last)):
            continue  # keep substitutions independent of each other
        for j in at:
            subst[j] = (t, value)
        dropped.add(i)
    if not dropped:
        return None
    out = []
    for i, p in enumerate(prims):
        if i in dropped:
            continue
        if i in subst:
            t, value = subst[i]
            ps = p["parameters"]
            k = _first_read(p)
            p = {**p, "parameters": ps[:k] + _replace(ps[k:], t, value)}
        out.append(p)
    return out


def _replace(node: Any, t: Field, value: dict) -> Any:
    if isinstance(node, dict):
        if node.get("type") == "field" and isinstance(node.get("value"), list) and tuple(node["value"]) == t:
            return value
        return {k: _replace(v, t, value) for k, v in node.items()}
    if isinstance(node, list):
        return [_replace(v, t, value) for v in node]
    return node


def simplify_actions(j: dict) -> dict:
    """`j` with common values shared in every straight-line action (a copy; `j` itself when nothing changes)."""
    owners = None
    result = j
    for k, a in enumerate(j.get("actions", [])):
        prims = a.get("primitives", [])
        if len(prims) < 2 or any(p.get("op") in ("_jump", "_jump_if_zero") for p in prims):
            continue
        if owners is None:
            owners = _owners(j)
        # only metadata the program names nowhere else: a header's fields are deparsed, the architecture reads
        # standard_metadata; p4c puts user metadata and its temporaries in "scalars"
        private = {f for f, where in owners.items() if where == {a.get("id")} and f[0] == "scalars"}
        shared = _simplify(prims, private)
        new = _inline_temporaries(shared or prims, private) or shared
        if new is None:
            continue
        if result is j:
            result = {**j, "actions": copy.copy(j["actions"])}
        result["actions"][k] = {**a, "primitives": new}
    return result
