"""worker.faults: protocol-level fault plans (kind, job, rank, slot) compiled to the switch's byte-level plans, and
what they do to runs through the real programs in process."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from compiler import compile_file
from switch.faults import ByteMatch, FaultPlan
from tests.paths import ROOT
from topo.inprocess import InProcessNetwork, frame, make_jobs
from worker.driver import WindowOptions
from worker.faults import PlanError, compile_plan, field_match, main
from worker.job import PoolRange
from worker.switchml.header import FLAG_RETRANSMIT, INA_UDP_PORT, SET_BIT, Codec, InaHeader
from worker.verify import rank_input, verify_fixed_point
from worker.switchml.verify import verify

OPTIONS = WindowOptions(window=4, timeout=0.02, min_timeout=0.005, max_timeout=0.2, max_retries=50)


@pytest.fixture(scope="module")
def programs() -> dict[str, dict]:
    return {name: compile_file(str(ROOT / "p4src" / f"{name}.p4")) for name in ("switchml", "atp")}


def matches(rule_match: list[dict], data: bytes) -> bool:
    return all(ByteMatch(m["offset"], bytes.fromhex(m["value"]), bytes.fromhex(m["mask"])).matches(data)
               for m in rule_match)


def test_field_matches_select_exactly_the_named_header_values(programs: dict[str, dict]) -> None:
    codec = Codec.from_program_json(programs["switchml"].json)
    job = make_jobs(1, 2, codec.num_elems, PoolRange(0, 8))[0]
    w = job.workers[0]

    def pkt(**kw: int) -> bytes:
        return frame(w.mac, job.switch.mac, w.ip, job.switch.ip, w.udp_port, INA_UDP_PORT,
                     codec.encode(InaHeader(**kw), np.zeros(codec.num_elems, dtype=np.int32)))

    slot3 = [field_match(codec.ina, "pool_index", 3, 0x7FFF), field_match(codec.ina, "job_id", 1)]
    assert matches(slot3, pkt(job_id=1, pool_index=3)) and matches(slot3, pkt(job_id=1, pool_index=3 | SET_BIT))
    assert not matches(slot3, pkt(job_id=1, pool_index=4)) and not matches(slot3, pkt(job_id=2, pool_index=3))
    retx = [field_match(codec.ina, "flags", FLAG_RETRANSMIT, FLAG_RETRANSMIT)]
    assert matches(retx, pkt(flags=FLAG_RETRANSMIT)) and not matches(retx, pkt(flags=0))


def test_dropping_the_first_retransmission_of_one_rank_forces_a_second(programs: dict[str, dict]) -> None:
    prog, p4info = programs["switchml"].json, programs["switchml"].p4info
    codec = Codec.from_program_json(prog)
    job = make_jobs(1, 3, codec.num_elems, PoolRange(0, 8))[0]
    plan = compile_plan({"seed": 1, "fault": [
        {"action": "drop", "kind": "data", "rank": 1, "slot": 2, "nth": [1]},
        {"action": "drop", "kind": "retransmission", "rank": 1, "nth": [1]}]}, job, prog)
    faults = FaultPlan.from_json(plan)
    net = InProcessNetwork(prog, [job], p4info=p4info, faults=faults, options=OPTIONS)
    inputs = [rank_input(codec.num_elems * 10, 4, r, "int32") for r in range(3)]
    run = net.allreduce({1: inputs}, "int32")[1]
    assert [r.fired for r in faults.rules] == [1, 1]
    assert run.windows[1].stats.retransmissions >= 2  # the lost packet, then its lost first retransmission
    assert all(verify(x, inputs, codec.num_elems, "int32").ok for x in run.results)
    assert run.counters["ina_aggregated"] == 3 * 10


def test_resetting_a_jobs_switch_state_mid_run_never_gives_a_wrong_result(programs: dict[str, dict]) -> None:
    prog, p4info = programs["switchml"].json, programs["switchml"].p4info
    codec = Codec.from_program_json(prog)
    job = make_jobs(1, 3, codec.num_elems, PoolRange(4, 8))[0]
    plan = compile_plan({"reset": [{"at_frame": 20, "job": 1}]}, job, prog)
    names = {e["reset_register"] for e in plan["events"]}
    assert names == {"SwitchMLIngress.ina_bitmap", "SwitchMLIngress.ina_countdown", "SwitchMLIngress.ina_exponent",
                     "SwitchMLIngress.ina_values"}
    assert {(e["first"], e["count"]) for e in plan["events"] if e["reset_register"].endswith("bitmap")} == {(8, 16)}
    faults = FaultPlan.from_json(plan)
    net = InProcessNetwork(prog, [job], p4info=p4info, faults=faults, options=OPTIONS)
    inputs = [rank_input(codec.num_elems * 12, 9, r, "int32") for r in range(3)]
    try:
        run = net.allreduce({1: inputs}, "int32")[1]
    except Exception as e:  # a clear failure is allowed; a wrong sum is not
        assert "slot" in str(e) or "retransmission" in str(e), e
        return
    assert faults.stats["register_resets"] == 4
    assert all(verify(x, inputs, codec.num_elems, "int32").ok for x in run.results)


def test_atp_plan_drops_the_first_ack_to_one_worker(programs: dict[str, dict]) -> None:
    prog, p4info = programs["atp"].json, programs["atp"].p4info
    (job,) = make_jobs(1, 3, 32, PoolRange(0, 64), ps=True)
    plan = FaultPlan.from_json(compile_plan({"fault": [{"action": "drop", "kind": "ack", "direction": "out",
                                                        "rank": 0, "nth": [1]}]}, job, prog))
    net = InProcessNetwork(prog, [job], p4info=p4info, faults=plan, options=OPTIONS)
    inputs = [rank_input(32 * 6, 2, r, "float32") for r in range(3)]
    runs = net.allreduce({1: inputs}, "float32")
    assert plan.rules[0].fired == 1 and plan.rules[0].seen >= 6
    assert runs[1].windows[0].stats.retransmissions >= 1
    assert all(verify_fixed_point(x, inputs, "float32", 20).ok for x in runs[1].results)


def test_bad_plans_name_what_is_wrong(programs: dict[str, dict]) -> None:
    job = make_jobs(1, 2, 64, PoolRange(0, 8))[0]
    with pytest.raises(PlanError, match="kind data, retransmission, result|of kind any, data"):
        compile_plan({"fault": [{"action": "drop", "kind": "ack"}]}, job, programs["switchml"].json)
    with pytest.raises(PlanError, match="unknown keys colour"):
        compile_plan({"fault": [{"action": "drop", "colour": 1}]}, job, programs["switchml"].json)
    with pytest.raises(PlanError, match=r"reset\[0\]\.job = 2: not the plan's job 1"):
        compile_plan({"reset": [{"at_frame": 5, "job": 2}]}, job, programs["switchml"].json)


@pytest.mark.parametrize(("fault", "message"), [
    ({"action": "dorp"}, r"plan\.toml: fault\[0\]\.action = 'dorp': choose one of drop, duplicate, delay, corrupt"),
    ({"action": "drop", "direction": "sideways"}, r"fault\[0\]\.direction = 'sideways'"),
    ({"action": "drop", "probability": 1.5}, r"fault\[0\]: probability 1\.5 is not in \[0, 1\]"),
    ({"action": "drop", "nth": [0]}, r"fault\[0\]: nth counts from 1"),
    ({"action": "drop", "rank": 5}, r"fault\[0\]\.rank = 5: expected an integer in \[0, 1\]"),
    ({"action": "drop", "slot": -1}, r"fault\[0\]\.slot = -1"),
    ({"action": "delay", "delay": 0}, r"fault\[0\]: delay must be >= 1 frame"),
])
def test_values_the_switch_would_refuse_are_refused_when_compiled(programs: dict[str, dict], fault: dict,
                                                                  message: str) -> None:
    """Before the fix `action = "dorp"` compiled and the switch refused it once Mininet was up, naming rules[0]."""
    job = make_jobs(1, 2, 64, PoolRange(0, 8))[0]
    with pytest.raises(PlanError, match=message):
        compile_plan({"fault": [fault]}, job, programs["switchml"].json, source="plan.toml")


def test_cli_compiles_a_toml_plan(programs: dict[str, dict], tmp_path: Path) -> None:
    job = make_jobs(1, 2, 64, PoolRange(0, 8))[0]
    (tmp_path / "job.json").write_text(json.dumps(job.to_dict()))
    (tmp_path / "prog.json").write_text(json.dumps(programs["switchml"].json))
    (tmp_path / "plan.toml").write_text('seed = 5\n[[fault]]\naction = "duplicate"\nkind = "result"\nrank = 1\n'
                                        'probability = 0.5\n')
    assert main([str(tmp_path / "plan.toml"), "--job", str(tmp_path / "job.json"), "--program-json",
                 str(tmp_path / "prog.json"), "-o", str(tmp_path / "plan.json")]) == 0
    plan = FaultPlan.from_json(tmp_path / "plan.json")
    assert plan.seed == 5 and plan.rules[0].direction == "out" and plan.rules[0].ports == frozenset({2})
