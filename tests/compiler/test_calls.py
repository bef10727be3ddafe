"""Calls that p4c refuses (or that are outside the subset): the exact `file:line:col: error: ...` of the first error.
The accepted forms are covered by the STF programs copy_in_out*, function_bodies, side_effects, dont_care,
action_calls, returns, direct_call_args, generic_functions, sub_parser and control_ctor in tests/compiler/p4/."""

from __future__ import annotations

import pytest

from compiler import CompileError, compile_source
from tests.compiler.error_template import BODY_LINE, DECLS_LINE, LOCALS_LINE, TEMPLATE, first_error

# (decls, locals, body, line, column, message)
CASES = [
    # functions
    ("bit<8> f(in bit<8> x) { return f(x); }", "", "meta.a = f(meta.a);", DECLS_LINE, 32,
     "function 'f' calls itself (recursion is not allowed in P4)"),
    ("bit<8> f(in bit<8> x) { if (x == 1) { return 2; } }", "", "meta.a = f(meta.a);", DECLS_LINE, 1,
     "function 'f' does not return a value on all paths"),
    ("void f(in bit<8> x) { return x; }", "", "f(meta.a);", DECLS_LINE, 30, "void function 'f' cannot return a value"),
    ("bit<8> f(in bit<8> x) { return; }", "", "meta.a = f(meta.a);", DECLS_LINE, 25,
     "function 'f' must return a value of type bit<8>"),
    ("bit<8> f(in bit<8> x) { exit; }", "", "meta.a = f(meta.a);", DECLS_LINE, 25, "exit is not allowed in a function"),
    ("", "action a() { return 1; }", "a();", LOCALS_LINE, 25, "return with a value in an action or apply block"),
    ("T f<T>(in T x) { return x; }", "", "meta.a = (bit<8>)f(3);", BODY_LINE, 26,
     "cannot infer type argument 'T' of function 'f'; give it explicitly (f<...>(...))"),
    ("", "action a(inout bit<8> x) { x = 1; }", "a<bit<8>>(meta.a);", BODY_LINE, 9,
     "action 'a' has no type parameters"),
    # a generic body is checked against its type variables, before a call binds them (p4c: "Cannot extract field
    # isValid from h which has type H"), also when no call ever does
    ("bool v<H>(in H h) { return h.isValid(); }", "", "", DECLS_LINE, 30,
     "cannot extract field 'isValid' from 'h', which has type 'H' (a type parameter of 'v')"),
    ("bit<8> g<T>(in T x) { T y = x; return y.f; }", "", "", DECLS_LINE, 41,
     "cannot extract field 'f' from 'y', which has type 'T' (a type parameter of 'g')"),
    # constructor parameters
    ("control Sub(inout bit<8> v)(bit<8> k) { apply { v = k; } }", "Sub() s;", "s.apply(meta.a);", LOCALS_LINE, 5,
     "control 'Sub' expects 1 constructor argument(s), got 0"),
    ("control Sub(inout bit<8> v)(bit<8> k) { apply { v = k; } }", "Sub(meta.a) s;", "s.apply(meta.a);", LOCALS_LINE,
     9, "constructor argument 'meta.a' must be a compile-time constant"),
    ("control Sub(inout bit<8> v)(bit<8> k) { apply { v = k; } }", "Sub(true) s;", "s.apply(meta.a);", LOCALS_LINE,
     9, "type mismatch: cannot use a value of type bool for constructor parameter 'k' of control 'Sub' of type "
        "bit<8>"),
    # directional arguments
    ("void f(out bit<8> x) { x = 1; }", "", "f(3);", BODY_LINE, 11, "read-only value '3' used for out parameter 'x'"),
    ("void f(inout bit<8> x) { x = 1; }", "", "f(meta.a + 1);", BODY_LINE, 11,
     "read-only value 'meta.a + 1' used for inout parameter 'x'"),
    ("", "action a(inout bit<8> x) { x = 1; }", "a(8w3);", BODY_LINE, 11, "'8w3' must be a left-value"),
    ("", "action a(out bit<8> x) { x = 1; } table t { key = { meta.a: exact; } actions = { a(meta.a[3:0] ++ 4w0); } }",
     "t.apply();", LOCALS_LINE, 88, "'meta.a[3:0] ++ 4w0' must be a left-value"),
    ("void f(in bit<8> x) { }", "", "f(_);", BODY_LINE, 11, "don't care argument is only allowed for out parameters"),
    ("", "action a(inout bit<8> x) { x = 1; }", "a(_);", BODY_LINE, 11,
     "don't care argument is only allowed for out parameters"),
    # named arguments: all or none, each names a parameter once, every parameter without a default gets one
    ("void f(in bit<8> x, in bit<8> y) { }", "", "f(x = 1, 2);", BODY_LINE, 9,
     "either all arguments are named or none"),
    ("void f(in bit<8> x, in bit<8> y) { }", "", "f(x = 1, z = 2);", BODY_LINE, 9, "no parameter named 'z'"),
    ("void f(in bit<8> x, in bit<8> y) { }", "", "f(y = 1);", BODY_LINE, 9, "no argument for parameter 'x'"),
    ("", "action a(in bit<8> x) { }", "a(x = 1, x = 2);", BODY_LINE, 18, "argument 'x' given twice"),
    ("", "register<bit<8>>(4) r;", "r.read(index = 0, value = meta.a);", BODY_LINE, 9,
     "no parameter named 'value'"),
]


@pytest.mark.parametrize("decls,locals_,body,line,col,message", CASES, ids=[c[5] for c in CASES])
def test_refused_call(decls: str, locals_: str, body: str, line: int, col: int, message: str) -> None:
    assert first_error(body, locals_, decls) == (line, col, message)


def test_v1switch_type_arguments_must_match_the_blocks() -> None:
    src = TEMPLATE.replace("@DECLS@", "struct other_t { bit<8> x; }").replace("@LOCALS@", "").replace("@BODY@", "")
    src = src.replace("V1Switch(P()", "V1Switch<headers, other_t>(P()")
    with pytest.raises(CompileError) as info:
        compile_source(src, name="t.p4")
    d = info.value.diagnostics.errors[0]
    assert (d.loc.line, d.message) == (9, "V1Switch type argument M is struct other_t, but the parser's is struct "
                                          "metadata")


def test_header_stack_action_argument_used_in_place_or_refused() -> None:
    """No stack temporaries: a stack argument is used in place when no difference can be seen, else refused."""
    src = TEMPLATE.replace("struct headers { eth_t eth; }", "struct headers { eth_t eth; eth_t[2] s; }")
    ok = src.replace("@DECLS@", "").replace("@LOCALS@", "action a(inout eth_t[2] st) { st.push_front(1); }")
    prims = [a["primitives"] for a in compile_source(ok.replace("@BODY@", "a(hdr.s);"), name="t.p4").json["actions"]
             if a["name"] == "I.a"][0]
    assert [(p["op"], p["parameters"][0]) for p in prims] == [("push", {"type": "header_stack", "value": "s"})]
    bad = src.replace("@DECLS@", "").replace(
        "@LOCALS@", "action a(inout eth_t[2] st) { st.push_front(1); hdr.s[0].type = 1; }")
    with pytest.raises(CompileError) as info:
        compile_source(bad.replace("@BODY@", "a(hdr.s);"), name="t.p4")
    d = info.value.diagnostics.errors[0]
    assert (d.loc.line, d.loc.col, d.message) == (
        BODY_LINE, 11, "unsupported: header stack argument 'hdr.s' for inout parameter 'st' here")


def test_zero_divided_by_a_side_effect_call_is_zero() -> None:
    """`0 / f(x)`: the call still happens (its copy-out), the quotient is 0 (p4c's strength reduction)."""
    src = TEMPLATE.replace("@DECLS@", "bit<8> f(inout bit<8> x) { x = x + 1; return x; }").replace("@LOCALS@", "")
    j = compile_source(src.replace("@BODY@", "meta.a = 8w0 / f(meta.a);"), name="t.p4").json
    assigns = [p["parameters"] for a in j["actions"] for p in a["primitives"] if p["op"] == "assign"]
    assert assigns[-1] == [{"type": "field", "value": ["scalars", "metadata.a"]}, {"type": "hexstr", "value": "0x00"}]
    assert any(p[0]["value"] == ["scalars", "metadata.a"] and p[1]["type"] == "field" for p in assigns[:-1])


PARSER_TEMPLATE = TEMPLATE.replace(
    "    state start { pkt.extract(hdr.eth); transition accept; }",
    "    @PLOCALS@\n    state start { pkt.extract(hdr.eth); @PSTATE@ transition accept; }")
PARSER_LINE = 11  # the start state's line in PARSER_TEMPLATE


@pytest.mark.parametrize("decls,plocals,pstate,col,message", [
    ("bit<8> f(in bit<8> x) { if (x == 1) { return 2; } return 3; }", "", "meta.a = f(meta.a);", 50,
     "unsupported: function 'f' with conditional code called in a parser state"),
    ("parser Sub(packet_in p, inout bit<8> v) { state start { v = 1; transition accept; } }", "Sub() s;",
     "s.apply(pkt);", 41, "parser 'Sub' expects 2 argument(s), got 1"),
    ("parser Sub(packet_in p, inout bit<8> v) { state start { v = 1; transition accept; } }", "Sub() s;",
     "s.apply(pkt, 3);", 54, "read-only value '3' used for inout parameter 'v'"),
])
def test_refused_parser_call(decls: str, plocals: str, pstate: str, col: int, message: str) -> None:
    src = PARSER_TEMPLATE.replace("@DECLS@", decls).replace("@PLOCALS@", plocals).replace("@PSTATE@", pstate)
    src = src.replace("@LOCALS@", "").replace("@BODY@", "")
    with pytest.raises(CompileError) as info:
        compile_source(src, name="t.p4")
    d = info.value.diagnostics.errors[0]
    assert (d.loc.line, d.loc.col, d.message) == (PARSER_LINE, col, message)
