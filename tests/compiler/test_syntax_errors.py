"""Syntax errors: bad P4 in, the exact `file:line:col: error: message` out (and nothing compiled).

Each case is a small program and the first line p4c-style diagnostic it must produce.
"""

from __future__ import annotations

import pytest

from compiler.diagnostics import CompileError
from compiler.parser import parse_source

CASES: list[tuple[str, str, str]] = [
    ("missing-semicolon-after-field",
     "header h { bit<8> a\n bit<8> b; }",
     "t.p4:1:20: error: expected ';' after field declaration"),
    ("missing-semicolon-after-assignment",
     "control C() { apply {\n  x = 1\n  y = 2;\n} }",
     "t.p4:2:8: error: expected ';' after assignment"),
    ("missing-semicolon-after-call",
     "control C() { apply { f() } }",
     "t.p4:1:26: error: expected ';' after method call"),
    ("missing-semicolon-after-const",
     "const bit<8> X = 1\nconst bit<8> Y = 2;",
     "t.p4:1:19: error: expected ';' after constant declaration"),
    ("stray-character",
     "control C() { apply { x = 1 $ 2; } }",
     "t.p4:1:29: error: unexpected character '$'"),
    ("unterminated-string",
     'const string s = "abc;\n',
     "t.p4:1:18: error: unterminated string literal"),
    ("unclosed-block",
     "control C() {\n  apply {\n    x = 1;\n",
     "t.p4:2:9: error: missing '}' to close this block"),
    ("missing-close-paren",
     "control C() { apply { if (x { } } }",
     "t.p4:1:29: error: expected ')' to close the if condition, found '{'"),
    ("expression-statement",
     "control C() { apply { x + 1; } }",
     "t.p4:1:25: error: expected '=' or a method call in statement, found '+'"),
    ("number-at-top-level",
     "123;",
     "t.p4:1:1: error: expected a declaration, found '123'"),
    ("table-at-top-level",
     "table t { }",
     "t.p4:1:1: error: 'table' declarations are only allowed inside a control"),
    ("statement-after-transition",
     "parser P() { state start { transition accept; x = 1; } }",
     "t.p4:1:47: error: expected '}' after the transition statement, found 'x'"),
    ("parser-without-states",
     "parser P() { }",
     "t.p4:1:1: error: parser 'P' has no states"),
    ("action-in-parser",
     "parser P() { action a() {} state start { transition accept; } }",
     "t.p4:1:14: error: 'action' declarations are not allowed in a parser"),
    ("select-case-without-colon",
     "parser P() { state start { transition select(x) { 1 parse; } } }",
     "t.p4:1:53: error: expected ':' after the select case keyset, found 'parse'"),
    ("key-without-match-kind-colon",
     "control C() { table t { key = { x exact; } } apply {} }",
     "t.p4:1:35: error: expected ':' between the key expression and its match kind, found 'exact'"),
    ("two-apply-blocks",
     "control C() { apply {} apply {} }",
     "t.p4:1:24: error: control 'C' has two apply blocks"),
    ("control-without-apply",
     "control C() { action a() {} }",
     "t.p4:1:1: error: control 'C' has no apply block"),
    ("end-of-input-in-expression",
     "const bit<8> x = 1 +",
     "t.p4:1:21: error: expected an expression, found end of input"),
    ("unsupported-global-variable",
     "bit<8> g;",
     "t.p4:1:1: error: unsupported: global variable declarations (use 'const')"),
    ("unsupported-this",
     "control C() { apply { x = this; } }",
     "t.p4:1:27: error: unsupported: 'this'"),
    ("unsupported-for-in-loop",
     "control C() { action a() {\n    for (bit<8> i in 0 .. 3) { } } apply { } }",
     "t.p4:2:10: error: unsupported: 'for (... in ...)' loops (p4c-bm2-ss refuses them too)"),
    ("for-header-missing-semicolon",
     "control C() { action a() { for (bit<8> i = 0 i < 4; i = i + 1) { } } apply { } }",
     "t.p4:1:46: error: expected ';' after the initializers of a for loop, found 'i'"),
    # a `#` with a number in the middle of a line (a macro's pasted `#`: found by the volume fuzz) is no line marker;
    # it reset the line count to 0 and the error lost its position
    ("hash-number-mid-line",
     "const bit<8> x = 1; #0 foo",
     "t.p4:1:21: error: unexpected '#'"),
    ("width-must-be-literal-or-parenthesised",
     "const bit<8> W = 8; header h { bit<W> a; }",
     "t.p4:1:36: error: a width must be an integer or a parenthesised expression: write (W)"),
    ("annotated-assignment",
     "control C() { apply { @atomic x = 1; } }",
     "t.p4:1:23: error: annotations are only allowed on blocks and declarations here"),
    ("unsupported-invalid-header-literal",
     "control C(inout h_t h) { apply { h = {#}; } }",
     "t.p4:1:39: error: unsupported: the invalid-header expression '{#}'"),
    ("void-field",
     "header h { void a; }",
     "t.p4:1:12: error: 'void' is only allowed as a return type"),
    ("instantiation-inside-apply",
     "extern E { E(); } control C() { apply { E() e; } }",
     "t.p4:1:41: error: instantiations are only allowed at the top level of a control or parser"),
    ("keyword-as-name",
     "const bit<8> if = 1;",
     "t.p4:1:14: error: expected a constant name, found 'if'"),
    ("unterminated-annotation",
     "@name(\"x\"",
     "t.p4:1:6: error: unterminated annotation: missing ')'"),
]


@pytest.mark.parametrize("source, expected", [(c[1], c[2]) for c in CASES], ids=[c[0] for c in CASES])
def test_syntax_error_message_and_position(source: str, expected: str) -> None:
    with pytest.raises(CompileError) as info:
        parse_source(source, "t.p4")
    diags = info.value.diagnostics
    assert diags.has_errors
    assert diags[0].header() == expected


def test_rendering_quotes_the_line_with_a_caret() -> None:
    with pytest.raises(CompileError) as info:
        parse_source("header h {\n\tbit<8> a\n}\n", "t.p4")
    assert str(info.value) == ("t.p4:2:10: error: expected ';' after field declaration\n"
                               "\tbit<8> a\n"
                               "\t        ^")


def test_error_in_an_included_file_points_into_that_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "bad.p4").write_text("// header\nheader h { bit<8> a }\n")
    main = tmp_path / "main.p4"
    main.write_text('const bit<8> A = 1;\n#include "bad.p4"\n')
    with pytest.raises(CompileError) as info:
        parse_source(None, str(main))
    d = info.value.diagnostics[0]
    assert d.loc.file == str(tmp_path / "bad.p4")
    assert (d.loc.line, d.loc.col) == (2, 20)
    assert str(info.value).splitlines()[1:] == ["header h { bit<8> a }", " " * 19 + "^"]


def test_diagnostics_collect_several_and_render_in_order() -> None:
    from compiler.ast import SourceLoc
    from compiler.diagnostics import Diagnostics

    d = Diagnostics(sources={"a.p4": "header h {\n  bit<8> x;\n}\n"})
    d.warning(SourceLoc("a.p4", 2, 3), "unused field")
    assert not d.has_errors
    d.check()  # warnings alone do not stop compilation
    d.unsupported(SourceLoc("a.p4", 1, 1), "header_union")
    d.error(SourceLoc("other.p4", 0, 0), "no position")
    assert d.has_errors and len(d) == 3 and [x.severity for x in d] == ["warning", "error", "error"]
    assert d[1].code == "unsupported"
    assert d.render() == ("a.p4:2:3: warning: unused field\n  bit<8> x;\n  ^\n"
                          "a.p4:1:1: error: unsupported: header_union\nheader h {\n^\n"
                          "other.p4: error: no position")
    with pytest.raises(CompileError) as info:
        d.raise_if_errors()
    assert info.value.args[0] == "a.p4:1:1: error: unsupported: header_union"
    assert str(info.value) == d.render()


ROBUST_SRC = """
header h_t { bit<8> a; bit<16> b; }
struct hs { h_t h; }
parser P(packet_in pk, out hs hdr) {
    state start { pk.extract(hdr.h); transition select(hdr.h.a, hdr.h.b[3:0]) { (1, _): accept; default: reject; } }
}
control C(inout hs hdr, inout standard_metadata_t sm) {
    register<bit<32>>(8) r;
    action set(bit<9> p) { sm.egress_spec = p; hdr.h.b = (bit<16>)hdr.h.a ++ 8w0 >> 2; }
    table t { key = { hdr.h.a: exact; } actions = { set; NoAction; } const default_action = NoAction(); size = 4; }
    apply { if (hdr.h.isValid() && t.apply().hit) { r.write(0, 1); } else { switch (t.apply().action_run) {
        set: { exit; } } } }
}
"""


def test_mangled_programs_give_compile_errors_never_crashes() -> None:
    """Seeded token deletions/insertions/truncations of a valid program: CompileError or success, nothing else."""
    import random

    from compiler.lexer import tokenize
    from compiler.parser import Parser
    from compiler.preprocess import preprocess

    text = preprocess("r.p4", text="#include <core.p4>\n#include <v1model.p4>\n" + ROBUST_SRC)
    toks = tokenize(text, "r.p4")
    eof = toks[-1]
    body = toks[:-1]
    pool = list({(t.kind, t.text): t for t in body}.values())
    rng = random.Random(4)
    outcomes = {"ok": 0, "error": 0}
    for i in range(400):
        sub = list(body)
        if i % 3 == 0:
            sub = sub[: rng.randrange(len(sub))]
        elif i % 3 == 1:
            for _ in range(rng.randint(1, 3)):
                del sub[rng.randrange(len(sub))]
        else:
            for _ in range(rng.randint(1, 3)):
                sub.insert(rng.randrange(len(sub)), rng.choice(pool))
        try:
            Parser(sub + [eof]).parse_program()
            outcomes["ok"] += 1
        except CompileError as e:
            assert e.diagnostics.has_errors and e.diagnostics[0].loc.line > 0
            outcomes["error"] += 1
    assert outcomes["error"] > 300


def test_absurd_nesting_is_an_error_not_a_crash() -> None:
    assert parse_source("const bit<8> x = " + "(" * 100 + "1" + ")" * 100 + ";", "t.p4").decls
    with pytest.raises(CompileError) as info:
        parse_source("const bit<8> x = " + "(" * 5000 + "1" + ")" * 5000 + ";", "t.p4")
    assert info.value.diagnostics[0].message == "unsupported: nesting too deep"
