"""End-to-end: a small scenario file run in Mininet writes verified rows, the summary and the plots (needs root)."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from compiler import compile_file
from experiments.bound import VERDICTS
from experiments.rows import CSV_FIELDS
from experiments.scenario import load_scenario
from experiments.sweep import main
from tests.paths import ROOT

pytestmark = [pytest.mark.mininet, pytest.mark.timeout(240),
              pytest.mark.skipif(os.geteuid() != 0, reason="Mininet needs root")]


def test_small_scenario_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = compile_file(str(ROOT / "p4src" / "switchml.p4"))
    (tmp_path / "p.json").write_text(json.dumps(result.json))
    (tmp_path / "p.p4info.txt").write_text(result.p4info_text)
    sc = tmp_path / "small.toml"
    sc.write_text('[scenario]\nrepetitions = 2\ntimeout_s = 60\n[network]\nbw_mbps = 20\n'
                  '[sweep]\nalgos = ["switchml", "ring", "ps"]\nworkers = [3]\nsizes_kib = [8]\n'
                  'straggler_ms = [0, 20]\n[report]\nx = "straggler_ms"\n')
    code = main([str(sc), "--results", str(tmp_path / "results"), "--json", str(tmp_path / "p.json"),
                 "--p4info", str(tmp_path / "p.p4info.txt"), "--no-progress"])
    assert code == 0
    [out] = list((tmp_path / "results").iterdir())
    rows = list(csv.DictReader(open(out / "runs.csv")))
    assert len(rows) == 3 * 2 * 2 and all(r["verified"] == "1" for r in rows)
    assert tuple(rows[0]) == CSV_FIELDS
    for r in rows:  # issue 26: one measure for every protocol (bytes_sent was 0 on every switchml row)
        assert r["size_elems"] == "2048" and r["size_bytes"] == "8192"
        # every worker sends at least its tensor once (switchml: once, plus headers; ring and ps: 2(n-1)/n of it)
        assert int(r["wire_bytes"]) >= 3 * 8192 and int(r["wire_frames"]) >= 3 * 8192 // 1500, r
    # the straggler (the last rank joins 20 ms late) holds every algorithm back
    for protocol in ("switchml", "ring", "ps"):
        t = {float(r["straggler_ms"]): float(r["elapsed_s"]) for r in rows if r["protocol"] == protocol and r["rep"] == "1"}
        assert t[20.0] >= 0.015, (protocol, t)
    for name in ("summary.md", "time.png", "goodput.png", "scenario.toml"):
        assert (out / name).is_file()
    summary = (out / "summary.md").read_text()
    assert all(r["bound"] in VERDICTS for r in rows), [r["bound"] for r in rows]
    # each point is either compared (both sides network-bound) or listed apart with what bound it
    assert "switchml / ring time at 3 workers, 20" in summary or "switchml / ring at 3 workers, 20" in summary
    if any(r["bound"] != "network" for r in rows if r["protocol"] in ("switchml", "ring")):
        assert "## Not compared" in summary
    assert load_scenario(out / "scenario.toml").x == "straggler_ms"


def test_background_commands_run_during_a_run_and_are_gone_after(tmp_path: Path) -> None:
    import subprocess
    from dataclasses import replace

    from experiments.config import ExperimentConfig
    from experiments.session import ExperimentNetwork

    result = compile_file(str(ROOT / "p4src" / "switchml.p4"))
    (tmp_path / "p.json").write_text(json.dumps(result.json))
    (tmp_path / "p.p4info.txt").write_text(result.p4info_text)
    cfg = ExperimentConfig(workers=2, size=2048, program_json=tmp_path / "p.json", p4info=tmp_path / "p.p4info.txt",
                           run_dir=tmp_path / "run", timeout_s=60)
    marker = tmp_path / "bg-ran"
    with ExperimentNetwork(cfg) as net:
        # the command's shell starts a child (the sleep): killing only the shell would leave it loading later runs
        r = net.run(replace(cfg, protocol="ring"), [f"h1: touch {marker}; sleep 47.5; true"])
        assert r.correct, r.table()
        leftover = subprocess.run(["pgrep", "-f", "sleep 47.5"], capture_output=True, text=True)
    assert marker.exists()
    assert leftover.stdout.strip() == ""
