"""`python -m experiments.bench.allreduce`: the report from synthetic runs, and one real (tiny) grid in Mininet (needs root)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from compiler import compile_file
from experiments.bench.allreduce import (
    main,
    median_interval,
    share_goal_line,
    summary_table,
    write_markdown,
    write_plot,
)
from experiments.bench.grid import Cell, RunRow, write_csv
from experiments.config import ExperimentConfig
from tests.paths import ROOT


def row(workers: int, loss: float, rep: int, goodput: float, verified: bool = True, error: str = "") -> RunRow:
    return RunRow(workers, loss, rep, 65536, verified, goodput if verified else 0.0, 65536 / goodput, 0.6, 4224,
                  10 * rep, 5 * rep, rep, 0.1, 4300, 3, error)


def synthetic() -> list[Cell]:
    return [
        Cell(4, 0.0, [row(4, 0.0, 1, 200_000), row(4, 0.0, 2, 260_000), row(4, 0.0, 3, 250_000)]),
        Cell(4, 0.01, [row(4, 0.01, 1, 210_000), row(4, 0.01, 2, 1.0, verified=False, error="rank 1: exit 1: bad"),
                       row(4, 0.01, 3, 190_000)]),
    ]


def test_summary_counts_only_verified_runs() -> None:
    table = summary_table(synthetic())
    lines = table.splitlines()
    assert lines[2] == "| 4 | 0 % | 3/3 | **250,000** | 200,000 – 260,000 | – | 20 | 0.262 | 0.100 |"
    assert lines[3] == "| 4 | 1 % | 2/3 | **200,000** | 190,000 – 210,000 | 80 % | 20 | 0.329 | 0.100 |"


def test_report_files(tmp_path: Path) -> None:
    cells = synthetic()
    write_csv(cells, tmp_path / "a.csv")
    rows = list(csv.DictReader(open(tmp_path / "a.csv")))
    assert len(rows) == 6 and rows[4]["verified"] == "0" and rows[4]["goodput_elems_per_s"] == "0"
    assert rows[4]["error"] == "rank 1: exit 1: bad"
    write_plot(cells, tmp_path / "a.png", 65536)
    assert (tmp_path / "a.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    write_markdown(cells, tmp_path / "a.md", {"CPU": "test"}, ExperimentConfig(), 3, 12.0)
    md = (tmp_path / "a.md").read_text()
    assert "- CPU: test" in md and summary_table(cells) in md
    assert "4 workers, no loss: 250,000 elem/s (goal ≥ 250,000: met)" in md
    assert "4 workers, 1 % loss: 200,000 elem/s = 80 % of no loss (goal ≥ 80 % of no loss and ≥ 200,000: met)" in md
    assert "4 workers, 1 % loss as a share of no loss: 80 % (later goal ≥ 85 %: not met)" in md
    assert "- workers=4 loss=0.01 rep=2: rank 1: exit 1: bad" in md
    assert "Produced by `make bench` (`python -m experiments.bench.allreduce --out " in md
    write_markdown(cells, tmp_path / "b.md", {"CPU": "test"}, ExperimentConfig(), 3, 12.0,
                   command="python -m experiments.bench.allreduce --workers 4 --loss 0 0.01 --reps 80 --out b")
    assert "Produced by `python -m experiments.bench.allreduce --workers 4 --loss 0 0.01 --reps 80 --out b`; one row per run in " \
        "`b.csv`" in (tmp_path / "b.md").read_text()


def test_median_interval_from_order_statistics() -> None:
    assert median_interval([5, 1, 4, 2, 3]) == (3, 1, 5, 1 - 2 / 32)  # min and max of 5: 93.75 %
    med, lo, hi, conf = median_interval(list(range(10)))
    assert (med, lo, hi) == (4.5, 1, 8) and conf == pytest.approx(1 - 2 * 11 / 1024)  # 2nd and 9th of 10
    assert median_interval([1, 2, 3, 4]) is None  # 4 values: at most 87.5 %
    assert median_interval([1, 2, 3, 4], coverage=0.8)[1:3] == (1, 4)


def test_share_goal_line_says_whether_the_repetitions_settle_it() -> None:
    def cells(lossy: list[float]) -> tuple[Cell, Cell]:
        n = len(lossy)
        return (Cell(4, 0.0, [row(4, 0.0, r + 1, 100_000) for r in range(n)]),
                Cell(4, 0.01, [row(4, 0.01, r + 1, g) for r, g in enumerate(lossy)]))

    assert share_goal_line(*cells([86_000, 90_000, 88_000, 95_000, 87_000])) == (
        "4 workers, 1 % loss as a share of no loss: 88 % (later goal ≥ 85 %: met); per repetition 86–95 %, "
        "median 88 %, 94 % interval of that median 86–95 % (5 repetitions): settles the goal: met")
    assert share_goal_line(*cells([70_000, 90_000, 88_000, 95_000, 80_000])).endswith(
        "interval of that median 70–95 % (5 repetitions): does not settle the goal")
    assert share_goal_line(*cells([70_000, 80_000, 84_000, 75_000, 79_000])).endswith("settles the goal: not met")
    assert share_goal_line(*cells([90_000, 80_000])).endswith(
        "per repetition 80–90 % (2 repetitions: too few for a 90 % interval of their median)")
    lossless, lossy = cells([90_000, 80_000])
    lossy.runs[0] = row(4, 0.01, 1, 1.0, verified=False)  # a failed run pairs with nothing
    assert "per repetition 80–80 %" in share_goal_line(lossless, lossy)


@pytest.mark.mininet
@pytest.mark.timeout(120)
def test_tiny_grid_in_mininet(tmp_path: Path) -> None:
    result = compile_file(str(ROOT / "p4src" / "switchml.p4"))
    (tmp_path / "switchml.json").write_text(json.dumps(result.json))
    (tmp_path / "switchml.p4info.txt").write_text(result.p4info_text)
    out = tmp_path / "bench" / "ar"
    code = main(["--workers", "2", "--loss", "0", "0.01", "--reps", "1", "--size", "8192", "--out", str(out),
                 "--json", str(tmp_path / "switchml.json"), "--p4info", str(tmp_path / "switchml.p4info.txt")])
    assert code == 0
    rows = list(csv.DictReader(open(out.with_suffix(".csv"))))
    assert [(r["workers"], r["loss"], r["verified"]) for r in rows] == [("2", "0.0", "1"), ("2", "0.01", "1")]
    assert all(float(r["goodput_elems_per_s"]) > 0 and float(r["max_error_over_bound"]) <= 1 for r in rows)
    assert out.with_suffix(".png").stat().st_size > 1000
    assert "| 2 | 1 % | 1/1 |" in out.with_suffix(".md").read_text()


def test_csv_rows_read_back_as_written(tmp_path: Path) -> None:
    """RunRow.from_csv (experiments.bench.compare reads another checkout's runs with it) inverts csv_row."""
    cells = synthetic()
    write_csv(cells, tmp_path / "a.csv")
    back = [RunRow.from_csv(d) for d in csv.DictReader(open(tmp_path / "a.csv"))]
    assert [r.csv_row() for r in back] == [r.csv_row() for c in cells for r in c.runs]


def test_comparison_table_pairs_repetitions() -> None:
    from experiments.bench.compare import Comparison

    ours = [Cell(4, 0.0, [row(4, 0.0, 1, 400_000), row(4, 0.0, 2, 300_000), row(4, 0.0, 3, 500_000)])]
    theirs = [Cell(4, 0.0, [row(4, 0.0, 1, 200_000), row(4, 0.0, 2, 1.0, verified=False), row(4, 0.0, 3, 200_000)])]
    c = Comparison("other", ours, theirs)
    [(n, loss, mine, other, ratio, per_rep)] = c.rows()
    assert (n, loss, mine, other, ratio, per_rep) == (4, 0.0, 400_000, 200_000, 2.0, [2.0, 2.5])
    assert c.table().splitlines()[2] == "| 4 | 0 % | 400,000 | 200,000 | **2.00×** | 2.25× | 2.00, 2.50 |"


def test_compare_alternates_which_tree_runs_first(monkeypatch, tmp_path: Path) -> None:
    """This tree first in odd repetitions, the other checkout first in even ones; each repetition's runs keep its
    number on both sides."""
    import experiments.bench.compare as tc

    order: list[tuple[str, int]] = []

    def fake_grid(workers, losses, reps, cfg, log):
        rep = cfg.seed  # the base seed is 1: repetition r runs with seed r
        order.append(("ours", rep))
        return [Cell(4, 0.0, [row(4, 0.0, 1, 100_000 * rep)])]

    class Other:
        def compile(self, out):
            return out / "p.json", out / "p.p4info.txt"

        def bench(self, workers, losses, size, timeout, program, out):
            rep = int(out.name.removeprefix("other-rep"))
            order.append(("theirs", rep))
            return [row(4, 0.0, 1, 50_000 * rep)]

        def describe(self):
            return "other"

    monkeypatch.setattr(tc, "run_grid", fake_grid)
    base = ExperimentConfig(size=8192, workers=4, seed=1)
    c = tc.run_compared([4], [0.0], 4, base, Other(), tmp_path, log=lambda s: None)
    assert order == [("ours", 1), ("theirs", 1), ("theirs", 2), ("ours", 2), ("ours", 3), ("theirs", 3),
                     ("theirs", 4), ("ours", 4)]
    assert c.rows()[0][5] == [2.0, 2.0, 2.0, 2.0]


@pytest.mark.mininet
@pytest.mark.timeout(240)
def test_compare_with_another_checkout_runs_both_alternately(tmp_path: Path) -> None:
    """This repository compared with itself as 'another checkout': both sides run, verified, and the ratios land
    in the report and the pairs' CSV."""
    result = compile_file(str(ROOT / "p4src" / "switchml.p4"))
    (tmp_path / "switchml.json").write_text(json.dumps(result.json))
    (tmp_path / "switchml.p4info.txt").write_text(result.p4info_text)
    out = tmp_path / "bench" / "ar"
    code = main(["--workers", "2", "--loss", "0", "--reps", "2", "--size", "8192", "--out", str(out), "--json",
                 str(tmp_path / "switchml.json"), "--p4info", str(tmp_path / "switchml.p4info.txt"), "--compare",
                 str(ROOT)])
    assert code == 0
    pairs = list(csv.DictReader(open(out.with_suffix(".compare.csv"))))
    assert [(p["workers"], p["rep"]) for p in pairs] == [("2", "1"), ("2", "2")]
    assert all(float(p["this_goodput"]) > 0 and float(p["other_goodput"]) > 0 and float(p["ratio"]) > 0
               for p in pairs)
    md = out.with_suffix(".md").read_text()
    assert f"## Against {ROOT}" in md and "| 2 | 0 % |" in md.split("## Against")[1]


def test_compare_refuses_a_directory_that_is_not_a_checkout(tmp_path: Path) -> None:
    from experiments.bench.compare import Checkout, CompareError

    with pytest.raises(CompareError, match="is not a checkout of this project"):
        Checkout(tmp_path)


def test_the_rate_limited_point_is_reported_against_the_link(program: tuple[Path, Path]) -> None:
    """With --bw the report compares each configuration's median time with the time a worker's own frames need on
    its uplink, and gives the retransmitted share (issue 27's guard, `make bench`'s slow-links point)."""
    from experiments.bench.allreduce import link_bound_table

    # 4 workers x 1,056 packets of 42 + 268 bytes each at 2 Mbit/s: 1.309 s per worker
    runs = [RunRow(4, 0.0, k, 65536, True, 48_000.0, t, 0.6, 4 * 1056, retx, 0, 0, 0.1, 4224, 0)
            for k, (t, retx) in enumerate([(1.35, 0), (1.40, 42), (1.38, 0)], start=1)]
    cfg = ExperimentConfig(program_json=program[0], p4info=program[1], bw=2.0)
    lines = link_bound_table([Cell(4, 0.0, runs)], cfg)
    assert lines[4] == "| 4 | 0 % | 1.309 | 1.380 | 1.05 | 0.0 % |"
