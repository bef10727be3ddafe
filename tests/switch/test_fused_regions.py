"""Straight-line regions of a pipeline (p4c's synthesized keyless tables with a const default action, the
conditionals between them) optimised as one body (switch/sim/optimize.py fuse_regions, common subexpressions): the
same bytes and registers as the traced code, which keeps every table; a keyless table whose default the control
plane may change is not frozen into the code."""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import compiler
from perf import family
from perf.workloads import FAMILY, agg_frame, placeholder_hosts
from switch.errors import MatchError, MatchErrorCode
from switch.sim.optimize import optimize_body
from switch.v1model import V1Switch

AGG = ["agg_ternary", "agg_ifelse", "agg_array", "agg_stack", "agg_hash"]


def _pair(program: dict) -> tuple[V1Switch, V1Switch]:
    plain, traced = V1Switch(), V1Switch(trace=lambda pid, msg: None)
    plain.load(program)
    traced.load(program)
    return plain, traced


def _agree(program: dict, n: int = 60) -> None:
    plain, traced = _pair(program)
    h1, h2 = placeholder_hosts()
    rng = random.Random(11)
    for k in range(n):
        frame = agg_frame(h1, h2, rng.choice([1, 2, 77]), [rng.randrange(-2**31, 2**31) for _ in range(family.N)],
                          rng.random() < 0.3)
        if k % 7 == 3:
            frame = frame[:60]   # a truncated header: parser error path
        assert plain.process(1, frame) == traced.process(1, frame), k
    for name, reg in plain.registers.items():
        assert [reg.read(i) for i in range(min(reg.size, 300))] == \
            [traced.registers[name].read(i) for i in range(min(reg.size, 300))], name


@pytest.mark.parametrize("key", AGG)
def test_fused_family_programs_agree_with_the_traced_tables(key: str) -> None:
    _agree(compiler.compile_source(family.SOURCES[key](), f"{key}.p4").json)


@pytest.mark.skipif(shutil.which("p4c-bm2-ss") is None, reason="p4c-bm2-ss not installed")
@pytest.mark.parametrize("key", AGG)
def test_fused_p4c_json_agrees_with_the_traced_tables(tmp_path: Path, key: str) -> None:
    import json

    src = FAMILY[key].source_in(tmp_path)
    subprocess.run(["p4c-bm2-ss", "-o", str(tmp_path / "p.json"), str(src)], check=True, capture_output=True)
    _agree(json.loads((tmp_path / "p.json").read_text()))


def test_synthesized_tables_leave_no_lookup_in_the_fused_pipeline() -> None:
    """agg_ifelse: 194 keyless tables with const defaults; the untraced ingress refers to none of them, and the
    traced run still applies them (BMv2's trace)."""
    program = compiler.compile_source(family.SOURCES["agg_ifelse"](), "agg_ifelse.p4").json
    plain = V1Switch()
    plain.load(program)
    src = plain.generated_source
    pipe = src[src.index("def pipe_0(F):"):]
    pipe = pipe[:pipe.index("\ndef ", 1)] if "\ndef " in pipe[1:] else pipe
    assert not re.search(r"\bT\d+\b", pipe) and "_f" in pipe
    seen: list[str] = []
    traced = V1Switch(trace=lambda pid, msg: seen.append(msg))
    traced.load(program)
    h1, h2 = placeholder_hosts()
    traced.process(1, agg_frame(h1, h2, 3, list(range(family.N))))
    assert sum(1 for m in seen if m.startswith("Applying table 'tbl_")) >= family.N


DEFAULTS = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> f; bit<8> g; }
struct headers { h_t h; }
struct metadata { }
parser P(packet_in pk, out headers hdr, inout metadata m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata m) { apply { } }
control I(inout headers hdr, inout metadata m, inout standard_metadata_t sm) {
    action set_f(bit<8> v) { hdr.h.f = v; }
    action set_ff() { hdr.h.f = 0xbb; }
    action set_g(bit<8> v) { hdr.h.g = v; }
    table t { actions = { set_f; set_ff; } default_action = set_f(1); }
    table c { actions = { set_g; } const default_action = set_g(2); }
    apply {
        t.apply();
        c.apply();
        hdr.h.g = hdr.h.g + hdr.h.f;
        sm.egress_spec = 2;
    }
}
control E(inout headers hdr, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata m) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


@pytest.mark.parametrize("traced", [False, True], ids=["fused", "traced"])
def test_a_modified_default_action_of_a_keyless_table_takes_effect(traced: bool) -> None:
    sw = V1Switch(trace=(lambda pid, msg: None) if traced else None)
    sw.load(compiler.compile_source(DEFAULTS, "defaults.p4").json)
    assert sw.process(1, b"\x00\x00") == [(2, b"\x01\x03")]
    sw.tables["I.t"].set_default("I.set_f", [7])
    assert sw.process(1, b"\x00\x00") == [(2, b"\x07\x09")]
    sw.tables["I.t"].set_default("I.set_ff")
    assert sw.process(1, b"\x00\x00") == [(2, b"\xbb\xbd")]
    sw.tables["I.t"].reset_default()
    assert sw.process(1, b"\x00\x00") == [(2, b"\x01\x03")]
    # a const default (what p4c gives its synthesized tables) is refused as BMv2 refuses it: it stays in the code
    with pytest.raises(MatchError) as err:
        sw.tables["I.c"].set_default("I.set_g", [5])
    assert err.value.code is MatchErrorCode.DEFAULT_ACTION_IS_CONST
    assert sw.process(1, b"\x00\x00") == [(2, b"\x01\x03")]


def _run(lines: list[str], F: list[int]) -> list[int]:
    F = list(F)
    exec("def _b(F, D):\n" + "\n".join("    " + s for s in lines) + "\n", ns := {})  # noqa: S102
    ns["_b"](F, ())
    return F


def test_common_subexpressions_are_computed_once() -> None:
    body = [f"F[{k}] = (F[{k}] & (0 - ((F[1] & 1 ^ 1) & 4294967295) & 4294967295)) + F[{k + 10}] & 4294967295"
            for k in range(2, 8)]
    out = optimize_body(body)
    text = "\n".join(out)
    assert text.count("^ 1") == 1 and "_c0" in text
    for flags in (0, 1):
        F = [0, flags] + list(range(100, 120))
        assert _run(out, F) == _run(body, F)


def test_no_common_subexpression_across_a_change_or_with_an_operation_that_can_raise() -> None:
    changed = ["F[2] = F[1] * 3 + 1 & 255", "F[1] = F[1] + 1 & 255", "F[3] = F[1] * 3 + 1 & 255",
               "F[4] = F[1] * 3 + 1 & 255"]
    out = optimize_body(changed)
    assert all(_run(out, [0, v, 0, 0, 0]) == _run(changed, [0, v, 0, 0, 0]) for v in (0, 5, 255))
    assert "_c" not in "\n".join(out)   # its name changes between the first use and the last: not shared
    div = ["F[2] = F[1] // F[3] + 1 & 255", "F[4] = F[1] // F[3] + 1 & 255"]
    assert "_c" not in "\n".join(optimize_body(div))
