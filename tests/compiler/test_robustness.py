"""Bad input gives a CompileError, never a crash or a hang: mutated copies of the test programs (fixed seed) and
pathological sizes."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from compiler import CompileError, compile_source

HERE = Path(__file__).parent
SOURCES = sorted((HERE / "p4").glob("*.p4"))
TEMPLATE = (HERE / "data" / "error_template.p4").read_text()


def _mutants(seed: int, count: int) -> list[str]:
    rnd = random.Random(seed)
    texts = [p.read_text() for p in SOURCES]
    out = []
    for _ in range(count):
        toks = re.split(r"(\W)", rnd.choice(texts))
        idents = [t for t in toks if re.fullmatch(r"[A-Za-z_]\w*", t)]
        for _ in range(rnd.randint(1, 3)):
            k = rnd.randrange(len(toks))
            if re.fullmatch(r"[A-Za-z_]\w*", toks[k]):
                toks[k] = rnd.choice(idents)
            elif re.fullmatch(r"\d+", toks[k]):
                toks[k] = rnd.choice(["0", "1", "65536", "999999999999"])
            elif toks[k] in "+-*&|^<>;{}()":
                toks[k] = rnd.choice(["+", "==", "++", "&&", ";", "", "{", ")", "[3:0]", ".isValid()"])
        out.append("".join(toks))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_mutated_programs_fail_cleanly(seed: int) -> None:
    for text in _mutants(seed, 12):
        try:
            compile_source(text, name="mutant.p4")
        except CompileError as e:
            assert e.diagnostics.errors, "CompileError without an error diagnostic"


@pytest.mark.parametrize("decls,locals_,body,message", [
    ("header big_t { bit<99999999> f; }", "", "", "unsupported: bit width 99999999 (at most 4096)"),
    ("const int K = 1 << 100000000;", "", "", "unsupported: shift amount 100000000 (at most 4096)"),
    ("", "register<bit<8>>(32w4000000000) r;", "", "register size must be a compile-time constant in "
                                                     "1..2147483647"),
])
def test_pathological_sizes(decls: str, locals_: str, body: str, message: str) -> None:
    src = TEMPLATE.replace("@DECLS@", decls).replace("@LOCALS@", locals_).replace("@BODY@", body)
    with pytest.raises(CompileError) as info:
        compile_source(src, name="t.p4")
    assert info.value.diagnostics.errors[0].message == message
