"""The repository's programs on the real toolchain, where `p4c-bm2-ss` is installed (skipped otherwise; `$INA_P4C`
names another binary): each compiles unchanged with p4c, our P4Info equals p4c's (ids, names, match fields, action
parameters ...; p4c >= 1.2.4.14's `initial_default_action` left out) and p4c's JSON passes the program's STF tests on
the embedded switch. A stand-in p4c (a script running our compiler) checks the harness itself everywhere."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from finsy.proto import p4i
from google.protobuf import text_format

from compiler import compile_file
from switch.stf.testing import assert_stf
from tests.p4src.repo_programs import ROOT, programs, stf_files

P4C = os.environ.get("INA_P4C") or shutil.which("p4c-bm2-ss")


def p4c_parity(p4c: str, program: Path, work: Path) -> None:
    """Compile program with p4c; assert P4Info equality with ours and run its STF tests on p4c's JSON."""
    out, info = work / "p.json", work / "p.p4info.txtpb"
    r = subprocess.run([p4c, "-I", str(program.parent), "-I", str(ROOT / "p4src"), "-o", str(out),
                        "--p4runtime-files", str(info), str(program)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"p4c refuses {program.name}:\n{r.stderr}"
    theirs = text_format.Parse(info.read_text(), p4i.P4Info())
    for t in theirs.tables:
        t.ClearField("initial_default_action")
    ours = compile_file(str(program), include_dirs=[str(program.parent), str(ROOT / "p4src")]).p4info
    assert text_format.MessageToString(ours) == text_format.MessageToString(theirs)
    p4c_json = json.loads(out.read_text())
    for stf in stf_files(program):
        assert_stf(p4c_json, stf)


@pytest.mark.skipif(P4C is None, reason="p4c-bm2-ss is not installed (no Debian or PyPI package)")
@pytest.mark.parametrize("program", programs(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_program_matches_real_p4c(program: Path, tmp_path: Path) -> None:
    assert P4C is not None
    p4c_parity(P4C, program, tmp_path)


def test_harness_with_a_stand_in_p4c(tmp_path: Path) -> None:
    fake = tmp_path / "p4c-bm2-ss"
    fake.write_text(f"#!/bin/sh\ncd {ROOT} && exec {sys.executable} -m compiler \"$@\"\n")
    fake.chmod(0o755)
    p4c_parity(str(fake), ROOT / "tests" / "compiler" / "p4" / "entry_priority.p4", tmp_path)
    with pytest.raises(AssertionError, match="p4c refuses"):
        bad = tmp_path / "bad.p4"
        bad.write_text("control c() { apply { x = 1; } }\n")
        p4c_parity(str(fake), bad, tmp_path)
