"""`python -m experiments.bench.scaling`: the report from synthetic rows, the /proc readers, and one tiny real sweep in Mininet."""

from __future__ import annotations

import csv
import json
import os
import time
from pathlib import Path

import pytest

from compiler import compile_file
from experiments.bench.scaling import (
    CSV_FIELDS,
    ScalePoint,
    ScaleRow,
    main,
    run_scaling,
    scaling_points,
    summary_table,
    write_csv,
    write_markdown,
    write_plot,
)
from experiments.config import ExperimentConfig
from perf.machine import proc_cpu_seconds, proc_peak_rss_kb
from tests.paths import ROOT
from topo.target import Target


def synthetic() -> list[ScaleRow]:
    def row(sweep: str, workers: int, size: int, rep: int, elapsed: float, ok: bool = True) -> ScaleRow:
        return ScaleRow(sweep, workers, size, rep, ok, elapsed, size / elapsed if ok else 0.0, size // 32, 0,
                        0.5e-6 * size * workers, 0.7e-6 * size, 500.0 * workers, 700.0, 75.0, 40.0 + size * 8 / 2**20,
                        size * 4 / 2**20, "" if ok else "rank 1: exit 2: gone")
    return [row("size", 2, 65_536, 1, 0.1), row("size", 2, 65_536, 2, 0.12),
            row("size", 2, 1_048_576, 1, 1.6), row("size", 2, 1_048_576, 2, 9.0, ok=False),
            row("workers", 2, 262_144, 1, 0.4), row("workers", 4, 262_144, 1, 0.8)]


def test_points_are_the_two_sweeps() -> None:
    assert scaling_points([4096, 8192], 2, [2, 3], 1024) == [
        ScalePoint("size", 2, 4096), ScalePoint("size", 2, 8192), ScalePoint("workers", 2, 1024),
        ScalePoint("workers", 3, 1024)]


def test_summary_uses_verified_runs_only() -> None:
    lines = summary_table(synthetic()).splitlines()
    assert lines[2] == "| size | 2 | 65,536 | 2/2 | 0.110 | 600,747 | 1,000 | 700 | 1,700 | 75 | 40 | 162.00 |"
    assert lines[3].startswith("| size | 2 | 1,048,576 | 1/2 | 1.600 | 655,360 |")
    assert lines[5].startswith("| workers | 4 | 262,144 | 1/1 | 0.800 |")


def test_report_files(tmp_path: Path) -> None:
    rows = synthetic()
    write_csv(rows, tmp_path / "s.csv")
    got = list(csv.DictReader(open(tmp_path / "s.csv")))
    assert tuple(got[0]) == CSV_FIELDS and len(got) == 6 and got[3]["error"] == "rank 1: exit 2: gone"
    write_plot(rows, tmp_path / "s.png")
    assert (tmp_path / "s.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    write_markdown(rows, tmp_path / "s.md", {"CPU": "test"}, ExperimentConfig(), 2, 30.0)
    md = (tmp_path / "s.md").read_text()
    assert "- CPU: test" in md and summary_table(rows) in md
    assert "- size sweep, workers=2 size=1048576 rep=2: rank 1: exit 2: gone" in md


def test_proc_readers_see_this_process() -> None:
    before = proc_cpu_seconds(os.getpid())
    end = time.process_time() + 0.1
    while time.process_time() < end:
        pass
    assert proc_cpu_seconds(os.getpid()) - before >= 0.05
    blob = bytearray(64 << 20)  # touched: resident
    blob[::4096] = b"\1" * len(blob[::4096])
    assert proc_peak_rss_kb(os.getpid()) >= 64 << 10


@pytest.mark.mininet
@pytest.mark.timeout(180)
def test_tiny_sweep_in_mininet(tmp_path: Path) -> None:
    result = compile_file(str(ROOT / "p4src" / "switchml.p4"))
    (tmp_path / "switchml.json").write_text(json.dumps(result.json))
    (tmp_path / "switchml.p4info.txt").write_text(result.p4info_text)
    base = ExperimentConfig(target=Target.EMBEDDED, program_json=tmp_path / "switchml.json",
                            p4info=tmp_path / "switchml.p4info.txt", timeout_s=60)
    rows = run_scaling(scaling_points([4096], 2, [2], 8192), 1, base)
    assert [(r.sweep, r.workers, r.size, r.verified) for r in rows] == [("size", 2, 4096, True),
                                                                       ("workers", 2, 8192, True)]
    for r in rows:
        assert r.elapsed_s > 0 and r.goodput_elems_per_s > 0 and r.packets_sent >= 2 * r.size // 64
        assert r.worker_cpu_s > 0 and r.worker_cpu_ns_per_elem > 0 and r.switch_cpu_s >= 0
        assert 10 < r.switch_peak_rss_mb < 500 and 10 < r.worker_peak_rss_mb < 500 and not r.error
    out = tmp_path / "bench" / "sc"
    assert main(["--sizes", "4096", "--workers", "2", "--workers-size", "4096", "--reps", "1", "--out", str(out),
                 "--json", str(tmp_path / "switchml.json"), "--p4info", str(tmp_path / "switchml.p4info.txt")]) == 0
    assert len(list(csv.DictReader(open(out.with_suffix(".csv"))))) == 2
    assert out.with_suffix(".png").stat().st_size > 1000 and "| size | 2 | 4,096 | 1/1 |" in out.with_suffix(
        ".md").read_text()
