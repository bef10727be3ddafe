"""The parser: every construct of the subset parses into the expected tree, with exact positions."""

from __future__ import annotations

import time

import pytest

from compiler import ast
from compiler.ast import dump, to_p4
from compiler.diagnostics import CompileError
from compiler.parser import parse_source


def parse(src: str) -> ast.Program:
    return parse_source(src, "t.p4")


def user_decls(src: str) -> list[ast.Decl]:
    """Declarations of a program that includes the preludes, minus the preludes'."""
    prog = parse_source("#include <core.p4>\n#include <v1model.p4>\n" + src, "t.p4")
    return [d for d in prog.decls if d.loc.file == "t.p4"]


def expr(text: str) -> ast.Expr:
    (decl,) = parse(f"const bit<8> x = {text};").decls
    assert isinstance(decl, ast.ConstDecl)
    return decl.value


def stmts(body: str, locals_: str = "") -> list[ast.Stmt]:
    prog = parse_source("#include <core.p4>\n#include <v1model.p4>\n"
                        f"control C(inout bit<8> x) {{ {locals_} apply {{ {body} }} }}", "t.p4")
    ctl = prog.decls[-1]
    assert isinstance(ctl, ast.ControlDecl)
    return ctl.body.stmts


# ---------------------------------------------------------------------------------------------- literals & types


@pytest.mark.parametrize("text, value, width, signed", [
    ("5", 5, None, False),
    ("8w5", 5, 8, False),
    ("4s3", 3, 4, True),
    ("0x1F", 31, None, False),
    ("16w0xFF_FF", 0xFFFF, 16, False),
    ("0b1010", 10, None, False),
    ("0o17", 15, None, False),
    ("0d99", 99, None, False),
    ("32w1_000", 1000, 32, False),
])
def test_integer_literals(text: str, value: int, width: int | None, signed: bool) -> None:
    e = expr(text)
    assert isinstance(e, ast.IntLit)
    assert (e.value, e.width, e.signed, e.text) == (value, width, signed, text)


def test_bool_and_string_literals() -> None:
    assert dump(expr("true")) == "BoolLit(value=True)"
    (d,) = parse('const string s = "a\\"b\\n";').decls
    assert isinstance(d, ast.ConstDecl) and isinstance(d.type, ast.StringType)
    assert isinstance(d.value, ast.StringLit) and d.value.value == 'a"b\n'


def test_types() -> None:
    (h,) = parse("header h_t { bit<8> a; int<16> b; varbit<32> c; bool d; bit e; h_t[4] f; "
                 "tuple<bit<8>, bool> g; error h; T<bit<2>> i; bit<(W)> j; }").decls
    assert isinstance(h, ast.HeaderDecl)
    got = [(f.name, ast.type_to_p4(f.type)) for f in h.fields]
    assert got == [("a", "bit<8>"), ("b", "int<16>"), ("c", "varbit<32>"), ("d", "bool"), ("e", "bit<1>"),
                   ("f", "h_t[4]"), ("g", "tuple<bit<8>, bool>"), ("h", "error"), ("i", "T<bit<2>>"),
                   ("j", "bit<W>")]
    assert isinstance(h.fields[5].type, ast.HeaderStackType)


def test_nested_type_arguments_close_with_two_angles() -> None:
    (ctl,) = user_decls("control C() { register<bit<32>>(1024) r; apply {} }")
    assert isinstance(ctl, ast.ControlDecl)
    (inst,) = ctl.locals
    assert isinstance(inst, ast.Instantiation)
    assert ast.type_to_p4(inst.type) == "register<bit<32>>"
    assert [to_p4(a) for a in inst.args] == ["1024"]


# ---------------------------------------------------------------------------------------------- expressions


@pytest.mark.parametrize("text, tree", [
    # bitwise binds tighter than comparison in P4 (p4c's grammar), unlike C
    ("a & b == c", "((a & b) == c)"),
    ("a | b ^ c & d", "(a | (b ^ (c & d)))"),
    ("a + b * c", "(a + (b * c))"),
    ("a ++ b + c", "((a ++ b) + c)"),
    ("a << 2 + 1", "(a << (2 + 1))"),
    ("a >> 2", "(a >> 2)"),
    ("a > b", "(a > b)"),
    ("a - b - c", "((a - b) - c)"),
    ("a && b || c", "((a && b) || c)"),
    ("!a && b", "((!a) && b)"),
    ("a == 1 ? b : c ? d : e", "((a == 1) ? b : (c ? d : e))"),
    ("a |+| b |-| c", "((a |+| b) |-| c)"),
    ("-a * ~b", "((-a) * (~b))"),
])
def test_operator_precedence(text: str, tree: str) -> None:
    def paren(e: ast.Node) -> str:
        if isinstance(e, ast.Binary):
            return f"({paren(e.left)} {e.op} {paren(e.right)})"
        if isinstance(e, ast.Unary):
            return f"({e.op}{paren(e.operand)})"
        if isinstance(e, ast.Ternary):
            return f"({paren(e.cond)} ? {paren(e.then)} : {paren(e.else_)})"
        return to_p4(e)

    assert paren(expr(text)) == tree


def test_shift_needs_adjacent_angles() -> None:
    # `>` is always lexed alone (for `bit<bit<8>>`); only two adjacent ones make a shift
    with pytest.raises(CompileError) as info:
        expr("a > > b")
    assert info.value.diagnostics[0].header() == "t.p4:1:22: error: expected an expression, found '>'"


def test_postfix_forms() -> None:
    e = expr("hdr.stack[1].f[7:0]")
    assert isinstance(e, ast.Slice)
    assert isinstance(e.expr, ast.Member) and e.expr.member == "f"
    assert isinstance(e.expr.expr, ast.Index)
    assert to_p4(e) == "hdr.stack[1].f[7:0]"
    call = expr("t.apply().action_run")
    assert isinstance(call, ast.Member) and call.member == "action_run"
    assert isinstance(call.expr, ast.MethodCall) and to_p4(call.expr.callee) == "t.apply"
    assert to_p4(expr("hdr.ipv4.isValid()")) == "hdr.ipv4.isValid()"


def test_casts_and_parentheses() -> None:
    e = expr("(bit<16>)x + 1")
    assert isinstance(e, ast.Binary) and isinstance(e.left, ast.Cast)
    assert ast.type_to_p4(e.left.type) == "bit<16>"
    p = expr("(x) + 1")
    assert isinstance(p, ast.Binary) and isinstance(p.left, ast.Name)
    # a declared typedef name in parentheses is a cast
    prog = parse("typedef bit<9> port_t; const port_t p = (port_t)5;")
    c = prog.decls[1]
    assert isinstance(c, ast.ConstDecl) and isinstance(c.value, ast.Cast)


def test_method_call_with_type_arguments_and_comparison() -> None:
    (ps,) = [d for d in user_decls(
        "header h_t { bit<8> a; } struct s_t { h_t h; }\n"
        "parser P(packet_in pk, out s_t hdr) { state start {\n"
        "  pk.extract<h_t>(hdr.h); bit<8> v = pk.lookahead<bit<8>>();\n"
        "  transition select(v < 3) { true: accept; default: reject; } } }") if isinstance(d, ast.ParserDecl)]
    call = ps.states[0].stmts[0]
    assert isinstance(call, ast.MethodCallStmt)
    assert [ast.type_to_p4(t) for t in call.call.type_args] == ["h_t"]
    var = ps.states[0].stmts[1]
    assert isinstance(var, ast.VarDecl) and isinstance(var.init, ast.MethodCall)
    assert [ast.type_to_p4(t) for t in var.init.type_args] == ["bit<8>"]
    sel = ps.states[0].transition
    assert isinstance(sel, ast.SelectExpr)
    assert isinstance(sel.keys[0], ast.Binary) and sel.keys[0].op == "<"


def test_list_struct_and_named_arguments() -> None:
    e = expr("{a, b.c, 8w1}")
    assert isinstance(e, ast.ListExpr) and [to_p4(x) for x in e.elements] == ["a", "b.c", "8w1"]
    s = expr("{f = 1, g = b}")
    assert isinstance(s, ast.StructExpr) and [f.name for f in s.fields] == ["f", "g"]
    (st,) = stmts("f(x = 1, _);")
    assert isinstance(st, ast.MethodCallStmt)
    assert isinstance(st.call.args[0], ast.NamedArg) and isinstance(st.call.args[1], ast.DontCare)


def test_error_and_enum_members() -> None:
    e = expr("error.NoMatch")
    assert isinstance(e, ast.Member) and isinstance(e.expr, ast.Name) and e.expr.name == "error"
    (_, c) = user_decls("enum bit<8> E { A = 1, B = 2, } const E e = E.B;")
    assert isinstance(c, ast.ConstDecl) and to_p4(c.value) == "E.B"


# ---------------------------------------------------------------------------------------------- declarations


def test_type_declarations() -> None:
    decls = parse("""
        header h_t { bit<8> a; }
        header_union u_t { h_t x; }
        struct s_t { h_t h; @field_list(1) bit<32> m; }
        typedef bit<48> mac_t;
        type bit<9> port_t;
        enum Color { Red, Green }
        enum bit<8> Kind { Data = 1, Result = 0x2 }
        error { Oops, Bad }
        match_kind { fancy }
        const bit<16> ETH = 0x800;
    """).decls
    kinds = [type(d).__name__ for d in decls]
    assert kinds == ["HeaderDecl", "HeaderUnionDecl", "StructDecl", "TypedefDecl", "TypedefDecl", "EnumDecl",
                     "EnumDecl", "ErrorDecl", "MatchKindDecl", "ConstDecl"]
    s = decls[2]
    assert isinstance(s, ast.StructDecl)
    fl = s.fields[1].annotation("field_list")
    assert fl is not None and fl.int_arg() == 1
    assert isinstance(decls[4], ast.TypedefDecl) and decls[4].is_newtype
    e = decls[6]
    assert isinstance(e, ast.EnumDecl) and e.underlying is not None
    assert [(m.name, to_p4(m.value)) for m in e.members if m.value] == [("Data", "1"), ("Result", "0x2")]
    assert isinstance(decls[5], ast.EnumDecl) and decls[5].underlying is None
    assert [m.name for m in decls[7].members] == ["Oops", "Bad"]  # type: ignore[attr-defined]


def test_extern_declarations() -> None:
    decls = parse("""
        extern Reg<T, I> { Reg(bit<32> size); void read(out T v, in I i); abstract T get<X>(in X x); }
        extern void f<T>(in T x);
        extern T g<T>();
    """).decls
    ext = decls[0]
    assert isinstance(ext, ast.ExternDecl) and ext.type_params == ["T", "I"]
    ctor, read, get = ext.methods
    assert ctor.return_type is None and ctor.name == "Reg"
    assert [p.direction for p in read.params] == ["out", "in"]
    assert get.is_abstract and get.type_params == ["X"]
    assert isinstance(decls[1], ast.ExternFunctionDecl) and decls[1].proto.type_params == ["T"]
    assert isinstance(decls[2], ast.ExternFunctionDecl)
    assert ast.type_to_p4(decls[2].proto.return_type) == "T"  # type: ignore[arg-type]


def test_function_declaration() -> None:
    (f,) = parse("bit<16> add1(in bit<16> x) { return x + 1; }").decls
    assert isinstance(f, ast.FunctionDecl)
    assert isinstance(f.body.stmts[0], ast.ReturnStmt)


def test_parser_with_select_keysets() -> None:
    (p,) = [d for d in user_decls("""
        header h_t { bit<16> t; bit<8> f; }
        struct hs { h_t h; }
        parser P(packet_in pk, out hs hdr) {
            value_set<bit<16>>(4) pvs;
            bit<8> n = 0;
            state start {
                pk.extract(hdr.h);
                verify(hdr.h.f != 0, error.PacketTooShort);
                transition select(hdr.h.t, hdr.h.f) {
                    (0x0800, _): a;
                    (0x8100 &&& 0xEFFF, 1 .. 3): b;
                    (pvs, default): a;
                    default: accept;
                }
            }
            state a { transition b; }
            state b { transition reject; }
            state c { }
        }""") if isinstance(d, ast.ParserDecl)]
    assert [type(x).__name__ for x in p.locals] == ["ValueSetDecl", "VarDecl"]
    assert [s.name for s in p.states] == ["start", "a", "b", "c"]
    sel = p.states[0].transition
    assert isinstance(sel, ast.SelectExpr)
    assert [to_p4(k) for k in sel.keys] == ["hdr.h.t", "hdr.h.f"]
    cases = [([to_p4(k) for k in c.keys], c.state.name) for c in sel.cases]
    assert cases == [(["0x0800", "_"], "a"), (["0x8100 &&& 0xEFFF", "1 .. 3"], "b"),
                     (["pvs", "default"], "a"), (["default"], "accept")]
    assert isinstance(sel.cases[1].keys[0], ast.MaskExpr) and isinstance(sel.cases[1].keys[1], ast.RangeExpr)
    assert p.states[3].transition is None


def test_control_with_table_and_everything_in_it() -> None:
    (c,) = [d for d in user_decls("""
        control Ingress(inout bit<32> k, inout standard_metadata_t sm) {
            direct_counter(CounterType.packets) dc;
            action set(bit<9> port) { sm.egress_spec = port; }
            @name("MyIngress.tbl") table t {
                key = {
                    k: lpm @name("key.k");
                    sm.ingress_port: ternary;
                }
                actions = { set; @defaultonly NoAction; @tableonly set2(); }
                size = 512;
                counters = dc;
                support_timeout = true;
                const default_action = NoAction();
                const entries = {
                    (32w0x0a000000 &&& 0xff000000, _): set(1);
                    priority = 7: (_, 9w3): set(2);
                }
            }
            apply {
                switch (t.apply().action_run) {
                    set: { exit; }
                    NoAction:
                    default: { }
                }
                if (t.apply().hit) { k = 1; } else if (!t.apply().miss) { k = 2; } else { return; }
                set(3);
            }
        }""") if isinstance(d, ast.ControlDecl)]
    t = c.locals[2]
    assert isinstance(t, ast.TableDecl)
    n = t.annotation("name")
    assert n is not None and n.string_arg() == "MyIngress.tbl"
    assert t.key is not None
    assert [(to_p4(e.expr), e.match_kind) for e in t.key.elements] == [("k", "lpm"), ("sm.ingress_port", "ternary")]
    kname = t.key.elements[0].annotation("name")
    assert kname is not None and kname.string_arg() == "key.k"
    assert t.actions is not None
    refs = [(to_p4(r.name), r.args is not None, [a.name for a in r.annotations]) for r in t.actions.actions]
    assert refs == [("set", False, []), ("NoAction", False, ["defaultonly"]), ("set2", True, ["tableonly"])]
    size = t.get_property("size")
    assert isinstance(size, ast.ValueProperty) and to_p4(size.value) == "512"
    assert t.default_action is not None and t.default_action.is_const
    assert to_p4(t.default_action.action.name) == "NoAction" and t.default_action.action.args == []
    assert t.entries is not None and t.entries.is_const
    e0, e1 = t.entries.entries
    assert [to_p4(k) for k in e0.keys] == ["32w0x0a000000 &&& 0xff000000", "_"] and e0.priority is None
    assert e1.priority is not None and to_p4(e1.priority) == "7"
    assert to_p4(e1.action.name) == "set" and [to_p4(a) for a in e1.action.args or []] == ["2"]
    sw, iff, call = c.body.stmts
    assert isinstance(sw, ast.SwitchStmt)
    assert [(to_p4(case.label), case.body is None) for case in sw.cases] == [
        ("set", False), ("NoAction", True), ("default", False)]
    assert isinstance(iff, ast.IfStmt) and isinstance(iff.else_, ast.IfStmt)
    assert isinstance(iff.else_.else_, ast.BlockStmt)
    assert isinstance(call, ast.MethodCallStmt)


def test_statements() -> None:
    body = stmts("""
        bit<8> a = 1; const bit<8> b = 2; x[3:0] = 4w1; f(); {} ; exit;
        @atomic { x = x + 1; }
        port_t p;
    """, locals_="typedef_placeholder_t q;")
    kinds = [type(s).__name__ for s in body]
    assert kinds == ["VarDecl", "ConstDecl", "AssignStmt", "MethodCallStmt", "BlockStmt", "EmptyStmt",
                     "ExitStmt", "BlockStmt", "VarDecl"]
    assert isinstance(body[7], ast.BlockStmt) and body[7].annotations[0].name == "atomic"
    assert isinstance(body[2], ast.AssignStmt) and isinstance(body[2].lhs, ast.Slice)


def test_v1switch_instantiation_uses_constructor_calls() -> None:
    decls = user_decls("""
        struct h {} struct m {}
        parser P(packet_in b, out h hd, inout m me, inout standard_metadata_t s) { state start { transition accept; } }
        control V(inout h hd, inout m me) { apply {} }
        control I(inout h hd, inout m me, inout standard_metadata_t s) { apply {} }
        control D(packet_out b, in h hd) { apply {} }
        V1Switch(P(), V(), I(), I(), V(), D()) main;""")
    main = decls[-1]
    assert isinstance(main, ast.Instantiation) and main.name == "main"
    assert all(isinstance(a, ast.ConstructorCall) for a in main.args)
    assert [ast.type_to_p4(a.type) for a in main.args] == ["P", "V", "I", "I", "V", "D"]  # type: ignore[attr-defined]


def test_annotations_forms() -> None:
    (h,) = parse('@controller_header("packet_in") @hidden @pkg[a="x", b=2] @weird(1 + , ) header h { }').decls
    names = [a.name for a in h.annotations]
    assert names == ["controller_header", "hidden", "pkg", "weird"]
    ch, hidden, kv, weird = h.annotations
    assert ch.string_arg() == "packet_in"
    assert hidden.args == [] and hidden.body is None
    assert kv.kv is not None and sorted(kv.kv) == ["a", "b"]
    assert weird.args == [] and weird.body == "1 + ,"
    assert ast.annotation_to_p4(ch) == '@controller_header("packet_in")'


# ---------------------------------------------------------------------------------------------- positions


def test_positions_are_exact_and_1_based() -> None:
    src = ("header h_t {\n"
           "    bit<8> a;\n"
           "}\n"
           "control C(inout h_t h) {\n"
           "\taction set() { h.a = h.a + 8w1; }\n"
           "    apply { set(); }\n"
           "}\n")
    prog = parse(src)
    h, c = prog.decls
    assert (h.loc.line, h.loc.col) == (1, 1)
    assert isinstance(h, ast.HeaderDecl)
    assert (h.fields[0].loc.line, h.fields[0].loc.col) == (2, 5)
    assert isinstance(c, ast.ControlDecl)
    act = c.locals[0]
    assert isinstance(act, ast.ActionDecl) and (act.loc.line, act.loc.col) == (5, 2)
    assign = act.body.stmts[0]
    assert isinstance(assign, ast.AssignStmt) and (assign.loc.line, assign.loc.col) == (5, 17)
    plus = assign.rhs
    assert isinstance(plus, ast.Binary) and (plus.loc.line, plus.loc.col) == (5, 27)
    lit = plus.right
    assert isinstance(lit, ast.IntLit) and (lit.loc.line, lit.loc.col) == (5, 29)
    member = assign.lhs
    assert isinstance(member, ast.Member) and (member.loc.line, member.loc.col) == (5, 19)
    call = c.body.stmts[0]
    assert isinstance(call, ast.MethodCallStmt) and (call.call.loc.line, call.call.loc.col) == (6, 13)


def test_positions_survive_comments_and_includes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "defs.p4").write_text("/* two\n   lines */ header h_t { bit<8> a; }\n")
    main = tmp_path / "main.p4"
    main.write_text('#include "defs.p4"\n/* c */ const bit<8> X = /* inline */ 7;\n// line\nconst bit<8> Y = 1;\n')
    from compiler.parser import parse_file

    prog = parse_file(str(main))
    h, x, y = prog.decls
    assert h.loc.file.endswith("defs.p4") and (h.loc.line, h.loc.col) == (2, 13)
    assert x.loc.file == str(main) and (x.loc.line, x.loc.col) == (2, 9)
    assert isinstance(x, ast.ConstDecl) and (x.value.loc.line, x.value.loc.col) == (2, 39)
    assert (y.loc.line, y.loc.col) == (4, 1)


def test_visitor_dispatch_and_walk() -> None:
    prog = parse("control C(inout bit<8> x) { apply { x = x + 1; if (x == 2) { x = 3; } } }")

    class Names(ast.NodeVisitor):
        def __init__(self) -> None:
            self.seen: list[str] = []

        def visit_Name(self, node: ast.Name) -> None:
            self.seen.append(node.name)

    v = Names()
    v.visit(prog)
    assert v.seen == ["x", "x", "x", "x"]
    assert [n.value for n in ast.walk(prog) if isinstance(n, ast.IntLit)] == [8, 1, 2, 3]


def test_parsing_a_1000_line_program_is_fast() -> None:
    block = """
    action a{i}(bit<9> p) {{ sm.egress_spec = p; hdr.f{i} = hdr.f{i} + 1; }}
    table t{i} {{
        key = {{ hdr.f{i}: exact; }}
        actions = {{ a{i}; NoAction; }}
        size = 64;
    }}"""
    fields = "".join(f"bit<8> f{i}; " for i in range(150))
    body = "".join(block.format(i=i) for i in range(150))
    applies = "".join(f"t{i}.apply();\n" for i in range(150))
    src = (f"header h_t {{ {fields} }}\ncontrol C(inout h_t hdr, inout standard_metadata_t sm) {{\n{body}\n"
           f"apply {{\n{applies}}}\n}}\n")
    src = "#include <core.p4>\n#include <v1model.p4>\n" + src
    assert src.count("\n") > 900
    t0 = time.perf_counter()
    prog = parse_source(src, "big.p4")
    elapsed = time.perf_counter() - t0
    ctl = prog.decls[-1]
    assert isinstance(ctl, ast.ControlDecl) and len(ctl.locals) == 300
    assert elapsed < 1.0, f"parsing took {elapsed:.2f}s"


def test_contextual_keywords_are_usable_as_names() -> None:
    # p4c's nonTypeName: apply, key, actions, state, entries, type, priority
    prog = parse("header h { bit<8> type; bit<8> key; bit<3> priority; }\n"
                 "control C(inout h hdr, inout bit<8> state) { apply {\n"
                 "  state = hdr.type; bit<8> entries = hdr.key; entries = state; hdr.priority = 1; } }")
    h, c = prog.decls
    assert [f.name for f in h.fields] == ["type", "key", "priority"]  # type: ignore[attr-defined]
    assert isinstance(c, ast.ControlDecl)
    assert [type(s).__name__ for s in c.body.stmts] == ["AssignStmt", "VarDecl", "AssignStmt", "AssignStmt"]


def test_every_node_position_points_at_its_token(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Round trip: for every node of a realistic program, the source text at `loc` is the node's own token."""
    from compiler.parser import parse_file

    src = """#include <core.p4>
#include <v1model.p4>
#define ETH 0x800
/* a comment
   over lines */ const bit<16> TYPE_IPV4 = ETH;
typedef bit<48> mac_t;
header ethernet_t { mac_t dst; mac_t src; bit<16> etherType; }
header ipv4_t { bit<8> ttl; bit<32> dstAddr; }
struct headers { ethernet_t ethernet; ipv4_t ipv4; }
struct meta_t { @field_list(1) bit<32> x; }
parser P(packet_in pk, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) { TYPE_IPV4: ipv4; 0x86dd &&& 0xffff: accept; default: accept; }
    }
    state ipv4 { pk.extract(hdr.ipv4); transition accept; }
}
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    register<bit<32>>(16) r;
    action fwd(bit<9> port, mac_t d) { sm.egress_spec = port; hdr.ethernet.dst = d; hdr.ipv4.ttl = hdr.ipv4.ttl - 1; }
    action drop() { mark_to_drop(sm); }
    table lpm { key = { hdr.ipv4.dstAddr: lpm; } actions = { fwd; drop; } default_action = drop(); }
    apply {
        if (hdr.ipv4.isValid() && hdr.ipv4.ttl > 8w1) { lpm.apply(); }
        m.x = (bit<32>)hdr.ipv4.ttl[7:4] ++ 28w0 | m.x >> 2;
        r.write(0, m.x == 0 ? 32w1 : m.x);
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control V(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr.ethernet); pk.emit(hdr.ipv4); } }
V1Switch(P(), V(), I(), E(), V(), D()) main;
"""
    path = tmp_path / "prog.p4"
    path.write_text(src)
    prog = parse_file(str(path))
    lines = src.splitlines()
    checked = 0
    for node in ast.walk(prog):
        if node.loc.file != str(path):
            continue
        at = lines[node.loc.line - 1][node.loc.col - 1:]
        expected: str | None = None
        if isinstance(node, ast.Name):
            expected = node.name
        elif isinstance(node, ast.IntLit) and node.text:
            expected = "ETH" if node.text == "0x800" else node.text  # an expanded macro sits where it was used
        elif isinstance(node, ast.Member):
            expected = node.member
        elif isinstance(node, (ast.Binary, ast.Unary)):
            expected = node.op
        elif isinstance(node, ast.Ternary):
            expected = "?"
        elif isinstance(node, (ast.Index, ast.Slice)):
            expected = "["
        elif isinstance(node, ast.MaskExpr):
            expected = "&&&"
        elif isinstance(node, (ast.TableDecl, ast.ActionDecl, ast.ParserDecl, ast.ControlDecl, ast.HeaderDecl,
                               ast.StructDecl, ast.ConstDecl, ast.TypedefDecl, ast.ParserState)):
            expected = {ast.TableDecl: "table", ast.ActionDecl: "action", ast.ParserDecl: "parser",
                        ast.ControlDecl: "control", ast.HeaderDecl: "header", ast.StructDecl: "struct",
                        ast.ConstDecl: "const", ast.TypedefDecl: "typedef", ast.ParserState: "state"}[type(node)]
        elif isinstance(node, ast.Cast):
            expected = "("
        elif isinstance(node, ast.Annotation):
            expected = "@" + node.name
        if expected is not None:
            assert at.startswith(expected), f"{type(node).__name__} at {node.loc}: {at[:20]!r}, want {expected!r}"
            checked += 1
    assert checked > 100
