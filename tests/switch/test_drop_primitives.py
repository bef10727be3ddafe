"""The two ways v1model drops, as simple_switch implements them: `mark_to_drop(standard_metadata)` (primitive
`mark_to_drop`: egress_spec := drop port and mcast_grp := 0 in that header) and the deprecated `mark_to_drop()`
(p4c-bm2-ss emits primitive `drop`: egress_spec := drop port, and mcast_grp := 0 only through the name
`intrinsic_metadata.mcast_grp`, which p4c's JSON aliases to standard_metadata.mcast_grp; without the alias a
multicast requested before it still goes out)."""

from __future__ import annotations

import copy

import pytest

from compiler import compile_source
from switch.v1model import V1Switch

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header ctl_t { bit<8> op; }
struct headers { ctl_t ctl; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.ctl); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action drop_new() { mark_to_drop(sm); }
    action drop_old() { mark_to_drop(); }
    apply {
        sm.mcast_grp = 1;
        if (hdr.ctl.op == 1) { drop_new(); }
        if (hdr.ctl.op == 2) { drop_old(); }
        if (hdr.ctl.op == 3) { sm.mcast_grp = 0; sm.egress_spec = 3; }
        if (hdr.ctl.op == 4) { sm.mcast_grp = 0; sm.egress_spec = 3; drop_old(); }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
"""


@pytest.fixture(scope="module")
def program() -> dict:
    return compile_source(PROGRAM, name="t.p4").json


def make_switch(program: dict) -> V1Switch:
    sw = V1Switch()
    sw.load(program)
    sw.pre.set_group(1, [(1, 0), (2, 1)])
    return sw


@pytest.fixture
def switch(program: dict) -> V1Switch:
    return make_switch(program)


def test_the_compiler_emits_what_p4c_emits_for_each_form(program: dict) -> None:
    prims = {a["name"]: a["primitives"] for a in program["actions"]}
    (new,), (old,) = prims["I.drop_new"], prims["I.drop_old"]
    assert new["op"] == "mark_to_drop" and new["parameters"] == [{"type": "header", "value": "standard_metadata"}]
    assert old["op"] == "drop" and old["parameters"] == []


def test_the_deprecated_form_is_compiled_with_a_warning() -> None:
    result = compile_source(PROGRAM, name="t.p4")
    warnings = [d for d in result.diagnostics if d.severity == "warning"]
    assert [(d.loc.line, d.message) for d in warnings] == [
        (13, "mark_to_drop: Using deprecated feature mark_to_drop. Please use mark_to_drop(standard_metadata) "
             "instead.")]


def test_mark_to_drop_cancels_the_multicast_too(switch: V1Switch, program: dict) -> None:
    assert switch.process(0, bytes([0])) == [(1, bytes([0])), (2, bytes([0]))]
    assert switch.process(0, bytes([1])) == []
    unaliased = {**program, "field_aliases": []}  # mark_to_drop clears the mcast_grp of the header it is given
    assert make_switch(unaliased).process(0, bytes([1])) == []


def test_the_deprecated_drop_cancels_the_multicast_through_the_alias(switch: V1Switch, program: dict) -> None:
    assert ["intrinsic_metadata.mcast_grp", ["standard_metadata", "mcast_grp"]] in program["field_aliases"]
    assert switch.process(0, bytes([2])) == []
    unaliased = copy.deepcopy(program)
    unaliased["field_aliases"] = [a for a in unaliased["field_aliases"] if a[0] != "intrinsic_metadata.mcast_grp"]
    assert make_switch(unaliased).process(0, bytes([2])) == [(1, bytes([2])), (2, bytes([2]))]


def test_the_deprecated_drop_drops_a_unicast(switch: V1Switch) -> None:
    assert switch.process(0, bytes([3])) == [(3, bytes([3]))]
    assert switch.process(0, bytes([4])) == []
