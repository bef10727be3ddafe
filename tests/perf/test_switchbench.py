"""perf.switchbench: the harness compares the embedded switch with itself (netns), its report and ratios from
synthetic rows, and clear, bounded errors for switch commands that do not start or do not serve P4Runtime."""

from __future__ import annotations

import csv
import sys
import time
from pathlib import Path

import pytest

from perf import switchbench
from perf.checkout import Version
from perf.harness import Measurement, Settings, SwitchUnderTest
from perf.machine import machine_info
from perf.ratesearch import MAX_LOSS
from perf.switchbench import HarnessError, running_switch
from perf.switchreport import HISTORY_FIELDS, Report, headlines, markdown, ratio, write_report
from perf.workloads import Compiled
from topo.netns import EMBEDDED_SWITCH, FIXTURES, Host, SwitchProcess, free_tcp_port
from topo.switchproc import SwitchStartError

SELF = f"{sys.executable} -m switch"


def _rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(open(path)))


@pytest.mark.netns
@pytest.mark.timeout(300)
def test_embedded_switch_against_itself(tmp_path: Path) -> None:
    out = tmp_path / "switch.md"
    code = switchbench.main(["--quick", "--no-bmv2", "--compare", SELF, "--programs", "basic_forward", "agg_ternary",
                             "--compilers", "ours", "--out", str(out), "--work-dir", str(tmp_path / "work")])
    assert code == 0
    rows = _rows(out.with_suffix(".csv"))
    other = switchbench.switches_under_test([switchbench.parse_command(SELF)], bmv2=False)[1].name
    for prog in ("basic_forward", "agg_ternary"):
        found = {r["switch"]: r for r in rows if r["kind"] == "measurement" and r["program"] == prog
                 and r["mode"] == "loss-free"}
        over = {r["switch"]: r for r in rows if r["kind"] == "measurement" and r["program"] == prog
                and r["mode"] == "overload"}
        assert set(found) == set(over) == {"embedded", other}
        for sw, r in found.items():
            assert r["compiler"] == "ours"
            assert float(r["value"]) > 0 and int(r["probes"]) >= 2  # found by a search, not one probe
            assert float(r["loss"]) < MAX_LOSS  # the loss criterion holds at the reported rate
            assert float(r["value"]) <= float(r["offered_pps"])
            assert 0 < float(r["sender_cpu"]) and 0 <= float(r["receiver_cpu"])
            # the overload probe offered 3 x the loss-free rate (or the sender's most, which it says)
            o = over[sw]
            assert float(o["offered_pps"]) > 1.5 * float(r["value"]) or o["sender_limited"] == "1"
        meds = {r["mode"]: r for r in rows if r["kind"] == "ratio" and r["program"] == prog and r["rep"] == "median"}
        assert set(meds) == {"loss-free", "overload"}
        assert meds["loss-free"]["unit"] == f"embedded / {other}"
        assert 0.25 <= float(meds["loss-free"]["value"]) <= 4.0
        [eng] = [r for r in rows if r["kind"] == "engine" and r["program"] == prog and r["mode"] == "in-process"]
        assert "tables" in eng["note"] and "conditionals" in eng["note"]
    heads = {(r["mode"], r["rep"]): r for r in rows if r["kind"] == "headline"}
    assert set(heads) == {("loss-free", "minimum"), ("loss-free", "median"), ("overload", "minimum"),
                          ("overload", "median")}
    lf = [float(r["value"]) for r in rows if r["kind"] == "ratio" and r["mode"] == "loss-free"
          and r["rep"] == "median"]
    assert float(heads[("loss-free", "minimum")]["value"]) == pytest.approx(min(lf), abs=1e-4)
    text = out.read_text()
    assert "## Ratios" in text and f"| embedded / {other} |" in text and "## Machine" in text
    assert "## Headline: the family's minimum and median" in text and "µs per frame" in text
    assert "Only the embedded switch ran here" not in text


@pytest.mark.netns
@pytest.mark.timeout(300)
def test_switchml_job_on_the_embedded_switch(tmp_path: Path) -> None:
    out = tmp_path / "switch.md"
    assert switchbench.main(["--quick", "--no-bmv2", "--programs", "switchml", "--out", str(out),
                             "--work-dir", str(tmp_path / "work")]) == 0
    [row] = [r for r in _rows(out.with_suffix(".csv")) if r["kind"] == "measurement"]
    assert row["program"] == "switchml" and row["unit"] == "elements/s" and float(row["value"]) > 0
    assert "16384 float32 elements, 4 workers" in row["note"]
    text = out.read_text()
    assert "Only the embedded switch ran here" in text and "--compare" in text  # how to get a ratio elsewhere


@pytest.mark.netns
@pytest.mark.timeout(120)
def test_a_compare_command_that_does_not_start_is_one_clear_error(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    t0 = time.monotonic()
    code = switchbench.main(["--quick", "--no-bmv2", "--compare", "false", "--programs", "agg64",
                             "--engine-seconds", "0", "--out", str(tmp_path / "switch.md")])
    err = capsys.readouterr().err
    assert code == 1 and "error: switch 'false'" in err and "exited with code 1" in err
    assert time.monotonic() - t0 < 90


def test_compare_version_runs_that_version_s_switch_and_refuses_an_unknown_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert switchbench.version_switch(Path("/v")) == ("env", "PYTHONPATH=/v", sys.executable, "-m", "switch")
    v = Version(Path("/tmp/x"), "abc (exported)")
    suts = switchbench.switches_under_test([], False, [("abc", v), ("abc", v)])
    assert [s.name for s in suts] == ["embedded", "switch at abc", "switch at abc #2"]
    assert suts[1].shown == "env PYTHONPATH=<abc (exported)> python -m switch"
    code = switchbench.main(["--quick", "--no-bmv2", "--compare-version", "no-such-version-0x", "--programs", "agg64",
                             "--out", str(tmp_path / "switch.md")])
    err = capsys.readouterr().err
    if code == 2 and "needs root" in err:
        pytest.skip("the harness needs root")
    assert code == 2 and "error: no-such-version-0x: neither a directory nor a revision" in err
    assert not (tmp_path / "switch.md").exists()


def _fake_hosts() -> list[Host]:
    return [Host("-", "-", "lo", "02:00:00:00:01:01", "10.0.1.1", 1)]


def test_switch_process_errors_are_bounded_and_quote_the_command() -> None:
    addr = f"127.0.0.1:{free_tcp_port()}"
    args = ["--no-p4", "--", "--grpc-server-addr", addr]
    with pytest.raises(SwitchStartError, match="exited with code 1 during startup"):
        SwitchProcess(args, command=["false"])
    t0 = time.monotonic()
    with pytest.raises(SwitchStartError, match=rf"`sh -c 'sleep 30' .*` did not start: its P4Runtime address {addr} "
                                               r"was not open after 1 s"):
        SwitchProcess(args, ready_timeout=1.0, command=["sh", "-c", "sleep 30"])
    assert time.monotonic() - t0 < 10
    with pytest.raises(SwitchStartError, match="could not be run"):
        SwitchProcess(args, command=["/nonexistent/simple_switch_grpc"])


def test_a_switch_without_a_p4runtime_server_is_a_clear_error() -> None:
    # listens on the gRPC address and says so, but speaks no gRPC
    fake = ("import socket, sys, time; a = sys.argv[sys.argv.index('--grpc-server-addr') + 1]; "
            "h, p = a.rsplit(':', 1); s = socket.socket(); s.bind((h, int(p))); s.listen(); "
            "print('Server listening on', a, flush=True); time.sleep(60)")
    sut = SwitchUnderTest("mute", (sys.executable, "-c", fake))
    compiled = Compiled(FIXTURES / "basic_forward.json", FIXTURES / "basic_forward.p4info.txt")
    t0 = time.monotonic()
    with pytest.raises(HarnessError, match=r"switch 'mute' .*P4Runtime server .* within 1s"):
        with running_switch(sut, _fake_hosts(), compiled, start_timeout=10, rpc_timeout=1.0):
            pass
    assert time.monotonic() - t0 < 20


def test_switches_under_test_and_compare_commands() -> None:
    cmd = switchbench.parse_command("python -m switch --strict-bmv2")
    assert cmd == (sys.executable, "-m", "switch", "--strict-bmv2")
    suts = switchbench.switches_under_test([cmd, cmd], bmv2=False)
    assert [s.name for s in suts] == ["embedded", "python -m switch --strict-bmv2",
                                      "python -m switch --strict-bmv2 #2"]
    assert suts[0].command == EMBEDDED_SWITCH and suts[0].shown == "python -m switch"
    strict = SwitchUnderTest("strict", switchbench.parse_command("python -m switch --seed 3 -- --strict-bmv2"))
    assert strict.argv(["--no-p4"], ["--grpc-server-addr", "a:1"]) == (
        [sys.executable, "-m", "switch", "--seed", "3"], ["--no-p4", "--", "--grpc-server-addr", "a:1",
                                                          "--strict-bmv2"])
    assert suts[0].argv(["--no-p4"], ["--grpc-server-addr", "a:1"]) == (
        list(EMBEDDED_SWITCH), ["--no-p4", "--", "--grpc-server-addr", "a:1"])


def test_which_switch_runs_first_rotates_with_the_repetition() -> None:
    a, b, c = (SwitchUnderTest(n, ("x",)) for n in "abc")
    names = [[s.name for s in switchbench.turn_order([a, b, c], rep)] for rep in range(5)]
    assert names == [list("abc"), list("abc"), list("bca"), list("cab"), list("abc")]  # rep 0: the warm-up
    assert [s.name for s in switchbench.turn_order([a], 3)] == ["a"]


def _report(rows: list[Measurement], switches: list[str]) -> Report:
    return Report(machine_info(), Settings(reps=2), [SwitchUnderTest(n, ("x",)) for n in switches], rows, [],
                  "python -m compiler")


def test_ratios_pair_the_repetitions_and_the_report_says_what_is_absolute(tmp_path: Path) -> None:
    m = [Measurement("agg64", "embedded", 1, 40_000.0, "frames/s", 40_000.0, 0.0, 0.9, 7),
         Measurement("agg64", "bmv2", 1, 80_000.0, "frames/s", 80_000.0, 0.0002, 1.0, 8),
         Measurement("agg64", "embedded", 2, 30_000.0, "frames/s", 30_000.0, 0.0, 0.9, 7),
         Measurement("agg64", "bmv2", 2, 50_000.0, "frames/s", 50_000.0, 0.0, 1.0, 8),
         Measurement("switchml", "embedded", 1, 200_000.0, "elements/s", mode="job"),
         Measurement("switchml", "bmv2", 1, None, "elements/s", note="failed: rank 0: exit 2", mode="job")]
    # a second packet program, and p4c's JSON of agg64: the headline is per compiler, over the programs
    m += [Measurement("agg_ternary", sw, rep, v, "frames/s") for sw, rep, v in
          (("embedded", 1, 90.0), ("bmv2", 1, 30.0), ("embedded", 2, 100.0), ("bmv2", 2, 50.0))]
    m += [Measurement("agg64", sw, 1, v, "frames/s", compiler="p4c") for sw, v in (("embedded", 20.0), ("bmv2", 10.0))]
    r = ratio(m, ("agg64", "ours", "loss-free"), "embedded", "bmv2")
    assert r.per_rep == (0.5, 0.6) and r.median == pytest.approx(0.55)
    assert ratio(m, ("switchml", "ours", "job"), "embedded", "bmv2").median is None  # no pair: no ratio
    report = _report(m, ["embedded", "bmv2"])
    heads = {h.compiler: h for h in headlines(report)}
    assert heads["ours"].per_program == (("agg64", pytest.approx(0.55)), ("agg_ternary", pytest.approx(2.5)))
    assert heads["ours"].minimum[0] == "agg64" and heads["ours"].median == pytest.approx(1.525)
    assert heads["p4c"].per_program == (("agg64", 2.0),)
    text = markdown(report, "switch.csv")
    assert "**Absolute figures**" in text and "**Ratios**" in text
    assert "| ours | loss-free | embedded / bmv2 | **0.55** (agg64) | **1.52** | 2 |" in text
    assert "| agg64 (64 × int32 into registers) [ours] | embedded / bmv2 | **0.55** | 0.50, 0.60 |" in text
    assert "| agg64 (64 × int32 into registers) [p4c] | embedded / bmv2 | **2.00** | 2.00 |" in text
    assert "| agg64 (64 × int32 into registers) [ours] | bmv2 | **65.0 kpps** | 80.0 kpps, 50.0 kpps | ≤ 0.020 % |" \
        in text
    assert "failed: rank 0: exit 2" in text
    write_report(report, tmp_path / "switch.md")
    rows = _rows(tmp_path / "switch.csv")
    assert [r["value"] for r in rows if r["kind"] == "ratio" and r["program"] == "agg64" and r["compiler"] == "ours"] \
        == ["0.5000", "0.6000", "0.5500"]
    # every run appends its per-repetition ratios, with its commit and machine, to the history next to the report
    write_report(report, tmp_path / "switch.md")
    history = _rows(tmp_path / "switch-history.csv")
    assert [(h["program"], h["compiler"], h["switch"], h["base"], h["rep"], h["ratio"]) for h in history
            if h["program"] == "agg64"] == \
        [("agg64", "ours", "embedded", "bmv2", "1", "0.5000"), ("agg64", "ours", "embedded", "bmv2", "2", "0.6000"),
         ("agg64", "p4c", "embedded", "bmv2", "1", "2.0000")] * 2
    assert {h["commit"] for h in history} == {report.machine["commit"]} and history[0]["cpu"]


def test_history_summary_gives_each_run_s_family_headline_and_its_range(tmp_path: Path) -> None:
    from perf import switchhistory

    path = tmp_path / "h.csv"
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=HISTORY_FIELDS)
        w.writeheader()
        for date, commit, scale in (("d1", "c1", 1.0), ("d2", "c2", 2.0)):
            for prog, ratios in (("agg64", (4.0, 6.0)), ("l2l3_acl", (2.0, 3.0)), ("switchml", (9.0, 9.0))):
                for rep, v in enumerate(ratios, 1):
                    w.writerow({"date": date, "commit": commit, "compiler": "p4c", "program": prog,
                                "mode": "job" if prog == "switchml" else "loss-free", "switch": "embedded",
                                "base": "bmv2", "rep": rep, "ratio": v * scale})
    text = switchhistory.summary(switchhistory.load(path))
    # run 1: medians 5.0 and 2.5 -> minimum 2.5 (l2l3_acl), median 3.75; run 2 doubles them; the job is not family
    assert "| d1 | c1 | p4c | loss-free | 2.50 (l2l3_acl) | 3.75 |" in text
    assert "| p4c | loss-free | **3.75** (2.50–5.00) | **5.62** (3.75–7.50) | 2 |" in text
    assert "| switchml | p4c | job | **13.50** | 9.00–18.00 | 4 |" in text
    assert switchhistory.summary(switchhistory.load(path), last=1).count("| d1 |") == 0
    assert switchhistory.main([str(tmp_path / "none.csv")]) == 2
