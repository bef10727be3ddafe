"""The simulator against the emulator (experiments.validate): the comparison's arithmetic, and a tiny validation
that runs both engines (Mininet: needs root)."""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

import pytest

from experiments.rows import CSV_FIELDS, CsvLog, Row, start_offsets
from experiments.scenario import RunPoint, load_scenario
from experiments.simulate import run_point
from experiments.validate import TOLERANCE, Comparison, compare, emulated, main, markdown, replayed_starts

SCENARIO = """
[scenario]
description = "tiny validation"
repetitions = {reps}
seed = 1
timeout_s = 60

[network]
bw_mbps = 2

[sweep]
protocols = {protocols}
workers = [2]
sizes = [{size}]
dtype = "int32"
loss = {loss}
"""


def scenario(tmp_path: Path, *, protocols: str = '["switchml"]', size: int = 16384, loss: str = "[0.0]",
             reps: int = 1) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(SCENARIO.format(protocols=protocols, size=size, loss=loss, reps=reps))
    return path


def row(protocol: str, elapsed: float, *, loss: float = 0.0, seed: int = 2, digest: str = "ab", frames: int = 100,
        engine: str = "mininet") -> Row:
    return Row(protocol=protocol, workers=2, size=16384, loss=loss, straggler_ms=0.0, background_mbps=0.0, rep=1,
               seed=seed, dtype="int32", bw_mbps=2.0, verified=True, elapsed_s=elapsed, wire_frames=frames,
               result_digest=digest, engine=engine)


def test_compare_checks_digests_and_loss_free_frames_and_tolerates_ten_percent(tmp_path: Path) -> None:
    sc = load_scenario(scenario(tmp_path, protocols='["switchml", "ring"]', loss="[0.0, 0.01]"))
    mininet = [row("switchml", 1.00), replace(row("ring", 1.60), bound="network"),
               replace(row("ring", 2.40, seed=3), bound="host-cpu"), row("switchml", 1.20, loss=0.01, frames=120),
               row("ring", 3.00, loss=0.01, frames=300)]
    sim = [row("switchml", 1.05, engine="sim"), row("ring", 1.70, digest="cd", engine="sim"),
           row("switchml", 1.25, loss=0.01, frames=999, engine="sim"), row("ring", 2.50, loss=0.01, engine="sim")]
    checks, comparisons = compare(sc, mininet, sim)
    digests, frames = checks
    assert (digests.matched, digests.compared, digests.ok) == (3, 4, False)  # ring seed 3 has no simulated run
    assert "ring n=2 16384 elems seed 2: ab vs cd" in digests.mismatches[0]
    assert (frames.matched, frames.compared) == (1, 1)  # in-network, loss-free runs only
    got = {(c.kind, c.what): c for c in comparisons}
    assert got["frames", "ring n=2 16384 elems"].verdict == "agrees"  # TCP's: within the tolerance
    got = {(c.kind, c.what): c for c in comparisons}
    assert got["time", "switchml n=2 16384 elems"].verdict == "agrees"  # +5 %
    ring = got["time", "ring n=2 16384 elems"]  # median 2.0, -15 %, but the emulator ran 1.6 ... 2.4
    assert (ring.mininet, ring.spread, ring.verdict) == (2.0, (1.6, 2.4), "noisy")
    assert ring.bound == "network 1/2, host-cpu 1/2"
    ratio = got["ratio", "ring/switchml at n=2 16384 elems"]
    assert (ratio.mininet, round(ratio.sim, 4)) == (2.0, round(1.70 / 1.05, 4)) and not ratio.ok
    slope = got["loss slope", "switchml n=2 16384 elems loss 0.01: over loss 0"]
    assert (round(slope.mininet, 6), round(slope.sim, 6)) == (0.2, 0.2) and slope.ok
    lossy = got["loss slope", "ring n=2 16384 elems loss 0.01: over loss 0"]  # 1.0 s vs 0.8 s, range 0.6 ... 1.4
    assert (round(lossy.mininet, 6), round(lossy.sim, 6), lossy.verdict) == (1.0, 0.8, "noisy")
    assert got["time", "ring n=2 16384 elems loss 0.01"].verdict == "differs"  # -17 %, one emulator run
    text = markdown(sc, checks, comparisons, tmp_path / "m", tmp_path / "s")
    assert f"Tolerance {100 * TOLERANCE:.0f} %" in text and "| **differs** |" in text


def test_unverified_runs_are_left_out_of_every_comparison(tmp_path: Path) -> None:
    sc = load_scenario(scenario(tmp_path))
    checks, comparisons = compare(sc, [replace(row("switchml", 1.0), verified=False)], [row("switchml", 1.0)])
    assert [c.compared for c in checks] == [0, 0] and comparisons == []


def test_the_simulated_scenario_has_the_emulators_network(tmp_path: Path) -> None:
    sim = emulated(load_scenario(scenario(tmp_path)), 3.5)
    assert (sim.engine, sim.bw_mbps, sim.sim.overhead_bytes, sim.sim.buffer_kib, sim.sim.service_ns,
            sim.sim.shaper) == ("sim", 3.5, 0, None, 0.0, "htb")


def test_the_emulators_start_times_are_recorded_and_replayed(tmp_path: Path) -> None:
    """Row.start_offsets_ms from the workers' monotonic starts (in rank order, all or none), and a simulated run
    started at them: a rank that starts 50 ms late delays the whole all-reduce by that much."""
    reports = [{"rank": 1, "started_s": 10.0125}, {"rank": 0, "started_s": 10.0}]
    assert start_offsets(reports) == "0.000;12.500" and start_offsets(reports[:1] + [{"rank": 0}]) == ""
    sc = emulated(load_scenario(scenario(tmp_path)), 2.0)
    lab = replace(row("switchml", 1.0), start_offsets_ms="0.000;50.000")
    starts = replayed_starts([lab, replace(row("ring", 1.0), verified=False, start_offsets_ms="0;1")])
    point = RunPoint("switchml", 2, 16384, 0.0, 0.0, 0.0)
    assert starts == {(point, 1): [0.0, 0.05]}
    at_once, late = run_point(sc, point, 1), run_point(sc, point, 1, starts[point, 1])
    assert late.verified and late.result_digest == at_once.result_digest
    assert late.elapsed_s == pytest.approx(at_once.elapsed_s + 0.05, abs=0.005)
    assert (at_once.start_offsets_ms, late.start_offsets_ms) == ("0.000;0.000", "0.000;50.000")  # what it ran
    assert "2 start times for 3 workers" in run_point(sc, replace(point, workers=3), 1, [0.0, 0.1]).error
    for name, rows in (("m", [lab]), ("s", [late])):  # a finished simulation compared again (--sim)
        (tmp_path / name).mkdir()
        log = CsvLog(tmp_path / name / "runs.csv", CSV_FIELDS)
        for r in rows:
            log.append(r.csv_row())
    assert main([str(sc.path), "--mininet", str(tmp_path / "m"), "--sim", str(tmp_path / "s"), "--results",
                 str(tmp_path / "out")]) in (0, 1)
    [made] = (tmp_path / "out").iterdir()
    assert "1 simulated runs started each rank when the emulator's run did" in (made / "validation.md").read_text()


def test_a_simulated_scenario_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "sim.toml"
    path.write_text(scenario(tmp_path).read_text().replace("bw_mbps = 2", 'engine = "sim"\nbw_mbps = 2'))
    assert main([str(path), "--results", str(tmp_path)]) == 2
    assert 'network.engine = "mininet"' in capsys.readouterr().err


@pytest.mark.mininet
@pytest.mark.timeout(300)
def test_tiny_validation_both_engines_agree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SwitchML, 2 workers, 32 K int32 elements at 2 Mbit/s: the same result bits and frames on both engines, the
    completion time within the tolerance."""
    path = scenario(tmp_path, size=32768)
    code = main([str(path), "--results", str(tmp_path / "results"), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0, out
    [made] = (tmp_path / "results").iterdir()
    with (made / "validation.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [r["kind"] for r in rows] == ["time"] and rows[0]["within"] == "1", out
    assert "| result digests | 1 | 1 |" in out and "| loss-free wire frames (in-network) | 1 | 1 |" in out
    assert "1 simulated runs started each rank when the emulator's run did" in out  # the workers' started_s


def test_overlapping_runs_are_noisy_and_separate_ones_differ() -> None:
    """Under loss the simulator's median, outside the tolerance and the emulator's range, is still an estimate: when
    its own repetitions reach into the emulator's range, more repetitions decide; when they do not, the engines
    differ."""
    lossy = Comparison("time", "x", 2.0, 1.6, spread=(1.8, 2.4), sim_spread=(1.5, 1.9), sampled=True)
    assert lossy.verdict == "noisy"
    assert replace(lossy, sim_spread=(1.5, 1.7)).verdict == "differs"
    assert replace(lossy, sampled=False).verdict == "differs"  # loss-free: the simulator's median is not an estimate
    assert replace(lossy, sim=1.9).verdict == "agrees"
