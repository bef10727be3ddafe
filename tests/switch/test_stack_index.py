"""Header stack elements at run-time indices: the JSON p4c writes for them (dereference_header_stack inside
access_field) and the engine's behaviour when the index is out of range, where BMv2 throws std::out_of_range and
stops: here the packet goes on, the write is lost and the read gives 0 (the scratch slot, reset per packet)."""

from __future__ import annotations

import pytest

from compiler import CompileError, compile_source
from switch.v1model import V1Switch

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header ctl_t { bit<8> op; bit<8> i; bit<8> r; }
header e_t { bit<8> v; }
struct headers { ctl_t ctl; e_t[2] s; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.ctl); pkt.extract(hdr.s.next); pkt.extract(hdr.s.next); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.ctl.op == 1) { hdr.s[hdr.ctl.i].v = 0xaa; }
        if (hdr.ctl.op == 2) { hdr.ctl.r = hdr.s[hdr.ctl.i].v; }
        if (hdr.ctl.op == 3) { hdr.ctl.r = hdr.s[hdr.ctl.i].isValid() ? 8w1 : 8w2; }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
"""


@pytest.fixture(scope="module")
def switch() -> V1Switch:
    sw = V1Switch()
    sw.load(compile_source(PROGRAM, name="t.p4").json)
    return sw


def run(sw: V1Switch, op: int, i: int) -> bytes:
    (port, out), = sw.process(0, bytes([op, i, 0, 0x11, 0x22]))
    assert port == 1
    return out


def test_field_write_is_access_field_of_dereference_header_stack() -> None:
    j = compile_source(PROGRAM, name="t.p4").json
    dsts = [p["parameters"][0] for a in j["actions"] for p in a["primitives"]
            if p["op"] == "assign" and p["parameters"][0]["type"] == "expression"]
    assert len(dsts) == 1
    dst = dsts[0]
    while "op" not in dst["value"]:
        dst = dst["value"]
    v = dst["value"]
    assert v["op"] == "access_field" and v["right"] == 0
    assert v["left"]["value"]["op"] == "dereference_header_stack"
    assert v["left"]["value"]["left"] == {"type": "header_stack", "value": "s"}
    assert v["left"]["value"]["right"] == {"type": "field", "value": ["ctl", "i"]}


def test_in_range(switch: V1Switch) -> None:
    assert run(switch, 1, 1) == bytes([1, 1, 0, 0x11, 0xaa])
    assert run(switch, 2, 0) == bytes([2, 0, 0x11, 0x11, 0x22])
    assert run(switch, 3, 1) == bytes([3, 1, 1, 0x11, 0x22])


@pytest.mark.parametrize("i", [2, 7, 255])
def test_out_of_range_write_is_lost_and_read_gives_zero(switch: V1Switch, i: int) -> None:
    assert run(switch, 1, i) == bytes([1, i, 0, 0x11, 0x22])
    (port, out), = switch.process(0, bytes([2, i, 0x55, 0x11, 0x22]))
    assert out == bytes([2, i, 0, 0x11, 0x22])
    assert run(switch, 3, i) == bytes([3, i, 2, 0x11, 0x22])
    assert switch.stats["errors"] == 0


def test_run_time_index_in_a_parser_is_refused() -> None:
    src = PROGRAM.replace("pkt.extract(hdr.s.next); transition accept;",
                          "pkt.extract(hdr.s.next); hdr.ctl.r = hdr.s[hdr.ctl.i].v; transition accept;")
    with pytest.raises(CompileError) as info:
        compile_source(src, name="t.p4")
    d = info.value.diagnostics.errors[0]
    assert d.message == "unsupported: header stack index that is not a compile-time constant here"
    line = src.splitlines()[d.loc.line - 1]
    assert line[d.loc.col - 1:].startswith("hdr.ctl.i].v; transition")


LAST = """
#include <core.p4>
#include <v1model.p4>
header ctl_t { bit<8> n; }
header e_t { bit<8> v; }
struct headers { ctl_t ctl; e_t[2] s; e_t copy; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.ctl); pkt.extract(hdr.s.next); transition select(hdr.ctl.n) { 2: two; default: done; } }
    state two { pkt.extract(hdr.s.next); transition done; }
    state done { hdr.copy = hdr.s.last; transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { sm.egress_spec = 1; } }
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
"""


@pytest.mark.parametrize("n,elems,copy", [(1, "aa", "aa"), (2, "aabb", "bb")])
def test_stack_last_as_a_header_in_a_parser(n: int, elems: str, copy: str) -> None:
    # p4c writes `h = hs.last` as assign_header from dereference_header_stack at last_stack_index
    sw = V1Switch()
    sw.load(compile_source(LAST, name="t.p4").json)
    (port, out), = sw.process(0, bytes([n]) + bytes.fromhex(elems) + b"\xee")
    assert out == bytes([n]) + bytes.fromhex(elems + copy) + b"\xee"


PIN = PROGRAM.replace("header e_t { bit<8> v; }", "header e_t { bit<8> v; bit<8> w; }").replace(
    "struct headers { ctl_t ctl; e_t[2] s; }", "struct headers { ctl_t ctl; e_t[2] s; e_t h; }").replace(
    "pkt.extract(hdr.s.next); pkt.extract(hdr.s.next); transition accept;",
    "pkt.extract(hdr.s.next); pkt.extract(hdr.s.next); pkt.extract(hdr.h); transition accept;").replace(
    "if (hdr.ctl.op == 1) { hdr.s[hdr.ctl.i].v = 0xaa; }", "if (hdr.ctl.op == 4) { hdr.s[hdr.s[0].v] = hdr.h; }")


def test_header_copy_target_index_is_read_once() -> None:
    # the target s[s[0].v] is fixed before the copy, although the copy's first field rewrites s[0].v (BMv2 evaluates
    # the header operand once)
    sw = V1Switch()
    sw.load(compile_source(PIN, name="t.p4").json)
    (port, out), = sw.process(0, bytes([4, 0, 0]) + bytes([0, 0x11, 0, 0x22]) + bytes([1, 0x99]))
    assert out == bytes([4, 0, 0]) + bytes([1, 0x99, 0, 0x22]) + bytes([1, 0x99])
