"""Code generation for match-action pipelines: MatchTable objects (default and const entries), one function per
table / conditional node returning the next node, and one driver function per pipeline."""

from __future__ import annotations

from typing import Any, Callable

from switch.errors import LoadError
from switch.sim.action_profiles import ActionProfile
from switch.sim.externs import CounterArray
from switch.sim.gen_base import _hex, _key_mask, _noop
from switch.sim.program import P_EXIT, P_INLEN
from switch.sim.tables import ActionInfo, KeyField, MatchTable


class PipelineGen:
    """Mixin of Codegen (see codegen.py for the shared state: self.p, self.j, self.ns, self.out, self.trace)."""

    def build_tables(self) -> None:
        """MatchTable objects for every table (before code generation, which refers to them)."""
        self.table_specs: dict[str, tuple] = {}
        if self.reuse is not None:
            self.tables = self.reuse.tables
            return
        direct: dict[str, CounterArray] = {c.table: c for c in self.counters.values() if c.is_direct and c.table}
        for pl in self.j.get("pipelines", []):
            if pl.get("action_calls"):
                raise LoadError(f"unsupported action_calls in pipeline {pl.get('name')!r}")
            for t in pl.get("tables", []):
                name = t.get("name")
                where = f"table {name!r}"
                ttype = t.get("type", "simple")
                if ttype not in ("simple", "indirect", "indirect_ws"):
                    raise LoadError(f"unsupported table type {ttype!r} in {where}")
                if ttype != "simple":
                    ap = self.action_profiles.get(t.get("action_profile"))
                    if ap is None:
                        raise LoadError(f"{where}: unknown action_profile {t.get('action_profile')!r}")
                    if (ttype == "indirect_ws") != ap.with_selector:
                        raise LoadError(f"{where}: a table of type {ttype!r} needs an action profile "
                                        f"{'with' if ttype == 'indirect_ws' else 'without'} a selector")
                dm = t.get("direct_meters")
                if dm and (dm not in self.meters or self.meters[dm].table != name):
                    raise LoadError(f"direct_meters {dm!r} of {where} is not a direct meter bound to it")
                # support_timeout (idle timeout): the table works, its entries do not age; a P4Runtime entry with
                # an idle_timeout_ns is refused with UNIMPLEMENTED (switch/runtime/tables.py), a clear refusal where
                # refusing the program would stop every other use of it (the P4 tutorials' flowcache)
                key = []
                for k in t.get("key", []):
                    mt = k.get("match_type")
                    if mt not in ("exact", "lpm", "ternary", "range", "optional", "valid"):
                        raise LoadError(f"unsupported match type {mt!r} in {where}")
                    if mt == "valid":
                        w = 1
                        kname = k.get("name", f"{k['target']}.$valid$")
                    else:
                        w = self.p.field_info(*k["target"])[0]
                        self.p.field_slot(k["target"][0], k["target"][1], where)
                        kname = k.get("name") or ".".join(k["target"])
                        if k.get("mask") is not None:
                            w = _key_mask(_hex(k["mask"], where), w)[2]
                    key.append(KeyField(kname, mt, w))
                if sum(1 for k in key if k.match_type == "lpm") > 1:
                    raise LoadError(f"more than one lpm key field in {where}")
                acts: dict[str, tuple[ActionInfo, Any]] = {}
                anames = t.get("actions", [])
                aids = t.get("action_ids") or [None] * len(anames)
                if len(aids) != len(anames):
                    raise LoadError(f"'actions' and 'action_ids' differ in length in {where}")
                for an, aid in zip(anames, aids):
                    # p4c may emit several actions with one name (per-table NoAction copies): the id decides
                    if aid is None:
                        if an not in self.action_by_name:
                            raise LoadError(f"unknown action {an!r} in {where}")
                        aid = self.action_by_name[an]["info"].id
                    if aid not in self.actions or self.actions[aid]["name"] != an:
                        raise LoadError(f"action {an!r} (id {aid!r}) not found in {where}")
                    acts[an] = (self.actions[aid]["info"], None)  # functions bound after exec
                de = t.get("default_entry")
                default: tuple[str, tuple] | None = None
                dconst = False
                if de is not None:
                    aid = de.get("action_id")
                    if aid not in self.actions:
                        raise LoadError(f"unknown default action id {aid!r} in {where}")
                    aname = self.actions[aid]["name"]
                    if aname not in acts:  # p4c lists default-only actions too; be lenient like BMv2
                        acts[aname] = (self.actions[aid]["info"], None)
                    default = (aname, tuple(_hex(x, where) for x in de.get("action_data", [])))
                    dconst = bool(de.get("action_const", False))
                # the MatchTable itself is made after exec, once the action functions exist (finish_tables)
                self.table_specs[name] = (name, t.get("id", 0), t.get("match_type", "exact"), key, acts,
                                          int(t.get("max_size", 1024)), bool(t.get("with_counters", False)), default,
                                          dconst)
                if t.get("with_counters") and name not in direct:
                    raise LoadError(f"table {name!r} has with_counters but no direct counter_array is bound to it")

    def finish_tables(self) -> None:
        """Bind compiled action functions, create entries (defaults, const entries)."""
        if self.reuse is not None:  # same program, new code: point every entry at the new action functions
            for pl in self.j.get("pipelines", []):
                for t in pl.get("tables", []):
                    self.ns[f"T{t.get('id', 0)}"] = self.tables[t["name"]]
            for mt in self.tables.values():
                mt._actions = {an: (info, self.ns[f"A{info.id}"] if info.id >= 0 else _noop)
                               for an, (info, _f) in mt._actions.items()}
                for e in mt.entries + [mt.default]:
                    e.fn = self.ns[f"A{e.aid}"] if e.aid >= 0 else _noop
                self.ns[f"XG{mt.id}"] = mt.exact_index.get
            self.finish_action_profiles()
            return
        for pl in self.j.get("pipelines", []):
            for t in pl.get("tables", []):
                name, tid, match_type, key, acts, max_size, wc, default, dconst = self.table_specs[t["name"]]
                acts = {an: (info, self.ns[f"A{info.id}"]) for an, (info, _f) in acts.items()}
                if default is None:
                    acts[""] = (ActionInfo("", -1, []), _noop)
                    default = ("", ())
                where = f"table {name!r}"
                try:
                    mt = MatchTable(name, tid, match_type, key, acts, max_size, wc, default, dconst)
                except Exception as exc:
                    raise LoadError(f"bad default entry in {where}: {exc}") from None
                self.tables[name] = mt
                self.ns[f"T{tid}"] = mt
                self.ns[f"XG{tid}"] = mt.exact_index.get  # exact_index is never replaced, only mutated
                if "" in acts:
                    mt.action_names.remove("")
                entries = t.get("entries")
                if entries:
                    for n, ent in enumerate(entries):
                        self.const_entry(mt, ent, f"{where} const entry {n}")
                    mt.is_const = True
        for c in self.counters.values():
            if c.is_direct:
                if c.table not in self.tables:
                    raise LoadError(f"direct counter {c.name!r} bound to unknown table {c.table!r}")
                c._table_obj = self.tables[c.table]
        self.finish_action_profiles()

    def finish_action_profiles(self) -> None:
        """Tables and selector hash of every action profile; members point at this build's action functions."""
        for name, ap in self.action_profiles.items():
            ap.tables = [self.tables[t["name"]] for pl in self.j.get("pipelines", []) for t in pl.get("tables", [])
                         if t.get("action_profile") == name]
            calc = self.calcs.get(f"$selector:{name}")
            ap.hash = self.ns[calc] if calc is not None else None
            for m in ap.members.values():
                m.fn = self.ns[f"A{m.aid}"] if m.aid >= 0 else _noop

    def const_entry(self, mt: MatchTable, ent: dict, where: str) -> None:
        key = []
        mk = ent.get("match_key", [])
        if len(mk) != len(mt.key):
            raise LoadError(f"{len(mk)} match fields instead of {len(mt.key)} in {where}")
        for m, kf in zip(mk, mt.key):
            t = m.get("match_type")
            if t == "exact":
                key.append(_hex(m["key"], where))
            elif t == "valid":
                key.append(1 if m["key"] else 0)
            elif t == "lpm":
                key.append((_hex(m["key"], where), int(m["prefix_length"])))
            elif t == "ternary":
                if kf.match_type == "optional":
                    mask = _hex(m["mask"], where)
                    key.append((_hex(m["key"], where), mask == 0))
                else:
                    key.append((_hex(m["key"], where), _hex(m["mask"], where)))
            elif t == "optional":
                key.append((_hex(m["key"], where), False))
            elif t == "range":
                key.append((_hex(m["start"], where), _hex(m["end"], where)))
            else:
                raise LoadError(f"unsupported match type {t!r} in {where}")
        ae = ent.get("action_entry", {})
        aid = ae.get("action_id")
        if aid not in self.actions:
            raise LoadError(f"unknown action id {aid!r} in {where}")
        data = [_hex(x, where) for x in ae.get("action_data", [])]
        prio = 0
        if mt.needs_priority:
            # JSON: a lower number is a higher priority; the engine uses P4Runtime's "higher wins"
            prio = (1 << 31) - 1 - int(ent.get("priority", 0))
        try:
            mt.insert(tuple(key), self.actions[aid]["name"], data, prio, _const=True)
        except Exception as exc:
            raise LoadError(f"{where}: {exc}") from None

    def build_pipelines(self) -> dict[str, str]:
        """Generate one function per pipeline; returns pipeline name → function name."""
        names: dict[str, str] = {}
        for pi, pl in enumerate(self.j.get("pipelines", [])):
            pname = pl.get("name")
            nodes: dict[str, str] = {}
            for t in pl.get("tables", []):
                nodes[t["name"]] = f"N{pi}_{len(nodes)}"
            for c in pl.get("conditionals", []):
                nodes[c["name"]] = f"N{pi}_{len(nodes)}"

            def ref(n: str | None, where: str) -> str:
                if n is None:
                    return "None"
                if n not in nodes:
                    raise LoadError(f"unknown next node {n!r} in {where}")
                return nodes[n]

            self.check_acyclic(pl, nodes)
            fn = f"pipe_{pi}"
            if not self.trace:
                keys = {t["name"]: self.table_key(t) for t in pl.get("tables", [])}
                if pl.get("init_table") is None or pl["init_table"] in nodes:
                    flat = self.structured_pipeline(pi, pl, keys)
                    if flat is not None:
                        self.out.extend(flat)
                        names[pname] = fn
                        continue
            fixups: list[str] = []
            for t in pl.get("tables", []):
                self.gen_table_node(t, nodes[t["name"]], ref, fixups)
            for c in pl.get("conditionals", []):
                where = f"conditional {c['name']!r}"
                cond = self.expr(c.get("expression"), where)[0]
                frag = (c.get("source_info") or {}).get("source_fragment", c["name"])
                lines = [f"def {nodes[c['name']]}(F):"]
                if self.trace:
                    lines.append(f"    r = bool({cond})")
                    msg = 'Condition "' + str(frag) + '" (' + c["name"] + ") is "
                    lines.append(f"    _T(F, {msg!r} + str(r).lower())")
                    lines.append("    if r:")
                else:
                    lines.append(f"    if {cond}:")
                lines.append(f"        return {ref(c.get('true_next'), where)}")
                lines.append(f"    return {ref(c.get('false_next'), where)}")
                self.out.extend(lines)
            self.out.extend(fixups)
            init = ref(pl.get("init_table"), f"pipeline {pname!r}")
            self.out.append(f"def {fn}(F):")
            if self.trace:
                self.out.append(f"    _T(F, {('Pipeline ' + repr(pname) + ': start')!r})")
            if init == "None":
                self.out.append("    pass")
            else:
                self.out.extend([f"    n = {init}", "    while n is not None:", "        n = n(F)"])
            if self.trace:
                self.out.append(f"    _T(F, {('Pipeline ' + repr(pname) + ': end')!r})")
            names[pname] = fn
        return names

    def table_key(self, t: dict) -> tuple[str, str]:
        """(kind, lookup source) of table `t`: ('keyless', ''), ('exact', `XG<id>(key)`: the bound get of the
        table's exact_index dict), ('lpm1', key value) or ('other', `T<id>.lookup((k1, ...))`)."""
        tid = t.get("id", 0)
        keys = self.table_key_srcs(t)
        if not keys:
            return "keyless", ""
        if all(k.get("match_type") == "exact" for k in t.get("key", [])):
            kexpr = keys[0] if len(keys) == 1 else f"({', '.join(keys)})"
            return "exact", f"XG{tid}({kexpr})"
        if len(keys) == 1 and t["key"][0].get("match_type") == "lpm":
            return "lpm1", keys[0]  # MatchTable kind "lpm1": probed inline, longest prefix first
        return "other", f"T{tid}.lookup(({', '.join(keys)},))"

    def table_key_srcs(self, t: dict) -> list[str]:
        """Python source of each key field's value of table `t` (static masks applied, shifted down)."""
        where = f"table {t['name']!r}"
        keys = []
        for k in t.get("key", []):
            if k.get("match_type") == "valid":
                hl = self.p.header(k["target"], where)
                src = f"F[{hl.valid_slot}]"
            else:
                src = self.expr({"type": "field", "value": k["target"]}, where)[0]
                if k.get("mask") is not None:
                    w = self.p.field_info(*k["target"])[0]
                    mask, shift, _kw = _key_mask(_hex(k["mask"], where), w)
                    src = f"(({src} & {mask}) >> {shift})" if shift else f"({src} & {mask})"
            keys.append(src)
        return keys

    def build_action_profiles(self) -> None:
        """The pipelines' action profiles (kept from `reuse`: their members and groups are state); a selector's
        hash becomes a calculation of its own."""
        if self.reuse is not None:
            self.action_profiles = self.reuse.action_profiles
        for pl in self.j.get("pipelines", []):
            for a in pl.get("action_profiles") or []:
                name = a.get("name") if isinstance(a, dict) else None
                sel = a.get("selector") if isinstance(a, dict) else None
                if not isinstance(name, str) or not isinstance(a.get("max_size", 0), int):
                    raise LoadError(f"bad action profile {a!r}")
                if self.reuse is None:
                    self.action_profiles[name] = ActionProfile(name, a.get("id", len(self.action_profiles)),
                                                               a.get("max_size", 0), sel is not None)
                if sel is not None:
                    if not isinstance(sel, dict) or not isinstance(sel.get("input"), list):
                        raise LoadError(f"bad selector of action profile {name!r}")
                    self.extra_calcs.append({"name": f"$selector:{name}", "id": f"S{len(self.extra_calcs)}",
                                             "algo": sel.get("algo"), "input": sel["input"]})

    def hit_lines(self, t: dict) -> list[str]:
        """What a hit does before the action (BMv2 MatchTableAbstract::apply_action): the entry's direct counters
        count the packet, its direct meter colours it into the meter's result field (0 while unconfigured)."""
        out = []
        if t.get("with_counters"):
            out.append(f"e.packets += 1; e.bytes += F[{P_INLEN}]")
        dm = t.get("direct_meters")
        if dm:
            m = self.meter(dm, f"table {t.get('name')!r}")
            assert m.target is not None
            slot, fw, _sg = self.lvalue({"type": "field", "value": list(m.target)}, f"direct meter {m.name!r}")
            mask = "" if fw >= 2 else f" & {(1 << fw) - 1}"
            out.append(f"F[{slot}] = (e.meter.execute(F[{P_INLEN}]){mask}) if e.meter is not None else 0")
        if t.get("type") == "indirect_ws":  # a group entry runs the member its selector picks
            out.append("if e.group is not None: e = e.group.pick(F)")
        return out

    def gen_table_node(self, t: dict, fn: str, ref: Callable[[str | None, str], str], fixups: list[str]) -> None:
        name = t["name"]
        where = f"table {name!r}"
        tv = f"T{t.get('id', 0)}"  # bound to the MatchTable in finish_tables()
        keys = self.table_key_srcs(t)
        nt = t.get("next_tables", {})
        lines = [f"def {fn}(F):"]
        if self.trace:
            lines.append(f"    _T(F, {('Applying table ' + repr(name))!r})")
            if keys:
                kf = self.table_specs[name][3] if name in self.table_specs else self.tables[name].key
                parts = " + ".join(f"'\\n* {f.name}: ' + format({k}, '0{(f.bitwidth + 7) // 8 * 2}x')"
                                   for f, k in zip(kf, keys))
                lines.append(f"    _T(F, 'Looking up key:' + {parts})")
        exact = bool(keys) and all(k.get("match_type") == "exact" for k in t.get("key", []))
        if not keys:
            lines.append("    e = None")
        elif exact:
            kexpr = keys[0] if len(keys) == 1 else f"({', '.join(keys)})"
            lines.append(f"    e = {tv}.exact_index.get({kexpr})")
        else:
            lines.append(f"    e = {tv}.lookup(({', '.join(keys)},))")
            # (single-field LPM tables probe one dict per prefix length inside lookup())
        hitmiss = "__HIT__" in nt or "__MISS__" in nt
        lines.append("    if e is None:")
        lines.append(f"        e = {tv}.default")
        if self.trace:
            lines.append(f"        _T(F, {('Table ' + repr(name) + ': miss')!r})")
            lines.append("        _T(F, 'Action entry is ' + e.action + ' - ' + ''.join(format(d, 'x') + ',' for d in e.data))")
        lines.append("        e.fn(F, e.data)")
        if self.uses_exit_any():
            lines.append(f"        if F[{P_EXIT}]: return None")
        if hitmiss:
            lines.append(f"        return {ref(nt.get('__MISS__'), where)}")
        else:
            lines.append(f"        return NX_{fn}.get(e.aid, {ref(t.get('base_default_next'), where)})")
        lines.extend("    " + h for h in self.hit_lines(t))
        if self.trace:
            lines.append(f"    _T(F, {('Table ' + repr(name) + ': hit with handle ')!r} + str(e.handle))")
            lines.append("    _T(F, 'Action entry is ' + e.action + ' - ' + ''.join(format(d, 'x') + ',' for d in e.data))")
        lines.append("    e.fn(F, e.data)")
        if self.uses_exit_any():
            lines.append(f"    if F[{P_EXIT}]: return None")
        if hitmiss:
            lines.append(f"    return {ref(nt.get('__HIT__'), where)}")
        else:
            lines.append(f"    return NX_{fn}.get(e.aid, {ref(t.get('base_default_next'), where)})")
            items = []
            ids = dict(zip(t.get("actions", []), t.get("action_ids") or []))
            for an, nxt in nt.items():
                aid = ids.get(an, self.action_by_name.get(an, {}).get("info", ActionInfo("", None, [])).id)
                if aid is None:
                    raise LoadError(f"unknown action {an!r} in next_tables of {where}")
                items.append(f"{aid}: {ref(nxt, where)}")
            fixups.append(f"NX_{fn} = {{{', '.join(items)}}}")
        self.out.extend(lines)

    def uses_exit_any(self) -> bool:
        return self.uses_exit

    def check_acyclic(self, pl: dict, nodes: dict[str, str]) -> None:
        """A control graph with a cycle would loop forever; p4c never emits one, so refuse it."""
        succ: dict[str, set] = {}
        for t in pl.get("tables", []):
            succ[t["name"]] = set((t.get("next_tables") or {}).values()) | {t.get("base_default_next")}
        for c in pl.get("conditionals", []):
            succ[c["name"]] = {c.get("true_next"), c.get("false_next")}
        color: dict[str, int] = {}

        def visit(n: str) -> None:
            color[n] = 1
            for m in succ.get(n, ()):
                if m is None or m not in nodes:
                    continue
                if color.get(m) == 1:
                    raise LoadError(f"control flow cycle through {m!r} in pipeline {pl.get('name')!r}")
                if m not in color:
                    visit(m)
            color[n] = 2

        for n in succ:
            if n not in color:
                visit(n)
