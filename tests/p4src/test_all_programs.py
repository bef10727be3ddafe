"""Every P4 program in the repository compiles with the embedded compiler, loads on the embedded switch, and passes
every STF test written for it — run on the compiled JSON, not on a hand-written fixture.

A program is a `.p4` file that instantiates the `V1Switch` package. Its STF tests are `<name>.stf` beside it and any
`tests/switch/stf/*.stf` whose first line says `# program: <name>`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler import compile_file
from switch.stf.testing import assert_stf
from switch.v1model import V1Switch
from tests.p4src.repo_programs import ROOT as REPO_ROOT
from tests.p4src.repo_programs import programs, stf_files

PROGRAMS = programs()
ROOT = REPO_ROOT


def test_the_repository_has_programs() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in PROGRAMS}
    assert {"p4src/switchml.p4", "tests/p4/basic_forward.p4", "tests/switch/stf/programs/stf_l2.p4",
            "docs/examples/labagg/labagg.p4"} <= names
    assert not any(n.startswith("site/") for n in names)  # make docs's copy of docs/


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_program_compiles_loads_and_passes_its_stf(program: Path) -> None:
    # the repository's shared includes too, as `make build` passes them (a plug-in's program uses p4src/include/)
    result = compile_file(str(program), include_dirs=[str(program.parent), str(ROOT / "p4src")])
    sw = V1Switch()
    sw.load(result.json)
    assert sw.loaded
    assert result.p4info_text.strip(), "empty P4Info"
    for stf in stf_files(program):
        assert_stf(result.json, stf)
