"""compiler: a P4_16 (v1model subset) compiler producing BMv2 JSON and P4Info, interchangeable with p4c-bm2-ss.

Modules, one per pass:

    compiler.preprocess     C preprocessor (#include, #define, #if...) with p4c's include paths
    compiler.lexer          tokens with file:line:col positions
    compiler.parser         recursive-descent P4_16 parser → compiler.ast
    compiler.ast            syntax tree (slotted dataclasses) and NodeVisitor
    compiler.diagnostics    Diagnostic records, `file:line:col: error: ...` rendering, CompileError
    compiler.types          semantic types (bit<W>, int<W>, bool, headers, structs, enums, externs, ...)
    compiler.direct_calls   `Control.apply(...)` of a type gets an instance of its own, as in p4c
    compiler.typecheck      name resolution, type/width checking, constant folding
    compiler.inline_calls   function calls inlined into statements (copy-in/copy-out, returns), as p4c does
    compiler.lower_context  storage locations, fresh names, ids shared by the lowering passes
    compiler.lower_expr     expressions → BMv2 JSON with p4c's masking/two_comp_mod conventions
    compiler.lower_actions  statements and v1model extern calls → BMv2 primitives
    compiler.lower_parser   parser states, select encoding, extract/verify/lookahead
    compiler.lower_control  apply blocks → tables, conditionals, tbl_* keyless tables
    compiler.bmv2           whole-program lowering: header layout, checksums, deparser, JSON assembly
    compiler.cpmodel        control-plane model filled during lowering
    compiler.p4info         P4Info (p4c's id scheme) from the control-plane model
    compiler.__main__       CLI with p4c-bm2-ss's flags

API: `compile_file(path, include_dirs=(), defines={}) -> CompileResult` and `compile_source(text, name=...)`;
both raise `CompileError` (with all diagnostics) when the program is invalid or outside the supported subset.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from compiler.diagnostics import CompileError, Diagnostics

__all__ = ["CompileError", "CompileResult", "compile_file", "compile_source"]


@dataclass
class CompileResult:
    """The outputs of one compilation: BMv2 JSON (a dict), P4Info (message and text format), warnings."""

    json: dict[str, Any]
    p4info: Any
    p4info_text: str
    diagnostics: Diagnostics = field(default_factory=Diagnostics)
    p4runtime_errors: list[str] = field(default_factory=list)
    """Why p4c-bm2-ss would not write this program's P4Info (`file:line:col: error: ...`; the JSON is fine): a
    P4Info is then only a description, which `python -m compiler --p4runtime-files` refuses to write, as p4c does."""


def _compile(text: str | None, name: str, include_dirs: Iterable[str], defines: Mapping[str, str] | Iterable[str],
             program_name: str | None) -> CompileResult:
    from compiler import bmv2, p4info, typecheck
    from compiler.direct_calls import instantiate_direct_calls, name_table_implementations
    from compiler.parser_ifs import split_parser_ifs
    from compiler.inline_calls import CallInliner
    from compiler.simplify_keys import KeySimplifier
    from compiler.parser import parse_source

    diags = Diagnostics()
    program = parse_source(text, name, include_dirs, defines, diags)
    diags.check()
    instantiate_direct_calls(program)
    p4runtime_errors = name_table_implementations(program)
    split_parser_ifs(program)
    info = typecheck.check(program, diags)
    diags.check()
    CallInliner(info, diags).run(program)
    KeySimplifier(info, diags).run(program)
    diags.check()
    j, model = bmv2.lower(program, info, diags, program_name if program_name is not None else name)
    diags.check()
    msg = p4info.build(model, diags)
    diags.check()
    return CompileResult(j, msg, p4info.to_text(msg), diags,
                         [f"{loc.file}:{loc.line}:{loc.col}: error: {message}" for loc, message in p4runtime_errors])


def compile_file(path: str | os.PathLike[str], include_dirs: Iterable[str] = (),
                 defines: Mapping[str, str] | Iterable[str] = {}) -> CompileResult:  # noqa: B006
    """Compile the P4 program at `path`; `defines` maps NAME → value (or is a list of `NAME[=VALUE]`)."""
    return _compile(None, os.fspath(path), include_dirs, defines, None)


def compile_source(text: str, name: str = "<string>", include_dirs: Iterable[str] = (),
                   defines: Mapping[str, str] | Iterable[str] = {}) -> CompileResult:  # noqa: B006
    """Compile P4 source `text`; `name` is used in diagnostics, `source_info` and for relative #includes."""
    return _compile(text, name, include_dirs, defines, None)
