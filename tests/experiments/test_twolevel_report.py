"""experiments.twolevel's report (no Mininet): the summary's medians and two-level / one-level ratios, and the CSV rows."""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

from experiments.rows import write_rows
from experiments.twolevel import LevelRow, summary

ONE = LevelRow(levels=1, rep=1, racks=2, workers=4, size_elems=65536, loss=0.0, bw_mbps=None, verified=True,
               completion_s=0.8, goodput_elems_per_s=81920.0, retransmissions=0, in_switch_fraction=1.0,
               uplink_frames=16384, uplink_bytes=3_180_000, ps_frames=4096, ps_bytes=790_000)


def test_summary_quotes_medians_and_ratios() -> None:
    rows = [replace(ONE, rep=k, completion_s=t) for k, t in enumerate((0.8, 0.9, 0.7))]
    rows += [replace(ONE, levels=2, rep=k, completion_s=t, uplink_frames=8192) for k, t in enumerate((0.6, 0.4, 0.5))]
    text = summary(rows, racks=2, workers=4, size=65536, loss=0.0, bw=10.0, machine={"CPU": "test"})
    assert "| 1 | 3/3 | 0.800 (0.700-0.900) |" in text and "| 2 | 3/3 | 0.500 (0.400-0.600) |" in text
    assert "completion time 0.62x, uplink packets 0.50x, PS link packets 1.00x" in text
    assert "links 10 Mbit/s" in text and "- CPU: test" in text


def test_rows_are_written_one_csv_line_each(tmp_path: Path) -> None:
    write_rows([ONE, replace(ONE, levels=2)], tmp_path / "runs.csv")
    with open(tmp_path / "runs.csv") as f:
        got = list(csv.DictReader(f))
    assert [r["levels"] for r in got] == ["1", "2"] and got[0]["uplink_frames"] == "16384" and got[0]["bw_mbps"] == ""
