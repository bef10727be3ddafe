"""Resuming an interrupted study (experiments.resume, experiments.interrupt): the row key, which runs a resume skips,
what it keeps of runs.csv, and what it refuses. No root, no network (tests/experiments/test_sweep_resume.py interrupts
a real sweep in Mininet)."""

from __future__ import annotations

import csv
import os
import signal
import time
from dataclasses import replace
from pathlib import Path

import pytest

import experiments.sweep as sweep
from experiments.figures import Figure, sweep_command
from experiments.interrupt import MAKE_COMMAND, resume_command, stopping_cleanly
from experiments.resume import (MULTITENANT_KEY, SWEEP_KEY, TRAIN_KEY, ResumeError, check_arguments, read_rows,
                                remember, reopen, resolve, resolved, row_key, sweep_key)
from experiments.rows import CSV_FIELDS, CsvLog, Row, from_csv, to_csv
from experiments.scenario import RunPoint, load_scenario

TOML = ('[scenario]\nname = "tiny"\nrepetitions = 2\n[sweep]\nprotocols = ["switchml", "ring"]\nworkers = [2]\n'
        'sizes_kib = [1]\nloss = [0.0, 0.01]\n')


@pytest.fixture()
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TOML)
    return path


def test_the_key_is_the_key_columns_as_runs_csv_holds_them(tmp_path: Path, scenario: Path) -> None:
    sc = load_scenario(scenario)
    log = CsvLog(tmp_path / "runs.csv", CSV_FIELDS)
    for rep in (1, 2):
        for p in sc.runs():
            log.append(Row.failed(p, rep, sc, "x").csv_row())
    _, rows = read_rows(tmp_path / "runs.csv")
    # read back, every row's key is the one its run is looked up by; no two runs share one
    assert [row_key(r, SWEEP_KEY) for r in rows] == [sweep_key(p, rep, sc) for rep in (1, 2) for p in sc.runs()]
    assert len({row_key(r, SWEEP_KEY) for r in rows}) == 2 * len(sc.runs()) == 8
    assert sweep_key(RunPoint("ring", 2, 256, 0.01, 0.0, 0.0), 2, sc) == (
        "ring", "2", "256", "0.01", "0.0", "0.0", "0.0", "0.0", "2", str(sc.seed + 2))
    assert row_key({"protocol": "ps", "seed": None}, TRAIN_KEY) == ("ps", "")


def test_every_row_and_the_header_are_fsynced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    log = CsvLog(tmp_path / "runs.csv", ["a", "b"])
    header = len(synced)
    log.append({"a": 1, "b": 2})
    log.append({"a": 3, "b": 4})
    assert header >= 1 and len(synced) == header + 2
    assert (tmp_path / "runs.csv").read_text() == "a,b\n1,2\n3,4\n"
    CsvLog(tmp_path / "runs.csv", ["a", "b"], resume=True).append({"a": 5, "b": 6})  # a resume appends
    assert read_rows(tmp_path / "runs.csv")[1][-1] == {"a": "5", "b": "6"}


def test_reopen_keeps_finished_runs_moves_failed_ones_and_drops_a_cut_line(tmp_path: Path, scenario: Path) -> None:
    sc = load_scenario(scenario)
    p1, p2, p3 = sc.runs()[:3]
    runs = tmp_path / "runs.csv"
    log = CsvLog(runs, [c for c in CSV_FIELDS if c != "veth_drops"])  # an older version's runs.csv: a column fewer
    log.append(replace(Row.failed(p1, 1, sc, ""), verified=True, elapsed_s=0.5).csv_row())
    log.append(Row.failed(p2, 1, sc, "RuntimeError: rank 1 timed out").csv_row())
    log.append(replace(Row.failed(p3, 1, sc, ""), verified=True).csv_row())
    with open(runs, "ab") as f:
        f.write(b"ring,2,256,0.0")  # the start of a row a crash cut short
    kept = reopen(runs, CSV_FIELDS, SWEEP_KEY, sweep.verified, normalize=lambda d: Row.from_csv(d).csv_row())
    assert kept.done == {sweep_key(p1, 1, sc), sweep_key(p3, 1, sc)} and kept.retried == 1
    header, rows = read_rows(runs)
    assert header == list(CSV_FIELDS) and [r["protocol"] for r in rows] == [p1.protocol, p3.protocol]
    assert Row.from_csv(rows[0]).elapsed_s == 0.5
    assert runs.read_bytes().endswith(b"\r\n")
    _, retried = read_rows(tmp_path / "retried.csv")
    assert [r["error"] for r in retried] == ["RuntimeError: rank 1 timed out"]
    # a file with columns this version does not write is refused, not rewritten
    runs.write_text("protocol,rep,from_the_future\nring,1,x\n")
    with pytest.raises(ResumeError, match="from_the_future"):
        reopen(runs, CSV_FIELDS, SWEEP_KEY)
    assert "from_the_future" in runs.read_text()


class _Net:
    """A network whose runs fail (recorded as failed rows): enough to see which runs a sweep makes."""

    ran: list[tuple[str, float, int]] = []

    def run(self, cfg: object, background: object) -> None:
        _Net.ran.append((cfg.protocol, cfg.loss, cfg.seed))  # type: ignore[attr-defined]
        raise RuntimeError("no network here")

    def close(self) -> None:
        pass


def test_a_resumed_sweep_runs_only_what_runs_csv_lacks(tmp_path: Path, scenario: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    sc = load_scenario(scenario)
    opened: list[object] = []
    monkeypatch.setattr(sweep, "open_network", lambda cfg, log: opened.append(cfg) or _Net())
    _Net.ran = []
    for name in ("p.json", "p.p4info.txt"):
        (tmp_path / name).write_text("{}")
    kw = dict(program_json=tmp_path / "p.json", p4info=tmp_path / "p.p4info.txt", progress=False)
    rows = sweep.run_scenario(sc, tmp_path, **kw)  # type: ignore[arg-type]
    assert len(rows) == len(_Net.ran) == 8 and len(opened) == 1
    every = {row_key(r, SWEEP_KEY) for r in read_rows(tmp_path / "runs.csv")[1]}
    # keep 5 of them as if they had verified: the resume runs the other 3 and appends their rows
    done = set(sorted(every)[:5])
    _Net.ran = []
    again = sweep.run_scenario(sc, tmp_path, done=done, **kw)  # type: ignore[arg-type]
    assert {sweep_key(RunPoint(r.protocol, r.workers, r.size, r.loss, r.straggler_ms, r.background_mbps), r.rep, sc)
            for r in again} == every - done
    assert sorted((p, loss, seed - sc.seed) for p, loss, seed in _Net.ran) == sorted(
        (r.protocol, r.loss, r.rep) for r in again)
    assert len(read_rows(tmp_path / "runs.csv")[1]) == 8 + 3  # appended, not rewritten (reopen() would drop failed)
    opened.clear()
    assert sweep.run_scenario(sc, tmp_path, done=every, **kw) == [] and opened == []  # nothing left: no network


def test_a_resume_takes_the_directorys_scenario_and_refuses_another(tmp_path: Path, scenario: Path) -> None:
    out = tmp_path / "tiny-20261129-101500"
    out.mkdir()
    (out / "scenario.toml").write_text(TOML.replace('name = "tiny"\n', ""))  # named by arguments.json, or the dir
    assert sweep.resumed_scenario(out).name == "tiny"
    remember(out, "experiments.sweep", {"scenario": "tiny", "file": str(scenario)})
    sc = sweep.resumed_scenario(out, scenario)
    assert sc.name == "tiny" and sc.runs() == load_scenario(scenario).runs()
    other = tmp_path / "other.toml"
    other.write_text(TOML.replace("loss = [0.0, 0.01]", "loss = [0.0, 0.05]"))
    with pytest.raises(ResumeError, match=r"refusing to resume .*differs in loss \(\(0.0, 0.01\) there, \(0.0, 0.05\)"):
        sweep.resumed_scenario(out, other)
    other.write_text(TOML.replace('"tiny"', '"big"'))
    with pytest.raises(ResumeError, match="made with scenario tiny .* is scenario big"):
        sweep.resumed_scenario(out, other)
    assert sweep.main([str(other), "--resume", str(out), "--list"]) == 2
    with pytest.raises(ResumeError, match="no scenario.toml"):
        sweep.resumed_scenario(tmp_path)


def test_stored_arguments_must_match_and_resolved_values_are_kept(tmp_path: Path) -> None:
    remember(tmp_path, "experiments.multitenant", {"jobs": 3, "bw": "auto", "protocols": ["switchml", "atp"],
                                                   "program_dir": Path("out")})
    resolve(tmp_path, "bw", 12.5)
    check_arguments(tmp_path, "experiments.multitenant", {"jobs": 3, "bw": "auto", "protocols": ["switchml", "atp"],
                                                          "program_dir": Path("out").resolve()})
    assert resolved(tmp_path) == {"bw": 12.5}
    with pytest.raises(ResumeError, match=r"--jobs 3 \(this command: 4\); --protocols switchml atp \(this command"):
        check_arguments(tmp_path, "experiments.multitenant", {"jobs": 4, "bw": "auto", "protocols": ["atp"],
                                                              "program_dir": Path("out")})
    with pytest.raises(ResumeError, match="made by experiments.multitenant, not experiments.train"):
        check_arguments(tmp_path, "experiments.train", {})
    (tmp_path / "x").mkdir()
    with pytest.raises(ResumeError, match="no arguments.json"):
        check_arguments(tmp_path / "x", "experiments.train", {})


def test_multitenant_skips_finished_repetitions_and_records_each(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    from types import SimpleNamespace

    import experiments.multitenant as mt
    import experiments.tenancy

    monkeypatch.setattr(experiments.tenancy, "num_elems", lambda path: 64 if "switchml" in str(path) else 32)

    class FakeNetwork:
        def __init__(self, cfg: object) -> None:
            self.jobs = [SimpleNamespace(job_id=k + 1) for k in range(cfg.jobs)]  # type: ignore[attr-defined]

        def __enter__(self) -> FakeNetwork:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def run_jobs(self, cfg: object) -> list[object]:
            return [SimpleNamespace(ps=None, workers=[], links={}, elapsed_s=1.0, correct=True, wire=(0, 0),
                                    bound=None, goodput=1000.0, retransmissions=0) for _ in self.jobs]

    monkeypatch.setattr(mt, "ExperimentNetwork", FakeNetwork)
    for name in ("switchml", "atp"):
        (tmp_path / f"{name}.json").write_text("{}")
        (tmp_path / f"{name}.p4info.txt").write_text("")
    recorded: list[list[tuple[str, int, int]]] = []
    rows = mt.run_multitenant(jobs=2, workers=2, size=1000, cells=16384, window=None, loss=0.0, reps=2,
                              program_dir=tmp_path, target=mt.Target.EMBEDDED, run_dir=tmp_path, progress=False,
                              done={mt.rep_key("switchml", 1), mt.rep_key("atp", 1), mt.rep_key("atp", 2)},
                              record=lambda rs: recorded.append([(r.protocol, r.rep, r.job) for r in rs]),
                              protocols=["switchml", "atp"])
    assert recorded == [[("switchml", 2, 1), ("switchml", 2, 2)]] and len(rows) == 2
    as_read = {k: str(v) for k, v in to_csv(rows[0]).items()}  # a runs.csv row as read back
    assert from_csv(mt.JobRow, as_read) == rows[0]
    assert row_key(as_read, MULTITENANT_KEY) == mt.rep_key("switchml", 2) == ("switchml", "2")


def test_a_training_run_reads_back_from_its_rows(tmp_path: Path) -> None:
    from experiments.bound import Bound
    from experiments.train import FIELDS, RUN_FIELDS, TrainRun, recorded_run

    records = [{"epoch": e, "step": 10 * e, "train_loss": 1.0 / e, "test_loss": 1.1 / e, "test_accuracy": 0.5 + e / 10,
                "elapsed_s": 1.5 * e, "comm_s": 1.0 * e} for e in (1, 2)]
    run = TrainRun("switchml", 3, records, 2410, Bound(link_busy=0.9, switch_busy=0.3, host_busy=0.2))
    CsvLog(tmp_path / "history.csv", FIELDS)
    CsvLog(tmp_path / "runs.csv", RUN_FIELDS).append(run.row(0.6))
    for r in records:
        CsvLog(tmp_path / "history.csv", FIELDS, resume=True).append({**r, "protocol": "switchml", "seed": 3})
    back = recorded_run(read_rows(tmp_path / "runs.csv")[1][0], read_rows(tmp_path / "history.csv")[1])
    assert back.records == records and back.bound is not None and back.bound.verdict == "network"
    assert {k: str(v) for k, v in back.row(0.6).items()} == {k: str(v) for k, v in run.row(0.6).items()}


def test_the_resume_hint_is_the_make_command_or_the_python_one(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "size-sweep-20261129-101500"
    monkeypatch.setenv(MAKE_COMMAND, "make experiment SCENARIO=experiments/scenarios/size-sweep.toml")
    assert resume_command("experiments.sweep", [], out) == \
        f"make experiment SCENARIO=experiments/scenarios/size-sweep.toml RESUME={out}"
    monkeypatch.delenv(MAKE_COMMAND)
    hint = resume_command("experiments.sweep", ["s.toml", "--resume", "old", "--no-progress"], out)
    assert hint.endswith(f"-m experiments.sweep s.toml --no-progress --resume {out}") and "old" not in hint


def test_figures_resume_the_sweep_they_started(tmp_path: Path) -> None:
    fig = Figure("straggler")
    assert sweep_command(fig, tmp_path)[-3:] == ["--results", str(tmp_path), "--no-progress"]
    (tmp_path / "straggler-20261129-101500").mkdir()
    (tmp_path / "straggler-extra-20261129-101501").mkdir()  # another figure's, whose name starts alike
    assert sweep_command(fig, tmp_path)[-3:] == ["--resume", str(tmp_path / "straggler-20261129-101500"),
                                                 "--no-progress"]


def test_after_the_first_ctrl_c_later_ones_do_not_interrupt(capsys: pytest.CaptureFixture[str]) -> None:
    before = signal.getsignal(signal.SIGINT)
    torn_down = False
    with stopping_cleanly():
        with pytest.raises(KeyboardInterrupt):
            try:
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(1)
            finally:  # a teardown: the second Ctrl-C arrives in it and does not cut it short
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.05)
                torn_down = True
    assert torn_down and "still stopping cleanly" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGINT) is before


def test_csv_rows_of_a_resume_can_be_written_by_csv_module(tmp_path: Path) -> None:
    """read_rows reads what the csv module writes, quoted fields with line breaks included (a worker's stderr)."""
    path = tmp_path / "runs.csv"
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows([["protocol", "error"], ["ring", "rank 0:\nTraceback\r\n  boom"], ["ps", ""]])
    assert read_rows(path)[1] == [{"protocol": "ring", "error": "rank 0:\nTraceback\r\n  boom"},
                                  {"protocol": "ps", "error": ""}]
