"""Header unions and header union stacks in the engine: BMv2's run-time semantics (src/bm_sim/header_unions.h,
stacks.cpp, core/primitives.cpp), including the JSON forms p4c can write but our compiler does not (assign_union,
assign_union_stack from a parser, union_stack_field select keys), on JSON compiled from small programs and patched."""

from __future__ import annotations

import copy

import pytest

from compiler import compile_source
from switch.errors import LoadError
from switch.v1model import V1Switch

ETH = bytes.fromhex("000000000001000000000002" "0800")

# ctl.op selects what ingress does; elements are a (aa x) or b (bb yyyyyy) headers, parsed into us.next.<member>
PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header ctl_t { bit<8> op; bit<8> k; }
header a_t { bit<8> tag; bit<8> x; }
header b_t { bit<8> tag; bit<24> y; }
header_union u_t { a_t a; b_t b; }
struct headers { eth_t eth; ctl_t ctl; u_t[3] us; u_t[3] vs; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.ctl); transition elem; }
    state elem {
        transition select(pkt.lookahead<bit<8>>()) { 0xaa: elem_a; 0xbb: elem_b; default: done; }
    }
    state elem_a { pkt.extract(hdr.us.next.a); transition elem; }
    state elem_b { pkt.extract(hdr.us.next.b); transition elem; }
    state done { transition select(hdr.ctl.op) { 5: copy; default: accept; } }
    state copy { hdr.vs = hdr.us; transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.ctl.op == 1) { hdr.us.push_front(1); }
        else if (hdr.ctl.op == 2) { hdr.us.pop_front(1); }
        else if (hdr.ctl.op == 3) { hdr.us[1] = hdr.us[0]; }
        else if (hdr.ctl.op == 4) { hdr.us.pop_front(2); }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
"""

A1, B2, A3 = bytes.fromhex("aa01"), bytes.fromhex("bb020304"), bytes.fromhex("aa03")


@pytest.fixture(scope="module")
def program() -> dict:
    return compile_source(PROGRAM, name="unions.p4").json


def run(j: dict, op: int, elems: bytes, k: int = 0) -> bytes:
    sw = V1Switch()
    sw.load(j)
    (port, out), = sw.process(0, ETH + bytes([op, k]) + elems + b"\xee")
    assert port == 1 and sw.stats["errors"] == 0
    assert out[:16] == ETH + bytes([op, k])
    return out[16:]


def test_json_has_the_union_sections(program):
    assert [u["name"] for u in program["header_unions"]] == ["us[0]", "us[1]", "us[2]", "vs[0]", "vs[1]", "vs[2]"]
    assert program["header_union_stacks"][0] == {"name": "us", "id": 0, "union_type": "u_t", "size": 3,
                                                 "header_union_ids": [0, 1, 2]}
    assert program["header_union_types"] == [{"name": "u_t", "id": 0, "headers": [["a", "a_t"], ["b", "b_t"]]}]


def test_push_front_on_a_full_union_stack_keeps_the_swapped_in_element(program):
    # BMv2 swaps elements and then "marks element 0 invalid", which HeaderUnion::mark_invalid ignores: element 0
    # holds what was element 2 before the push
    assert run(program, 1, A1 + B2 + A3) == A3 + A1 + B2 + b"\xee"
    assert run(program, 1, A1 + B2) == A1 + B2 + b"\xee"   # element 2 was invalid: [-, a, b]


def test_pop_front_leaves_the_popped_union_at_the_end(program):
    # BMv2: [a1, b2, -] pops to [b2, -, a1] (the union moved to the end is not invalidated)
    assert run(program, 2, A1 + B2) == B2 + A1 + b"\xee"
    assert run(program, 4, A1 + B2 + A3) == A3 + B2 + A1 + b"\xee"   # pop 2: e0 <-> e2 swapped, e1 kept


def test_assign_union_primitive(program):
    j = copy.deepcopy(program)
    act = next(a for a in j["actions"] if any(p["op"] == "assign_header" and p["parameters"][0]["value"] == "us[1].a"
                                              for p in a["primitives"]))
    act["primitives"] = [{"op": "assign_union", "parameters": [{"type": "header_union", "value": "us[1]"},
                                                              {"type": "header_union", "value": "us[0]"}]}]
    assert run(j, 3, A1 + B2) == A1 + A1 + b"\xee"          # us[1].b is invalidated by us[1].a becoming valid
    assert run(j, 3, B2 + A1) == B2 + B2 + b"\xee"
    assert run(program, 3, B2 + A1) == B2 + B2 + b"\xee"    # the compiler's member-by-member form agrees


def test_assign_union_stack_in_the_parser(program):
    ops = [op for s in program["parsers"][0]["parse_states"] for op in s["parser_ops"]]
    assert any(op["op"] == "primitive" and op["parameters"][0]["op"] == "assign_union_stack" for op in ops)
    # vs copies us, including its next index: a later emit shows both
    assert run(program, 5, A1 + B2) == A1 + B2 + A1 + B2 + b"\xee"


def test_union_stack_field_select_key(program):
    j = copy.deepcopy(program)
    done = next(s for s in j["parsers"][0]["parse_states"] if s["name"] == "done")
    done["transition_key"] = [{"type": "union_stack_field", "value": ["us", "a", "x"]}]
    done["transitions"] = [{"type": "hexstr", "value": "0x03", "mask": None, "next_state": None},
                           {"type": "default", "value": None, "mask": None, "next_state": "copy"}]
    assert run(j, 0, A1 + A3) == A1 + A3 + b"\xee"                 # last union's a.x is 3: accept
    assert run(j, 0, A3 + A1) == A3 + A1 + A3 + A1 + b"\xee"       # 1: copy into vs


def test_union_with_a_wrong_member_count_is_refused(program):
    j = copy.deepcopy(program)
    j["header_unions"].append({"name": "lone", "id": 6, "union_type": "u_t", "header_ids": [], "pi_omit": True})
    with pytest.raises(LoadError, match="lone"):
        V1Switch().load(j)


def test_bad_union_references_are_refused(program):
    j = copy.deepcopy(program)
    j["header_union_stacks"][0]["header_union_ids"] = [0, 1, 7]
    with pytest.raises(LoadError, match="bad header union id 7"):
        V1Switch().load(j)
