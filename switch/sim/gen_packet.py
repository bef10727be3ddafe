"""Code generation for the packet side: parser states (extract, set, verify, select), deparser, calculations
(bit-packed inputs, payload) and the verify/update checksum functions."""

from __future__ import annotations

import struct
from typing import Callable

from switch.errors import LoadError
from switch.sim import calculations
from switch.sim.gen_base import _hex
from switch.sim.program import P_PAYLOAD, VL_BITS, HeaderLayout


# a byte-aligned group of header fields packed as one or more struct items:
# (fields [(slot, width)], total width, pieces [(shift from the least significant end, piece width)])
Chunk = tuple[list[tuple[int, int]], int, list[tuple[int, int]]]

MAX_PARSER_STEPS = 1024  # parse states one packet may visit when the parse graph has a cycle


def _has_cycle(states: list[dict], ids: dict[str, int]) -> bool:
    succ = {s.get("name"): {t.get("next_state") for t in s.get("transitions", []) if t.get("next_state") in ids}
            for s in states}
    color: dict[str, int] = {}

    def visit(n: str) -> bool:
        color[n] = 1
        for m in succ.get(n, ()):
            if color.get(m) == 1 or (m not in color and visit(m)):
                return True
        color[n] = 2
        return False

    return any(n not in color and visit(n) for n in succ)


class PacketGen:
    """Mixin of Codegen (see codegen.py for the shared state: self.p, self.j, self.ns, self.out, self.trace)."""

    def build_calculations(self) -> None:
        order = self.deparser_order()
        for c in list(self.j.get("calculations", [])) + self.extra_calcs:
            name = c.get("name")
            where = f"calculation {name!r}"
            algo = c.get("algo")
            if algo not in calculations.ALGORITHMS and algo not in calculations.CUSTOM_WIDTHS:
                raise LoadError(f"unsupported hash algorithm {algo!r} in {where}")
            fn = f"CALC{c.get('id', len(self.calcs))}"
            if algo in calculations.CUSTOM_WIDTHS:  # one per calculation: its parameters are its own
                old = self.reuse.custom_crcs.get(name) if self.reuse is not None else None
                self.custom_crcs[name] = old or calculations.CustomCrc(calculations.CUSTOM_WIDTHS[algo])
                algo = fn
                self.ns[f"H_{fn}"] = self.custom_crcs[name]
            else:
                self.ns[f"H_{algo}"] = calculations.ALGORITHMS[algo]
            lines = [f"def {fn}(F):", "    acc = 0", "    nb = 0"]
            last_hdr = -1
            payload = any(inp.get("type") == "payload" for inp in c.get("input", []))
            # csum16 over header fields only: `acc` need only be known modulo 0xFFFF (see csum16_folded), and as
            # 2**16 ≡ 1 (mod 0xFFFF) every shift can be taken modulo 16 — small ints instead of one wide integer
            fold = algo in ("csum16", "cksum16") and not payload

            def shl(x: str, n: int) -> str:
                n = n % 16 if fold else n
                return f"({x} << {n})" if n else x

            join = " + " if fold else " | "
            run: list = []   # consecutive field inputs of one header: (header, [(slot, width)])

            def flush() -> None:
                if not run:
                    return
                hl, items = run[0], run[1]
                total = sum(w for _s, w in items)
                parts, sh = [], total
                for s, w in items:
                    sh -= w
                    parts.append(shl(f"F[{s}]", sh))
                cond = "" if hl.metadata else f"if F[{hl.valid_slot}]: "
                lines.append(f"    {cond}acc = {shl('acc', total)}{join}{join.join(parts)}; nb += {total}")
                run.clear()

            for inp in c.get("input", []):
                t = inp.get("type")
                if t != "field":
                    flush()
                if t == "field":
                    h, f = inp["value"]
                    s = self.p.field_slot(h, f, where)
                    w, _sg = self.p.field_info(h, f)
                    hl = self.p.headers.get(h) or self.p.headers[self.p.aliases[f"{h}.{f}"][0]]
                    if hl.name in order:
                        last_hdr = max(last_hdr, order.index(hl.name))
                    if hl.vl is not None and f == hl.vl:
                        # a varbit field adds its current width
                        flush()
                        nbv = f"F[{hl.slots[VL_BITS]}]"
                        cond = "" if hl.metadata else f"if F[{hl.valid_slot}]: "
                        sh = f"({nbv} % 16)" if fold else nbv
                        lines.append(f"    {cond}acc = (acc << {sh}){join}F[{s}]; nb += {nbv}")
                        continue
                    if run and run[0] is not hl:
                        flush()
                    if not run:
                        run.extend([hl, []])
                    run[1].append((s, w))
                elif t == "header":
                    hl = self.p.header(inp["value"], where)
                    if hl.name in order:
                        last_hdr = max(last_hdr, order.index(hl.name))
                    if hl.vl:
                        nbv = f"F[{hl.slots[VL_BITS]}]"
                        sh = f"(({hl.nbits} + {nbv}) % 16)" if fold else f"({hl.nbits} + {nbv})"
                        whole = f"int.from_bytes({self.vl_header_bytes(hl)}, 'big')"
                        lines.append(f"    if F[{hl.valid_slot}]: acc = (acc << {sh}){join}{whole}; nb += {hl.nbits} + {nbv}")
                        continue
                    parts = " ".join(f"acc = {shl('acc', w)}{join}F[{hl.slots[n]}];" for n, w, _s in hl.fields)
                    lines.append(f"    if F[{hl.valid_slot}]: {parts} nb += {hl.nbits}")
                elif t == "hexstr":
                    w = int(inp.get("bitwidth", 0))
                    if w <= 0:
                        raise LoadError(f"hexstr input without bitwidth in {where}")
                    const = _hex(inp["value"], where) & ((1 << w) - 1)
                    lines.append(f"    acc = {shl('acc', w)}{join}{const}; nb += {w}")
                elif t == "payload":
                    pass
                else:
                    raise LoadError(f"unsupported calculation input type {t!r} in {where}")
            flush()
            lines.append("    pad = -nb % 8")
            if fold:
                self.ns["_csum16_folded"] = calculations.csum16_folded
                lines.append("    return _csum16_folded(acc, (nb + pad) >> 3, pad)")
            else:
                lines.append("    data = (acc << pad).to_bytes((nb + pad) >> 3, 'big')")
                if payload:
                    lines.append(f"    data += _emit_from(F, {last_hdr + 1}) + F[{P_PAYLOAD}]")
                lines.append(f"    return H_{algo}(data)")
            self.out.extend(lines)
            self.calcs[name] = fn

    def build_checksums(self) -> None:
        ver = ["def verify_checksums(F):", "    ok = True"]
        upd = ["def update_checksums(F):"]
        for c in self.j.get("checksums", []):
            name = c.get("name")
            where = f"checksum {name!r}"
            if c.get("type", "generic") != "generic":
                raise LoadError(f"unsupported checksum type {c.get('type')!r} in {where}")
            calc = self.calcs.get(c.get("calculation"))
            if calc is None:
                raise LoadError(f"unknown calculation {c.get('calculation')!r} in {where}")
            slot, w, _sg = self.lvalue({"type": "field", "value": c["target"]}, where)
            cond = "True"
            if c.get("if_cond") is not None:
                cond = self.expr(c["if_cond"], where)[0]
            if c.get("verify", True):
                ver.append(f"    if {cond} and ({calc}(F) & {(1 << w) - 1}) != F[{slot}]:")
                if self.trace:
                    ver.append(f"        _T(F, {('Checksum ' + repr(name) + ' verification failed')!r})")
                ver.append("        ok = False")
            if c.get("update", True):
                upd.append(f"    if {cond}:")
                upd.append(f"        F[{slot}] = {calc}(F) & {(1 << w) - 1}")
                if self.trace:
                    upd.append(f"        _T(F, {('Updating checksum ' + repr(name) + ': ')!r} + hex(F[{slot}]))")
        ver.append("    return ok")
        self.has_updates = len(upd) > 1
        upd.append("    return None")
        self.out.extend(ver + upd)

    def deparser_order(self) -> list[str]:
        deps = self.j.get("deparsers", [])
        if len(deps) != 1:
            raise LoadError(f"expected exactly one deparser, found {len(deps)}")
        order = deps[0].get("order", [])
        for h in order:
            self.p.header(h, "deparser")
        if deps[0].get("primitives"):
            raise LoadError("unsupported deparser primitives")
        return order

    def header_struct(self, hl: HeaderLayout) -> tuple[str, int, int] | None:
        """(struct name, first slot, end slot) when every field is 8/16/32/64 bits wide: such headers are packed and
        unpacked with one precompiled struct.Struct (many-field payload headers, e.g. 64 × bit<32>)."""
        codes = {8: "B", 16: "H", 32: "I", 64: "Q"}
        if hl.vl or len(hl.fields) < 3 or any(w not in codes for _n, w, _s in hl.fields):
            return None
        slots = [hl.slots[n] for n, _w, _s in hl.fields]
        if slots != list(range(slots[0], slots[0] + len(slots))):
            return None
        name = f"_ST_{hl.id}"
        if name not in self.ns:
            self.ns[name] = struct.Struct("!" + "".join(codes[w] for _n, w, _s in hl.fields))
        return name, slots[0], slots[-1] + 1

    def header_plan(self, hl: HeaderLayout) -> tuple[str, list[Chunk]] | None:
        """A precompiled struct for a header whose fields group into byte-aligned chunks of at most 64 bits
        (e.g. IPv4's version+ihl → one byte, flags+fragOffset → 16 bits, a 48-bit MAC → 16 + 32 bits):
        (struct name, [(fields [(slot, width)], chunk width, pieces [(shift, piece width)])]), or None."""
        codes = {8: "B", 16: "H", 32: "I", 64: "Q"}
        if hl.vl:
            return None
        chunks: list[Chunk] = []
        cur: list[tuple[int, int]] = []
        total = 0
        for n, w, _s in hl.fields:
            cur.append((hl.slots[n], w))
            total += w
            if total > 64:
                return None
            if total % 8 == 0:
                pieces, rest = [], total
                for pw in (64, 32, 16, 8):  # largest struct codes first, from the most significant end
                    while rest >= pw:
                        rest -= pw
                        pieces.append((rest, pw))
                chunks.append((cur, total, pieces))
                cur, total = [], 0
        if cur or not chunks:
            return None
        name = f"_SP_{hl.id}"
        if name not in self.ns:
            self.ns[name] = struct.Struct("!" + "".join(codes[pw] for _f, _t, ps in chunks for _s, pw in ps))
        return name, chunks

    def header_pack(self, hl: HeaderLayout) -> tuple[str, list[str]] | None:
        """(struct format without byte order, argument sources) packing header `hl`, or None (no struct layout)."""
        if hl.name in self.vector_of:
            return None
        st = self.header_struct(hl)
        if st is not None:
            return self.ns[st[0]].format[1:], [f"*F[{st[1]}:{st[2]}]"]
        plan = self.header_plan(hl)
        if plan is None:
            return None
        args = []
        for fields, total, pieces in plan[1]:
            parts, sh = [], total
            for slot, w in fields:
                sh -= w
                parts.append(f"(F[{slot}] << {sh})" if sh else f"F[{slot}]")
            v = " | ".join(parts)
            for shift, pw in pieces:
                if len(pieces) == 1:
                    args.append(v)
                else:
                    x = f"(({v}) >> {shift})" if shift else f"({v})"
                    args.append(f"({x} & {(1 << pw) - 1})" if shift + pw < total else x)
        return self.ns[plan[0]].format[1:], args

    def header_bytes(self, hl: HeaderLayout) -> str:
        v = self.vector_of.get(hl.name)
        if v is not None:
            return f"_vbytes(F[{v.vslot}])"
        st = self.header_struct(hl)
        if st is not None:
            return f"{st[0]}.pack(*F[{st[1]}:{st[2]}])"
        packed = self.header_pack(hl)
        if packed is not None:
            return f"_SP_{hl.id}.pack({', '.join(packed[1])})"
        if hl.vl:
            return self.vl_header_bytes(hl)
        parts = []
        shift = hl.nbits
        for n, w, _s in hl.fields:
            shift -= w
            parts.append(f"(F[{hl.slots[n]}] << {shift})" if shift else f"F[{hl.slots[n]}]")
        return f"({' | '.join(parts)}).to_bytes({hl.nbytes}, 'big')"

    @staticmethod
    def vl_fields(hl: HeaderLayout) -> list[tuple[str, int, str]]:
        """(field name, width or 0 for the varbit field, shift from the least significant end as an expression of
        `nb`, the varbit field's current width) of a header with a varbit field, in packet order."""
        out, after = [], hl.nbits
        for n, w, _s in hl.fields:
            if n == VL_BITS:
                continue
            if n == hl.vl:
                out.append((n, 0, str(after)))
                continue
            after -= w
            seen_vl = any(m == hl.vl for m, _w, _sh in out)
            out.append((n, w, str(after) if seen_vl else f"nb + {after}"))
        return out

    def vl_header_bytes(self, hl: HeaderLayout) -> str:
        """The bytes of a valid header with a varbit field: fixed fields and the varbit field's current width."""
        nb = f"F[{hl.slots[VL_BITS]}]"
        parts = [f"(F[{hl.slots[n]}] << ({sh.replace('nb', nb)}))" for n, _w, sh in self.vl_fields(hl)]
        return f"({' | '.join(parts)}).to_bytes(({hl.nbits} + {nb}) >> 3, 'big')"

    def build_deparser(self) -> None:
        order = self.deparser_order()
        lines = ["def deparse(F):"]
        if self.trace:
            lines.append("    _T(F, \"Deparser 'deparser': start\")")
        if getattr(self, "has_updates", True):
            lines.append("    update_checksums(F)")
        packs = [self.header_pack(self.p.headers[h]) for h in order]
        if not self.trace and len(order) > 1 and all(p or h in self.vector_of for h, p in zip(order, packs)):
            # the usual case, every header of the deparser valid: one struct packs them all (a vector header's
            # array bytes are joined in between)
            parts: list[str] = []
            fmt, args = "", []
            for h, p in zip(order, packs):
                if p is None:
                    if fmt:
                        parts.append(f"{self.const('_SD', struct.Struct('!' + fmt))}.pack({', '.join(args)})")
                        fmt, args = "", []
                    parts.append(self.header_bytes(self.p.headers[h]))
                else:
                    fmt += p[0]
                    args += p[1]
            if fmt:
                parts.append(f"{self.const('_SD', struct.Struct('!' + fmt))}.pack({', '.join(args)})")
            valid = " and ".join(f"F[{self.p.headers[h].valid_slot}]" for h in order)
            lines.append(f"    if {valid}:")
            lines.append(f"        return {' + '.join(parts)} + F[{P_PAYLOAD}]")
        lines.append("    out = []")
        for h in order:
            hl = self.p.headers[h]
            lines.append(f"    if F[{hl.valid_slot}]: out.append({self.header_bytes(hl)})")
            if self.trace:
                lines.append(f"    if F[{hl.valid_slot}]: _T(F, {('Deparsing header ' + repr(h))!r})")
        lines.append(f"    out.append(F[{P_PAYLOAD}])")
        if self.trace:
            lines.append("    _T(F, \"Deparser 'deparser': end\")")
        lines.append("    return b''.join(out)")
        # bytes of the valid headers from position k of the deparser order on (calculation `payload` inputs)
        lines.append("def _emit_from(F, k):")
        lines.append("    out = []")
        for i, h in enumerate(order):
            hl = self.p.headers[h]
            lines.append(f"    if k <= {i} and F[{hl.valid_slot}]: out.append({self.header_bytes(hl)})")
        lines.append("    return b''.join(out)")
        self.out.extend(lines)

    def build_parser(self) -> None:
        parsers = self.j.get("parsers", [])
        if len(parsers) != 1:
            raise LoadError(f"expected exactly one parser, found {len(parsers)}")
        pj = parsers[0]
        states = pj.get("parse_states", [])
        ids = {s["name"]: i for i, s in enumerate(states)}
        init = pj.get("init_state")
        if init not in ids:
            raise LoadError(f"parser init_state {init!r} is not a parse state")
        err = self.p.errors
        self.ns["_PE_SHORT"] = err["PacketTooShort"]
        self.ns["_PE_NOMATCH"] = err["NoMatch"]
        self.ns["_PE_STACK"] = err["StackOutOfBounds"]
        self.ns["_NOERROR"] = err["NoError"]
        self.ns["_PE_INVARG"] = err["ParserInvalidArgument"]
        self.ns["_PE_HDRSHORT"] = err["HeaderTooShort"]
        pname = repr(pj.get("name", "parser"))
        lines = ["def parse(F, data):"]
        if self.trace:
            lines.append(f"    _T(F, {('Parser ' + pname + ': start')!r})")
        lines += ["    n_ = len(data)", "    pos = 0", f"    st = {ids[init]}", "    try:", "        while True:"]
        if _has_cycle(states, ids):
            # a parse graph with a loop (e.g. over a stack) must not spin forever on a buggy program
            self.ns["_PE_TIMEOUT"] = err["ParserTimeout"]
            lines[-2:-2] = ["    steps = 0"]
            lines += ["            steps += 1", f"            if steps > {MAX_PARSER_STEPS}: raise ParserError(_PE_TIMEOUT)"]
        by_name = {st_["name"]: st_ for st_ in states}
        inline: set[str] = set()
        if not self.trace and not _has_cycle(states, ids):
            # a state entered by exactly one transition is generated inside that transition's branch (the common
            # chain ethernet → ipv4 → udp → ...), so a packet walks nested code instead of the state loop
            edges: dict[str, int] = {}
            for st_ in states:
                for t in st_.get("transitions", []):
                    edges[t.get("next_state")] = edges.get(t.get("next_state"), 0) + 1
            inline = {n for n, c in edges.items() if c == 1 and n in ids and n != init}
        needed = [init]
        done: set[str] = set()

        def state_body(s: dict, depth: int) -> list[str]:
            sname = s.get("name")
            where = f"parse state {sname!r}"
            body: list[str] = []
            if self.trace:
                body.append(f"_T(F, {('Parser ' + repr(pj.get('name', 'parser')) + ' entering state ' + repr(sname))!r})")
            for pop in s.get("parser_ops", []):
                body.extend(self.parser_op(pop, where))

            def goto(nxt: str) -> list[str] | None:
                if nxt in inline and depth < 24:
                    return state_body(by_name[nxt], depth + 1)
                if nxt in ids and nxt not in done and nxt not in needed:
                    needed.append(nxt)
                return None

            body.extend(self.transition(s, ids, where, goto))
            return body

        k = 0
        while k < len(needed):
            sname = needed[k]
            done.add(sname)
            body = state_body(by_name[sname], 0)
            lines.append(f"            {'if' if k == 0 else 'elif'} st == {ids[sname]}:")
            lines.extend("                " + b for b in body)
            k += 1
        lines += ["    except ParserError as exc:", f"        F[{P_PAYLOAD}] = data[pos:]"]
        if self.trace:
            lines.append(f"        _T(F, {('Parser ' + pname + ': end with error ')!r} + str(exc.code) + ', bytes parsed: ' + str(pos))")
        lines += ["        return exc.code", f"    F[{P_PAYLOAD}] = data[pos:]"]
        if self.trace:
            lines.append(f"    _T(F, {('Parser ' + pname + ': end, bytes parsed: ')!r} + str(pos))")
        lines += ["    return _NOERROR"]
        self.out.extend(lines)
        self.out.extend([
            "def _la(data, pos, off, w):",
            "    start = pos * 8 + off",
            "    end = start + w",
            "    if end > len(data) * 8:",
            "        raise ParserError(_PE_SHORT)",
            "    b0, b1 = start >> 3, (end + 7) >> 3",
            "    v = int.from_bytes(data[b0:b1], 'big')",
            "    return (v >> (b1 * 8 - end)) & ((1 << w) - 1)",
            "def _lak(data, pos, off, w):",
            "    start = pos * 8 + off",
            "    end = start + w",
            "    b0, b1 = start >> 3, (end + 7) >> 3",
            "    v = int.from_bytes(data[b0:b1].ljust(b1 - b0, b'\\0'), 'big')",
            "    return (v >> (b1 * 8 - end)) & ((1 << w) - 1)",
        ])

    def extract_vl_lines(self, hl: HeaderLayout, slots: list[str] | None, valid: str, size: str) -> list[str]:
        """BMv2's extract_VL: the varbit field's width is `size` bits (a multiple of 8, else ParserInvalidArgument);
        PacketTooShort is checked before HeaderTooShort (more than the header type's max_length)."""
        names = [n for n, _w, _s in hl.fields]
        where = {n: (slots[k] if slots else str(hl.slots[n])) for k, n in enumerate(names)}
        fixed = hl.nbytes
        maxb = fixed + (dict((n, w) for n, w, _s in hl.fields)[hl.vl] >> 3)
        lines = [f"nb = {size}", "if nb % 8: raise ParserError(_PE_INVARG)", f"e = pos + {fixed} + (nb >> 3)",
                 "if e > n_: raise ParserError(_PE_SHORT)", f"if {fixed} + (nb >> 3) > {maxb}: raise ParserError(_PE_HDRSHORT)",
                 "v = int.from_bytes(data[pos:e], 'big')", "pos = e"]
        for n, w, sh in self.vl_fields(hl):
            mask = "((1 << nb) - 1)" if n == hl.vl else str((1 << w) - 1)
            lines.append(f"F[{where[n]}] = (v >> ({sh})) & {mask}")
        lines.append(f"F[{where[VL_BITS]}] = nb")
        lines.append(f"F[{valid}] = 1")
        if self.trace:
            lines.append(f"_T(F, {('Extracting header ' + repr(hl.name))!r})")
        return lines

    def extract_lines(self, hl: HeaderLayout, slots: list[str] | None, valid: str, where: str) -> list[str]:
        if hl.vl:
            raise LoadError(f"'extract' of header {hl.name!r}, which has a variable-length field, in {where} "
                            "(use 'extract_VL')")
        v = self.vector_of.get(hl.name) if slots is None else None
        if v is not None:
            lines = [f"e = pos + {hl.nbytes}", "if e > n_: raise ParserError(_PE_SHORT)",
                     f"F[{v.vslot}] = _vload{v.n}(data, pos)", "pos = e", f"F[{valid}] = 1"]
            return lines
        st = self.header_struct(hl) if slots is None else None
        if st is not None:
            lines = [f"e = pos + {hl.nbytes}", "if e > n_: raise ParserError(_PE_SHORT)",
                     f"F[{st[1]}:{st[2]}] = {st[0]}.unpack_from(data, pos)", "pos = e", f"F[{valid}] = 1"]
            if self.trace:
                lines.append(f"_T(F, {('Extracting header ' + repr(hl.name))!r})")
            return lines
        plan = self.header_plan(hl) if slots is None else None
        if plan is not None:
            lines = [f"e = pos + {hl.nbytes}", "if e > n_: raise ParserError(_PE_SHORT)"]
            names, k = [], 0
            for fields, total, pieces in plan[1]:
                names.append([f"_u{k + j}" for j in range(len(pieces))])
                k += len(pieces)
            lines.append(f"{', '.join(n for ns in names for n in ns)}{',' if k == 1 else ''} = "
                         f"{plan[0]}.unpack_from(data, pos)")
            lines.append("pos = e")
            for (fields, total, pieces), ns in zip(plan[1], names):
                v = " | ".join(f"({n} << {sh})" if sh else n for n, (sh, _pw) in zip(ns, pieces))
                if len(pieces) > 1:
                    v = f"({v})"
                sh = total
                for j, (slot, w) in enumerate(fields):
                    sh -= w
                    src = f"{v} >> {sh}" if sh else v
                    if j:
                        src = f"({src}) & {(1 << w) - 1}"
                    lines.append(f"F[{slot}] = {src}")
            lines.append(f"F[{valid}] = 1")
            if self.trace:
                lines.append(f"_T(F, {('Extracting header ' + repr(hl.name))!r})")
            return lines
        lines = [f"e = pos + {hl.nbytes}", "if e > n_: raise ParserError(_PE_SHORT)",
                 "v = int.from_bytes(data[pos:e], 'big')", "pos = e"]
        shift = hl.nbits
        for k, (n, w, _s) in enumerate(hl.fields):
            shift -= w
            slot = slots[k] if slots else str(hl.slots[n])
            src = f"v >> {shift}" if shift else "v"
            if k:
                src = f"({src}) & {(1 << w) - 1}"
            lines.append(f"F[{slot}] = {src}")
        lines.append(f"F[{valid}] = 1")
        if self.trace:
            lines.append(f"_T(F, {('Extracting header ' + repr(hl.name))!r})")
        return lines

    def parser_op(self, pop: dict, where: str) -> list[str]:
        op = pop.get("op")
        params = pop.get("parameters", [])
        if op in ("extract", "extract_VL"):
            t, v = params[0].get("type"), params[0].get("value")
            size = None
            if op == "extract_VL":
                if len(params) != 2 or params[1].get("type") != "expression":
                    raise LoadError(f"'extract_VL' needs a header and a length of type 'expression' in {where}")
                size = self.expr(params[1]["value"], where, parser=True)[0]

            def extract(hl: HeaderLayout, slots: list[str] | None, valid: str) -> list[str]:
                if size is None:
                    return self.extract_lines(hl, slots, valid, where)
                if not hl.vl:
                    raise LoadError(f"'extract_VL' of header {hl.name!r}, which has no variable-length field, in {where}")
                return self.extract_vl_lines(hl, slots, valid, size)

            if t == "regular":
                hl = self.p.header(v, where)
                return extract(hl, None, str(hl.valid_slot)) + self.invalidate_siblings(("s", hl))
            if t == "union_stack":  # value [union stack, member]: that member of the stack's next union
                if not (isinstance(v, list) and len(v) == 2 and v[0] in self.p.union_stacks
                        and v[1] in self.p.union_stacks[v[0]].members):
                    raise LoadError(f"bad union_stack extract target {v!r} in {where}")
                ust = self.p.union_stacks[v[0]]
                k = ust.members.index(v[1])
                hls = [self.p.headers[self.p.unions[u].headers[k]] for u in ust.unions]
                key = f"_USX{ust.id}_{k}"
                self.ns[key] = tuple(tuple(h.slots[n] for n, _w, _s in h.fields) for h in hls)
                self.ns[key + "v"] = tuple(h.valid_slot for h in hls)
                self.ns[key + "s"] = tuple(h.union_siblings for h in hls)
                lines = [f"ix = F[{ust.next_slot}]", f"if ix >= {len(hls)}: raise ParserError(_PE_STACK)"]
                slots = [f"{key}[ix][{i}]" for i in range(len(hls[0].fields))]
                lines += extract(hls[0], slots, f"{key}v[ix]")
                lines.append(f"for s_ in {key}s[ix]: F[s_] = 0")
                lines.append(f"F[{ust.next_slot}] = ix + 1")
                return lines
            if t == "stack":
                st = self.p.stacks.get(v)
                if st is None:
                    raise LoadError(f"unknown header stack {v!r} in {where}")
                hl = self.p.headers[st.headers[0]]
                lines = [f"ix = F[{st.next_slot}]", f"if ix >= {len(st.headers)}: raise ParserError(_PE_STACK)"]
                slots = [f"{self.stack_table(st, str(k))}[ix]" for k in range(len(hl.fields))]
                lines += extract(hl, slots, f"{self.stack_table(st, '$valid$')}[ix]")
                lines.append(f"F[{st.next_slot}] = ix + 1")
                return lines
            raise LoadError(f"unsupported {op} of {t!r} in {where}")
        if op == "set":
            if self.vl_width(params[0], where) is not None:
                return self.assign_vl(params[0], params[1], where)
            slot, w, _sg = self.lvalue(params[0], where)
            src, bits = self.expr(params[1], where, parser=True)
            return [self.assign_src(slot, w, src, bits)]
        if op == "verify":
            c = self.expr(params[0], where, parser=True)[0]
            e = self.expr(params[1], where, parser=True)[0]
            return [f"if not {c}: raise ParserError({e})"]
        if op in ("advance", "shift"):
            n = self.expr(params[0], where, parser=True)[0]
            if op == "advance":  # BMv2's ParserOpAdvance: checked before it moves, whole bytes only
                return [f"e = {n}", "if e & 7: raise ParserError(_PE_INVARG)", "e = pos + (e >> 3)",
                        "if e > n_: raise ParserError(_PE_SHORT)", "pos = e"]
            return [f"e = pos + {n}", "if e > n_: raise ParserError(_PE_SHORT)", "pos = e"]  # ParserOpShift, bytes
        if op == "primitive":
            return self.primitive(params[0], where, parser=True)
        raise LoadError(f"unsupported parser operation {op!r} in {where}")

    def transition(self, s: dict, ids: dict[str, int], where: str,
                   inline: Callable[[str], list[str] | None] = lambda n: None) -> list[str]:
        """Lines selecting the next state: `st = <id>`, `break` (accept), or the next state's own code when
        `inline(name)` returns it."""
        def goto(nxt: str | None) -> list[str]:
            if nxt is None:
                return ["break"]
            if nxt not in ids:
                raise LoadError(f"unknown next state {nxt!r} in {where}")
            return inline(nxt) or [f"st = {ids[nxt]}"]

        key = s.get("transition_key", [])
        trans = s.get("transitions", [])
        lines: list[str] = []
        parts = []
        total = 0
        for k in key:
            t = k.get("type")
            if t == "field" or t == "stack_field":
                if t == "field":
                    w, signed = self.p.field_info(*k["value"])
                else:
                    st = self.p.stacks[k["value"][0]]
                    w, signed = self.p.field_info(st.headers[0], k["value"][1])
                src = self.expr(k, where, parser=True)[0]
                if signed:  # the key is the field's bytes (BMv2: Field::get_bytes), not its signed value
                    src = f"({src}) & {(1 << w) - 1}"
            elif t == "lookahead":
                # BMv2 (ParseSwitchKeyBuilder) peeks at a select key's lookahead bits without checking the packet's
                # length (past its end it reads the buffer's next bytes: zeros here), unlike a `set` from lookahead,
                # which raises PacketTooShort
                w = int(k["value"][1])
                src = f"_lak(data, pos, {int(k['value'][0])}, {w})"
            elif t == "union_stack_field":  # [union stack, member, field] of the last extracted union
                v = k.get("value")
                ust = self.p.union_stacks.get(v[0]) if isinstance(v, list) and len(v) == 3 else None
                if ust is None or v[1] not in ust.members:
                    raise LoadError(f"bad union_stack_field {v!r} in {where}")
                m = ust.members.index(v[1])
                hls = [self.p.headers[self.p.unions[u].headers[m]] for u in ust.unions]
                w, signed = self.p.field_info(hls[0].name, v[2])
                key_name = f"_USF{ust.id}_{m}_{v[2]}".replace("$", "V")
                self.ns[key_name] = tuple(self.p.field_slot(h.name, v[2], where) for h in hls)
                src = f"F[{key_name}[F[{ust.next_slot}] - 1]]"
                if signed:
                    src = f"({src}) & {(1 << w) - 1}"
            else:
                raise LoadError(f"unsupported transition key type {t!r} in {where}")
            nbytes = (w + 7) // 8
            parts.append((src, nbytes * 8, w))
            total += nbytes * 8
        if parts:
            expr = []
            shift = total
            for src, nb, w in parts:
                shift -= nb
                expr.append(f"(({src}) << {shift})" if shift else f"({src})")
            lines.append(f"k = {' | '.join(expr)}")
        if any(tr.get("type") == "parse_vset" for tr in trans):
            # value sets hold the key's fields packed at their widths (BMv2's compressed form), not byte-padded
            shift, comp = sum(w for _s, _nb, w in parts), []
            for src, _nb, w in parts:
                shift -= w
                comp.append(f"(({src}) << {shift})" if shift else f"({src})")
            lines.append(f"kc = {' | '.join(comp) or '0'}")
        first = True
        has_default = False
        for tr in trans:
            t = tr.get("type")
            if t == "default":
                stmt = goto(tr.get("next_state"))
                if first:
                    lines.extend(stmt)
                else:
                    lines.append("else:")
                    lines.extend("    " + x for x in stmt)
                has_default = True
                break
            if t == "parse_vset":  # BMv2: the key, as the value set's compressed value, is a member
                vs = self.p.vsets.get(tr.get("value"))
                if vs is None:
                    raise LoadError(f"unknown parse_vset {tr.get('value')!r} in {where}")
                if tr.get("mask") is not None:
                    raise LoadError(f"parse_vset with a mask in {where} (p4c writes none)")
                if sum(w for _s, _nb, w in parts) != vs[1]:
                    raise LoadError(f"parse_vset {tr['value']!r} of {vs[1]} bits against a key of "
                                    f"{sum(w for _s, _nb, w in parts)} bits in {where}")
                lines.append(f"{'if' if first else 'elif'} kc in _VS{vs[0]}:")
                lines.extend("    " + x for x in goto(tr.get("next_state")))
                first = False
                continue
            if t != "hexstr":
                raise LoadError(f"unsupported transition type {t!r} in {where}")
            val = _hex(tr["value"], where)
            cond = f"k == {val}"
            if tr.get("mask") is not None:
                m = _hex(tr["mask"], where)
                cond = f"(k & {m}) == {val & m}"
            lines.append(f"{'if' if first else 'elif'} {cond}:")
            lines.extend("    " + x for x in goto(tr.get("next_state")))
            first = False
        if not has_default:
            if first:
                lines.append("raise ParserError(_PE_NOMATCH)")
            else:
                lines.append("else:")
                lines.append("    raise ParserError(_PE_NOMATCH)")
        return lines
