"""PyTorch DDP through the embedded switch: two `python -m worker.training.ddp` processes on localhost, gloo for
DDP's set-up, every gradient bucket all-reduced by switchml.p4 running on the embedded engine (behind real UDP
sockets) — by DDP's comm hook, or by the "ina" torch.distributed backend — and checked against the exact sum within
SwitchML's quantization bound and against gloo's all-reduce. Skipped without torch (an optional extra: `make torch`)."""

from __future__ import annotations

import json
import os
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


@pytest.mark.parametrize("backend", ["hook", "ina"])
def test_ddp_trains_through_the_switch_within_the_quantization_bound(tmp_path: Path, backend: str) -> None:
    """`hook`: gloo process group + the comm hook; `ina`: the torch.distributed backend, DDP unmodified."""
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
             "--hidden", "64", "--check", "--backend", backend],
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


SCRIPT = """
import json, sys, datetime, torch, torch.distributed as dist
import worker.training.torch_backend
rank = int(sys.argv[1])
dist.init_process_group("ina", init_method=sys.argv[2], rank=rank, world_size=2,
                        timeout=datetime.timedelta(seconds=60))
pg = dist.group.WORLD
out = {"backend": dist.get_backend()}
t = torch.arange(200, dtype=torch.float32) * (rank + 1); dist.all_reduce(t); out["sum"] = t[:3].tolist()
out["through_switch"] = len(pg.checks)
m = torch.tensor([float(rank), 5.0 - rank]); dist.all_reduce(m, op=dist.ReduceOp.MAX); out["max"] = m.tolist()
d = torch.tensor([0.1 * (rank + 1)], dtype=torch.float64); dist.all_reduce(d); out["f64"] = d.tolist()
i = torch.tensor([7 * (rank + 1)], dtype=torch.int32); dist.all_reduce(i); out["i32"] = i.tolist()
b = torch.tensor([float(rank + 10)]); dist.broadcast(b, src=1); out["bcast"] = b.tolist()
g = [torch.zeros(1) for _ in range(2)]; dist.all_gather(g, torch.tensor([float(rank)])); out["gather"] = [x.item() for x in g]
dist.barrier()
out["through_switch_after"] = len(pg.checks)
dist.destroy_process_group()
print(json.dumps(out))
"""


def test_the_ina_backend_sends_sums_to_the_switch_and_the_rest_to_gloo(tmp_path: Path) -> None:
    prog = program_dict(64, 64)
    program_path = tmp_path / "switchml.json"
    program_path.write_text(json.dumps(prog))
    job = local_job(2, num_elems=64, size=32)
    job.save(tmp_path / "job.json")
    script = tmp_path / "s.py"
    script.write_text(SCRIPT)
    init = f"tcp://127.0.0.1:{free_tcp_port()}"
    with UdpRefSwitch(EngineSwitch(prog, job, p4info(64, 64))) as server:
        env = {**os.environ, "INA_JOB": str(tmp_path / "job.json"), "INA_PROGRAM_JSON": str(program_path),
               "INA_SWITCH_PORT": str(server.address[1]), "INA_CHECK": "1", "PYTHONPATH": str(ROOT)}
        procs = [subprocess.Popen([sys.executable, str(script), str(r), init], cwd=ROOT, env=env, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE) for r in range(2)]
        outs = [p.communicate(timeout=120) for p in procs]
    assert server.model.errors == []
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-2000:]
        r = json.loads(out.splitlines()[-1])
        assert r["backend"] == "ina" and r["sum"] == [0.0, 3.0, 6.0]
        assert r["max"] == [1.0, 5.0] and r["f64"] == pytest.approx([0.3]) and r["i32"] == [21]
        assert r["bcast"] == [11.0] and r["gather"] == [0.0, 1.0]
        # one float32 SUM verified through the switch; MAX and float64 went to gloo, int32 SUM to the switch unchecked
        assert r["through_switch"] == 1 and r["through_switch_after"] == 1
