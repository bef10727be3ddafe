"""The project's STF tests (tests/switch/stf/*.stf) on the real engine, each on the program its `# program: NAME` header
names (tests/switch/stf/programs/NAME.json, else tests/fixtures/NAME.json); and, per file, proof that a wrong expectation
fails with a diff."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from switch.stf import run_stf
from switch.stf.testing import assert_stf, program_for
from tests.paths import ROOT, TESTS

HERE = Path(__file__).parent
PROGRAM_DIRS = (HERE / "programs", TESTS / "fixtures")
STF_FILES = sorted(HERE.glob("*.stf"))


def _require(stf: Path) -> Path:
    program = program_for(stf, PROGRAM_DIRS)
    assert program.exists(), f"{stf.name} is written for {program}, which does not exist"
    return program


@pytest.mark.parametrize("stf", STF_FILES, ids=lambda p: p.stem)
def test_stf_file_passes(stf: Path) -> None:
    assert_stf(_require(stf), stf)


def _corrupt_first_expectation(text: str) -> tuple[str, int]:
    """The STF text with one nibble of its first checked `expect` line flipped, and that line's number."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^(expect\s+\d+\s+)(.*)$", line.split("#", 1)[0].rstrip())
        if not m:
            continue
        data = m.group(2)
        j = next(k for k, ch in enumerate(data) if ch not in " *$")
        flipped = "0" if data[j] != "0" else "1"
        lines[i] = m.group(1) + data[:j] + flipped + data[j + 1 :]
        return "\n".join(lines) + "\n", i + 1
    raise AssertionError("no expect line with data")


@pytest.mark.parametrize("stf", STF_FILES, ids=lambda p: p.stem)
def test_wrong_expectation_fails_with_diff(stf: Path) -> None:
    program = _require(stf)
    text, lineno = _corrupt_first_expectation(stf.read_text())
    result = run_stf(program, text)
    assert not result.passed and not result.errors
    report = result.report()
    assert f"DIFFERS (expect at <stf>:{lineno}" in report
    assert "^" in report


def test_check_counter_names_parse_with_p4cs_stf_grammar() -> None:
    """p4c's STF lexer (tools/stf/stf_lexer.py) takes `check_counter ID(...)` with ID an identifier without dots or a
    quoted name: a dotted name like Ing.ctr must be written "Ing.ctr" for the STF to run under p4c's driver too."""
    import re

    root = ROOT
    ident = re.compile(r'^check_counter\s+([a-z$A-Z_][a-z$A-Z_0-9]*|"[^"]+")\s*\(')
    bad = [f"{p.relative_to(root)}:{i}" for p in root.glob("**/*.stf") if ".venv" not in p.parts
           for i, line in enumerate(p.read_text().splitlines(), 1)
           if line.strip().startswith("check_counter") and not ident.match(line.strip())]
    assert bad == []
