"""End-to-end: Mininet star, embedded switch process, controller, worker processes (needs root)."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from pathlib import Path

import pytest

from experiments.config import ExperimentConfig
from experiments.result import fault_report
from experiments.session import ExperimentNetwork, run_experiment
from tests.paths import ROOT
from topo.target import Target

pytestmark = [pytest.mark.mininet, pytest.mark.timeout(240)]


def config(program: tuple[Path, Path], tmp_path: Path, **knobs: object) -> ExperimentConfig:
    knobs.setdefault("timeout_s", 90.0)
    return ExperimentConfig(target=Target.EMBEDDED, program_json=program[0], p4info=program[1], run_dir=tmp_path,
                            **knobs)  # type: ignore[arg-type]


def test_four_workers_with_loss_reduce_within_bound(program: tuple[Path, Path], tmp_path: Path) -> None:
    cfg = config(program, tmp_path, workers=4, size=16384, loss=0.01, seed=7)
    result = run_experiment(cfg)
    assert result.correct, result.table()
    for w in result.workers:
        assert w.report["verified"] and w.report["max_error_over_bound"] <= 1.0
    # 1 % loss per port and direction over ~1000 packets: retransmissions happened and were answered or re-added
    assert result.retransmissions > 0, result.table()
    sim_drops = result.counters["ina_drop_sim_ingress"][0] + result.counters["ina_drop_sim_egress"][0]
    assert sim_drops > 0
    # blocks + SwitchML's extra exponent batch (one window: the job's pool by default)
    assert result.counters["ina_multicast"][0] == 16384 // 64 + cfg.window_width


def test_int32_reduction_is_exact(program: tuple[Path, Path], tmp_path: Path) -> None:
    result = run_experiment(config(program, tmp_path, workers=3, size=5000, dtype="int32"))
    assert result.correct, result.table()
    assert all(w.report["max_error"] == 0 for w in result.workers)


def test_killing_the_switch_stops_every_worker_with_a_clear_error(program: tuple[Path, Path],
                                                                  tmp_path: Path) -> None:
    started = time.monotonic()
    result = run_experiment(config(program, tmp_path, workers=3, size=2_000_000, dtype="int32",
                                   kill_switch_after_s=1.0, timeout_s=60.0))
    assert time.monotonic() - started < 45
    for w in result.workers:
        assert w.exit_code == 2, (w.exit_code, w.stderr)
        assert "slot" in w.stderr and "no result" in w.stderr.lower(), w.stderr


@pytest.mark.parametrize("protocol", ["ring", "ps"])
def test_host_baselines_through_the_switch_with_loss_and_a_link_rate(program: tuple[Path, Path], tmp_path: Path,
                                                                     protocol: str) -> None:
    # the baselines' TCP traffic crosses the same P4 switch as plain L2, through the same drop simulator
    result = run_experiment(config(program, tmp_path, protocol=protocol, workers=3, size=30000, dtype="int32", loss=0.01,
                                   bw=50.0))
    assert result.correct, result.table()
    assert all(w.report["protocol"] == protocol and w.report["max_error"] == 0 for w in result.workers)
    assert result.retransmissions > 0, result.table()  # TCP recovered what the switch's drop simulator dropped
    assert "% of the 50 Mbit/s link rate" in result.table()


def test_scripted_fault_plan_on_the_switch_process(program: tuple[Path, Path], tmp_path: Path) -> None:
    """experiments/faults/lose-a-retransmission.toml through `--fault-plan`: the embedded switch drops rank 1's first
    packet for slot 2 and its first retransmission; rank 1 retransmits twice, everyone verifies, and the switch
    reports the two drops when it stops."""
    plan = ROOT / "experiments" / "faults" / "lose-a-retransmission.toml"
    cfg = config(program, tmp_path, workers=3, size=4096, dtype="int32", fault_plan=plan)
    result = run_experiment(cfg)
    assert result.correct, result.table()
    assert result.workers[1].report["retransmissions"] >= 2
    assert "fault plan" in result.table()
    log = result.switch_log.read_text()
    assert "fault plan (seed 1): 2 rules, 0 events" in log
    assert "faults injected: {'drop': 2}" in log
    assert fault_report(cfg, result.switch_log).splitlines() == [  # what make run prints after the table
        f"fault plan {plan} asks: fault[0]: drop data; fault[1]: drop retransmission",
        "faults the switch injected: {'drop': 2}"]
    compiled = json.loads((tmp_path / "faults.json").read_text())
    assert [r["ports"] for r in compiled["rules"]] == [[2], [2]]


def test_a_killed_worker_is_named_and_the_others_fail_in_bounded_time(program: tuple[Path, Path],
                                                                       tmp_path: Path) -> None:
    """Rank 2 of 4 is killed mid-run: the survivors give up after their bounded retransmissions (exit 2, naming
    the slot they waited for), and the run names rank 2 as the one absent from every partial aggregate."""
    cfg = config(program, tmp_path, workers=4, size=1 << 20, dtype="int32", kill_rank_after=(2, 0.5),
                 timeout_s=60.0)
    started = time.monotonic()
    result = run_experiment(cfg)
    assert not result.correct
    assert result.workers[2].exit_code not in (0, None)
    for r in (0, 1, 3):
        w = result.workers[r]
        assert w.exit_code == 2, (r, w.exit_code, w.stderr)
        assert "no result for packet_id" in w.report["error"] and "another worker" in w.report["error"]
    assert result.missing_ranks == [2], result.table()
    assert "missing: rank 2" in result.table()
    assert time.monotonic() - started < 45


def test_switch_restarted_mid_run_never_gives_a_wrong_result(program: tuple[Path, Path], tmp_path: Path) -> None:
    """The switch process is killed 0.4 s into the all-reduce, started again and re-programmed (new epoch). Every
    worker either verifies or stops with a clear error (the epoch changed, or no result in bounded time); none
    accepts a wrong sum."""
    cfg = config(program, tmp_path, workers=3, size=1 << 20, dtype="int32", restart_switch_after_s=0.4,
                 timeout_s=90.0)
    result = run_experiment(cfg)
    for w in result.workers:
        if not w.ok:
            assert w.exit_code in (2, 4), (w.rank, w.exit_code, w.stderr)  # unreachable, protocol
            error = w.report.get("error", "")
            assert "epoch changed" in error or "no result for packet_id" in error, error
        assert w.report.get("verified", True) is not False or w.exit_code != 0, result.table()
    assert any("epoch changed" in w.report.get("error", "") for w in result.workers) or result.correct


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="the split CPU layout needs 2 CPUs")
def test_split_cpu_layout_runs_the_switch_and_the_hosts_on_their_own_cpus(program: tuple[Path, Path],
                                                                         tmp_path: Path) -> None:
    cfg = config(program, tmp_path, workers=2, size=4096)
    with ExperimentNetwork(cfg) as net:
        layout = net.cpu_layout
        assert layout.split and not set(layout.switches) & set(layout.hosts)
        assert net.switch.process is not None
        assert os.sched_getaffinity(net.switch.process.pid) == {layout.switches[0]}
        result = net.run(cfg)
        assert result.correct, result.table()
        assert f"CPUs: {layout.describe()}" in result.table()
        probe = "import json, os; print(json.dumps({'cpus': sorted(os.sched_getaffinity(0))}))"
        outcomes = net.launch(lambda rank: [sys.executable, "-c", probe], 30.0)
        assert [o.report.get("cpus") for o in outcomes] == [list(layout.hosts)] * 2


def test_a_traced_run_puts_every_process_in_one_timeline(program: tuple[Path, Path], tmp_path: Path) -> None:
    """`make run TRACE=1` with a fault plan: one Chrome trace with the switch and every worker as processes; the
    switch shows the plan's drops and the multicasts of completed slots, rank 1 the retransmissions on slot 2."""
    plan = ROOT / "experiments" / "faults" / "lose-a-retransmission.toml"
    trace = tmp_path / "out" / "trace.json"
    result = run_experiment(config(program, tmp_path, workers=3, size=2048, dtype="int32", fault_plan=plan,
                                   trace=trace))
    assert result.correct, result.table()
    doc = json.loads(trace.read_text())
    events = doc["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert sorted(procs.values()) == ["switch", "worker 0 (switchml)", "worker 1 (switchml)", "worker 2 (switchml)"]
    pid = {name: p for p, name in procs.items()}
    switch = [e for e in events if e["pid"] == pid["switch"]]
    assert [e["name"] for e in switch if e["ph"] == "i"].count("fault: drop") == 2
    assert any(e["ph"] == "X" and e["name"] == "to ports 1,2,3" for e in switch)  # results multicast to the job
    tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
    rank1 = [e for e in events if e["pid"] == pid["worker 1 (switchml)"] and e["ph"] == "i"
             and tracks[(e["pid"], e["tid"])] == "slot 2"]
    assert [e["name"] for e in rank1].count("retransmit") >= 2
    assert min(e["ts"] for e in events if e["ph"] != "M") == 0


def test_calibrated_links_make_a_network_bound_run(program: tuple[Path, Path], tmp_path: Path) -> None:
    """BW=auto: the probe's rate, then a run at that rate whose own measurements show the links binding it."""
    from experiments.calibrate import calibrate

    cfg = config(program, tmp_path, workers=3, size=262144)
    cal = calibrate(cfg)
    assert cal.switch_cpu_s > 0 and cal.hosts_cpu_s > 0 and cal.uplink_bits > 3 * 262144 * 32
    assert 0.1 <= cal.bw_mbps <= 1000
    result = run_experiment(dataclasses.replace(cfg, bw=cal.bw_mbps, size=65536))
    assert result.correct, result.table()
    assert result.bound is not None and result.bound.verdict == "network", (cal.describe(), result.bound.describe())
