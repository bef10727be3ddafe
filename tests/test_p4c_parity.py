"""The repository's programs on the real toolchain, where `p4c-bm2-ss` is installed (skipped otherwise; `$INA_P4C`
names another binary): each compiles unchanged with p4c (or is skipped naming the p4c versions that cannot, P4C_GAPS),
our P4Info equals p4c's (ids, names, match fields, action parameters ...; p4c >= 1.2.4.14's `initial_default_action`
left out), p4c's JSON loads on the embedded switch (or is refused by name, `unsupported: ...`, where real simple_switch
refuses it too) and both JSONs pass the program's STF tests on the embedded switch (p4c's, unless P4C_GAPS says that
version miscompiles the program: checked against real simple_switch). A stand-in p4c (a script running our compiler)
checks the harness itself everywhere."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from finsy.proto import p4i
from google.protobuf import text_format

from compiler import compile_file
from switch.errors import LoadError
from switch.stf.testing import assert_stf
from switch.v1model import V1Switch
from tests.p4src.repo_programs import ROOT, programs, stf_files

P4C = os.environ.get("INA_P4C") or shutil.which("p4c-bm2-ss")

Version = tuple[int, ...]


@dataclass(frozen=True)
class Gap:
    """What a range of p4c versions cannot do with a program: refuse it (`compiles=False`) or miscompile it (its
    JSON fails the program's STF; said only after running that JSON on real simple_switch)."""

    versions: tuple[Version, Version]
    """First and last affected version (inclusive)."""
    why: str
    compiles: bool = True

    def applies(self, version: Version) -> bool:
        return self.versions[0] <= version <= self.versions[1]


OLD = (0,)
P4C_GAPS: dict[str, Gap] = {
    # p4c's grammar has `+=` ... `>>=` and the saturating `|+|=`, `|-|=` from v1.2.5.5 (p4parser.ypp ASSIGN_PLUS,
    # ASSIGN_PLUS_SAT; still there in v1.2.5.16)
    "tests/compiler/p4/compound_assignment.p4": Gap((OLD, (1, 2, 5, 4)), "compound assignment (`+=`, `|+|=`) "
                                                    "arrived in p4c 1.2.5.5", compiles=False),
    # loops inside actions: p4c#5552, first in v1.2.5.12 (before it, CheckUnsupported: "BMV2 does not support
    # loops"; v1.2.4.x does not parse a declaration in the header). Checked with 1.2.4.14 carrying p4c#4999 and #5552
    # on real simple_switch 1.15.5.
    "tests/compiler/p4/for_loops.p4": Gap((OLD, (1, 2, 5, 11)), "for loops inside actions arrived in p4c 1.2.5.12 "
                                          "(p4c#5552)", compiles=False),
    # calls, exit, slices ... under an `if` in an action: before v1.2.5.0 (p4c#4999) p4c predicates ifs in actions
    # and refuses the rest ("Conditional execution in actions unsupported on this target")
    "tests/compiler/p4/if_in_actions.p4": Gap((OLD, (1, 2, 4, 99)), "calls and exit under an if in an action arrived "
                                              "in p4c 1.2.5.0 (p4c#4999)", compiles=False),
    # `_` for an action's out parameter: fixed by p4c#4762 (first in 1.2.4.13); 1.2.4.14 compiles both and passes
    # their STF
    "tests/compiler/p4/action_calls.p4": Gap(((1, 2, 4, 8), (1, 2, 4, 12)), "p4c before 1.2.4.13 stops with an "
                                             "internal error (Compiler Bug: frontends/p4/alias.h:232: Null result; "
                                             "p4c#4762)", compiles=False),
    "tests/compiler/p4/dont_care.p4": Gap(((1, 2, 4, 8), (1, 2, 4, 12)), "p4c before 1.2.4.13 stops with an internal "
                                          "error (Compiler Bug: frontends/p4/alias.h:232: Null result; p4c#4762)",
                                          compiles=False),
    "tests/compiler/p4/function_bodies.p4": Gap(((1, 2, 4, 8), (1, 2, 4, 14)), "p4c miscompiles clamp() called in an "
                                                "action: 1.2.4.8's JSON sends r.u = 0x00 for clamp(0xd0, 30, 200) on "
                                                "real simple_switch 1.15.5 as on ours (P4 says 0xc8, which our JSON "
                                                "gives on both); 1.2.4.14's JSON gives 0x00 on ours too"),
}
"""Per program: the p4c versions that refuse or miscompile it, and why."""


def p4c_version(p4c: str) -> Version:
    """p4c's version from `p4c-bm2-ss --version` ("Version 1.2.4.8 (SHA: ...)")."""
    r = subprocess.run([p4c, "--version"], capture_output=True, text=True, timeout=60)
    m = re.search(r"Version (\d+(?:\.\d+)*)", r.stdout + r.stderr)
    return tuple(int(x) for x in m.group(1).split(".")) if m else (0,)


def _table_keys(program: dict, p4info: p4i.P4Info) -> dict[str, tuple]:
    """Per control-plane table: its JSON match_type and each key's (name, match_type), as PI and simple_switch_CLI
    read them (p4c writes an optional key as ternary, drops selector keys). Not compared yet: where a key is read
    from (p4c copies some keys, slices among them, into temporaries where we read the field under a mask)."""
    names = {t.preamble.name for t in p4info.tables}
    return {t["name"]: (t.get("match_type"), tuple((k.get("name"), k.get("match_type")) for k in t.get("key", [])))
            for pl in program.get("pipelines", []) for t in pl.get("tables", []) if t.get("name") in names}


def p4c_parity(p4c: str, program: Path, work: Path) -> None:
    """Compile program with p4c; assert P4Info equality with ours, that p4c's JSON loads (or is refused by name) and
    that both JSONs pass the program's STF tests."""
    rel = program.relative_to(ROOT).as_posix() if program.is_relative_to(ROOT) else program.name
    gap = P4C_GAPS.get(rel)
    version = p4c_version(p4c)
    gap = gap if gap is not None and gap.applies(version) else None
    if gap is not None and not gap.compiles:
        pytest.skip(f"p4c {'.'.join(map(str, version))}: {gap.why}")
    out, info = work / "p.json", work / "p.p4info.txtpb"
    r = subprocess.run([p4c, "-I", str(program.parent), "-I", str(ROOT / "p4src"), "-o", str(out),
                        "--p4runtime-files", str(info), str(program)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"p4c refuses {program.name}:\n{r.stderr}"
    theirs = text_format.Parse(info.read_text(), p4i.P4Info())
    for t in theirs.tables:
        t.ClearField("initial_default_action")
    compiled = compile_file(str(program), include_dirs=[str(program.parent), str(ROOT / "p4src")])
    assert text_format.MessageToString(compiled.p4info) == text_format.MessageToString(theirs)
    p4c_json = json.loads(out.read_text())
    assert _table_keys(compiled.json, theirs) == _table_keys(p4c_json, theirs), "JSON match keys differ from p4c's"
    try:
        V1Switch().load(p4c_json)
        loads = True
    except LoadError as err:
        assert str(err).startswith("unsupported:"), f"p4c's JSON of {program.name} refused without naming why: {err}"
        loads = False
    for stf in stf_files(program):
        assert_stf(compiled.json, stf)
        if loads and gap is None:
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
