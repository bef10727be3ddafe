"""Structured code generation for an untraced pipeline: the whole control graph becomes one Python function.

p4c emits a control's `if`/`else` nesting and its table chain as a DAG of table and conditional nodes (JSON
`next_tables`, `true_next` / `false_next`). Calling one Python function per node and dispatching on the returned
next node costs a call and a dict lookup per node; here the DAG is turned back into nested `if`/`else` blocks: at
a node with several successors the branches are generated up to the node's immediate post-dominator (where every
path from the node joins again), and generation goes on from there. A graph that is not series-parallel would get
the shared parts of its branches duplicated; beyond a small budget (or a nesting depth Python's parser would
refuse) the generator gives up and the caller keeps the node-function scheme.

Keyless tables with a const default action (p4c's `tbl_<file><line>` wrappers of straight-line statements) always
run that action with that data (BMv2 refuses to change such a default: DEFAULT_ACTION_IS_CONST), so its body is
inlined; the straight-line runs of inlined bodies and conditionals between lookups are then optimised as one
action body (optimize.fuse_regions: PHV slots in locals across the run, common subexpressions). Other tables dispatch on the entry's action id to inlined
bodies of their small actions (the entry's data bound to `D`), falling back to the entry's compiled function.
"""

from __future__ import annotations

from typing import Any

from switch.sim.optimize import fuse_regions
from switch.sim.program import P_EXIT
from switch.sim.tables import ActionInfo

MAX_DEPTH = 40          # nesting levels of generated blocks (Python's tokenizer stops at 100 indents)
DUPLICATION_BUDGET = 2  # emitted nodes may be at most this multiple of the graph's nodes (+ 16)
INLINE_LINES = 16       # actions of a table up to this many lines run inline (no call through the entry)


class Unstructured(Exception):
    """The graph does not fit the budget: generate node functions instead."""


class FlowGen:
    """Mixin of Codegen (see codegen.py for the shared state: self.p, self.j, self.ns, self.out, self.trace)."""

    def structured_pipeline(self, pi: int, pl: dict, keys: dict[str, tuple[str, str]]) -> list[str] | None:
        """Lines of `def pipe_<pi>(F)` running the whole pipeline `pl`, or None when the graph is unstructured.
        `keys[table] = (kind, key source)` as PipelineGen.table_key computes them."""
        tables = {t["name"]: t for t in pl.get("tables", [])}
        conds = {c["name"]: c for c in pl.get("conditionals", [])}
        succ: dict[str, list[str | None]] = {}
        try:
            for name, t in tables.items():
                succ[name] = [b for _label, b in self._table_branches(t)]
        except Unstructured:
            return None
        for name, c in conds.items():
            succ[name] = [c.get("true_next"), c.get("false_next")]
        for name, ss in succ.items():
            for s in ss:
                if s is not None and s not in succ:
                    return None  # unknown node: let the node-function generator report it
        ipdom = _immediate_post_dominators(succ)
        self._flow_budget = DUPLICATION_BUDGET * len(succ) + 16
        lines = [f"def pipe_{pi}(F):"]
        try:
            body = self._region(pl.get("init_table"), None, 1, tables, conds, ipdom, keys)
        except Unstructured:
            return None
        lines.extend(body or ["    pass"])
        return fuse_regions(lines, self.vec_info)

    # --- regions -----------------------------------------------------------------------------------------------
    def _region(self, n: str | None, stop: str | None, depth: int, tables: dict, conds: dict,
                ipdom: dict[str, str | None], keys: dict) -> list[str]:
        """Code running node `n` and its successors up to (not including) node `stop`."""
        if depth > MAX_DEPTH:
            raise Unstructured("too deep")
        pad = "    " * depth
        out: list[str] = []
        while n is not None and n != stop:
            self._flow_budget -= 1
            if self._flow_budget < 0:
                raise Unstructured("too much duplication")
            if n in conds:
                c = conds[n]
                where = f"conditional {n!r}"
                cond = self.expr(c.get("expression"), where)[0]
                branches = [(f"if {cond}:", c.get("true_next")), ("else:", c.get("false_next"))]
                head: list[str] = []
            else:
                t = tables[n]
                head, branches = self._table_code(t, keys[n])
            out.extend(pad + h for h in head)
            targets = {b for _l, b in branches}
            if len(targets) == 1:
                n = branches[0][1]
                continue
            join = ipdom[n]
            if stop is not None and join is None:
                raise Unstructured("branch leaves its region")  # cannot happen for a post-dominated region
            for label, b in branches:
                out.append(pad + label)
                inner = self._region(b, join, depth + 1, tables, conds, ipdom, keys)
                out.extend(inner or [pad + "    pass"])
            n = join
        if n is None and stop is not None:
            raise Unstructured("path ends inside a region")
        return out

    def _table_branches(self, t: dict) -> list[tuple[Any, str | None]]:
        """(label, next node) per way out of table `t`: ('hit' / 'miss') or (action ids, next), last one the
        catch-all (base_default_next)."""
        nt = t.get("next_tables", {}) or {}
        if "__HIT__" in nt or "__MISS__" in nt:
            return [("hit", nt.get("__HIT__")), ("miss", nt.get("__MISS__"))]
        ids = dict(zip(t.get("actions", []), t.get("action_ids") or []))
        base = t.get("base_default_next")
        groups: dict[str | None, list[int]] = {}
        for an, nxt in nt.items():
            if nxt == base:
                continue
            aid = ids.get(an, self.action_by_name.get(an, {}).get("info", ActionInfo("", None, [])).id)
            if aid is None:
                raise Unstructured(f"unknown action {an!r}")  # the node-function generator reports it
            groups.setdefault(nxt, []).append(aid)
        return [(tuple(v), k) for k, v in groups.items()] + [("else", base)]

    def _inline_action(self, aid: int, data: tuple) -> list[str] | None:
        """Body of action `aid` with its runtime data bound to constants, or None if it cannot be inlined: the
        body before optimisation, which the whole straight-line region it lands in gets (optimize.fuse_regions)."""
        a = self.actions[aid]
        body = a.get("raw")
        if body is None:
            return None
        return ([f"D = {tuple(data)!r}"] if data and any("D[" in b for b in body) else []) + body

    def _call_action(self, t: dict) -> list[str]:
        """Run entry `e`'s action: small straight-line actions of the table inline (dispatch on the action id,
        data bound from the entry), anything else through the entry's compiled function."""
        aids = list(t.get("action_ids") or [])
        de = (t.get("default_entry") or {}).get("action_id")
        if de is not None and de not in aids:
            aids.append(de)
        cases = []
        for aid in aids:
            a = self.actions.get(aid)
            body = a.get("inline") if a else None
            if body is not None and len(body) <= INLINE_LINES:
                cases.append((aid, (["D = e.data"] if a.get("uses_data") else []) + (body or ["pass"])))
        if not cases:
            return ["e.fn(F, e.data)"]
        lines = ["a = e.aid"]
        for k, (aid, body) in enumerate(cases):
            lines.append(f"{'if' if k == 0 else 'elif'} a == {aid}:")
            lines.extend("    " + b for b in body)
        lines += ["else:", "    e.fn(F, e.data)"]
        return lines

    def _table_code(self, t: dict, key: tuple[str, str]) -> tuple[list[str], list[tuple[str, str | None]]]:
        """(lines applying table `t`, [(branch header line, next node)]) for the structured pipeline."""
        kind, ksrc = key
        tv = f"T{t.get('id', 0)}"
        ex = [f"if F[{P_EXIT}]: return"] if self.uses_exit_any() else []
        branches = self._table_branches(t)
        de = t.get("default_entry") or {}
        if kind == "keyless" and de.get("action_const") and de.get("action_id") in self.actions:
            data = tuple(int(x, 16) if isinstance(x, str) else int(x) for x in de.get("action_data", []))
            body = self._inline_action(de["action_id"], data)
            if body is not None:
                aid = de["action_id"]
                nxt = next((b for label, b in branches if label == "miss" or label == "else"
                            or (isinstance(label, tuple) and aid in label)), None)
                return body + ex, [("", nxt)]
        lines: list[str] = []
        if kind == "keyless":
            lines.append(f"e = {tv}.default")
        elif kind == "lpm1":  # MatchTable.lookup's single-field LPM probe, without the call
            lines += ["e = None", f"k = {ksrc}", f"for m, d in {tv}._lpm_probe:",
                      "    e = d.get(k & m)", "    if e is not None:", "        break"]
        else:
            lines.append(f"e = {ksrc}")
        if branches[0][0] == "hit":
            if kind == "keyless":
                lines.append("e.fn(F, e.data)")
                lines.extend(ex)
                return lines, [("", branches[1][1])]
            # hit and miss continue differently: the branch headers carry the lookup result
            lines.append("if e is None:")
            lines.append(f"    e = {tv}.default")
            lines.append("    h = False")
            lines.append("else:")
            lines.extend("    " + h for h in self.hit_lines(t))
            lines.append("    h = True")
            lines.extend(self._call_action(t))
            lines.extend(ex)
            return lines, [("if h:", branches[0][1]), ("else:", branches[1][1])]
        if kind != "keyless":
            lines.append("if e is None:")
            lines.append(f"    e = {tv}.default")
            hit = self.hit_lines(t)
            if hit:
                lines.append("else:")
                lines.extend("    " + h for h in hit)
        lines.extend(self._call_action(t))
        lines.extend(ex)
        if len(branches) == 1:
            return lines, [("", branches[0][1])]
        lines.append("a = e.aid")
        out = []
        for k, (label, nxt) in enumerate(branches):
            if label == "else":
                out.append(("else:", nxt))
            else:
                test = " or ".join(f"a == {aid}" for aid in label)
                out.append((f"{'if' if k == 0 else 'elif'} {test}:", nxt))
        return lines, out


def _immediate_post_dominators(succ: dict[str, list[str | None]]) -> dict[str, str | None]:
    """Immediate post-dominator of every node of an acyclic graph (None = the pipeline's end)."""
    pdom: dict[str | None, frozenset] = {None: frozenset([None])}
    order: list[str] = []
    seen: set[str] = set()

    def visit(n: str) -> None:  # post-order: successors first
        stack = [(n, iter(succ[n]))]
        seen.add(n)
        while stack:
            node, it = stack[-1]
            for s in it:
                if s is not None and s not in seen:
                    seen.add(s)
                    stack.append((s, iter(succ[s])))
                    break
            else:
                stack.pop()
                order.append(node)

    for n in succ:
        if n not in seen:
            visit(n)
    for n in order:
        sets = [pdom[s] for s in succ[n]]
        common = frozenset.intersection(*sets) if sets else frozenset([None])
        pdom[n] = common | {n}
    out: dict[str, str | None] = {}
    for n in succ:
        cands = pdom[n] - {n}
        # post-dominators of a node form a chain; the nearest one has the most post-dominators itself
        out[n] = max(cands, key=lambda x: len(pdom[x]))
    return out
