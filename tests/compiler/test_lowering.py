"""p4c's BMv2 JSON conventions that other tools rely on (controllers address objects by these names; simple_switch
reads these structures): naming, scalars layout, select encoding, NoAction, tbl_* tables, field lists, P4Info names.
Behaviour is covered by the STF tests; these check the names and layouts that must equal p4c-bm2-ss's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compiler import CompileError, compile_file, compile_source
from tests.paths import ROOT

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header a_t { bit<12> x; bit<2> y; bit<2> z; }
header b_t { bit<8> v; }
struct inner_t { bit<3> p; bool q; }
struct headers { a_t a; b_t[2] bs; b_t last; }
struct metadata { @field_list(1, 2) bit<8> m1; @field_list(2) bit<4> m2; inner_t nested; bit<16> m3; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.a);
        transition select(hdr.a.x, hdr.a.y) {
            (0xaba, 0x3): more;
            (0x0ff &&& 0x0ff, _): more;
            default: accept;
        }
    }
    state more { pkt.extract(hdr.bs.next); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    bit<8> local_v;
    action fwd(bit<9> port) { sm.egress_spec = port; }
    @name("renamed_action") action other() { meta.m3 = 1; }
    @name(".global_name") action abs() { meta.m3 = 2; }
    table plain { key = { hdr.a.x: exact; hdr.a.isValid(): exact; } actions = { fwd; other; abs; } }
    @name("tbl2") table second {
        key = { meta.m1: ternary; hdr.a.x[7:0]: lpm; }
        actions = { fwd; NoAction; }
        const entries = {
            (1 &&& 1, 0x0a &&& 0xff): fwd(1);
            (_, 0x0b &&& 0xff): fwd(2);
        }
        default_action = fwd(7);
    }
    apply {
        local_v = meta.m1;
        plain.apply();
        if (local_v == 3) {
            second.apply();
        }
        fwd(5);
        clone_preserving_field_list(CloneType.I2E, 3, 2);
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), E(), C(), D()) main;
"""


@pytest.fixture(scope="module")
def result():  # type: ignore[no-untyped-def]
    return compile_source(PROGRAM, name="conv.p4")


def test_header_instances_and_scalars(result) -> None:  # type: ignore[no-untyped-def]
    j = result.json
    assert [(h["name"], h["header_type"], h["metadata"]) for h in j["headers"]] == [
        ("scalars", "scalars_0", True), ("standard_metadata", "standard_metadata", True),
        ("a", "a_t", False), ("last", "b_t", False), ("bs[0]", "b_t", False), ("bs[1]", "b_t", False)]
    assert j["header_stacks"] == [{"name": "bs", "id": 0, "header_type": "b_t", "size": 2, "header_ids": [4, 5]}]
    scalars = j["header_types"][0]
    assert scalars["name"] == "scalars_0"
    names = [f[0] for f in scalars["fields"]]
    # user metadata as <struct>.<field>, nested structs flattened as p4c does, locals, then byte padding
    assert names[:5] == ["metadata.m1", "metadata.m2", "metadata._nested_p0", "metadata._nested_q1", "metadata.m3"]
    assert sum(f[1] for f in scalars["fields"]) % 8 == 0
    std = j["header_types"][1]
    assert std["name"] == "standard_metadata" and std["fields"][-1] == ["_padding", 3, False]
    assert ["intrinsic_metadata.mcast_grp", ["standard_metadata", "mcast_grp"]] in j["field_aliases"]


def test_select_values_are_byte_padded_concatenations(result) -> None:  # type: ignore[no-untyped-def]
    start = result.json["parsers"][0]["parse_states"][0]
    assert start["transition_key"] == [{"type": "field", "value": ["a", "x"]}, {"type": "field", "value": ["a", "y"]}]
    assert [(t["type"], t["value"], t["mask"], t["next_state"]) for t in start["transitions"]] == [
        ("hexstr", "0x0aba03", None, "more"),
        ("hexstr", "0x00ff00", "0x00ff00", "more"),
        ("default", None, None, None),
    ]
    more = result.json["parsers"][0]["parse_states"][1]
    assert more["parser_ops"] == [{"parameters": [{"type": "stack", "value": "bs"}], "op": "extract"}]


def test_control_plane_names(result) -> None:  # type: ignore[no-untyped-def]
    tables = result.json["pipelines"][0]["tables"]
    by_name = {t["name"]: t for t in tables}
    # straight-line statements: an action named, as p4c names it, after the file and line of its first statement
    assert set(by_name) == {"Ing.plain", "Ing.tbl2", "tbl_conv37", "tbl_fwd", "tbl_conv43"}
    plain = by_name["Ing.plain"]
    # no default_action: p4c's front end adds NoAction (default only) and makes it the default
    assert plain["actions"] == ["Ing.fwd", "Ing.renamed_action", "global_name", "NoAction"]
    assert plain["max_size"] == 1024
    assert plain["key"] == [
        {"match_type": "exact", "name": "hdr.a.x", "target": ["a", "x"], "mask": None},
        {"match_type": "exact", "name": "hdr.a.$valid$", "target": ["a", "$valid$"], "mask": None},
    ]
    actions = {a["id"]: a["name"] for a in result.json["actions"]}
    assert actions[plain["default_entry"]["action_id"]] == "NoAction"
    second = by_name["Ing.tbl2"]
    assert second["match_type"] == "ternary"
    assert second["key"][1]["mask"] == "0x00ff"
    assert second["default_entry"]["action_data"] == ["0x7"]
    # const entries: in the JSON a lower priority number wins; entries keep their order
    assert [e["priority"] for e in second["entries"]] == [1, 2]
    assert second["entries"][1]["match_key"] == [
        {"match_type": "ternary", "key": "0x00", "mask": "0x00"},
        {"match_type": "lpm", "key": "0x0b", "prefix_length": 8}]
    call = by_name["tbl_fwd"]
    assert call["key"] == [] and call["default_entry"]["action_const"] is True
    # p4c binds every argument of a directly called action inside its copy: no action data
    assert call["default_entry"]["action_data"] == []
    fwd_copies = [a for a in result.json["actions"] if a["name"] == "Ing.fwd"]
    assert sorted(len(a["runtime_data"]) for a in fwd_copies) == [0] + [1] * (len(fwd_copies) - 1)
    fwd_info = [a for a in result.p4info.actions if a.preamble.name == "Ing.fwd"]
    assert [p.name for p in fwd_info[0].params] == ["port"]  # P4Info keeps the tables' copy
    p4info = result.p4info_text
    for name in ("Ing.plain", "Ing.tbl2", "Ing.fwd", "Ing.renamed_action", "global_name", "NoAction"):
        assert f'name: "{name}"' in p4info
    assert "tbl_" not in p4info and '"act' not in p4info


def test_field_lists_from_annotations(result) -> None:  # type: ignore[no-untyped-def]
    j = result.json
    assert j["field_lists"] == [{"id": 1, "name": "field_list2", "elements": [
        {"type": "field", "value": ["scalars", "metadata.m1"]},
        {"type": "field", "value": ["scalars", "metadata.m2"]}]}]
    prims = [p for a in j["actions"] for p in a["primitives"] if p["op"] == "clone_ingress_pkt_to_egress"]
    assert prims[0]["parameters"][1] == {"type": "hexstr", "value": "0x1"}


def test_deparser_emits_struct_members_in_order(result) -> None:  # type: ignore[no-untyped-def]
    assert result.json["deparsers"][0]["order"] == ["a", "bs[0]", "bs[1]", "last"]


REPO_PROGRAMS = sorted((ROOT / "tests" / "p4").glob("*.p4")) + sorted((ROOT / "p4src").glob("*.p4")) + \
    sorted((Path(__file__).parent / "p4").glob("*.p4"))


@pytest.mark.parametrize("path", REPO_PROGRAMS, ids=[p.name for p in REPO_PROGRAMS])
def test_p4info_names_equal_json_names(path: Path) -> None:
    """PI's BMv2 back end maps P4Info objects to JSON objects by name."""
    r = compile_file(path)
    j = r.json
    tables = {t["name"]: t for p in j["pipelines"] for t in p["tables"]}
    actions = {a["name"] for a in j["actions"]}
    for t in r.p4info.tables:
        jt = tables[t.preamble.name]
        assert [m.name for m in t.match_fields] == [k["name"] for k in jt["key"]]
        # p4c-bm2-ss: a table with entries and no `size` holds just them in the JSON (BMv2 sizes it so anyway)
        assert jt["max_size"] == (len(jt["entries"]) if jt.get("entries") and t.size == 1024 else t.size)
    for a in r.p4info.actions:
        assert a.preamble.name in actions
    assert {c.preamble.name for c in r.p4info.counters} | {c.preamble.name for c in r.p4info.direct_counters} == \
        {c["name"] for c in j["counter_arrays"]}
    assert {g.preamble.name for g in r.p4info.registers} == {g["name"] for g in j["register_arrays"]}


CPU_PROGRAM = """
#include <core.p4>
#include <v1model.p4>
@controller_header("packet_in") header packet_in_h { bit<9> ingress_port; bit<7> _pad; }
@controller_header("packet_out") header packet_out_h { bit<9> egress_port; bit<7> _pad; }
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct headers { packet_out_h pout; packet_in_h pin; eth_t eth; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        transition select(sm.ingress_port) { 255: cpu; default: eth; }
    }
    state cpu { pkt.extract(hdr.pout); transition eth; }
    state eth { pkt.extract(hdr.eth); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.pout.isValid()) {
            sm.egress_spec = hdr.pout.egress_port;
            hdr.pout.setInvalid();
        } else {
            hdr.pin.setValid();
            hdr.pin.ingress_port = sm.ingress_port;
            sm.egress_spec = 255;
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.pin); pkt.emit(hdr.eth); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
"""


def test_controller_headers_in_p4info() -> None:
    r = compile_source(CPU_PROGRAM, name="cpu.p4")
    cpm = {m.preamble.name: [(f.id, f.name, f.bitwidth) for f in m.metadata]
           for m in r.p4info.controller_packet_metadata}
    assert cpm == {"packet_in": [(1, "ingress_port", 9), (2, "_pad", 7)],
                   "packet_out": [(1, "egress_port", 9), (2, "_pad", 7)]}
    assert {m.preamble.id >> 24 for m in r.p4info.controller_packet_metadata} == {0x04}


def test_packet_in_and_out_paths_on_the_switch() -> None:
    """A frame from the CPU port leaves where packet_out says, without the header; others go to the CPU with
    packet_in prepended."""
    from switch.v1model import V1Switch

    sw = V1Switch(cpu_port=255)
    sw.load(compile_source(CPU_PROGRAM, name="cpu.p4").json)
    eth = bytes.fromhex("000000000001000000000002abcd") + b"data"
    out = sw.process(255, bytes.fromhex("0180") + eth)  # egress_port 3 = 0b000000011, then 7 pad bits
    assert out == [(3, eth)]
    out = sw.process(2, eth)
    assert out == [(255, bytes.fromhex("0100") + eth)]  # ingress_port 2 -> 0b000000010 0000000


def _tbl2_entries(entries: str) -> str:
    return PROGRAM.replace('''        const entries = {
            (1 &&& 1, 0x0a &&& 0xff): fwd(1);
            (_, 0x0b &&& 0xff): fwd(2);
        }''', entries)


def test_const_entry_priority_annotations() -> None:
    # p4c's BMv2 back end: @priority(n) is the JSON priority, an entry without it gets its 1-based position
    src = _tbl2_entries('''        const entries = {
            (1 &&& 1, 0x0a &&& 0xff): fwd(1) @priority(30);
            (_, 0x0b &&& 0xff): fwd(2);
            (_, 0x0c &&& 0xff): fwd(3) @priority(1);
        }''')
    tables = {t["name"]: t for t in compile_source(src, name="p.p4").json["pipelines"][0]["tables"]}
    assert [e["priority"] for e in tables["Ing.tbl2"]["entries"]] == [30, 2, 1]


@pytest.mark.parametrize("entries,message", [
    ("priority = 30: (1 &&& 1, 0x0a &&& 0xff): fwd(1);", "a table with 'const' entries cannot have priorities"),
    ("(1 &&& 1, 0x0a &&& 0xff): fwd(1) @priority(x);", "invalid @priority value: it must be one integer constant"),
])
def test_const_entry_priority_refused(entries: str, message: str) -> None:
    src = _tbl2_entries("        const entries = {\n            " + entries + "\n        }")
    with pytest.raises(CompileError) as info:
        compile_source(src, name="p.p4")
    assert message in info.value.diagnostics.errors[0].message


def one_header_switch(fields: str, apply: str, decls: str = "", locals_: str = "") -> tuple[Any, dict]:
    """(an engine, its JSON) for a v1model program that extracts one header `h_t { fields }`, runs `apply` in ingress (then
    sends to port 1) and emits the header."""
    from switch.v1model import V1Switch
    src = f"""#include <core.p4>
#include <v1model.p4>
header h_t {{ {fields} }}
{decls}
struct headers {{ h_t h; }}
struct metadata {{ }}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    state start {{ pkt.extract(hdr.h); transition accept; }}
}}
control VC(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    {locals_}
    apply {{ {apply} sm.egress_spec = 1; }}
}}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{ apply {{ }} }}
control C(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control D(packet_out pkt, in headers hdr) {{ apply {{ pkt.emit(hdr); }} }}
V1Switch(P(), VC(), I(), E(), C(), D()) main;
"""
    j = compile_source(src, name="t.p4").json
    sw = V1Switch()
    sw.load(j)
    return sw, j


def test_struct_swap_of_a_variable_named_like_the_temporary() -> None:
    # the temporary of `t = {t.b, t.a}` (p4c's RemoveAliases) must not be taken for the variable `tmp` itself
    sw, _ = one_header_switch("bit<8> a; bit<8> b;", "tmp = { tmp.b, tmp.a }; hdr.h.a = tmp.a; hdr.h.b = tmp.b;",
                           decls="struct pair_t { bit<8> a; bit<8> b; }",
                           locals_="pair_t tmp = { hdr.h.a, hdr.h.b };")
    assert sw.process(0, bytes([1, 2, 0xee])) == [(1, bytes([2, 1, 0xee]))]


def test_assignment_to_a_slice_of_a_slice() -> None:
    # x[7:4][2:1] is x[6:5] (p4c's slice simplification), as a target too
    sw, _ = one_header_switch("bit<8> a; bit<8> b;", "hdr.h.a[7:4][2:1] = 0; hdr.h.b[6:1][3:0][0:0] = 1;")
    assert sw.process(0, bytes([0xFF, 0x00])) == [(1, bytes([0x9F, 0x02]))]


def test_hash_of_an_expression_goes_through_a_temporary() -> None:
    # BMv2 calculations take fields only: `{ h.a ^ 0xff }` is computed into a temporary first (as p4c does)
    sw, j = one_header_switch("bit<16> a; bit<16> b; bit<16> r1; bit<16> r2;", """
        hash(hdr.h.r1, HashAlgorithm.crc16, 16w0, { hdr.h.a ^ 16w0xffff, 8w7 }, 32w65536);
        hash(hdr.h.r2, HashAlgorithm.crc16, 16w0, { hdr.h.b, 8w7 }, 32w65536);""")
    calcs = j["calculations"]
    assert calcs and all(i["type"] in ("field", "hexstr") for c in calcs for i in c["input"])
    for a, b, same in ((0x1234, 0x1234 ^ 0xFFFF, True), (0x1234, 0x1234, False)):
        (port, out), = sw.process(0, a.to_bytes(2, "big") + b.to_bytes(2, "big") + bytes(4))
        assert (out[4:6] == out[6:8]) == same


LOOP = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> n; bit<32> s; }
struct H { h_t h; }
struct M {}
parser P(packet_in p, out H h, inout M m, inout standard_metadata_t sm) { state start { p.extract(h.h); transition accept; } }
control V(inout H h, inout M m) { apply {} }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    action count() {
        h.h.s = 0;
        for (bit<8> i = 0; i < h.h.n; i = i + 1) {
            if (i == 5) {
                break;
            }
            h.h.s = h.h.s + 1;
        }
    }
    table t { key = { h.h.n: exact; } actions = { count; } }
    apply { t.apply(); }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control C(inout H h, inout M m) { apply {} }
control D(packet_out p, in H h) { apply { p.emit(h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_a_loop_in_an_action_has_p4cs_layout() -> None:
    """p4c#5552's layout (p4c-bm2-ss 1.2.5.12+ gives the same ops and offsets for this action): init, test
    `_jump_if_zero(cond, end)`, body (an `if` as `_jump_if_zero` around a `break` `_jump(end)`), update, `_jump(test)`."""
    j = compile_source(LOOP, name="loop.p4").json
    prims = next(a for a in j["actions"] if a["name"] == "I.count")["primitives"]
    jumps = [(p["op"], p["parameters"][-1]["value"] if p["op"].startswith("_jump") else None) for p in prims]
    assert jumps == [("assign", None), ("assign", None), ("_jump_if_zero", "0x8"), ("_jump_if_zero", "0x5"),
                     ("_jump", "0x8"), ("assign", None), ("assign", None), ("_jump", "0x2")]
    cond = prims[2]["parameters"][0]["value"]["value"]
    assert cond["op"] == "b2d" and cond["right"]["value"]["op"] == "<"
