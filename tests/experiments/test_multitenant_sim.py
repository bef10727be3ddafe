"""`make multitenant` on the packet simulator (experiments.multitenant_sim): jobs sharing one switch's memory in
virtual time, every job verified, static partitions in waves, ATP's shared pool with its PS fallback."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.multitenant import main
from experiments.multitenant_sim import run_multitenant_sim
from tests.paths import ROOT


def run(**kw: object) -> list:
    args: dict[str, object] = dict(jobs=2, workers=3, size=4096, cells=1536, window=None, loss=0.0, reps=1,
                                   bw=100000.0, program_dir=ROOT / "out")
    args.update(kw)
    return run_multitenant_sim(**args)  # type: ignore[arg-type]


def test_jobs_share_the_switch_and_verify_with_each_protocols_memory() -> None:
    rows = run()
    assert [(r.protocol, r.job) for r in rows] == [(p, j) for p in ("switchml", "atp", "esa", "release", "omnireduce")
                                                   for j in (1, 2)]
    assert all(r.verified and r.completion_s > 0 and r.wire_frames > 0 for r in rows)
    sw, atp, esa, release, omni = rows[0], rows[2], rows[4], rows[6], rows[8]
    assert sw.pool_slots == omni.pool_slots == 1536 // (2 * 2 * 64) and sw.in_switch_fraction == 1.0  # per job
    assert atp.pool_slots == esa.pool_slots == release.pool_slots == 1536 // 32  # one shared pool
    assert 0 < atp.in_switch_fraction <= 1.0
    assert atp.ps_link_busy is not None and sw.ps_link_busy is None
    assert run(protocols=["switchml"]) == rows[:2]  # deterministic given the seed


def test_a_ps_per_job_carries_only_its_jobs_traffic() -> None:
    shared, own = run(protocols=["atp"]), run(protocols=["atp"], ps_per_job=True)
    assert all(r.verified for r in shared + own)
    assert shared[0].ps_link_busy == shared[1].ps_link_busy  # one PS link for both jobs
    assert all(o.ps_link_busy < s.ps_link_busy for o, s in zip(own, shared)), (own, shared)  # type: ignore[operator]


def test_a_straggler_per_job_delays_every_job_and_esa_evicts_for_the_higher_priority() -> None:
    on_time = run(protocols=["esa"], ps_per_job=True, window=64)
    late = run(protocols=["esa"], ps_per_job=True, window=64, straggler_ms=0.02)
    assert all(r.verified for r in on_time + late)
    # every job's last worker joins 20 us late: each job takes at least that much longer
    assert all(b.completion_s >= a.completion_s + 20e-6 for a, b in zip(on_time, late)), (on_time, late)
    # job 1 has the higher priority: its packets take job 2's half-full aggregators, never the other way round
    assert late[0].collisions == 0 < late[1].collisions and late[0].in_switch_fraction == 1.0
    # equal priorities: no job takes another's aggregators, job 1's packets collide too
    equal = run(protocols=["esa"], ps_per_job=True, window=64, straggler_ms=0.02, equal_priorities=True)
    assert all(r.verified for r in equal) and equal[0].collisions > 0


def test_a_release_timeout_hands_a_stragglers_aggregators_to_the_job_on_time() -> None:
    """Job 1's last worker is 50 us late. Waiting (timeout 0), job 1's partial aggregates hold most of the pool and
    job 2's packets collide on to its PS; with a 2 us timeout job 2 takes them, and job 1's released partials complete
    at job 1's PS. Both verified either way; virtual time makes this exact."""
    kw: dict[str, object] = dict(protocols=["release"], ps_per_job=True, window=64, straggler_ms=0.05,
                                 straggler_jobs=1)
    waiting, released = run(**kw, release_us=0), run(**kw, release_us=2)
    assert all(r.verified for r in waiting + released)
    assert waiting[0].collisions == 0 and waiting[0].in_switch_fraction == 1.0
    assert released[1].collisions < waiting[1].collisions / 2 and released[1].completion_s < waiting[1].completion_s
    assert released[1].in_switch_fraction > 2 * waiting[1].in_switch_fraction
    assert 0 < released[0].collisions and released[0].in_switch_fraction < 1.0
    assert released[0].completion_s == pytest.approx(waiting[0].completion_s, rel=0.05)  # it waits for its straggler


def test_fewer_partitions_than_jobs_run_in_waves() -> None:
    one, two = run(protocols=["switchml"], partitions=1)
    assert (one.wait_s, two.wait_s) == (0.0, pytest.approx(one.completion_s))
    assert two.completion_s > one.completion_s and one.pool_slots == 1536 // (2 * 64)


def test_the_cli_runs_the_simulator_without_root_and_refuses_it_without_a_rate(tmp_path: Path,
                                                                              capsys: pytest.CaptureFixture[str]
                                                                              ) -> None:
    assert main(["--engine", "sim", "--jobs", "2", "--workers", "2", "--size", "2048", "--cells", "1536",
                 "--reps", "1", "--results", str(tmp_path)]) == 2
    assert "--engine sim needs a link rate" in capsys.readouterr().err
    assert main(["--engine", "sim", "--bw", "100000", "--jobs", "2", "--workers", "2", "--size", "2048",
                 "--cells", "1536", "--reps", "1", "--results", str(tmp_path)]) == 0
    [out] = tmp_path.glob("multitenant-*")
    text = (out / "summary.md").read_text()
    assert "Packet simulator (virtual time)" in text and (out / "runs.csv").is_file()
    assert main(["--engine", "sim", "--bw", "100000", "--jobs", "2", "--workers", "2", "--size", "2048",
                 "--cells", "1536", "--reps", "1", "--protocols", "atp", "--ps-per-job",
                 "--results", str(tmp_path / "own")]) == 0
    [out] = (tmp_path / "own").glob("multitenant-*")
    assert "each job's PS on a host (and link) of its own" in (out / "summary.md").read_text()
    assert main(["--engine", "sim", "--bw", "100000", "--jobs", "2", "--workers", "2", "--size", "2048",
                 "--cells", "1536", "--reps", "1", "--protocols", "esa", "--straggler-ms", "0.01",
                 "--equal-priorities", "--results", str(tmp_path / "late")]) == 0
    [out] = (tmp_path / "late").glob("multitenant-*")
    assert "every job's last worker 0.01 ms late, every job of the same priority" in (out / "summary.md").read_text()
    assert main(["--engine", "sim", "--bw", "100000", "--jobs", "2", "--workers", "2", "--size", "2048",
                 "--cells", "1536", "--reps", "1", "--policies", "static", "release", "--straggler-ms", "0.01",
                 "--straggler-jobs", "1", "--release-us", "3", "--results", str(tmp_path / "release")]) == 0
    [out] = (tmp_path / "release").glob("multitenant-*")
    text = (out / "summary.md").read_text()
    assert "job 1's last worker 0.01 ms late, every job's release timeout 3 us" in text
    assert "switchml vs release" in text
