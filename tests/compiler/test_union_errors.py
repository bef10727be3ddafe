"""Header-union constructs the compiler refuses, each with its position and message (the rest of the header-union
support is exercised by tests/compiler/p4/header_unions.p4 and header_union_stacks.p4)."""

from __future__ import annotations

import pytest

from compiler import CompileError, compile_source

TEMPLATE = """#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> x; }
header b_t { bit<16> y; }
header_union u_t { a_t a; b_t b; }
struct headers { a_t h; u_t u; u_t[2] us; u_t[2] vs; }
struct metadata { bit<8> m; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); @PARSER@ transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        @BODY@
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
"""
PARSER_LINE, BODY_LINE = 9, 14

CASES = [
    ("", "hdr.u.setValid();", BODY_LINE, 15, "header_union 'u_t' has no field 'setValid'"),
    # p4c writes the element as a header ("us[0]") in the valid_union operand, which BMv2 cannot load
    ("", "if (hdr.us[0].isValid()) { meta.m = 1; }", BODY_LINE, 13,
     "unsupported: isValid() of a header union stack element"),
    # outside a parser p4c splits it into element assignments BMv2 cannot load
    ("", "hdr.vs = hdr.us;", BODY_LINE, 9, "unsupported: assignment of a whole header union stack here"),
    ("pkt.extract(hdr.us.next.a); hdr.h.x = hdr.us.last.a.x;", "", PARSER_LINE, 84,
     "unsupported: 'last' of a header union stack"),
    ("", "hdr.us[meta.m].a.setValid();", BODY_LINE, 16, "unsupported: non-constant header union stack index"),
]


@pytest.mark.parametrize("parser,body,line,col,message", CASES, ids=[c[4] for c in CASES])
def test_refused(parser: str, body: str, line: int, col: int, message: str) -> None:
    src = TEMPLATE.replace("@PARSER@", parser).replace("@BODY@", body)
    with pytest.raises(CompileError) as info:
        compile_source(src, name="t.p4")
    d = info.value.diagnostics.errors[0]
    assert (d.loc.file, d.loc.line, d.loc.col, d.message) == ("t.p4", line, col, message)


def test_unions_are_not_in_p4info() -> None:
    src = TEMPLATE.replace("@PARSER@", "pkt.extract(hdr.u.a);").replace("@BODY@", "")
    r = compile_source(src, name="t.p4")
    assert [u["name"] for u in r.json["header_unions"]] == ["u", "us[0]", "us[1]", "vs[0]", "vs[1]"]
    assert "u_t" not in r.p4info_text and "a_t" not in r.p4info_text
