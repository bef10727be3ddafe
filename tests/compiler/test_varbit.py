"""Varbit fields outside what p4c's BMv2 back end takes are refused where they are written; the JSON of a varbit
header is what p4c writes (a 2-tuple `[name, "*"]` field and `max_length` in bytes)."""

from __future__ import annotations

import pytest

from compiler import CompileError, compile_source
from tests.compiler.error_template import DECLS_LINE, TEMPLATE, first_error

VL_PARSER = "pkt.extract(hdr.eth); transition accept;"


def _with_parser(state: str, decls: str, headers: str = "eth_t eth;") -> str:
    return (TEMPLATE.replace("struct headers { eth_t eth; }", f"struct headers {{ {headers} }}")
            .replace(f"state start {{ {VL_PARSER} }}", f"state start {{ {state} }}")
            .replace("@DECLS@", decls).replace("@LOCALS@", "").replace("@BODY@", ""))


def _first_error(src: str) -> tuple[int, int, str]:
    with pytest.raises(CompileError) as info:
        compile_source(src, name="t.p4")
    d = info.value.diagnostics.errors[0]
    return d.loc.line, d.loc.col, d.message


def test_two_varbit_fields_in_one_header() -> None:
    assert first_error(decls="header two_t { varbit<8> a; varbit<8> b; }") == (
        DECLS_LINE, 29, "unsupported: a second varbit field ('b') in header 'two_t'")


def test_varbit_outside_a_header() -> None:
    assert first_error(decls="struct s_t { varbit<8> v; }") == (
        DECLS_LINE, 14, "unsupported: struct field 'v' of type varbit<8> (varbit outside a header)")


def test_extract_size_must_match_the_header() -> None:
    decls = "header v_t { bit<8> a; varbit<16> v; }"
    src = _with_parser("pkt.extract(hdr.eth, 8); transition accept;", decls)
    assert _first_error(src)[2] == "extract with a size needs a header with a varbit field; header eth_t has none"
    src = _with_parser("pkt.extract(hdr.eth); pkt.extract(hdr.v); transition accept;", decls, "eth_t eth; v_t v;")
    assert _first_error(src)[2] == "header v_t has a varbit field: extract it with its size, extract(h, bits)"


def test_json_of_a_varbit_header() -> None:
    decls = "header v_t { bit<8> a; varbit<16> v; bit<8> b; }"
    src = _with_parser("pkt.extract(hdr.eth); pkt.extract(hdr.v, (bit<32>)hdr.eth.type); transition accept;",
                       decls, "eth_t eth; v_t v;")
    j = compile_source(src, name="t.p4").json
    ht = next(t for t in j["header_types"] if t["name"] == "v_t")
    assert ht["fields"] == [["a", 8, False], ["v", "*"], ["b", 8, False]] and ht["max_length"] == 4
    ops = j["parsers"][0]["parse_states"][0]["parser_ops"]
    assert ops[1]["op"] == "extract_VL" and ops[1]["parameters"][0] == {"type": "regular", "value": "v"}
    assert ops[1]["parameters"][1]["type"] == "expression"
    eth = next(t for t in j["header_types"] if t["name"] == "eth_t")
    assert "max_length" not in eth


COMPARE = """#include <core.p4>
#include <v1model.p4>
header n_t { bit<8> len1; bit<8> len2; bit<8> r; }
header v_t { bit<8> a; varbit<16> v; }
struct headers { n_t n; v_t x; v_t y; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.n);
        pkt.extract(hdr.x, (bit<32>)hdr.n.len1);
        pkt.extract(hdr.y, (bit<32>)hdr.n.len2);
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; hdr.n.r = hdr.x == hdr.y ? 8w1 : 8w0; }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
"""


@pytest.mark.parametrize("x,y,equal", [
    ("01" "aa", "01" "aa", True),          # both 8-bit varbits, same value
    ("01" "aa", "01" "ab", False),
    ("01" "00aa", "01" "aa", True),        # 16 bits vs 8 bits, same number: equal by value, as BMv2's Data ==
    ("02" "aa", "01" "aa", False),         # a fixed field differs
])
def test_headers_with_varbit_fields_compare_field_by_field(x: str, y: str, equal: bool) -> None:
    from switch.v1model import V1Switch
    sw = V1Switch()
    sw.load(compile_source(COMPARE, name="t.p4").json)
    lx, ly = (len(x) // 2 - 1) * 8, (len(y) // 2 - 1) * 8
    frame = bytes([lx, ly, 0]) + bytes.fromhex(x + y) + b"\xee"
    (port, out), = sw.process(0, frame)
    assert out == bytes([lx, ly, int(equal)]) + bytes.fromhex(x + y) + b"\xee"
