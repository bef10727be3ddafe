"""End-to-end ATP: Mininet star with a PS host, embedded switch process, controller, worker and PS processes (root)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from experiments.config import ExperimentConfig
from experiments.session import ExperimentNetwork, run_experiment
from topo.addresses import host_ip
from topo.target import Target

pytestmark = [pytest.mark.mininet, pytest.mark.timeout(240)]


def config(program_dir: Path, tmp_path: Path, **knobs: object) -> ExperimentConfig:
    knobs.setdefault("timeout_s", 90.0)
    return ExperimentConfig(protocol="atp", target=Target.EMBEDDED, program_dir=program_dir, run_dir=tmp_path,
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


def test_each_job_with_a_ps_of_its_own(program_dir: Path, tmp_path: Path) -> None:
    """`ps_per_job`: each job's PS on a host and link of its own, one PS process each; both jobs verify and each PS
    completed its own job's blocks."""
    cfg = config(program_dir, tmp_path, workers=2, jobs=2, size=8192, pool_size=64, seed=6, ps_per_job=True)
    with ExperimentNetwork(cfg) as net:
        assert [j.ps.ip for j in net.jobs if j.ps] == [host_ip(5), host_ip(6)]
        results = net.run_jobs(cfg)
        with net.parameter_server() as stats:  # one PS process per host; their statistics merged when they stop
            pass
    assert set(stats["jobs"]) == {"1", "2"} and "cpu_s" in stats
    for r in results:
        assert r.correct, r.table()
        assert r.ps is not None and r.ps["completed"] == 8192 // 32
        assert r.links["ps"][1] > 2 * 8192 * 4  # both PS links carried the jobs' aggregates, both ways
        assert r.bound is not None and r.bound.host_busy > 0


def test_two_tier_two_levels_with_loss_every_worker_verified(program_dir: Path, tmp_path: Path) -> None:
    """Two racks of two workers, one switch process per switch: each rack switch aggregates its rack, the PS rack
    switch merges the racks, loss 1 % on every host port; every worker verifies."""
    cfg = config(program_dir, tmp_path, topo="twotier", racks=2, levels=2, workers=4, size=8192, loss=0.01, seed=4)
    with ExperimentNetwork(cfg) as net:
        assert sorted(net.switches) == ["s1", "s2", "s3"]
        assert len({sw.process.pid for sw in net.switches.values() if sw.process}) == 3
        result = net.run(cfg)
    assert result.correct, result.table()
    assert result.ps is not None and result.ps["completed"] == 8192 // 32
    per_switch = result.switch_counters
    assert all(per_switch[s]["atp_aggregated"][0] > 0 for s in ("s1", "s2", "s3")), result.table()
    assert "uplinks" in result.links and "two-tier, 2 racks (2+2 workers), 2-level" in result.table()


def test_leaf_spine_two_levels_through_the_spines_with_loss_every_worker_verified(program_dir: Path,
                                                                                 tmp_path: Path) -> None:
    """Two leaves of two workers and the PS's leaf under two spines, one switch process each: the leaves aggregate
    their racks, the PS's leaf merges them, the spines forward ATP as transit, the PS's ACK for a rack reaches its
    leaf across a spine (addressed to the rack); loss 1 % on every host port; every worker verifies. Then the ring
    on the same network."""
    cfg = config(program_dir, tmp_path, topo="leafspine", racks=2, spines=2, workers=4, size=8192, loss=0.01, seed=5)
    result = run_experiment(cfg)
    assert result.correct, result.table()
    assert result.ps is not None and result.ps["completed"] == 8192 // 32
    c = result.switch_counters  # leaves s1 s2, spines s3 s4, the PS's leaf s5; rack r crosses spine (r + 5) % 2
    assert all(c[s]["atp_aggregated"][0] > 0 for s in ("s1", "s2", "s5")), result.table()
    assert all(c[s]["atp_transit"][0] > 0 and c[s]["atp_aggregated"][0] == 0 for s in ("s3", "s4")), result.table()
    assert "leaf–spine, 2 leaves (2+2 workers) and the PS's leaf under 2 spines, 2-level" in result.table()
    ring = run_experiment(replace(cfg, protocol="ring", run_dir=tmp_path / "ring", size=65536))
    assert ring.correct, ring.table()
    assert ring.links["uplinks"][0] > 0


def test_two_tier_traffic_on_the_uplinks_one_level_vs_two(program_dir: Path, tmp_path: Path) -> None:
    """No loss: with two levels each rack's uplink carries one aggregate up and one ACK down per sequence; with one
    level it carries every worker's packet up and one ACK per worker down; the PS's link carries one aggregate and
    one ACK per sequence either way."""
    seqs = 4096 // 32
    links = {}
    # the counts below hold only without retransmissions: on a loaded machine the adaptive timeout (and the
    # early retransmission on reordering) would resend packets that were not lost, so both are off here
    quiet = ("--fixed-timeout", "--timeout-ms", "5000", "--fast-retransmit", "0")
    for levels in (1, 2):
        cfg = config(program_dir, tmp_path / str(levels), topo="twotier", racks=2, levels=levels, workers=4,
                     size=4096, worker_args=quiet)
        result = run_experiment(cfg)
        assert result.correct, result.table()
        links[levels] = result.links
        if levels == 1:
            assert result.switch_counters["s1"]["atp_transit"][0] == 2 * seqs
            assert result.switch_counters["s3"]["atp_aggregated"][0] == 4 * seqs
    slack = 16  # the odd packet the kernel sends on a fresh interface
    assert 2 * 2 * seqs <= links[2]["uplinks"][0] <= 2 * 2 * seqs + slack
    assert 4 * 2 * seqs <= links[1]["uplinks"][0] <= 4 * 2 * seqs + slack
    for levels in (1, 2):
        assert 2 * seqs <= links[levels]["ps"][0] <= 2 * seqs + slack


def test_ecn_marks_shrink_the_window(program_dir: Path, tmp_path: Path) -> None:
    """The embedded switch's egress queue holds the packets of one receive batch: with a threshold of one packet
    queued, the aggregates and ACKs of a busy window are marked, the workers see marked ACKs and halve their window;
    with marking off nothing is marked."""
    marked = {}
    for threshold in (None, 1):
        cfg = config(program_dir, tmp_path / str(threshold), workers=4, size=16384, ecn_threshold=threshold)
        result = run_experiment(cfg)
        assert result.correct, result.table()
        marked[threshold] = result.counters.get("atp_ecn_marked", (0, 0))[0]
        if threshold == 1:
            assert all(w.report["ecn_acks"] > 0 and w.report["cwnd_min"] < cfg.window_width for w in result.workers)
    assert marked[None] == 0 and marked[1] > 0


def test_a_killed_atp_worker_is_named(program_dir: Path, tmp_path: Path) -> None:
    cfg = config(program_dir, tmp_path, workers=3, size=1 << 20, dtype="int32", kill_rank_after=(1, 0.5),
                 timeout_s=60.0)
    result = run_experiment(cfg)
    assert not result.correct
    assert all(result.workers[r].exit_code == 2 for r in (0, 2)), result.table()
    assert result.missing_ranks == [1], result.table()


def test_atp_completes_across_a_switch_restart(program_dir: Path, tmp_path: Path) -> None:
    """ATP keeps no state the PS cannot rebuild: the switch restarted and re-programmed mid-run loses its partial
    aggregates, the workers' resends go to the PS, and every worker verifies."""
    cfg = config(program_dir, tmp_path, workers=3, size=1 << 18, dtype="int32", restart_switch_after_s=0.3)
    result = run_experiment(cfg)
    assert result.correct, result.table()
    assert result.ps is not None and result.ps["contributions_at_ps"] > 0
