"""The preprocessor (#include, #define, #if, -D) and the project's own core.p4 / v1model.p4 preludes."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler import ast
from compiler.ast import to_p4
from compiler.diagnostics import CompileError
from compiler.parser import parse_file, parse_source
from compiler.preprocess import INCLUDE_DIR, blank_comments, parse_defines, preprocess


def consts(prog: ast.Program) -> dict[str, str]:
    return {d.name: to_p4(d.value) for d in prog.decls if isinstance(d, ast.ConstDecl)}


def test_blank_comments_keeps_positions() -> None:
    src = 'a /* x\ny */ b // z\n"//not" c'
    out = blank_comments(src)
    assert out == 'a     \n     b     \n"//not" c'
    assert len(out) == len(src)


def test_parse_defines() -> None:
    assert parse_defines(["A", "B=2", "C=x=y"]) == {"A": "1", "B": "2", "C": "x=y"}
    assert parse_defines({"N": 64}) == {"N": "64"}


def test_command_line_defines_and_conditionals() -> None:
    src = """
#if defined(N) && N > 10
const bit<8> big = N;
#elif defined(N)
const bit<8> small = N;
#else
const bit<8> none = 0;
#endif
#ifdef FLAG
const bit<8> flag = 1;
#endif
#ifndef FLAG
const bit<8> noflag = 1;
#endif
"""
    assert consts(parse_source(src, "t.p4", defines=["N=64"])) == {"big": "64", "noflag": "1"}
    assert consts(parse_source(src, "t.p4", defines={"N": "3", "FLAG": "1"})) == {"small": "3", "flag": "1"}
    assert consts(parse_source(src, "t.p4", defines=["FLAG"])) == {"none": "0", "flag": "1"}


def test_object_and_function_like_macros() -> None:
    src = "#define W 16\n#define ADD(a, b) ((a) + (b))\nconst bit<W> x = ADD(W, 2);\n"
    prog = parse_source(src, "t.p4")
    (d,) = prog.decls
    assert isinstance(d, ast.ConstDecl)
    assert ast.type_to_p4(d.type) == "bit<16>"
    assert to_p4(d.value) == "16 + 2"
    # the position is still the original line
    assert (d.loc.line, d.loc.col) == (3, 1)


def test_include_search_order(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "inc").mkdir()
    (tmp_path / "src" / "local.p4").write_text("const bit<8> L = 1;\n")
    (tmp_path / "inc" / "local.p4").write_text("const bit<8> WRONG = 1;\n")
    (tmp_path / "inc" / "other.p4").write_text("\n\nconst bit<8> O = 2;\n")
    main = tmp_path / "src" / "main.p4"
    main.write_text('#include "local.p4"\n#include <other.p4>\nconst bit<8> M = 3;\n')
    prog = parse_file(str(main), include_dirs=[str(tmp_path / "inc")])
    assert consts(prog) == {"L": "1", "O": "2", "M": "3"}
    o = next(d for d in prog.decls if d.name == "O")
    assert o.loc == ast.SourceLoc(str(tmp_path / "inc" / "other.p4"), 3, 1)
    m = next(d for d in prog.decls if d.name == "M")
    assert m.loc == ast.SourceLoc(str(main), 3, 1)


def test_missing_include_is_an_error_at_the_directive(tmp_path: Path) -> None:
    main = tmp_path / "main.p4"
    main.write_text('#include <core.p4>\n  #include "nothere.p4"\n')
    with pytest.raises(CompileError) as info:
        parse_file(str(main))
    assert info.value.diagnostics[0].header() == f"{main}:2:12: error: cannot find include file 'nothere.p4'"


def test_error_directive_and_unknown_directive() -> None:
    with pytest.raises(CompileError) as info:
        preprocess("t.p4", text="#if 1\n#error need N\n#endif\n")
    assert info.value.diagnostics[0].header() == "t.p4:2:1: error: #error need N"
    with pytest.raises(CompileError) as info:
        preprocess("t.p4", text="\n#frobnicate\n")
    assert info.value.diagnostics[0].header() == "t.p4:2:1: error: unknown preprocessor directive '#frobnicate'"


def test_missing_file() -> None:
    with pytest.raises(CompileError) as info:
        parse_file("/nonexistent/prog.p4")
    assert info.value.diagnostics[0].header() == (
        "/nonexistent/prog.p4: error: cannot read /nonexistent/prog.p4: No such file or directory")


# ------------------------------------------------------------------------------------------------ preludes


def v1model(defines: list[str] | None = None, version: str | None = None) -> ast.Program:
    head = f"#define V1MODEL_VERSION {version}\n" if version else ""
    return parse_source(head + "#include <core.p4>\n#include <v1model.p4>\n", "t.p4", defines=defines or [])


def by_name(prog: ast.Program) -> dict[str, ast.Decl]:
    out: dict[str, ast.Decl] = {}
    for d in prog.decls:
        out.setdefault(d.name, d)
    return out


def test_preludes_are_our_own_files() -> None:
    assert Path(INCLUDE_DIR, "core.p4").is_file() and Path(INCLUDE_DIR, "v1model.p4").is_file()
    text = Path(INCLUDE_DIR, "v1model.p4").read_text()
    assert "this\n * project" in text or "this project" in text


def test_standard_metadata_matches_bmv2_layout() -> None:
    decls = by_name(v1model())
    sm = decls["standard_metadata_t"]
    assert isinstance(sm, ast.StructDecl)
    assert sm.annotation("metadata") is not None
    name = sm.annotation("name")
    assert name is not None and name.string_arg() == "standard_metadata"
    typedefs = {d.name: d for d in decls.values() if isinstance(d, ast.TypedefDecl)}

    def width(t: ast.Type) -> str:
        if isinstance(t, ast.TypeName) and t.name in typedefs:
            return width(typedefs[t.name].type)  # type: ignore[attr-defined]
        return ast.type_to_p4(t)

    fields = [(f.name, width(f.type)) for f in sm.fields]
    assert fields == [
        ("ingress_port", "bit<9>"), ("egress_spec", "bit<9>"), ("egress_port", "bit<9>"),
        ("instance_type", "bit<32>"), ("packet_length", "bit<32>"), ("enq_timestamp", "bit<32>"),
        ("enq_qdepth", "bit<19>"), ("deq_timedelta", "bit<32>"), ("deq_qdepth", "bit<19>"),
        ("ingress_global_timestamp", "bit<48>"), ("egress_global_timestamp", "bit<48>"),
        ("mcast_grp", "bit<16>"), ("egress_rid", "bit<16>"), ("checksum_error", "bit<1>"),
        ("parser_error", "error"), ("priority", "bit<3>"),
    ]
    aliases = {f.name: a.string_arg() for f in sm.fields if (a := f.annotation("alias")) is not None}
    assert aliases["mcast_grp"] == "intrinsic_metadata.mcast_grp"
    assert aliases["enq_qdepth"] == "queueing_metadata.enq_qdepth"
    assert aliases["priority"] == "intrinsic_metadata.priority"


def test_v1model_declares_the_architecture_interface() -> None:
    decls = by_name(v1model())
    for name in ["counter", "direct_counter", "meter", "direct_meter", "register", "action_profile",
                 "action_selector", "Checksum16"]:
        assert isinstance(decls[name], ast.ExternDecl), name
    for name in ["hash", "random", "mark_to_drop", "clone", "clone3", "clone_preserving_field_list", "resubmit",
                 "resubmit_preserving_field_list", "recirculate", "recirculate_preserving_field_list", "truncate",
                 "digest", "assert", "assume", "log_msg", "verify_checksum", "update_checksum",
                 "verify_checksum_with_payload", "update_checksum_with_payload", "verify"]:
        assert isinstance(decls[name], ast.ExternFunctionDecl), name
    for name, members in [("HashAlgorithm", ["crc32", "crc32_custom", "crc16", "crc16_custom", "random",
                                             "identity", "csum16", "xor16"]),
                          ("CounterType", ["packets", "bytes", "packets_and_bytes"]),
                          ("MeterType", ["packets", "bytes"]), ("CloneType", ["I2E", "E2E"])]:
        e = decls[name]
        assert isinstance(e, ast.EnumDecl) and [m.name for m in e.members] == members
    kinds = [m.name for d in v1model().decls if isinstance(d, ast.MatchKindDecl) for m in d.members]
    assert kinds == ["exact", "ternary", "lpm", "range", "optional", "selector"]
    reg = decls["register"]  # p4c's default V1MODEL_VERSION 20180101: register<T>, bit<32> indices
    assert isinstance(reg, ast.ExternDecl) and reg.type_params == ["T"]
    # both mark_to_drop overloads, as in p4c's v1model.p4 (the one without arguments deprecated)
    mtds = [d for d in v1model().decls if d.name == "mark_to_drop"]
    assert all(isinstance(d, ast.ExternFunctionDecl) for d in mtds)
    assert [[(p.direction, ast.type_to_p4(p.type)) for p in d.proto.params] for d in mtds] == \
        [[], [("inout", "standard_metadata_t")]]
    pkg = decls["V1Switch"]
    assert isinstance(pkg, ast.PackageTypeDecl)
    assert [ast.type_to_p4(p.type) for p in pkg.params] == [
        "Parser<H, M>", "VerifyChecksum<H, M>", "Ingress<H, M>", "Egress<H, M>", "ComputeChecksum<H, M>",
        "Deparser<H>"]
    errors = [m.name for d in v1model().decls if isinstance(d, ast.ErrorDecl) for m in d.members]
    assert errors[:3] == ["NoError", "PacketTooShort", "NoMatch"]
    noaction = decls["NoAction"]
    assert isinstance(noaction, ast.ActionDecl) and noaction.params == []


def test_v1model_version_default_and_override() -> None:
    assert consts(v1model())["__v1model_version"] == "20180101"  # p4c's default
    new = by_name(v1model(version="20200408"))
    assert to_p4(new["__v1model_version"].value) == "20200408"  # type: ignore[attr-defined]
    reg = new["register"]
    assert isinstance(reg, ast.ExternDecl) and reg.type_params == ["T", "I"]
    # programs test the version with #if, as they do with p4c's v1model.p4
    prog = parse_source("#include <v1model.p4>\n#if V1MODEL_VERSION >= 20200408\nconst bit<8> NEW = 1;\n#endif\n",
                        "t.p4")
    assert "NEW" not in consts(prog)


def test_including_the_preludes_twice_is_harmless() -> None:
    prog = parse_source("#include <core.p4>\n#include <v1model.p4>\n#include <v1model.p4>\n#include <core.p4>\n",
                        "t.p4")
    assert sum(1 for d in prog.decls if d.name == "standard_metadata_t") == 1


def test_token_pasting_macro_arguments_and_continuations() -> None:
    src = ("#define M(i) bit<32> d##i;\n"
           "#define FOREACH(X) \\\n"
           "    X(0) \\\n"
           "    X(1)\n"
           "header h { FOREACH(M) }\n"
           "#if 3 < 1 || 3 > 32768\n"
           '#error "bad size"\n'
           "#endif\n"
           "const bit<8> after = 1;\n")
    prog = parse_source(src, "t.p4")
    h, after = prog.decls
    assert isinstance(h, ast.HeaderDecl) and [f.name for f in h.fields] == ["d0", "d1"]
    assert (h.loc.line, after.loc.line) == (5, 9)
    with pytest.raises(CompileError) as info:
        parse_source(src.replace("3 < 1", "3 > 1"), "t.p4")
    assert info.value.diagnostics[0].header() == 't.p4:7:1: error: #error "bad size"'


def test_byte_order_mark_and_non_utf8_input(tmp_path: Path) -> None:
    bom = tmp_path / "bom.p4"
    bom.write_bytes(b"\xef\xbb\xbfconst bit<8> x = 1;\n")
    (d,) = parse_file(str(bom)).decls
    assert (d.loc.line, d.loc.col) == (1, 1)
    latin = tmp_path / "latin.p4"
    latin.write_bytes(b"const bit<8> x = 1; // \xff\n")
    main = tmp_path / "main.p4"
    main.write_text('#include "latin.p4"\n')
    for path in (latin, main):
        with pytest.raises(CompileError) as info:
            parse_file(str(path))
        assert info.value.diagnostics[0].header() == f"{latin}: error: {latin} is not UTF-8 text (invalid start byte)"


@pytest.mark.parametrize("text, header", [
    ("#define\n", "t.p4:1:1: error: #define needs a macro name"),
    ("\n#undef\n", "t.p4:2:1: error: #undef needs a macro name"),
    ("#include\n", 't.p4:1:1: error: #include expects "FILE" or <FILE>'),
    ("#elif\n", "t.p4:1:1: error: #elif without #if"),
    ("#endif\n", "t.p4:1:1: error: #endif without #if"),
    ("#if 1\nx\n", "t.p4:1:1: error: unterminated #if 1"),
    ("#if\n#endif\n", "t.p4:1:1: error: malformed preprocessor directive (IndexError)"),
    ("#line 7\n", "t.p4:1:1: error: unsupported: #line directives"),
    ("const bit<8> x = 1; /* never closed\n\n", "t.p4:1:21: error: unterminated comment"),
])
def test_malformed_directives_are_errors(text: str, header: str) -> None:
    with pytest.raises(CompileError) as info:
        preprocess("t.p4", text=text)
    assert info.value.diagnostics[0].header() == header


def test_unterminated_comment_in_an_included_file(tmp_path: Path) -> None:
    (tmp_path / "inc.p4").write_text("header h { }\n  /* oops\n" + "x " * 5000 + "\n")
    main = tmp_path / "main.p4"
    main.write_text('#include "inc.p4"\n')
    with pytest.raises(CompileError) as info:
        parse_file(str(main))
    assert info.value.diagnostics[0].header() == f"{tmp_path / 'inc.p4'}:2:3: error: unterminated comment"


def test_include_cycle_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.p4").write_text('#include "b.p4"\n')
    (tmp_path / "b.p4").write_text('\n#include "a.p4"\n')
    with pytest.raises(CompileError) as info:
        parse_file(str(tmp_path / "a.p4"))
    d = info.value.diagnostics[0]
    assert d.message == "#include nested more than 40 deep (an include cycle?)"
    assert d.loc.file in (str(tmp_path / "a.p4"), str(tmp_path / "b.p4"))
