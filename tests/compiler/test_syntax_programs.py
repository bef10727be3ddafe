"""Every P4 program in the repository parses (syntax only; compiling them is tested elsewhere)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler import ast
from compiler.parser import parse_file
from tests.paths import ROOT

PROGRAMS = sorted(
    p for pattern in ("p4src/*.p4", "tests/p4/*.p4") for p in ROOT.glob(pattern)
)  # programs that must compile (tests/compiler/p4/ also holds deliberately broken ones)


@pytest.mark.skipif(not PROGRAMS, reason="no P4 programs in the repository yet")
@pytest.mark.parametrize("path", PROGRAMS, ids=[str(p.relative_to(ROOT)) for p in PROGRAMS])
def test_repository_program_parses(path: Path) -> None:
    prog = parse_file(str(path), include_dirs=[str(path.parent / "include"), str(ROOT / "p4src" / "include")])
    mains = [d for d in prog.decls if isinstance(d, ast.Instantiation) and d.name == "main"]
    assert len(mains) == 1, "a v1model program instantiates exactly one `main`"
