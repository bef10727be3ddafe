"""Code generation for actions: register/counter arrays, the core primitives, header-stack shifts.

Architecture primitives (v1model's mark_to_drop, clone, resubmit, ...) come from `arch_primitives`.
"""

from __future__ import annotations

from typing import Any

from switch.errors import LoadError
from switch.sim.externs import CounterArray, RegisterArray, ValueSet
from switch.sim.meters import MeterArray
from switch.sim.common_values import simplify_actions
from switch.sim.optimize import optimize_body
from switch.sim.program import (
    P_EXIT,
    P_INLEN,
    P_LEN,
    P_TRUNC,
    VL_BITS,
    HeaderLayout,
    StackLayout,
    UnionLayout,
    UnionStackLayout,
)
from switch.sim.tables import ActionInfo


def _in_range(bits: int | None, size: int) -> str | None:
    """Python test that index `i` lies in [0, size): None when the index's value range (unsigned, `bits` wide)
    guarantees it; `i < size` when it is known not to be negative."""
    if bits is None:
        return f"0 <= i < {size}"
    if (1 << bits) <= size:
        return None
    return f"i < {size}"


def _guarded(test: str | None, stmt: str) -> list[str]:
    return [stmt] if test is None else [f"if {test}: {stmt}"]


MAX_JUMP_STEPS = 1 << 22  # primitives one action may run (a loop in an action); beyond it the packet is dropped


class ActionGen:
    """Mixin of Codegen (see codegen.py for the shared state: self.p, self.j, self.ns, self.out, self.trace)."""

    _idx_on = False          # index caching is on while generating a straight-line action body
    _idx: str | None = None  # the index expression the generated local `i` holds

    def register(self, name: str, where: str) -> RegisterArray:
        if name not in self.registers:
            raise LoadError(f"unknown register array {name!r} in {where}")
        return self.registers[name]

    def counter(self, name: str, where: str) -> CounterArray:
        if name not in self.counters:
            raise LoadError(f"unknown counter array {name!r} in {where}")
        return self.counters[name]

    def meter(self, name: str, where: str) -> MeterArray:
        if name not in self.meters:
            raise LoadError(f"unknown meter array {name!r} in {where}")
        return self.meters[name]

    def build_meters(self) -> None:
        """Meter arrays of the JSON (`meter_arrays`), kept from `reuse` when the same program is rebuilt."""
        if self.reuse is not None:
            self.meters = self.reuse.meters
        else:
            for m in self.j.get("meter_arrays") or []:
                name = m.get("name") if isinstance(m, dict) else None
                size, rc, mtype = m.get("size", 0), m.get("rate_count", 2), m.get("type")
                if not isinstance(name, str) or not isinstance(size, int) or size < 0 or mtype not in (
                        "packets", "bytes") or not isinstance(rc, int) or rc < 1:
                    raise LoadError(f"bad meter array {m!r}")
                table = target = None
                if m.get("is_direct"):
                    table, tgt = m.get("binding"), m.get("result_target")
                    if not isinstance(table, str) or not (isinstance(tgt, list) and len(tgt) == 2):
                        raise LoadError(f"direct meter {name!r} needs a binding and a result_target")
                    target = (tgt[0], tgt[1])
                self.meters[name] = MeterArray(name, m.get("id", len(self.meters)), size, mtype == "packets", rc,
                                               table, target)
        for ma in self.meters.values():
            self.ns[f"M{ma.id}"] = ma.cells

    def build_externs(self) -> None:
        for name, (vid, bw, size) in self.p.vsets.items():
            old = self.reuse.value_sets.get(name) if self.reuse is not None else None
            vs = old if old is not None and (old.bitwidth, old.max_size) == (bw, size) else ValueSet(name, vid, bw, size)
            self.value_sets[name] = vs
            self.ns[f"_VS{vid}"] = vs.members
        if self.reuse is not None:
            self.registers, self.counters = self.reuse.registers, self.reuse.counters
            for ra in self.registers.values():
                self.ns[f"R{ra.id}"] = ra.values
            for ca in self.counters.values():
                self.ns[f"C{ca.id}p"] = ca.packets
                self.ns[f"C{ca.id}b"] = ca.bytes
            return
        for r in self.j.get("register_arrays", []):
            bw = r.get("bitwidth")
            if not isinstance(bw, int) or bw <= 0 or not isinstance(r.get("size"), int) or r["size"] < 0:
                raise LoadError(f"bad register array {r.get('name')!r}")
            ra = RegisterArray(r["name"], r.get("id", len(self.registers)), r["size"], bw)
            self.registers[ra.name] = ra
            self.ns[f"R{ra.id}"] = ra.values
        for c in self.j.get("counter_arrays", []):
            ca = CounterArray(c["name"], c.get("id", len(self.counters)), int(c.get("size", 0)),
                              bool(c.get("is_direct", False)), c.get("binding"))
            self.counters[ca.name] = ca
            self.ns[f"C{ca.id}p"] = ca.packets
            self.ns[f"C{ca.id}b"] = ca.bytes

    def index_line(self, idx: str) -> list[str]:
        """`i = <idx>` unless `i` already holds that index (straight-line action code, inputs not written since)."""
        if self._idx_on and self._idx == idx:
            return []
        self._idx = idx if self._idx_on else None
        return [f"i = {idx}"]

    def primitive(self, prim: dict, where: str, parser: bool = False) -> list[str]:
        lines = self._primitive(prim, where, parser)
        # keep the cached register/counter index only across primitives known not to write what it reads
        op = prim.get("op")
        if self._idx is not None:
            written = None
            if op in ("assign", "modify_field") or op == "register_read":
                written = self.lvalue(prim["parameters"][0], where)[0]
            elif op == "execute_meter":
                written = self.lvalue(prim["parameters"][2], where)[0]
            if op in ("register_write", "count"):
                pass
            elif written is None or not written.isdigit() or f"F[{written}]" in self._idx:
                self._idx = None
        return lines

    def _primitive(self, prim: dict, where: str, parser: bool = False) -> list[str]:
        op = prim.get("op")
        params = prim.get("parameters", [])
        frag = (prim.get("source_info") or {}).get("source_fragment", op)
        w = f"primitive {op!r} in {where}"
        lines: list[str] = []
        if self.trace and op != "log_msg":
            lines.append(f"_T(F, {('Primitive ' + str(frag))!r})")
        if op in self.arch:
            return lines + self.arch[op](self, params, w)

        def ex(n: Any) -> tuple[str, int | None]:
            return self.expr(n, w, parser)

        if op in ("assign", "modify_field"):
            slot, fw, _sg = self.lvalue(params[0], w)
            if params[1].get("type") in ("header", "header_stack"):
                raise LoadError(f"unsupported header operand in {w}")
            src, bits = ex(params[1])
            lines.append(self.assign_src(slot, fw, src, bits))
        elif op == "assign_VL":
            lines.extend(self.assign_vl(params[0], params[1], w))
        elif op == "assign_header":
            dst = self.pinned(self.header_ref(params[0], w), lines, "_hx_dst")
            lines.extend(self.assign_header(dst, params[1], w, parser))
        elif op == "assign_header_stack":
            dst, src = self.stack(params[0], w), self.stack(params[1], w)
            for dh, sh in zip(dst.headers, src.headers):
                d, s = self.p.headers[dh], self.p.headers[sh]
                # BMv2's assign_header per element: an invalid source only invalidates (the fields stay)
                lines.append(f"F[{d.valid_slot}] = F[{s.valid_slot}]")
                lines.append(f"if F[{s.valid_slot}]:")
                for (n, _w, _s), (m, _w2, _s2) in zip(d.fields, s.fields):
                    lines.append(f"    F[{d.slots[n]}] = F[{s.slots[m]}]")
                if not d.fields:
                    lines.append("    pass")
            lines.append(f"F[{dst.next_slot}] = F[{src.next_slot}]")
        elif op in ("add_header", "remove_header"):
            ref = self.header_ref(params[0], w)
            hl = ref[1] if ref[0] == "s" else self.p.headers[ref[1].headers[0]]
            v = self.href_valid(ref)
            if op == "add_header":
                lines.append(f"if not F[{v}]:")
                lines.append(f"    F[{v}] = 1")
                lines.extend("    " + x for x in self.invalidate_siblings(ref))
                for i, (n, _w, _s) in enumerate(hl.fields):
                    if n != VL_BITS:  # BMv2 zeroes the fields; a varbit field keeps its width
                        lines.append(f"    F[{self.href_field(ref, i, w)[0]}] = 0")
                if not hl.metadata:
                    lines.append(f"    F[{P_LEN}] += {self.header_len(ref, hl, w)}")
            else:
                lines.append(f"if F[{v}]:")
                lines.append(f"    F[{v}] = 0")
                if not hl.metadata:
                    lines.append(f"    F[{P_LEN}] -= {self.header_len(ref, hl, w)}")
                else:
                    lines.append("    pass")
        elif op == "assign_union":
            lines.extend(self.assign_union(self.union(params[0], w), self.union(params[1], w)))
        elif op == "assign_union_stack":
            dst_s, src_s = self.union_stack(params[0], w), self.union_stack(params[1], w)
            if len(dst_s.unions) != len(src_s.unions):
                raise LoadError(f"header union stacks of different sizes in {w}")
            for du, su in zip(dst_s.unions, src_s.unions):
                lines.extend(self.assign_union(self.p.unions[du], self.p.unions[su]))
            lines.append(f"F[{dst_s.next_slot}] = F[{src_s.next_slot}]")
        elif op in ("push", "pop") and params and params[0].get("type") == "header_union_stack":
            ust = self.union_stack(params[0], w)
            lines.append(f"{self.union_stack_shift_fn(ust)}(F, {ex(params[1])[0]}, {op == 'push'})")
        elif op in ("push", "pop"):
            st = self.stack(params[0], w)
            n = ex(params[1])[0]
            fn = self.stack_shift_fn(st)
            lines.append(f"{fn}(F, {n}, {op == 'push'})")
        elif op == "exit":
            self.uses_exit = True
            lines.append(f"F[{P_EXIT}] = 1")
            lines.append("return")
        elif op == "count":
            c = self.counter(params[0]["value"], w)
            if c.is_direct:
                raise LoadError(f"count on direct counter {c.name!r} in {w}")
            idx, ibits = ex(params[1])
            lines.extend(self.index_line(idx))
            lines.extend(_guarded(_in_range(ibits, c.size), f"C{c.id}p[i] += 1; C{c.id}b[i] += F[{P_INLEN}]"))
        elif op == "execute_meter":
            if len(params) != 3 or not isinstance(params[0], dict) or params[0].get("type") != "meter_array":
                raise LoadError(f"{w}: expected a meter_array, an index and a field, got {params!r}")
            m = self.meter(params[0]["value"], w)
            if m.is_direct:
                raise LoadError(f"execute_meter on direct meter {m.name!r} in {w}")
            idx, ibits = ex(params[1])
            slot, fw, _sg = self.lvalue(params[2], w)
            mask = "" if fw >= 2 else f" & {(1 << fw) - 1}"
            lines.extend(self.index_line(idx))
            # BMv2 (primitives.cpp): out of bounds, neither the meter nor the destination is updated
            lines.extend(_guarded(_in_range(ibits, m.size), f"F[{slot}] = M{m.id}[i].execute(F[{P_INLEN}]){mask}"))
        elif op == "register_read":
            slot, fw, _sg = self.lvalue(params[0], w)
            reg = self.register(params[1]["value"], w)
            idx, ibits = ex(params[2])
            mask = "" if reg.bitwidth <= fw else f" & {(1 << fw) - 1}"
            lines.extend(self.index_line(idx))
            # BMv2 (simple_switch primitives.cpp): an out-of-bounds index logs an error, dst stays unchanged
            lines.extend(_guarded(_in_range(ibits, reg.size), f"F[{slot}] = R{reg.id}[i]{mask}"))
        elif op == "register_write":
            reg = self.register(params[0]["value"], w)
            idx, ibits = ex(params[1])
            src, bits = ex(params[2])
            val = src if bits is not None and bits <= reg.bitwidth else f"({src}) & {reg.mask}"
            lines.extend(self.index_line(idx))
            # out of bounds: no cell is written (BMv2 logs an error), the action goes on
            lines.extend(_guarded(_in_range(ibits, reg.size), f"R{reg.id}[i] = {val}"))
        elif op == "modify_field_with_hash_based_offset":
            slot, fw, _sg = self.lvalue(params[0], w)
            base = ex(params[1])[0]
            if params[2].get("type") != "calculation" or params[2].get("value") not in self.calcs:
                raise LoadError(f"unknown calculation {params[2].get('value')!r} in {w}")
            calc = self.calcs[params[2]["value"]]
            size = ex(params[3])[0]
            lines.append(f"sz = {size}")
            lines.append(f"F[{slot}] = (({base}) + ({calc}(F) % sz if sz else 0)) & {(1 << fw) - 1}")
        elif op == "modify_field_rng_uniform":
            slot, fw, _sg = self.lvalue(params[0], w)
            lo, hi = ex(params[1])[0], ex(params[2])[0]
            mask = (1 << fw) - 1
            # lo + a uniform draw below n = hi - lo + 1, by the generator's own randint algorithm inlined (draws of
            # n.bit_length() bits until one is below n: the same values for the same seed at an eighth of the cost)
            if lo.isdigit() and hi.isdigit():
                n = int(hi) - int(lo) + 1
                if n <= 0:
                    lines.append(f"F[{slot}] = {int(lo) & mask}")
                else:
                    k = n.bit_length()
                    lines += [f"rnd = _randbits({k})", f"while rnd >= {n}:", f"    rnd = _randbits({k})",
                              f"F[{slot}] = ({lo} + rnd) & {mask}"]
            else:
                lines += [f"lo = {lo}; rnd_n = {hi} - lo + 1",
                          "if rnd_n > 0:",
                          "    rnd_k = rnd_n.bit_length(); rnd = _randbits(rnd_k)",
                          "    while rnd >= rnd_n:",
                          "        rnd = _randbits(rnd_k)",
                          "    lo += rnd",
                          f"F[{slot}] = lo & {mask}"]
        elif op == "truncate":
            lines.append(f"F[{P_TRUNC}] = {ex(params[0])[0]}")
        elif op == "log_msg":
            if self.trace:  # BMv2 prints log_msg only with --log-console
                fmt = params[0].get("value", "")
                vals = [ex(p)[0] for p in (params[1].get("value", []) if len(params) > 1 else [])]
                lines.append(f"_T(F, _fmt({fmt!r}, ({', '.join(vals)}{',' if vals else ''})))")
            else:
                lines.append("pass")
        elif op == "no_op":
            lines.append("pass")
        elif op in ("assert", "assume"):
            c = ex(params[0])[0]
            lines.append(f"if not {c}: raise PacketAbort({(op + ' failed: ' + str(frag))!r})")
        else:
            raise LoadError(f"unsupported primitive {op!r} in {where}")
        return lines

    @staticmethod
    def pinned(ref: tuple, lines: list[str], name: str) -> tuple:
        """`ref` with a run-time stack index evaluated once, into the local `name` (BMv2 evaluates a header operand
        once; a copy into the element must not move when the index reads a field the copy writes)."""
        if ref[0] != "d" or ref[2].isidentifier() or ref[2].isdigit():
            return ref
        lines.append(f"{name} = {ref[2]}")
        return ("d", ref[1], name)

    def assign_header(self, dst: tuple, src_node: dict, where: str, parser: bool) -> list[str]:
        """BMv2's assign_header: the destination takes the source's validity and, if valid, its fields. A source
        `c ? h1 : h2` (p4c's header-valued conditional, BMv2's TERNARY_OP) chooses once, before copying."""
        v = src_node.get("value") if src_node.get("type") == "expression" else None
        while isinstance(v, dict) and "op" not in v and v.get("type") == "expression":
            v = v.get("value")
        if isinstance(v, dict) and v.get("op") == "?":
            lines = [f"if {self.expr(v.get('cond'), where, parser)[0]}:"]
            lines.extend("    " + x for x in self.assign_header(dst, v["left"], where, parser))
            lines.append("else:")
            lines.extend("    " + x for x in self.assign_header(dst, v["right"], where, parser))
            return lines
        lines = []
        src = self.pinned(self.header_ref(src_node, where), lines, "_hx_src")
        dh = dst[1] if dst[0] == "s" else self.p.headers[dst[1].headers[0]]
        sh = src[1] if src[0] == "s" else self.p.headers[src[1].headers[0]]
        if [f[1:] for f in dh.fields] != [f[1:] for f in sh.fields]:
            raise LoadError(f"assign_header between headers of different types in {where}")
        lines.append(f"if F[{self.href_valid(src)}]:")
        lines.append(f"    F[{self.href_valid(dst)}] = 1")
        lines.extend("    " + x for x in self.invalidate_siblings(dst))
        for i in range(len(dh.fields)):
            lines.append(f"    F[{self.href_field(dst, i, where)[0]}] = F[{self.href_field(src, i, where)[0]}]")
        lines.append("else:")
        lines.append(f"    F[{self.href_valid(dst)}] = 0")
        return lines

    def header_len(self, ref: tuple, hl: HeaderLayout, where: str) -> str:
        """Bytes of a header on the wire (a varbit field adds its current width)."""
        if hl.vl is None:
            return str(hl.nbytes)
        names = [n for n, _w, _s in hl.fields]
        return f"({hl.nbytes} + (F[{self.href_field(ref, names.index(VL_BITS), where)[0]}] >> 3))"

    def assign_union(self, dst: UnionLayout, src: UnionLayout) -> list[str]:
        """BMv2's assign_union: assign_header member by member, in order."""
        if len(dst.headers) != len(src.headers):
            raise LoadError(f"header unions {dst.name!r} and {src.name!r} have different types")
        lines: list[str] = []
        for dn, sn in zip(dst.headers, src.headers):
            d, s = self.p.headers[dn], self.p.headers[sn]
            lines.append(f"if F[{s.valid_slot}]:")
            lines.append(f"    F[{d.valid_slot}] = 1")
            lines.extend("    " + x for x in self.invalidate_siblings(("s", d)))
            for (n, _w, _s), (m, _w2, _s2) in zip(d.fields, s.fields):
                lines.append(f"    F[{d.slots[n]}] = F[{s.slots[m]}]")
            lines.append("else:")
            lines.append(f"    F[{d.valid_slot}] = 0")
        return lines

    def union_stack_shift_fn(self, ust: UnionStackLayout) -> str:
        """BMv2's P4_16 push_front/pop_front of a header union stack: elements are swapped pairwise (each union's
        validity and members' values move together) and the elements left over are "marked invalid", which for a
        header union does nothing (HeaderUnion::mark_invalid is empty), so they keep the values swapped into them."""
        fn = f"_ustackshift{ust.id}"
        if fn in self.ns or any(line.startswith(f"def {fn}(") for line in self.out):
            return fn
        elems = []
        for un in ust.unions:
            slots: list[int] = []
            for h in self.p.unions[un].headers:
                hl = self.p.headers[h]
                slots.append(hl.valid_slot)
                slots.extend(hl.slots[n] for n, _w, _s in hl.fields)
            elems.append(tuple(slots))
        self.ns[f"_USS{ust.id}"] = tuple(elems)
        self.out.extend([
            f"def {fn}(F, n, push):",
            f"    S = _USS{ust.id}",
            f"    size = {len(elems)}",
            "    def swap(i, k):",
            "        for a, b in zip(S[i], S[k]):",
            "            F[a], F[b] = F[b], F[a]",
            "    if n <= 0:",
            "        return",
            "    if push:",
            f"        F[{ust.next_slot}] = min(size, F[{ust.next_slot}] + n)",
            "        for i in range(size - 1, n - 1, -1):",
            "            swap(i, i - n)",
            "    else:",
            f"        F[{ust.next_slot}] -= min(F[{ust.next_slot}], n)",
            "        for i in range(size - n if n < size else 0):",
            "            swap(i, i + n)",
        ])
        return fn

    def stack_shift_fn(self, st: StackLayout) -> str:
        fn = f"_stackshift{st.id}"
        if fn in self.ns or any(line.startswith(f"def {fn}(") for line in self.out):
            return fn
        hls = [self.p.headers[h] for h in st.headers]
        self.ns[f"_SS{st.id}"] = tuple((h.valid_slot,) + tuple(h.slots[n] for n, _w, _s in h.fields) for h in hls)
        size = len(hls)
        self.out.extend([
            f"def {fn}(F, n, push):",
            f"    S = _SS{st.id}",
            f"    size = {size}",
            "    if push:",
            "        for i in range(size - 1, -1, -1):",
            "            src = i - n",
            "            for a, b in zip(S[i], S[src]) if src >= 0 else ():",
            "                F[a] = F[b]",
            "            if src < 0:",
            "                F[S[i][0]] = 0",
            f"        F[{st.next_slot}] = min(F[{st.next_slot}] + n, size)",
            "    else:",
            "        for i in range(size):",
            "            src = i + n",
            "            if src < size:",
            "                for a, b in zip(S[i], S[src]):",
            "                    F[a] = F[b]",
            "            else:",
            "                F[S[i][0]] = 0",
            f"        F[{st.next_slot}] = max(F[{st.next_slot}] - n, 0)",
        ])
        return fn

    def build_actions(self) -> None:
        # untraced: temporaries that recompute a value drop out (common_values.py); traced: BMv2's primitives as given
        for a in (self.j if self.trace else simplify_actions(self.j)).get("actions", []):
            name = a.get("name")
            aid = a.get("id")
            if not isinstance(aid, int):
                raise LoadError(f"action {name!r} has no integer id")
            where = f"action {name!r}"
            rd = a.get("runtime_data", [])
            self.action_width = [int(r["bitwidth"]) for r in rd]
            prims = a.get("primitives", [])
            self._idx = None
            inline: list[str] | None = None
            raw: list[str] | None = None
            if any(pr.get("op") in ("_jump", "_jump_if_zero") for pr in prims):
                body = self.jumping_body(prims, where)
            else:
                self._idx_on = True
                body = []
                for prim in prims:
                    body.extend(self.primitive(prim, where))
                self._idx_on = False
                raw = body
                if not self.trace:
                    body = optimize_body(body, self.vec_info)
                    inline = body  # straight-line: may be inlined where the action is known statically
            self._idx = None
            fn = f"A{aid}"
            lines = [f"def {fn}(F, D):"]
            if self.trace:
                lines.append(f"    _T(F, {('Action ' + name)!r})")
            lines.extend("    " + b for b in body)
            if len(lines) == 1:
                lines.append("    pass")
            self.out.extend(lines)
            info = ActionInfo(name, aid, [(r["name"], int(r["bitwidth"])) for r in rd])
            self.actions[aid] = {"name": name, "fn": fn, "info": info, "inline": inline,
                                 "raw": raw if inline is not None else None,
                                 "uses_data": any("D[" in b for b in body)}
            self.action_by_name[name] = self.actions[aid]
            self.action_infos[name] = info
        self.action_width = []

    def jumping_body(self, prims: list[dict], where: str) -> list[str]:
        """An action with `_jump` / `_jump_if_zero` (p4c's `if` and `for` inside actions): a small program-counter
        loop. BMv2 bounds nothing; the step bound here only stops an endless loop (two nested loops over bit<8>
        counters take ~65k iterations, well below it)."""
        n = len(prims)
        lines = ["pc = 0", "steps = 0", "while True:", "    steps += 1",
                 f"    if steps > {MAX_JUMP_STEPS}: raise PacketAbort('endless jump loop in action')"]
        for k, prim in enumerate(prims):
            op = prim.get("op")
            params = prim.get("parameters", [])
            lines.append(f"    {'if' if k == 0 else 'elif'} pc == {k}:")
            if op == "_jump":
                target = self.jump_target(params[0], n, where)
                lines.append(f"        pc = {target}")
            elif op == "_jump_if_zero":
                cond = self.expr(params[0], where)[0]
                target = self.jump_target(params[1], n, where)
                lines.append(f"        pc = {target} if ({cond}) == 0 else {k + 1}")
            else:
                lines.extend("        " + b for b in self.primitive(prim, where))
                lines.append(f"        pc = {k + 1}")
        lines.append("    else:")
        lines.append("        return")
        return lines

    def jump_target(self, node: dict, n: int, where: str) -> int:
        if node.get("type") != "hexstr":
            raise LoadError(f"jump offset must be a constant in {where}")
        t = int(node["value"], 16)
        if not 0 <= t <= n:
            raise LoadError(f"jump offset {t} out of range in {where}")
        return t
