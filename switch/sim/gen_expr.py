"""Code generation for BMv2 expressions and field references (reads, lvalues, header-stack elements).

An expression becomes a Python expression string plus, when known, the largest unsigned bit width its value can
have — assignments skip the truncating mask when the value already fits.
"""

from __future__ import annotations

from typing import Any

from switch.errors import LoadError
from switch.sim.gen_base import _hex
from switch.sim.program import VL_BITS, HeaderLayout, StackLayout, UnionLayout, UnionStackLayout

_BINOPS = {"+": "+", "-": "-", "*": "*", "<<": "<<", ">>": ">>", "&": "&", "|": "|", "^": "^", "==": "==", "!=": "!=",
           ">": ">", ">=": ">=", "<": "<", "<=": "<=", "and": "and", "or": "or", "/": "//", "%": "%"}


class ExprGen:
    """Mixin of Codegen (see codegen.py for the shared state: self.p, self.j, self.ns, self.out, self.trace)."""

    def header_ref(self, node: dict, where: str) -> tuple:
        """('s', HeaderLayout) or ('d', StackLayout, index source) for a header-valued node."""
        t = node.get("type")
        if t == "header":
            return ("s", self.p.header(node["value"], where))
        if t == "expression":
            v = node["value"]
            if "op" not in v:
                return self.header_ref(v, where)
            if v["op"] == "dereference_header_stack":
                st = self.stack(v["left"], where)
                idx, _ = self.expr(v["right"], where)
                return ("d", st, idx)
        raise LoadError(f"expected a header, got {node!r} in {where}")

    def stack(self, node: dict, where: str) -> StackLayout:
        if node.get("type") != "header_stack" or node.get("value") not in self.p.stacks:
            raise LoadError(f"expected a header stack, got {node!r} in {where}")
        return self.p.stacks[node["value"]]

    def union(self, node: dict, where: str) -> UnionLayout:
        if not isinstance(node, dict) or node.get("type") != "header_union" or node.get("value") not in self.p.unions:
            raise LoadError(f"expected a header union, got {node!r} in {where}")
        return self.p.unions[node["value"]]

    def union_stack(self, node: dict, where: str) -> UnionStackLayout:
        if not isinstance(node, dict) or node.get("type") != "header_union_stack" \
                or node.get("value") not in self.p.union_stacks:
            raise LoadError(f"expected a header union stack, got {node!r} in {where}")
        return self.p.union_stacks[node["value"]]

    @staticmethod
    def invalidate_siblings(ref: tuple) -> list[str]:
        """BMv2's HeaderUnion::make_header_valid: a header of a union becoming valid invalidates the other members
        (Header::mark_invalid: the fields and the packet length register are untouched)."""
        if ref[0] != "s":  # a header-stack element is never a union member
            return []
        return [f"F[{s}] = 0" for s in ref[1].union_siblings]

    def stack_table(self, st: StackLayout, what: str) -> str:
        """Name of a constant tuple indexed by stack element: slots of field `what` ('$valid$' or field index), and
        last the scratch slot, which an index out of range reaches (through `_six`). BMv2 throws out_of_range there
        and stops; here the packet goes on: such a read gives whatever the scratch slot holds, a write is lost."""
        key = f"_S{st.id}_{what}".replace("$", "V")
        if key not in self.ns:
            hls = [self.p.headers[h] for h in st.headers]
            if what == "$valid$":
                self.ns[key] = tuple(h.valid_slot for h in hls) + (self.p.scratch_slot,)
            else:
                self.ns[key] = tuple(h.slots[h.fields[int(what)][0]] for h in hls) + (self.p.scratch_slot,)
        return key

    def stack_index(self, st: StackLayout, idx: str) -> str:
        return f"_six({idx}, {len(st.headers)})"

    def href_valid(self, ref: tuple) -> str:
        if ref[0] == "s":
            return str(ref[1].valid_slot)
        return f"{self.stack_table(ref[1], '$valid$')}[{self.stack_index(ref[1], ref[2])}]"

    def href_field(self, ref: tuple, offset: int, where: str) -> tuple[str, int, bool]:
        """(slot source, width, signed) of field number `offset` of a header reference."""
        hl: HeaderLayout = ref[1] if ref[0] == "s" else self.p.headers[ref[1].headers[0]]
        if not 0 <= offset < len(hl.fields):
            raise LoadError(f"field offset {offset} out of range for {hl.name!r} in {where}")
        _n, w, s = hl.fields[offset]
        if ref[0] == "s":
            return str(hl.slots[_n]), w, s
        return f"{self.stack_table(ref[1], str(offset))}[{self.stack_index(ref[1], ref[2])}]", w, s

    def lvalue(self, node: dict, where: str) -> tuple[str, int, bool]:
        """(slot source, width, signed) of an assignable field."""
        t = node.get("type")
        if t == "field":
            h, f = node["value"]
            if f == "$valid$":
                raise LoadError(f"assignment to read-only {h}.$valid$ in {where}")
            s = self.p.field_slot(h, f, where)
            w, sg = self.p.field_info(h, f)
            return str(s), w, sg
        if t == "stack_field":
            st = self.p.stacks.get(node["value"][0])
            if st is None:
                raise LoadError(f"unknown header stack {node['value'][0]!r} in {where}")
            hl = self.p.headers[st.headers[0]]
            off = [n for n, _w, _s in hl.fields].index(node["value"][1])
            return self.href_field(("d", st, f"F[{st.next_slot}] - 1"), off, where)
        if t == "expression":
            v = node["value"]
            if "op" not in v:
                return self.lvalue(v, where)
            if v["op"] == "access_field":
                return self.href_field(self.header_ref(v["left"], where), int(v["right"]), where)
        raise LoadError(f"unsupported assignment target {node!r} in {where}")

    def vl_width(self, node: dict, where: str) -> str | None:
        """Slot source of the current width of the varbit field `node` refers to, or None (not a varbit field)."""
        t, v = node.get("type"), node.get("value")
        if t == "expression" and isinstance(v, dict) and "op" not in v:
            return self.vl_width(v, where)
        if t == "field":
            hl = self.p.headers.get(v[0])
            if hl is None or hl.vl is None or v[1] != hl.vl:
                return None
            return str(hl.slots[VL_BITS])
        if t == "stack_field":
            st = self.p.stacks.get(v[0])
            hl = self.p.headers[st.headers[0]] if st is not None else None
            if hl is None or hl.vl is None or v[1] != hl.vl:
                return None
            return self.lvalue({"type": "stack_field", "value": [v[0], VL_BITS]}, where)[0]
        if t == "expression" and isinstance(v, dict) and v.get("op") == "access_field":
            ref = self.header_ref(v["left"], where)
            hl = ref[1] if ref[0] == "s" else self.p.headers[ref[1].headers[0]]
            names = [n for n, _w, _s in hl.fields]
            if hl.vl is None or names[int(v["right"])] != hl.vl:
                return None
            return self.href_field(ref, names.index(VL_BITS), where)[0]
        return None

    def assign_vl(self, dst: dict, src: dict, where: str) -> list[str]:
        """BMv2's assign_VL: the varbit field takes the source varbit field's value and width."""
        dw, sw = self.vl_width(dst, where), self.vl_width(src, where)
        if dw is None or sw is None:
            raise LoadError(f"'assign_VL' needs two variable-length fields in {where}")
        d, s = self.lvalue(dst, where)[0], self.lvalue(src, where)[0]
        return [f"F[{d}] = F[{s}]", f"F[{dw}] = F[{sw}]"]

    def read_slot(self, slot: str, w: int, signed: bool) -> tuple[str, int | None]:
        if signed:
            h = 1 << (w - 1)
            return f"((F[{slot}] ^ {h}) - {h})", None
        return f"F[{slot}]", w

    def expr(self, node: Any, where: str, parser: bool = False) -> tuple[str, int | None]:
        """(Python source, max unsigned bit width or None) of a BMv2 expression node."""
        if not isinstance(node, dict):
            raise LoadError(f"malformed expression {node!r} in {where}")
        t = node.get("type")
        v = node.get("value")
        if t == "field":
            h, f = v
            s = self.p.field_slot(h, f, where)
            w, sg = self.p.field_info(h, f)
            return self.read_slot(str(s), w, sg)
        if t == "hexstr":
            n = _hex(v, where)
            return str(n), (n.bit_length() if n >= 0 else None)
        if t == "bool":
            return ("True" if v else "False"), 1
        if t in ("local", "runtime_data"):
            if not isinstance(v, int) or not 0 <= v < len(self.action_width):
                raise LoadError(f"runtime data index {v!r} out of range in {where}")
            return f"D[{v}]", self.action_width[v]
        if t == "stack_field":
            slot, w, sg = self.lvalue(node, where)
            return self.read_slot(slot, w, sg)
        if t == "register":
            reg = self.register(v[0], where)
            idx, _ = self.expr(v[1], where)
            return f"R{reg.id}[{idx}]", reg.bitwidth
        if t == "lookahead" and parser:
            off, w = v
            return f"_la(data, pos, {int(off)}, {int(w)})", int(w)
        if t == "string":
            return repr(v), None
        if t == "expression":
            if isinstance(v, dict) and "op" not in v:
                return self.expr(v, where, parser)
            return self.op(v, where, parser)
        raise LoadError(f"unsupported expression node type {t!r} in {where}")

    def op(self, e: dict, where: str, parser: bool) -> tuple[str, int | None]:
        op = e.get("op")
        left, right = e.get("left"), e.get("right")

        def sub(n: Any) -> tuple[str, int | None]:
            return self.expr(n, where, parser)

        if op in _BINOPS:
            a, ab = sub(left)
            b, bb = sub(right)
            bits: int | None = None
            if op == "&":
                bits = min(x for x in (ab, bb) if x is not None) if ab is not None or bb is not None else None
            elif op in ("|", "^") and ab is not None and bb is not None:
                bits = max(ab, bb)
            elif op == ">>":
                bits = ab
            elif op in ("==", "!=", "<", ">", "<=", ">=", "and", "or"):
                bits = 1
            return f"({a} {_BINOPS[op]} {b})", bits
        if op == "not":
            return f"(not {sub(right)[0]})", 1
        if op == "~":
            return f"(~{sub(right)[0]})", None
        if op == "d2b":
            return f"({sub(right)[0]} != 0)", 1
        if op == "b2d":
            return f"(1 if {sub(right)[0]} else 0)", 1
        if op == "valid":
            return f"(F[{self.href_valid(self.header_ref(right, where))}] != 0)", 1
        if op == "valid_union":  # BMv2's HeaderUnion::is_valid: some member is valid
            ul = self.union(right, where)
            return f"(({' | '.join(f'F[{self.p.headers[h].valid_slot}]' for h in ul.headers) or '0'}) != 0)", 1
        if op == "?":
            c = sub(e.get("cond"))[0]
            a, ab = sub(left)
            b, bb = sub(right)
            return f"({a} if {c} else {b})", (max(ab, bb) if ab is not None and bb is not None else None)
        if op == "two_comp_mod":
            a = sub(left)[0]
            w = sub(right)[0]
            return f"((({a}) + (1 << ({w} - 1))) & ((1 << {w}) - 1)) - (1 << ({w} - 1))", None
        if op == "sat_cast":
            return f"_sat({sub(left)[0]}, {sub(right)[0]})", None
        if op == "usat_cast":
            return f"_usat({sub(left)[0]}, {sub(right)[0]})", None
        if op == "access_field":
            slot, w, sg = self.href_field(self.header_ref(left, where), int(right), where)
            return self.read_slot(slot, w, sg)
        if op in ("last_stack_index", "size_stack"):  # of a header stack or a header union stack
            ust = right.get("type") == "header_union_stack" if isinstance(right, dict) else False
            nxt = (self.union_stack(right, where) if ust else self.stack(right, where)).next_slot
            return (f"(F[{nxt}] - 1)" if op == "last_stack_index" else f"F[{nxt}]"), None
        raise LoadError(f"unsupported expression operator {op!r} in {where}")

    def assign_src(self, slot: str, w: int, src: str, bits: int | None) -> str:
        if bits is not None and bits <= w:
            return f"F[{slot}] = {src}"
        return f"F[{slot}] = {src} & {(1 << w) - 1}"
