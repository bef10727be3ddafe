"""experiments.multitenant's report: job completion time percentiles and Jain's fairness index, as the field
reports multi-tenant runs (ATP's evaluation: JCT; Jain's index for sharing)."""

from __future__ import annotations

import pytest

from experiments.multitenant import JobRow, jain, jct_lines, percentile, summary


def row(proto: str, rep: int, job: int, t: float, ok: bool = True) -> JobRow:
    return JobRow(proto, rep, job, 2, 1000, 8, 8, ok, t, 1000 / t if ok else 0.0, 0, 1.0, 0, 0)


def test_jain_index() -> None:
    assert jain([5, 5, 5]) == pytest.approx(1.0)
    assert jain([9, 0, 0]) == pytest.approx(1 / 3)
    assert jain([1, 2]) == pytest.approx(9 / 10)
    assert jain([]) == 0.0


def test_percentiles_interpolate_like_numpy() -> None:
    xs = [1.0, 2.0, 3.0, 4.0]
    assert percentile(xs, 50) == 2.5 and percentile(xs, 99) == pytest.approx(3.97) and percentile([7.0], 99) == 7.0


def test_the_report_gives_jct_mean_p99_and_fairness() -> None:
    rows = [row("switchml", 1, 1, 1.0), row("switchml", 1, 2, 1.0), row("switchml", 2, 1, 1.2),
            row("switchml", 2, 2, 1.2), row("atp", 1, 1, 1.0), row("atp", 1, 2, 3.0), row("atp", 2, 1, 2.0),
            row("atp", 2, 2, 2.0, ok=False)]
    lines = jct_lines(rows)
    sw = next(line for line in lines if line.startswith("| switchml"))
    atp = next(line for line in lines if line.startswith("| atp"))
    assert "4 of 4 verified | 1.100 | 1.100 | 1.200 | 1.200 | 1.000, 1.000" in sw
    # ATP: rep 1 goodputs 1000 and 333 (Jain 0.8), rep 2 one job failed (0.5)
    assert "3 of 4 verified | 2.000 | 2.000 | 2.980 | 3.000 | 0.650, 0.500" in atp
    text = summary(rows, jobs=2, workers=2, size=1000, cells=64, loss=0.0, pools={"switchml": 8, "atp": 2},
                   machine={"CPU": "test"})
    assert "## Job completion times and fairness" in text and "Jain's index" in text


def test_the_ratio_is_restated_over_network_bound_jobs_and_bounds_are_counted() -> None:
    from dataclasses import replace

    rows = [replace(row("switchml", 1, 1, 2.0), bound="latency"), replace(row("switchml", 1, 2, 1.0), bound="network"),
            replace(row("atp", 1, 1, 1.5), bound="network"), replace(row("atp", 1, 2, 0.5), bound="network")]
    text = summary(rows, jobs=2, workers=2, size=1000, cells=64, loss=0.0, pools={"switchml": 8, "atp": 2},
                   machine={"CPU": "test"}, bw=5.0)
    assert "links 5 Mbit/s" in text
    assert "Mean job completion time, atp / switchml: 0.67x." in text  # (1.5 + 0.5) / 2 over (2 + 1) / 2
    assert "Over the network-bound jobs only (2 atp, 1 switchml): 1.00x." in text
    sw = next(line for line in jct_lines(rows) if line.startswith("| switchml"))
    assert sw.endswith("| 1 latency, 1 network |")
    rows[1] = replace(rows[1], bound="switch-cpu")
    text = summary(rows, jobs=2, workers=2, size=1000, cells=64, loss=0.0, pools={"switchml": 8, "atp": 2},
                   machine={"CPU": "test"})
    assert "Not a bandwidth comparison: switchml: 0 of 2 jobs network-bound; atp: 2 of 2" in text


def test_jobs_beyond_the_partitions_wait_in_waves_and_their_jct_counts_the_wait(monkeypatch, tmp_path) -> None:
    """8 jobs, 2 SwitchML partitions: 4 waves of 2 jobs on a 2-job network; ATP runs all 8 at once."""
    from types import SimpleNamespace

    import experiments.multitenant as mt
    import experiments.tenancy

    monkeypatch.setattr(experiments.tenancy, "num_elems", lambda path: 64 if "switchml" in str(path) else 32)
    opened: list[object] = []

    class FakeNetwork:
        def __init__(self, cfg: object) -> None:
            self.cfg = cfg
            self.jobs = [SimpleNamespace(job_id=k + 1) for k in range(cfg.jobs)]  # type: ignore[attr-defined]
            self.calls = 0
            opened.append(cfg)

        def __enter__(self) -> FakeNetwork:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def run_jobs(self, cfg: object) -> list[object]:
            self.calls += 1
            t = 1.0 + 0.1 * self.calls  # each wave a little longer
            return [SimpleNamespace(ps=None, workers=[], links={}, elapsed_s=t + 0.01 * k, correct=True, wire=(0, 0),
                                    bound=None, goodput=1000 / t, retransmissions=0) for k in range(len(self.jobs))]

    monkeypatch.setattr(mt, "ExperimentNetwork", FakeNetwork)
    for name in ("switchml", "atp"):  # cfg.check() wants the compiled programs to exist
        (tmp_path / f"{name}.json").write_text("{}")
        (tmp_path / f"{name}.p4info.txt").write_text("")
    rows = mt.run_multitenant(jobs=8, workers=2, size=1000, cells=16384, window=None, loss=0.0, reps=1,
                              program_dir=tmp_path, target=mt.Target.EMBEDDED, run_dir=tmp_path, partitions=2,
                              progress=False, ps_per_job=True, protocols=["switchml", "atp"])
    sml = sorted((r for r in rows if r.protocol == "switchml"), key=lambda r: r.job)
    assert [cfg.jobs for cfg in opened] == [2, 8]  # type: ignore[attr-defined]
    assert [cfg.ps_per_job for cfg in opened] == [True, True]  # type: ignore[attr-defined]
    assert [r.job for r in sml] == list(range(1, 9)) and sml[0].pool_slots == 16384 // (2 * 2 * 64)
    # waves end at 1.11, 1.21, 1.31 s (their slowest job): the next wave's jobs waited for all of them
    assert [round(r.wait_s, 2) for r in sml] == [0, 0, 1.11, 1.11, 2.32, 2.32, 3.63, 3.63]
    assert [round(r.completion_s, 2) for r in sml] == [1.1, 1.11, 2.31, 2.32, 3.62, 3.63, 5.03, 5.04]
    assert sml[2].goodput_elems_per_s == pytest.approx(1000 / 2.31, rel=1e-3)
    atp = [r for r in rows if r.protocol == "atp"]
    assert len(atp) == 8 and all(r.wait_s == 0 for r in atp)
    with pytest.raises(ValueError, match="must divide"):
        mt.pools_for(16384, 8, tmp_path, partitions=3)
