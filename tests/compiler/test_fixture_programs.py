"""Our compiler on the engine's P4 sources (tests/p4/) must behave like the hand-written JSON fixtures
(tests/fixtures/): the same STF test, run on both, must pass on both. Also: every program in the repository compiles."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler import compile_file
from switch.stf.testing import assert_stf
from switch.v1model import V1Switch
from tests.paths import ROOT

HERE = Path(__file__).parent
CASES = sorted((HERE / "fixture_stf").glob("*.stf")) + [ROOT / "tests" / "switch" / "stf" / "basic_forward.stf"]


def _program(stf: Path) -> str:
    for line in stf.read_text().splitlines():
        if line.startswith("# program:"):
            return line.split(":", 1)[1].split()[0]
    raise AssertionError(f"{stf} has no '# program:' line")


@pytest.mark.parametrize("stf", CASES, ids=[p.stem for p in CASES])
@pytest.mark.parametrize("which", ["fixture", "compiled"])
def test_compiled_program_behaves_like_fixture(stf: Path, which: str) -> None:
    name = _program(stf)
    if which == "fixture":
        program = json.loads((ROOT / "tests" / "fixtures" / f"{name}.json").read_text())
    else:
        program = compile_file(ROOT / "tests" / "p4" / f"{name}.p4").json
    assert_stf(program, stf)


ALL_P4 = sorted((ROOT / "tests" / "p4").glob("*.p4")) + sorted((ROOT / "p4src").glob("*.p4")) + \
    sorted((ROOT / "tests" / "switch" / "stf" / "programs").glob("*.p4"))


@pytest.mark.parametrize("path", ALL_P4, ids=[str(p.relative_to(ROOT)) for p in ALL_P4])
def test_repository_program_compiles(path: Path) -> None:
    """Compiles, and the engine accepts the JSON (it refuses anything malformed with LoadError)."""
    result = compile_file(path)
    sw = V1Switch()
    sw.load(result.json)
    assert sw.loaded
    assert set(sw.tables) == {t["name"] for p in result.json["pipelines"] for t in p["tables"]}
