"""The bad-program template of the compiler's error tests: a v1model program with @DECLS@, @LOCALS@ and @BODY@
holes, and `first_error`, which compiles one filled-in copy and returns the first error's (line, column, message)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler import CompileError, compile_source

TEMPLATE = (Path(__file__).parent / "data" / "error_template.p4").read_text()
DECLS_LINE, LOCALS_LINE, BODY_LINE = 8, 14, 16


def first_error(body: str = "", locals_: str = "", decls: str = "") -> tuple[int, int, str]:
    src = TEMPLATE.replace("@DECLS@", decls).replace("@LOCALS@", locals_).replace("@BODY@", body)
    with pytest.raises(CompileError) as info:
        compile_source(src, name="t.p4")
    d = info.value.diagnostics.errors[0]
    assert d.loc.file == "t.p4"
    return d.loc.line, d.loc.col, d.message
