"""Every P4 program in the repository compiles with the embedded compiler, loads on the embedded switch, and passes
every STF test written for it — run on the compiled JSON, not on a hand-written fixture.

A program is a `.p4` file that instantiates the `V1Switch` package. Its STF tests are `<name>.stf` beside it and any
`tests/stf/*.stf` whose first line says `# program: <name>`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from compiler import compile_file
from switch.stf.testing import assert_stf
from switch.v1model import V1Switch

ROOT = Path(__file__).resolve().parents[1]
SKIP_DIRS = {".venv", ".venv-shell", ".git", "include", "data"}
PROGRAM_LINE = re.compile(r"#\s*program:\s*(\S+)")


def _programs() -> list[Path]:
    found = []
    for path in sorted(ROOT.rglob("*.p4")):
        if SKIP_DIRS.intersection(path.relative_to(ROOT).parts):
            continue
        if re.search(r"\bV1Switch\s*\(", path.read_text()):
            found.append(path)
    return found


def _stf_files(program: Path) -> list[Path]:
    files = [program.with_suffix(".stf")] if program.with_suffix(".stf").exists() else []
    for stf in sorted((ROOT / "tests" / "stf").glob("*.stf")):
        match = PROGRAM_LINE.match(stf.read_text().lstrip())
        if match and match.group(1) == program.stem:
            files.append(stf)
    return files


PROGRAMS = _programs()


def test_the_repository_has_programs() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in PROGRAMS}
    assert {"p4src/switchml.p4", "tests/p4/basic_forward.p4", "tests/stf/programs/stf_l2.p4"} <= names


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_program_compiles_loads_and_passes_its_stf(program: Path) -> None:
    result = compile_file(str(program), include_dirs=[str(program.parent)])
    sw = V1Switch()
    sw.load(result.json)
    assert sw.loaded
    assert result.p4info_text.strip(), "empty P4Info"
    for stf in _stf_files(program):
        assert_stf(result.json, stf)
