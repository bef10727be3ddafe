"""PyTorch DDP through the embedded switch: two `python -m worker.training.ddp` processes on localhost, gloo for
DDP's set-up, every gradient bucket all-reduced by switchml.p4 running on the embedded engine (behind real UDP
sockets) and checked against the exact sum within SwitchML's quantization bound and against gloo's all-reduce.
Skipped without torch (an optional extra: `make torch`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT
from tests.worker.ina_engine import EngineSwitch, p4info, program_dict
from tests.worker.ina_udpswitch import UdpRefSwitch, local_job

pytest.importorskip("torch")
pytestmark = [pytest.mark.torch, pytest.mark.timeout(300)]


def free_tcp_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_ddp_trains_through_the_switch_within_the_quantization_bound(tmp_path: Path) -> None:
    prog = program_dict(64, 64)
    program_path = tmp_path / "switchml.json"
    program_path.write_text(json.dumps(prog))
    job = local_job(2, num_elems=64, size=32)
    job_path = tmp_path / "job.json"
    job.save(job_path)
    init = f"tcp://127.0.0.1:{free_tcp_port()}"
    with UdpRefSwitch(EngineSwitch(prog, job, p4info(64, 64))) as server:
        procs = [subprocess.Popen(
            [sys.executable, "-m", "worker.training.ddp", "--job", str(job_path), "--rank", str(r), "--init", init,
             "--program-json", str(program_path), "--switch-port", str(server.address[1]), "--steps", "6",
             "--hidden", "64", "--check"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for r in range(2)]
        outs = [p.communicate(timeout=240) for p in procs]
    assert server.model.errors == []
    reports = []
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, out[-2000:] + err[-2000:]
        lines = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
        steps = [x for x in lines if "step" in x]
        assert [s["step"] for s in steps] == list(range(1, 7))
        buckets = [b for s in steps for b in s["buckets"]]
        # every bucket: the switch's sum within SwitchML's bound of the exact sum, gloo's within float32's
        assert buckets and all(b["ok"] and b["of_bound"] <= 1.0 for b in buckets)
        assert sum(b["elements"] for b in steps[0]["buckets"]) == 64 * 64 + 64 + 64 * 64 + 64 + 64 * 10 + 10
        # quantized, so not bit-equal to gloo's float sum, but close: the gradients are O(0.1)
        assert max(b["max_diff_vs_gloo"] for b in buckets) < 1e-5
        assert steps[-1]["loss"] < steps[0]["loss"]
        reports.append(lines[-1])
    assert all(r["done"] for r in reports)
    assert reports[0]["digest"] == reports[1]["digest"]  # both ranks hold the same model after every step
