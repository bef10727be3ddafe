"""docs/controller.md's "Drive a switch by hand", run as written: namespaces and veths, a switch started by hand,
setup from docs/examples/job.json, an all-reduce, counters, slots, watch, and a bad job file that changes nothing."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from compiler import compile_file
from tests.paths import ROOT
from worker.job import JobConfig
from worker.protocols import protocol_of_program

DOC = ROOT / "docs" / "controller.md"
EXAMPLE = ROOT / "docs" / "examples" / "job.json"


def walkthrough() -> str:
    """The sh block of the section, verbatim."""
    text = DOC.read_text()
    section = text[text.index("## Drive a switch by hand"):]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1)


def cleanup() -> None:
    subprocess.run(["pkill", "-f", "switch --no-p4 -i 1@ina-s1"], check=False)
    for i in (1, 2, 3):
        subprocess.run(["ip", "netns", "del", f"ina-h{i}"], capture_output=True, check=False)
        subprocess.run(["ip", "link", "del", f"ina-s{i}"], capture_output=True, check=False)


def test_the_example_job_file_loads_and_fits_the_program() -> None:
    job = JobConfig.load(EXAMPLE)
    assert job.num_workers == 3 and job.pool.size == 8
    assert job.num_elems == protocol_of_program(compile_file(str(ROOT / "p4src" / "switchml.p4")).json)[2]
    commands = walkthrough()
    for w in job.workers:  # the walkthrough's hosts are the job file's
        assert f"00:00:0a:00:00:0{w.rank + 1}" == w.mac and f"10.0.0.{w.rank + 1}" == w.ip
    assert f"lladdr {job.switch.mac}" in commands and job.switch.ip in commands


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ethtool"), reason="needs root and ethtool")
def test_the_walkthrough_runs_as_documented(tmp_path: Path) -> None:
    cleanup()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    log, err = tmp_path / "stdout", tmp_path / "stderr"
    try:  # into files: a switch left running by a failed step must not hold a pipe open
        with open(log, "w") as o, open(err, "w") as e:
            code = subprocess.run(["bash", "-e", "-c", walkthrough()], cwd=ROOT, env=env, stdout=o, stderr=e,
                                  timeout=240).returncode
    finally:
        cleanup()
    out, stderr = log.read_text(), err.read_text()
    assert code == 0, out[-3000:] + stderr[-3000:]
    assert "pipeline switchml pushed to 127.0.0.1:9559" in out and "job 1: 3 workers, slots [0, 8)" in out
    assert out.count("verify ok") == 3, out
    # what the workers sent, retransmissions included (a busy machine can make a worker resend): 216 = 3 x 72 first
    sent = sum(int(m) for m in re.findall(r"^rank \d .* (\d+) packets, ", out, re.M))
    assert sent >= 216 and len(re.findall(r"^rank \d ", out, re.M)) == 3, out
    received = [int(m) for m in re.findall(r"^ina_received\s+(\d+) pkts", out, re.M)]
    assert received == [0, sent, sent, sent, sent]  # before, after, twice in watch, after the refused setup
    assert re.search(r"^\s+7\s+0\s+0{29}111\s+0\s+\d+\s+0,1,2$", out, re.M), out
    assert "/tmp/ina-bad-job.json: job: missing key 'switch'" in stderr
