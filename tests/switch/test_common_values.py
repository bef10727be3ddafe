"""switch.sim.common_values: the temporaries p4c writes drop out of the untraced code, exactly.

Fixtures tests/fixtures/p4c/*.json are real p4c-bm2-ss 1.2.4.8 output (switchml.p4 with INA_NUM_ELEMS=16,
INA_POOL_SIZE=4; tests/p4/agg64.p4): the same frames give the same outputs and state through the optimised code
(which shares common values) and the traced code (which runs the primitives as given), and the optimiser's
register windows apply to p4c's JSON as to ours."""

from __future__ import annotations

import json
import random

from switch.sim.common_values import simplify_actions
from switch.v1model import V1Switch
from tests.paths import TESTS
from tests.switch import test_codegen_equivalence as eq

P4C = TESTS / "fixtures" / "p4c"


def field(h: str, f: str) -> dict:
    return {"type": "field", "value": [h, f]}


def expr(op: str, left: dict, right: dict) -> dict:
    return {"type": "expression", "value": {"type": "expression", "value": {"op": op, "left": left, "right": right}}}


def hexstr(v: int) -> dict:
    return {"type": "hexstr", "value": hex(v)}


def prim(op: str, *params: dict) -> dict:
    return {"op": op, "parameters": list(params)}


def program(*prims: dict, elsewhere: tuple[dict, ...] = ()) -> dict:
    """One action with `prims`; `elsewhere`: fields a condition of the program reads."""
    return {"actions": [{"name": "a", "id": 0, "runtime_data": [], "primitives": list(prims)}],
            "pipelines": [{"name": "ingress", "conditionals": [{"expression": e} for e in elsewhere]}]}


def ops(j: dict) -> list[tuple[str, str]]:
    return [(p["op"], json.dumps(p["parameters"])) for p in j["actions"][0]["primitives"]]


REG = {"type": "register_array", "value": "r"}
IDX = expr("&", field("h", "x"), hexstr(0xFF))


def test_a_recomputed_index_is_read_from_where_it_is_already_held() -> None:
    j = program(prim("assign", field("scalars", "slot"), IDX),
                prim("assign", field("scalars", "tmp"), IDX),
                prim("register_read", field("scalars", "v"), REG, field("scalars", "tmp")),
                prim("assign", field("scalars", "tmp_0"), IDX),
                prim("register_write", REG, field("scalars", "tmp_0"), field("scalars", "v")),
                elsewhere=(field("scalars", "slot"),))  # slot is read by a condition too: it stays
    out = simplify_actions(j)
    assert [o for o, _ in ops(out)] == ["assign", "register_read", "register_write"]
    assert all('["scalars", "slot"]' in p for o, p in ops(out) if o.startswith("register"))


def test_a_temporary_read_twice_is_substituted_by_its_small_expression() -> None:
    base1 = expr("&", expr("+", field("scalars", "base"), hexstr(1)), hexstr(0xFFFFFFFF))
    j = program(prim("assign", field("scalars", "tmp_64"), base1),
                prim("register_read", field("scalars", "v"), REG, field("scalars", "tmp_64")),
                prim("register_write", REG, field("scalars", "tmp_64"), field("scalars", "v")))
    out = ops(simplify_actions(j))
    assert [o for o, _ in out] == ["register_read", "register_write"]
    assert all(json.dumps(base1) in p for _, p in out)


def test_a_temporary_computed_from_a_substituted_one_is_kept() -> None:
    """p4c's issue983-bmv2.p4: `tmp = ~t; x1 = (bit<32>)tmp; x2 = x1[31:16] + x1[15:0]; m.tmp = tmp; m.x1 = x1`.
    Substituting tmp into its reads and then x1's original expression (which reads tmp) into x1's reads left those
    reading a tmp nobody wrote any more: the untraced code sent another packet than the traced one."""
    t = field("ethernet", "etherType")
    tmp_v = expr("&", {"type": "expression", "value": {"op": "~", "left": None, "right": t}}, hexstr(0xFFFF))
    j = program(prim("assign", field("scalars", "tmp_0"), tmp_v),
                prim("assign", field("scalars", "x1_0"), expr("&", field("scalars", "tmp_0"), hexstr(0xFFFFFFFF))),
                prim("assign", field("scalars", "x2_0"), expr("+", field("scalars", "x1_0"), field("scalars", "x1_0"))),
                prim("assign", field("scalars", "m_tmp"), field("scalars", "tmp_0")),
                prim("assign", field("scalars", "m_x1"), field("scalars", "x1_0")),
                prim("assign", field("scalars", "m_x2"), field("scalars", "x2_0")),
                elsewhere=(field("scalars", "m_tmp"), field("scalars", "m_x1"), field("scalars", "m_x2")))
    out = simplify_actions(j)["actions"][0]["primitives"]
    written = [p["parameters"][0]["value"][1] for p in out]
    read = {f for p in out for f in json.dumps(p["parameters"][1:]).split('"') if f in ("tmp_0", "x1_0", "x2_0")}
    assert read <= set(written), (written, read)  # every temporary still read is still written


def index_of(j: dict) -> str:
    """The index parameter of the action's register_read, as JSON."""
    return next(json.dumps(p["parameters"][2]) for p in j["actions"][0]["primitives"] if p["op"] == "register_read")


def test_nothing_is_shared_where_the_value_could_differ() -> None:
    slot = json.dumps(field("scalars", "slot"))
    keep_slot = (field("scalars", "slot"),)
    # h.x changes between: tmp's value is not slot's (tmp may still be substituted by its own expression)
    j = program(prim("assign", field("scalars", "slot"), IDX), prim("assign", field("h", "x"), hexstr(3)),
                prim("assign", field("scalars", "tmp"), IDX),
                prim("register_read", field("scalars", "v"), REG, field("scalars", "tmp")), elsewhere=keep_slot)
    assert index_of(simplify_actions(j)) != slot
    # slot changes after tmp's assignment
    j = program(prim("assign", field("scalars", "slot"), IDX), prim("assign", field("scalars", "tmp"), IDX),
                prim("assign", field("scalars", "slot"), hexstr(0)),
                prim("register_read", field("scalars", "v"), REG, field("scalars", "tmp")), elsewhere=keep_slot)
    assert index_of(simplify_actions(j)) != slot
    # a header field is deparsed: its assignment stays
    j = program(prim("assign", field("scalars", "m"), field("scalars", "t0")),
                prim("assign", field("h", "e"), field("scalars", "t0")), elsewhere=(field("scalars", "m"),))
    assert simplify_actions(j) is j
    # a temporary the program reads elsewhere, or assigned twice, stays
    j = program(prim("assign", field("scalars", "slot"), IDX), prim("assign", field("scalars", "tmp"), IDX),
                elsewhere=(field("scalars", "tmp"), field("scalars", "slot")))
    assert simplify_actions(j) is j
    j = program(prim("assign", field("scalars", "slot"), IDX), prim("assign", field("scalars", "tmp"), IDX),
                prim("register_read", field("scalars", "v"), REG, field("scalars", "tmp")),
                prim("assign", field("scalars", "tmp"), hexstr(1)),
                prim("assign", field("scalars", "w"), field("scalars", "tmp")), elsewhere=keep_slot)
    assert simplify_actions(j) is j
    # a primitive whose writes are not known (it could write b) between the temporary and its read
    j = program(prim("assign", field("scalars", "tmp"), expr("+", field("scalars", "b"), hexstr(1))),
                prim("mark_to_drop", {"type": "header", "value": "standard_metadata"}),
                prim("register_read", field("scalars", "v"), REG, field("scalars", "tmp")))
    assert simplify_actions(j) is j
    # a large expression read twice is not recomputed
    big = expr("^", expr("+", IDX, expr("*", field("h", "y"), hexstr(3))), field("h", "z"))
    j = program(prim("assign", field("scalars", "tmp"), big),
                prim("register_read", field("scalars", "v"), REG, field("scalars", "tmp")),
                prim("register_write", REG, field("scalars", "tmp"), field("scalars", "v")))
    assert simplify_actions(j) is j


def test_a_destination_at_a_computed_index_counts_as_a_read() -> None:
    """p4c's `s[tmp_0].f = ...`: the destination reads tmp_0, so tmp_0 stays (copy_in_out.p4 found this)."""
    dest = {"type": "expression", "value": {"op": "access_field", "left": {"type": "expression", "value": {
        "op": "dereference_header_stack", "left": {"type": "header_stack", "value": "s"},
        "right": field("scalars", "tmp_0")}}, "right": 0}}
    j = program(prim("assign", field("scalars", "tmp_0"), expr("&", field("scalars", "r"), hexstr(3))),
                prim("assign", dest, hexstr(7)))
    out = ops(simplify_actions(j))
    assert '["scalars", "tmp_0"]' not in out[-1][1] and len(out) == 1  # substituted into the index, not lost


def _p4c(name: str) -> dict:
    return json.loads((P4C / f"{name}.json").read_text())


def test_p4c_switchml_optimised_and_traced_agree() -> None:
    program = _p4c("switchml_n16_pool4")
    assert simplify_actions(program) is not program  # the pass has work to do on p4c's output
    plain, traced = eq._switch(program, False), eq._switch(program, True)
    rng = random.Random(7)
    outputs = 0
    for n in range(600):
        rank = rng.randrange(eq.WORKERS)
        f = eq._frame(rng, rank, rng.randrange(eq.POOL + 1), rng.randrange(2))
        if rng.random() < 0.05:
            f = f[:rng.randrange(len(f))]
        a, b = plain.process(rank + 1, f), traced.process(rank + 1, f)
        assert a == b, f"packet {n}"
        outputs += len(a)
    assert outputs > 100
    for name, reg in plain.registers.items():
        assert reg.cells() == traced.registers[name].cells(), name


def test_register_windows_apply_to_p4c_json() -> None:
    """agg64 from p4c: its per-access index temporaries gone, the 64 register updates become one row operation
    (rewrite 4c), as from our compiler's JSON."""
    sw = V1Switch()
    sw.load(_p4c("agg64"))
    body = sw.generated_source.split("def A0(F, D):")[1].split("\ndef ")[0]
    assert "RC0[i]" in body and body.count("R1[") == 0
