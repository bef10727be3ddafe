"""A sweep stopped by Ctrl-C leaves nothing running and resumes to the rows an uninterrupted sweep writes (needs
root: Mininet). The sweeps run as processes of their own, as `make experiment` runs them; SIGINT goes to the sweep's
process group, as a terminal's Ctrl-C does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from experiments.interrupt import INTERRUPTED, MAKE_COMMAND
from experiments.resume import SWEEP_KEY, read_rows, row_key
from tests.paths import ROOT
from topo.network import mininet_lock

pytestmark = [pytest.mark.mininet, pytest.mark.timeout(300),
              pytest.mark.skipif(os.geteuid() != 0, reason="Mininet needs root")]

# 2 points x 2 repetitions; the second point's last rank is 1.5 s late, so a Ctrl-C just after the first row lands in
# the middle of a run, its workers running in the hosts
SCENARIO = ('[scenario]\nname = "resume-test"\nrepetitions = 2\ntimeout_s = 20\n'
            '[sweep]\nprotocols = ["switchml"]\nworkers = [2]\nsizes = [256]\nstraggler_ms = [0, 1500]\n'
            '[report]\nx = "straggler_ms"\n')


def _tagged(tag: str) -> list[str]:
    """The processes whose environment carries tag: the sweep's and everything it started (switches, host shells,
    workers)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and tag.encode() in (proc / "environ").read_bytes():
                argv = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                found.append(f"{proc.name}: {argv[:120]}")
        except OSError:
            continue
    return found


def _at_rest() -> tuple[set[str], str]:
    """The root namespace's interfaces and the named namespaces, read while no Mininet network of this project
    exists (MININET_LOCK held)."""
    with mininet_lock():
        ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        return set(os.listdir("/sys/class/net")), ns


def _sweep(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "wb") as f:
        return subprocess.Popen([sys.executable, "-m", "experiments.sweep", *args, "--no-progress"], cwd=ROOT, env=env,
                                stdout=f, stderr=subprocess.STDOUT, start_new_session=True)


def _first_row(results: Path, proc: subprocess.Popen[bytes], wait_s: float = 240.0) -> Path:
    """The sweep's directory once its runs.csv has a row (the wait covers another test's network holding the lock)."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and proc.poll() is None:
        for runs in results.glob("*/runs.csv"):
            if len(read_rows(runs)[1]) >= 1:
                return runs.parent
        time.sleep(0.02)
    raise AssertionError(f"no row in {results}/*/runs.csv (sweep exit {proc.poll()})")


def test_ctrl_c_stops_cleanly_and_a_resume_completes_the_sweep(tmp_path: Path, program: tuple[Path, Path]) -> None:
    scenario = tmp_path / "resume-test.toml"
    scenario.write_text(SCENARIO)
    tag = f"INA_RESUME_TEST={uuid.uuid4().hex}"
    env = {k: v for k, v in os.environ.items() if k != MAKE_COMMAND}
    env[tag.split("=")[0]] = tag.split("=")[1]
    common = ["--json", str(program[0]), "--p4info", str(program[1])]
    links, namespaces = _at_rest()

    proc = _sweep([str(scenario), "--results", str(tmp_path / "results"), *common], env, tmp_path / "first.log")
    try:
        out = _first_row(tmp_path / "results", proc)
        time.sleep(0.5)  # into the straggler's run
        os.killpg(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=60) == INTERRUPTED, (tmp_path / "first.log").read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    text = (tmp_path / "first.log").read_text()
    assert _tagged(tag) == [], text  # no switch, host shell or worker of the sweep is left
    assert _at_rest() == (links, namespaces)  # no veth, no namespace
    lines = text.strip().splitlines()
    assert lines[-1].startswith("resume with: ") and lines[-1].endswith(f"--resume {out}"), text
    assert f"interrupted: 1 of 4 runs of resume-test recorded in {out}" in text, text

    resumed = _sweep([str(scenario), "--resume", str(out), *common], env, tmp_path / "resume.log")
    assert resumed.wait(timeout=120) == 0, (tmp_path / "resume.log").read_text()
    assert "resuming" in (tmp_path / "resume.log").read_text() and "1 of 4 runs done" in (
        tmp_path / "resume.log").read_text()
    whole = _sweep([str(scenario), "--results", str(tmp_path / "reference"), *common], env, tmp_path / "ref.log")
    assert whole.wait(timeout=120) == 0, (tmp_path / "ref.log").read_text()
    [reference] = list((tmp_path / "reference").iterdir())

    def runs(d: Path) -> dict[tuple[str, ...], tuple[str, str]]:
        rows = read_rows(d / "runs.csv")[1]
        keyed = {row_key(r, SWEEP_KEY): (r["verified"], r["error"]) for r in rows}
        assert len(keyed) == len(rows)  # each run once
        return keyed

    assert runs(out) == runs(reference) and len(runs(out)) == 4
    assert set(runs(out).values()) == {("1", "")}
    summary = (out / "summary.md").read_text()
    assert "| 2 | 0 |" in summary and "| 2 | 1500 |" in summary  # of every row: the first sweep's and the resume's
