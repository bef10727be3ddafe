"""Behavioural compiler tests: every tests/compiler/p4/NAME.p4 with a NAME.stf next to it is compiled by our
compiler, loaded into the embedded switch and run through the STF test; the expected packets in the STF files were
worked out by hand from the P4_16 spec and v1model semantics, or (where the file says so, for what P4 leaves to the
target) taken from real simple_switch running p4c's JSON; never produced by our compiler."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler import compile_file
from switch.stf.testing import assert_stf

HERE = Path(__file__).parent
PROGRAMS = sorted(p for p in (HERE / "p4").glob("*.p4") if p.with_suffix(".stf").exists())


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_program_passes_its_stf(program: Path) -> None:
    result = compile_file(program)
    assert_stf(result.json, program.with_suffix(".stf"))


def test_every_program_has_an_stf() -> None:
    lonely = [p.name for p in (HERE / "p4").glob("*.p4") if not p.with_suffix(".stf").exists()]
    assert lonely == []


@pytest.mark.parametrize("name", ["for_loops", "if_in_actions"])
def test_jumping_actions_pass_their_stf_traced(name: str) -> None:
    """Actions lowered to `_jump`s run through the switch's traced code as well (a trace callback set)."""
    from switch.v1model import V1Switch

    sw = V1Switch()
    sw.load(compile_file(HERE / "p4" / f"{name}.p4").json)
    lines: list[object] = []
    sw.trace = lambda *a: lines.append(a)
    assert_stf(sw, HERE / "p4" / f"{name}.stf")
    assert lines
