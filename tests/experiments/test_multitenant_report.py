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
    assert "Mean job completion time, ATP / SwitchML: 0.67x." in text  # (1.5 + 0.5) / 2 over (2 + 1) / 2
    assert "Over the network-bound jobs only (2 ATP, 1 SwitchML): 1.00x." in text
    sw = next(line for line in jct_lines(rows) if line.startswith("| switchml"))
    assert sw.endswith("| 1 latency, 1 network |")
    rows[1] = replace(rows[1], bound="switch-cpu")
    text = summary(rows, jobs=2, workers=2, size=1000, cells=64, loss=0.0, pools={"switchml": 8, "atp": 2},
                   machine={"CPU": "test"})
    assert "Not a bandwidth comparison: switchml: 0 of 2 jobs network-bound; atp: 2 of 2" in text
