"""Bad values of every make knob and command-line flag a user types: one line of error, exit status 2, before any
network, switch or file is created (issue 26: `make run SIZE=-5` used to start Mininet and print four "exit 3" rows)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT

RUN = ("experiments.run",)
BAD_FLAGS: list[tuple[tuple[str, ...], str]] = [
    (("experiments.run", "--size", "-5"), "--size: -5 is not an integer >= 1"),
    (("experiments.run", "--size", "0"), "--size: 0 is not an integer >= 1"),
    (("experiments.run", "--size", "1k"), "--size: '1k' is not an integer >= 1"),
    (("experiments.run", "--workers", "0"), "--workers: 0 is not an integer in [1, 32]"),
    (("experiments.run", "--workers", "33"), "--workers: 33 is not an integer in [1, 32]"),
    (("experiments.run", "--loss", "1"), "--loss: 1 is not a probability in [0, 1)"),
    (("experiments.run", "--loss", "-0.1"), "--loss: -0.1 is not a probability in [0, 1)"),
    (("experiments.run", "--loss", "nan"), "--loss: 'nan' is not a number in [0, 1)"),
    (("experiments.run", "--bw", "0"), "--bw: 0 is not a number > 0"),
    (("experiments.run", "--bw", "fast"), "--bw: 'fast' is not a number > 0"),
    (("experiments.run", "--seed", "-1"), "--seed: -1 is not an integer >= 0"),
    (("experiments.run", "--dtype", "float16"), "--dtype: invalid choice: 'float16'"),
    (("experiments.run", "--protocol", "allgather"), "--protocol/--algo: invalid choice: 'allgather'"),
    (("experiments.run", "--target", "tofino"), "--target: invalid choice: 'tofino'"),
    (("experiments.run", "--topo", "ring"), "--topo: invalid choice: 'ring'"),
    (("experiments.run", "--topo", "twotier", "--racks", "0"), "--racks: 0 is not an integer >= 1"),
    (("experiments.run", "--topo", "twotier", "--racks", "5"), "4 worker hosts cannot fill 5 racks"),
    (("experiments.run", "--levels", "3"), "--levels: invalid choice: 3"),
    (("experiments.run", "--window", "65"), "window must be in [1, pool_size = 64], got 65"),
    (("experiments.run", "--pool-size", "0"), "--pool-size: 0 is not an integer in [1, 32768]"),
    (("experiments.run", "--timeout", "0"), "--timeout: 0 is not a number > 0"),
    (("experiments.run", "--fault-plan", "no-such-plan.toml"), "--fault-plan: no-such-plan.toml: no such file"),
    (("experiments.run", "--kill-rank", "9:1"), "kill_rank names rank 9; ranks are 0..3"),
    (("experiments.run", "--json", "nowhere.json"), "--json: nowhere.json: no such file"),
    (("experiments.run", "--program-dir", "nowhere"), "nowhere/switchml.json not found: run `make build` first"),
    (("experiments.run", "--protocol", "switchml", "--topo", "twotier"), "switchml aggregates in exactly one switch"),
    (("experiments.multitenant", "--jobs", "0"), "--jobs: 0 is not an integer >= 1"),
    (("experiments.multitenant", "--cells", "10"), "10 cells give switchml no slot"),
    (("experiments.multitenant", "--reps", "0"), "--reps: 0 is not an integer >= 1"),
    (("experiments.multitenant", "--jobs", "8", "--partitions", "3"), "--partitions 3 must divide the 8 jobs"),
    (("experiments.twolevel", "--racks", "3", "--workers", "2"), "2 worker hosts cannot fill 3 racks"),
    (("experiments.twolevel", "--loss", "2"), "--loss: 2 is not a probability in [0, 1)"),
    (("experiments.train", "--epochs", "0"), "--epochs: 0 is not an integer >= 1"),
    (("experiments.train", "--bw", "-3"), "--bw: -3 is not a number >= 0"),
    (("experiments.sweep", "no-such-scenario.toml"), "no-such-scenario.toml"),
    (("experiments.soak", "--runs", "0"), "--runs: 0 is not an integer >= 1"),
    (("experiments.soak", "--fuzz", "-1"), "--fuzz: -1 is not an integer >= 0"),
    (("experiments.soak", "--program-dir", "nowhere"), "nowhere/switchml.json not found: run `make build` first"),
    (("experiments.allreduce_perf", "-b", "1K", "-e", "512"), "-e 512 is below -b 1024"),
    (("experiments.allreduce_perf", "-b", "lots"), "-b/--minbytes: 'lots' is not a size like 4096, 4K, 1M"),
    (("experiments.allreduce_perf", "--workers", "1"), "--workers/-g: 1 is not an integer >= 2"),
    (("controller", "--grpc-addr", "nohost", "counters", "1"), "--grpc-addr: 'nohost' is not HOST:PORT"),
    (("controller", "--grpc-addr", "127.0.0.1:99999", "counters", "1"), "--grpc-addr: '127.0.0.1:99999': the port is not an integer in [1, 65535]"),
    (("controller", "--device-id", "-1", "counters", "1"), "--device-id: -1 is not an integer in [0,"),
    (("controller", "counters", "300"), "job_id: 300 is not a job id in [0, 255]"),
    (("controller", "slots", "-1", "2"), "first: -1 is not an integer >= 0"),
    (("controller", "slots", "0", "0"), "count: 0 is not an integer >= 1"),
    (("controller", "loss", "1", "--ingress", "1.5"), "--ingress: 1.5 is not a probability in [0, 1]"),
    (("controller", "loss", "600"), "port: 600 is not a switch port in [0, 511]"),
    (("controller", "setup", "no-job.json", "--p4info", "x", "--json", "y"), "job: no-job.json: no such file"),
    (("controller", "watch", "no-job.json"), "job: no-job.json: no such file"),
    (("controller", "ecn", "-2"), "threshold: -2 is not an integer >= 0"),
    (("controller", "job-create", "no-job.json", "--rack-port", "1"), "no-job.json: no such file"),
]


def _run(argv: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=120, env={**os.environ, **env})


@pytest.mark.parametrize(("argv", "message"), BAD_FLAGS, ids=[" ".join(a) for a, _ in BAD_FLAGS])
def test_a_bad_flag_is_one_line_before_anything_starts(argv: tuple[str, ...], message: str, tmp_path: Path,
                                                      program_dir: Path) -> None:
    module, *args = argv
    work = tmp_path / "cwd"
    work.mkdir()
    extra = ["--run-dir", str(tmp_path / "run")] if module == "experiments.run" else []
    extra += ["--results", str(tmp_path / "results")] if module in (
        "experiments.multitenant", "experiments.twolevel", "experiments.train", "experiments.sweep",
        "experiments.soak") else []
    if module in ("experiments.run", "experiments.multitenant", "experiments.twolevel", "experiments.soak",
                  "experiments.allreduce_perf"):
        extra += ["--program-dir", str(program_dir)]  # built, so that only the bad value is wrong (a later one wins)
    elif module in ("experiments.train", "experiments.sweep"):
        extra += ["--json", str(program_dir / "switchml.json"), "--p4info", str(program_dir / "switchml.p4info.txt")]
    r = _run([sys.executable, "-m", module, *extra, *args], work, PYTHONPATH=str(ROOT))
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "error: " in lines[0] and message in lines[0], r.stderr
    assert r.stdout == ""
    assert not any(work.iterdir()) and not (tmp_path / "run").exists() and not (tmp_path / "results").exists()


@pytest.mark.parametrize("knobs", [["run", "SIZE=-5"], ["run", "SIZE=0"], ["run", "WORKERS=0"], ["run", "LOSS=1.5"],
                                   ["run", "BW=-1"], ["run", "SEED=x"], ["run", "TARGET=tofino"],
                                   ["run", "PROTO=allgather"], ["run", "TOPO=twotier", "RACKS=9"],
                                   ["run", "FAULTS=no-such-plan.toml"], ["multitenant", "JOBS=0"],
                                   ["twolevel", "RACKS=0"], ["twolevel", "REPS=0"], ["soak", "SOAK_RUNS=0"],
                                   ["soak", "FUZZ=-1"],
                                   ["experiment", "SCENARIO=no-such.toml"]],
                         ids=lambda k: " ".join(k))
def test_a_bad_make_knob_is_one_line_before_anything_starts(knobs: list[str]) -> None:
    """make builds the programs first (out/), then the command refuses the value before Mininet or a switch."""
    before = set((ROOT / "results").iterdir()) if (ROOT / "results").exists() else set()
    r = _run(["make", "--no-print-directory", *knobs], ROOT)
    assert r.returncode != 0
    ours = [line for line in r.stderr.splitlines() if not re.match(r"make(\[\d+\])?: \*\*\*", line)]
    assert len(ours) == 1 and "error: " in ours[0] and "Traceback" not in r.stderr, r.stderr
    assert "Mininet" not in r.stdout and "Adding interface" not in r.stdout
    assert (set((ROOT / "results").iterdir()) if (ROOT / "results").exists() else set()) == before
