"""End-to-end ATP: Mininet star with a PS host, embedded switch process, controller, worker and PS processes (root)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler import compile_file
from topo.experiment import ExperimentConfig, ExperimentNetwork, run_experiment
from topo.target import Target

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.mininet, pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def program_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("atp")
    for name in ("atp", "switchml"):
        result = compile_file(str(ROOT / "p4src" / f"{name}.p4"))
        (out / f"{name}.json").write_text(json.dumps(result.json))
        (out / f"{name}.p4info.txt").write_text(result.p4info_text)
    return out


def config(program_dir: Path, tmp_path: Path, **knobs: object) -> ExperimentConfig:
    knobs.setdefault("timeout_s", 90.0)
    return ExperimentConfig(algo="atp", target=Target.EMBEDDED, program_dir=program_dir, run_dir=tmp_path,
                            **knobs)  # type: ignore[arg-type]


def test_atp_run_with_loss_every_worker_verified(program_dir: Path, tmp_path: Path) -> None:
    result = run_experiment(config(program_dir, tmp_path, workers=3, size=8192, loss=0.01, seed=3))
    assert result.correct, result.table()
    assert result.ps is not None and result.ps["completed"] == 8192 // 32
    assert result.counters["atp_drop_sim_ingress"][0] + result.counters["atp_drop_sim_egress"][0] > 0
    assert 0.5 < result.ps["switch_fraction"] <= 1.0
    assert "in the switch" in result.table()


def test_three_concurrent_jobs_with_loss_share_the_pool(program_dir: Path, tmp_path: Path) -> None:
    """Three jobs hash their windows of 32 into one pool of 48 aggregators: they collide, the PS completes what
    collided, and every worker of every job verifies."""
    cfg = config(program_dir, tmp_path, workers=2, jobs=3, size=8192, loss=0.01, pool_size=48, seed=5)
    with ExperimentNetwork(cfg) as net:
        results = net.run_jobs(cfg)
    assert len(results) == 3
    for r in results:
        assert r.correct, r.table()
        assert r.ps is not None and r.ps["completed"] == 8192 // 32
    assert sum(r.ps["collisions"] for r in results if r.ps) > 0
    assert sum(r.counters["atp_collisions"][0] for r in results) > 0
