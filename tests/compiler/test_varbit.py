"""Varbit fields outside what p4c's BMv2 back end takes are refused where they are written; the JSON of a varbit
header is what p4c writes (a 2-tuple `[name, "*"]` field and `max_length` in bytes)."""

from __future__ import annotations

import pytest

from compiler import CompileError, compile_source

from error_template import DECLS_LINE, TEMPLATE, first_error

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
