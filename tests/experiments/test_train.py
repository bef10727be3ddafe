"""End-to-end: `python -m experiments.train` trains on Mininet hosts through the switch with every algorithm (needs root)."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from compiler import compile_file
from experiments.train import main
from tests.paths import ROOT

pytestmark = [pytest.mark.mininet, pytest.mark.timeout(240),
              pytest.mark.skipif(os.geteuid() != 0, reason="Mininet needs root")]


def test_training_through_the_switch_matches_the_baselines(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    result = compile_file(str(ROOT / "p4src" / "switchml.p4"))
    (tmp_path / "p.json").write_text(json.dumps(result.json))
    (tmp_path / "p.p4info.txt").write_text(result.p4info_text)
    code = main(["--workers", "2", "--epochs", "2", "--bw", "20", "--results", str(tmp_path / "r"),
                 "--json", str(tmp_path / "p.json"), "--p4info", str(tmp_path / "p.p4info.txt")])
    assert code == 0
    printed = capsys.readouterr().out
    assert "switchml: training on 2 hosts" in printed and "within the 0.02 tolerance" in printed
    [out] = list((tmp_path / "r").iterdir())
    rows = list(csv.DictReader(open(out / "history.csv")))
    assert {r["protocol"] for r in rows} == {"switchml", "ring", "ps"} and len(rows) == 6
    acc = {r["protocol"]: float(r["test_accuracy"]) for r in rows if r["epoch"] == "2"}
    assert min(acc.values()) > 0.8 and max(acc.values()) - min(acc.values()) <= 0.02
    assert (out / "loss.png").stat().st_size > 1000 and (out / "summary.md").is_file()
