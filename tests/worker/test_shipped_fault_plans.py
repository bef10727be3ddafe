"""The fault plans shipped in experiments/faults/ compile for the SwitchML job they are written for."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler import compile_file
from switch.faults import FaultPlan
from tests.paths import ROOT
from topo.inprocess import make_jobs
from worker.faults import compile_plan, load_plan
from worker.job import PoolRange

PLANS = sorted((ROOT / "experiments" / "faults").glob("*.toml"))


@pytest.mark.parametrize("path", PLANS, ids=[p.stem for p in PLANS])
def test_shipped_plan_compiles(path: Path) -> None:
    prog = compile_file(str(ROOT / "p4src" / "switchml.p4")).json
    raw = load_plan(path)
    plan = FaultPlan.from_json(compile_plan(raw, make_jobs(1, 4, 64, PoolRange(0, 64))[0], prog))
    assert plan.rules or plan.events or raw.get("restart", {}).get("after_s")


def test_there_are_shipped_plans() -> None:
    assert len(PLANS) >= 3
