"""Bad programs: the exact message and position of the first error (`file:line:col: error: ...`), the quoted source
line and caret, and that constructs outside the subset are reported as `unsupported: ...`, never miscompiled."""

from __future__ import annotations

import pytest

from compiler import CompileError, compile_source
from tests.compiler.error_template import BODY_LINE, DECLS_LINE, LOCALS_LINE, TEMPLATE, first_error

# (body, column of the error on the body line, message)
BODY_CASES = [
    ("foo = 1;", 9, "undeclared name 'foo'"),
    ("hdr.eth.foo = 1;", 17, "header 'eth_t' has no field 'foo'"),
    ("meta.a = meta.b;", 18, "type mismatch: cannot use a value of type bit<16> for 'meta.a' of type bit<8>"),
    ("meta.a = meta.a + meta.b;", 25, "'+': cannot operate on values of different types bit<8> and bit<16>"),
    ("meta.a = 8w1 + 16w1;", 22, "'+': cannot operate on values of different types bit<8> and bit<16>"),
    ("meta.a = meta.a ++ meta.a;", 18, "type mismatch: cannot use a value of type bit<16> for 'meta.a' of type bit<8>"),
    ("meta.a = meta.a ++ 1;", 28, "'++' operand '1' needs a width (e.g. 8w1)"),
    ("meta.a = hdr.eth.type[16:1];", 30, "slice [16:1] out of range for bit<16>"),
    ("meta.f = meta.a;", 18, "type mismatch: cannot use a value of type bit<8> for 'meta.f' of type bool"),
    ("meta.b = (bit<16>) meta.f;", 18, "illegal cast from bool to bit<16>"),
    ("if (hdr.eth.type) { meta.a = 1; }", 13, "if condition must be bool, not bit<16>"),
    ("if (meta.a == meta.b) { }", 20, "'==': cannot compare values of different types bit<8> and bit<16>"),
    ("meta.f = !meta.a;", 18, "'!' needs a bool operand, not bit<8>"),
    ("hdr.eth.setValid(1);", 9, "setValid() takes no arguments"),
    ("meta.a = meta.a << -1;", 28, "shift amount must not be negative"),
    ("meta.a = meta.a << meta.b;", 25,
     "shift amount limited to 8 bits on this target (the amount is bit<16>; cast it to bit<8>)"),
    ("meta.a = meta.a >> 300;", 25, "shift amount limited to 256 on this target"),
    ("meta.a = meta.a / meta.a;", 25, "unsupported: '/' by a value that is not a constant power of two"),
    ("meta.a = meta.a % 6;", 25, "unsupported: '%' by a value that is not a constant power of two"),
    ("meta.a = meta.a / 0;", 25, "division by zero"),
    ("switch (meta.f) { true: { } }", 17, "cannot switch on a value of type bool"),
    ("switch (meta.a) { 1: { } 1: { } }", 34, "duplicate switch label '1'"),
    ("switch (meta.a) { meta.b: { } }", 27, "type mismatch: cannot use a value of type bit<16> for switch label of type bit<8>"),
    ("verify(true, error.NoError);", 9, "verify() is only allowed in a parser"),
]


@pytest.mark.parametrize("body,col,message", BODY_CASES, ids=[c[0] for c in BODY_CASES])
def test_error_in_apply_block(body: str, col: int, message: str) -> None:
    assert first_error(body) == (BODY_LINE, col, message)


def test_valid_concatenation_compiles() -> None:
    src = TEMPLATE.replace("@DECLS@", "").replace("@LOCALS@", "").replace("@BODY@", "meta.b = meta.a ++ meta.a;")
    compile_source(src, name="t.p4")


def test_a_zero_shifted_by_a_wide_amount_is_zero_as_p4c_folds_it() -> None:
    """p4c's strength reduction turns `0 >> x` into 0 before its BMv2 back end limits shift amounts to bit<8>
    (p4c's issue2221-bmv2.p4): the program compiles, the assignment writes 0."""
    src = TEMPLATE.replace("@DECLS@", "").replace("@LOCALS@", "").replace("@BODY@", "meta.b = 16w0 >> meta.b;")
    program = compile_source(src, name="t.p4").json
    prims = [p for a in program["actions"] for p in a["primitives"] if p["op"] == "assign"]
    assert any(p["parameters"][1] == {"type": "hexstr", "value": "0x0000"} for p in prims), prims


def test_a_passed_control_instance_applied_twice_is_refused_as_p4c_refuses_it() -> None:
    """tests/compiler/p4/control_instance_arg.p4 with its instance applied twice: p4c-bm2-ss 1.2.4.8 says "Program can
    not be implemented on this target since it contains a path from table Ing.l.t back to itself", at the table."""
    from tests.paths import TESTS

    src = (TESTS / "compiler" / "p4" / "control_instance_arg.p4").read_text().replace(
        "apply { l.apply(hdr); hdr.h.b = hdr.h.b + 1; }", "apply { l.apply(hdr); l.apply(hdr); }")
    with pytest.raises(CompileError) as exc:
        compile_source(src, name="t.p4")
    line = next(i for i, text in enumerate(src.splitlines(), 1) if "table t {" in text)
    assert f"t.p4:{line}:5: error: Program can not be implemented on this target since it contains a path from " \
           "table Ing.l.t back to itself" in str(exc.value)


def test_assigning_an_in_parameter() -> None:
    src = TEMPLATE.replace("@DECLS@", "").replace("@LOCALS@", "").replace("@BODY@", "")
    src = src.replace("apply { pkt.emit(hdr.eth); }", "apply { hdr.eth.dst = 0; pkt.emit(hdr.eth); }")
    with pytest.raises(CompileError) as info:
        compile_source(src, name="t.p4")
    d = info.value.diagnostics.errors[0]
    assert (d.loc.line, d.message) == (21, "cannot assign to 'hdr': it is a read-only in parameter")


def test_assigning_action_data() -> None:
    assert first_error("a(1);", locals_="action a(bit<8> v) { v = 2; }") == \
        (LOCALS_LINE, 26, "cannot assign to 'v': it is a read-only action data parameter")


def test_wrong_action_argument_count() -> None:
    assert first_error("a();", locals_="action a(bit<8> v) { meta.a = v; }") == \
        (BODY_LINE, 9, "action 'a' expects 1 argument(s), got 0")


def test_default_action_not_in_list() -> None:
    t = "action a() { } table t { key = { meta.a: exact; } actions = { NoAction; } default_action = a(); }"
    assert first_error("t.apply();", locals_=t) == \
        (LOCALS_LINE, 96, "default action 'a' is not in the actions list of table 't'")


@pytest.mark.parametrize("entries", ["const entries = { _ : NoAction(); }", "entries = { _ : NoAction(); }"])
def test_entries_in_a_keyless_table_are_refused_as_p4c_refuses_them(entries: str) -> None:
    """Not an AssertionError from the lowering (issue 41): p4c-bm2-ss 1.2.4.8's type error, at the table."""
    t = f"table t {{ actions = {{ NoAction; }} {entries} }}"
    assert first_error("t.apply();", locals_=t) == \
        (LOCALS_LINE, 5, "Entries cannot be specified for a table with no key t")


def test_table_sizes_as_p4c_takes_them() -> None:
    """`size = 0` is p4c's default size (1024); a table with entries and no size holds just them in the BMv2 JSON
    (its P4Info size stays 1024); a negative size is refused (p4c writes -1 as 4294967295)."""
    from compiler import compile_source as compile_

    def table(props: str) -> tuple[int, int]:
        src = TEMPLATE.replace("@DECLS@", "").replace("@BODY@", "t.apply();").replace(
            "@LOCALS@", f"table t {{ key = {{ meta.a: exact; }} actions = {{ NoAction; }} {props} }}")
        r = compile_(src, name="t.p4")
        (jt,) = [x for p in r.json["pipelines"] for x in p["tables"] if x["name"].endswith(".t")]
        (pt,) = [x for x in r.p4info.tables if x.preamble.name.endswith(".t")]
        return jt["max_size"], pt.size

    assert table("size = 0;") == (1024, 1024)
    assert table("size = 7;") == (7, 7)
    assert table("entries = { 1 : NoAction(); 2 : NoAction(); }") == (2, 1024)
    assert table("const entries = { 1 : NoAction(); }") == (1, 1024)
    assert table("entries = { 1 : NoAction(); } size = 64;") == (64, 64)
    assert first_error("t.apply();", locals_="table t { key = { meta.a: exact; } actions = { NoAction; } "
                                             "size = -1; }")[2] == "table size must not be negative"


def test_one_table_applied_with_two_bindings_is_refused_as_p4c_refuses_it() -> None:
    """An instance's table applied from two places with its parameter bound to different fields would be one BMv2
    table keyed on one of them: p4c-bm2-ss 1.2.4.8 refuses it (multiple successors), and so do we (we compiled it
    wrongly before: both applications matched the first binding's field)."""
    decls = ("control Cnt(inout bit<16> x) { action inc() { x = x + 1; } "
             "table t { key = { x: exact; } actions = { inc; NoAction; } default_action = NoAction(); } "
             "apply { t.apply(); } }")
    same = "if (meta.a == 1) { c.apply(meta.b); } else { c.apply(meta.b); }"
    src = TEMPLATE.replace("@DECLS@", decls).replace("@LOCALS@", "Cnt() c;").replace("@BODY@", same)
    compile_source(src, name="t.p4")  # the same binding twice: one table, as p4c
    other = "if (meta.a == 1) { c.apply(meta.b); } else { c.apply(hdr.eth.type); }"
    line, _, message = first_error(other, locals_="Cnt() c;", decls=decls)
    assert message == "Program is not supported by this target, because table I.c.t has multiple successors"


def test_an_anonymous_implementation_compiles_without_a_p4info_as_in_p4c(tmp_path) -> None:
    """p4c-bm2-ss 1.2.4.8 compiles `implementation = action_profile(...)` without @name into the JSON (the profile
    named `action_profile_0`) and refuses only to write P4Info (issue 41); so does `python -m compiler`."""
    from compiler.__main__ import main

    locals_ = ("action_profile(32w4) ap; table t { key = { meta.a: exact; } actions = { NoAction; } "
               "implementation = action_profile(32w4); }")
    src = TEMPLATE.replace("@DECLS@", "").replace("@LOCALS@", locals_).replace("@BODY@", "t.apply();")
    r = compile_source(src, name="t.p4")
    (t,) = [x for p in r.json["pipelines"] for x in p["tables"] if x["name"] == "I.t"]
    assert t["type"] == "indirect" and t["action_profile"] == "action_profile_0"
    assert r.p4runtime_errors == [f"t.p4:{LOCALS_LINE}:89: error: Table 'I.t' has an anonymous table property "
                                  "'implementation' with no name annotation, which is not supported by P4Runtime"]
    (tmp_path / "t.p4").write_text(src)
    out = str(tmp_path / "t.json")
    assert main([str(tmp_path / "t.p4"), "-o", out]) == 0
    assert main([str(tmp_path / "t.p4"), "-o", out, "--p4runtime-files", str(tmp_path / "t.txtpb")]) == 1
    assert not (tmp_path / "t.txtpb").exists()


def test_sub_control_argument_count() -> None:
    assert first_error("s.apply();", locals_="Sub() s;", decls="control Sub(in bit<8> k) { apply { } }") == \
        (BODY_LINE, 9, "control 'Sub' expects 1 argument(s), got 0")


def test_sub_control_out_argument_must_be_writable() -> None:
    assert first_error("s.apply(3);", locals_="Sub() s;", decls="control Sub(out bit<8> k) { apply { k = 1; } }") == \
        (BODY_LINE, 17, "read-only value '3' used for out parameter 'k'")


def test_header_size_must_be_whole_bytes() -> None:
    assert first_error("o.setValid();", locals_="odd_t o;", decls="header odd_t { bit<7> x; }") == \
        (DECLS_LINE, 1, "header 'odd_t' has fields totaling 7 bits; BMv2 only supports headers whose size is a "
                        "multiple of 8 bits")


def test_direct_counter_on_two_tables() -> None:
    tables = ("direct_counter(CounterType.packets) dc; "
              "table t1 { key = { meta.a: exact; } actions = { NoAction; } counters = dc; } "
              "table t2 { key = { meta.a: exact; } actions = { NoAction; } counters = dc; }")
    line, _, message = first_error("t1.apply(); t2.apply();", locals_=tables)
    assert line == LOCALS_LINE and message.startswith("direct_counter 'I.dc' is already attached to table")


def test_break_and_continue_outside_a_loop() -> None:
    assert first_error("a();", locals_="action a() { break; }") == \
        (LOCALS_LINE, 18, "break statement must be used in the context of a for statement.")
    assert first_error("a();", locals_="action a() { if (meta.a == 1) { continue; } }") == \
        (LOCALS_LINE, 37, "continue statement must be used in the context of a for statement.")


def test_for_loop_condition_and_scope() -> None:
    assert first_error("a();", locals_="action a() { for (bit<8> i = 0; i; i = i + 1) { } }") == \
        (LOCALS_LINE, 37, "for condition must be bool, not bit<8>")
    # the loop variable is not visible after the loop
    assert first_error("a();", locals_="action a() { for (bit<8> i = 0; i < 2; i = i + 1) { } meta.a = i; }") == \
        (LOCALS_LINE, 68, "undeclared name 'i'")


def test_unknown_match_kind() -> None:
    t = "table t { key = { meta.a: fuzzy; } actions = { NoAction; } }"
    assert first_error("t.apply();", locals_=t) == (LOCALS_LINE, 23, "undeclared match kind 'fuzzy'")


UNSUPPORTED = [
    ("", "Checksum16() ck;", "meta.a = 1;", LOCALS_LINE, 5, "unsupported: extern 'Checksum16'"),
    # p4c-bm2-ss (1.2.5.12+) compiles loops inside actions only; in an apply block it stops too
    ("", "", "for (bit<8> i = 0; i < 4; i = i + 1) { meta.a = i; }", BODY_LINE, 9,
     "unsupported: 'for' loop in an apply block (p4c-bm2-ss compiles loops only inside actions)"),
    # a function's loop, inlined into an apply block: reported at the loop
    ("void f(inout bit<8> x) { for (bit<8> i = 0; i < 4; i = i + 1) { x = x + i; } }", "", "f(meta.a);",
     DECLS_LINE, 26, "unsupported: 'for' loop in an apply block (p4c-bm2-ss compiles loops only inside actions)"),
    ("", "table t { key = { meta.a: exact; } actions = { NoAction; } }",
     "meta.a = meta.a + (t.apply().hit ? 8w1 : 8w2);", BODY_LINE, 23,
     "unsupported: 'meta.a' read before a table apply in the same expression"),
    ("header_union u_t { eth_t a; eth_t b; }", "", "u_t[2] u;", BODY_LINE, 9,
     "unsupported: local variable of type u_t[2]"),
    # p4c accepts a bare bit<W> as digest data but names its learn list "digest" and its P4Info digest "digest_0",
    # which PI cannot match: nothing would reach the controller
    ("", "", "digest(1, meta.a);", BODY_LINE, 24,
     "unsupported: this digest data (a list {...}, a struct expression or a struct)"),
]


@pytest.mark.parametrize("decls,locals_,body,line,col,message", UNSUPPORTED, ids=[c[5] for c in UNSUPPORTED])
def test_unsupported_construct(decls: str, locals_: str, body: str, line: int, col: int, message: str) -> None:
    assert first_error(body, locals_, decls) == (line, col, message)


def test_rendering_has_source_line_and_caret() -> None:
    src = TEMPLATE.replace("@DECLS@", "").replace("@LOCALS@", "").replace("@BODY@", "meta.a = meta.b;")
    with pytest.raises(CompileError) as info:
        compile_source(src, name="t.p4")
    assert str(info.value).splitlines()[:3] == [
        "t.p4:16:18: error: type mismatch: cannot use a value of type bit<16> for 'meta.a' of type bit<8>",
        "        meta.a = meta.b;",
        "                 ^",
    ]


def test_several_errors_are_all_reported() -> None:
    src = TEMPLATE.replace("@DECLS@", "").replace("@LOCALS@", "").replace("@BODY@", "foo = 1; meta.a = meta.b;")
    with pytest.raises(CompileError) as info:
        compile_source(src, name="t.p4")
    assert [d.message for d in info.value.diagnostics.errors] == [
        "undeclared name 'foo'",
        "type mismatch: cannot use a value of type bit<16> for 'meta.a' of type bit<8>",
    ]


# what p4c refuses although one could give it a meaning
@pytest.mark.parametrize("decls, locals_, body, where, col, message", [
    ("", "", "meta.a = (bit<8>)hdr.s.last.type;", BODY_LINE, 26,
     "hdr.s.last: 'last', and 'next' for stacks can only be used in a parser"),
    ("", "", "meta.a = (bit<8>)hdr.s.lastIndex;", BODY_LINE, 26,
     "hdr.s.lastIndex: 'lastIndex' for stacks can only be used in a parser"),
    ("bit<8> twice(bit<8> x) { return x + x; }", "", "meta.a = twice(meta.a);", BODY_LINE, 24,
     "argument used for directionless parameter 'x' must be a compile-time constant"),
    ("", "bit<8> hdr = 1;", "", LOCALS_LINE, 5, "declaration of 'hdr' shadows a parameter 'hdr'"),
    ("", "action a(inout bit<8> x) { bit<8> meta = x; x = meta; }", "", LOCALS_LINE, 32,
     "declaration of 'meta' shadows a parameter 'meta'"),
    ("", "table t { key = { meta.a: exact; } actions = { NoAction; } }", "t.apply();", LOCALS_LINE, 15, None),
    ("", "table t { key = { meta.a + 1: exact; } actions = { NoAction; } }", "t.apply();", LOCALS_LINE, 23,
     "meta.a + 1: Complex key expression requires a @name annotation"),
    # p4c: "ExpressionValue: unexpected value for property", at the value
    ("", "table t { key = { meta.a: exact; } actions = { NoAction; } implementation = 5; }", "t.apply();",
     LOCALS_LINE, 81, "implementation must name an action_profile or action_selector, not int"),
    # a table applied twice (one BMv2 node): refused unless every application continues alike (table_twice.p4)
    ("", "table t { key = { meta.a: exact; } actions = { NoAction; } }", "t.apply(); t.apply();", LOCALS_LINE, 5,
     "Program can not be implemented on this target since it contains a path from table I.t back to itself"),
    ("", "table t { key = { meta.a: exact; } actions = { NoAction; } }",
     "if (meta.a == 1) { t.apply(); meta.a = 2; } else { t.apply(); }", LOCALS_LINE, 5,
     "Program is not supported by this target, because table I.t has multiple successors"),
    ("", "table t { key = { meta.a: exact; } actions = { NoAction; } }",
     "if (meta.a == 1) { t.apply(); } else if (t.apply().hit) { meta.a = 2; }", LOCALS_LINE, 5,
     "Program is not supported by this target, because table I.t has multiple successors"),
])
def test_p4c_refusals(decls: str, locals_: str, body: str, where: int, col: int, message: str | None) -> None:
    src = TEMPLATE.replace("struct headers { eth_t eth; }", "struct headers { eth_t eth; eth_t[2] s; }")
    src = src.replace("@DECLS@", decls).replace("@LOCALS@", locals_).replace("@BODY@", body)
    if message is None:  # the same table property is fine when no parameter is called `key`
        compile_source(src, name="t.p4")
        src = src.replace("inout metadata meta, inout standard_metadata_t sm) {\n    table",
                          "inout metadata key, inout standard_metadata_t sm) {\n    table").replace("meta.a: exact",
                                                                                                "key.a: exact")
        message = "declaration of 'key' shadows a parameter 'key'"
    with pytest.raises(CompileError) as info:
        compile_source(src, name="t.p4")
    d = info.value.diagnostics.errors[0]
    assert (d.loc.line, d.loc.col, d.message) == (where, col, message)
