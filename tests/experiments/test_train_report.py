"""experiments.train's report: time to accuracy per seed, and a ratio only from seeds network-bound on both sides."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.bound import Bound
from experiments.train import Training, TrainRun, summary, tta_lines

NET = Bound(link_busy=0.9, switch_busy=0.3, host_busy=0.2)
CPU = Bound(link_busy=0.4, switch_busy=0.95, host_busy=0.2)


def run(proto: str, seed: int, times: list[float], accs: list[float], bound: Bound | None = NET) -> TrainRun:
    recs = [{"epoch": 1, "step": k + 1, "train_loss": 1.0, "test_loss": 1.0, "test_accuracy": a, "elapsed_s": t,
             "comm_s": 0.9 * t} for k, (t, a) in enumerate(zip(times, accs))]
    return TrainRun(proto, seed, recs, 510010, bound)


def test_tta_is_the_first_evaluation_reaching_the_target() -> None:
    row = run("switchml", 0, [1.0, 2.0, 3.0], [0.80, 0.951, 0.96]).row(0.95)
    assert row["tta_s"] == 2.0 and row["steps"] == 3 and row["comm_share"] == 0.9 and row["bound"] == "network"
    assert run("ring", 0, [1.0], [0.5]).row(0.95)["tta_s"] == ""


def test_the_ratio_uses_only_seeds_network_bound_on_both_sides() -> None:
    runs = [run("switchml", 0, [2.0], [0.96]), run("ring", 0, [3.0], [0.96]),
            run("switchml", 1, [4.0], [0.96]), run("ring", 1, [5.0], [0.96]),
            run("switchml", 2, [1.0], [0.96], CPU), run("ring", 2, [9.0], [0.96])]
    text = "\n".join(tta_lines(runs, 0.95))
    assert "| switchml | 3 of 3 | 2.0 (1.0–4.0) | 1 | 90 % | 2 network, 1 switch-cpu |" in text
    # seeds 0 and 1: 2/3 and 4/5 -> median 0.73; seed 2 (switch-bound) is left out and named
    assert "switchml / ring time to accuracy: 0.73× (median over the 2 seeds" in text
    assert "left out of the switchml / ring ratio (a run not network-bound or not reaching the target): 2." in text
    md = summary(runs, 4, 20.0, Training(5, 6800, 128, 0.1, 1, 0.95), {"CPU": "test"}, "auto, 20 Mbit/s")
    assert "an MLP 64-6800-10 (510,010 parameters)" in md and "Link rate: auto, 20 Mbit/s" in md


def test_the_study_runs_one_program_and_says_which_protocols_it_cannot_run(
        program_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`make train` gives every protocol one program (--json): by default the host baselines and the in-network
    protocols of that program; one of another program (omnireduce.p4's) is refused before anything starts."""
    from experiments.train import main

    switchml = ["--json", str(program_dir / "switchml.json"), "--p4info", str(program_dir / "switchml.p4info.txt")]
    assert main(["--protocols", "switchml", "omnireduce", *switchml]) != 0
    err = capsys.readouterr().err
    assert "switchml.json is the switchml program" in err and "omnireduce needs its own" in err
