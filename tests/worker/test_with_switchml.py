"""The worker against the real switch program: codec derived from the compiled switchml.p4, and all-reduces whose
packets run through the embedded engine executing it (skipped until compiler and engine are available)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.paths import ROOT
from tests.worker.ina_engine import EngineSwitch, p4info, program_dict
from tests.worker.ina_fixtures import make_job
from tests.worker.ina_netsim import Link, run_allreduce
from tests.worker.ina_udpswitch import UdpRefSwitch, free_udp_ports
from worker.driver import WindowOptions
from worker.job import JobConfig
from worker.switchml.header import Codec
from worker.switchml.scapy_layers import make_ina_layer
from worker.switchml.window import SwitchUnreachable
from worker.verify import rank_input
from worker.switchml.verify import verify

REPO = ROOT

OPTS = WindowOptions(window=8, timeout=0.02, backoff=2.0, max_timeout=0.1, max_retries=8)


@pytest.mark.parametrize("num_elems", [16, 64])
def test_codec_derived_from_compiled_program(num_elems: int) -> None:
    codec = Codec.from_program_json(program_dict(num_elems, 64))
    assert [(f.name, f.width) for f in codec.ina.fields] == [
        ("msg_type", 8), ("job_id", 8), ("pool_index", 16), ("packet_id", 32), ("exponent", 8), ("flags", 8),
        ("worker_rank", 16)]
    assert codec.header_len == 12 and codec.num_elems == num_elems and codec.packet_len == 12 + 4 * num_elems
    layer = make_ina_layer(codec)
    assert len(bytes(layer())) == codec.packet_len


@pytest.mark.parametrize("mode", ["int32", "float32"])
@pytest.mark.parametrize("link", [Link(), Link(loss=0.03, latency=0.001, jitter=0.002)], ids=["clean", "lossy"])
def test_allreduce_through_engine(mode: str, link: Link) -> None:
    prog = program_dict(16, 64)
    codec = Codec.from_program_json(prog)
    job = make_job(3, num_elems=16, base=8, size=16)
    engine = EngineSwitch(prog, job, p4info(16, 64))
    inputs = [rank_input(16 * 40 + 5, 8, r, mode) for r in range(3)]
    res = run_allreduce(job, codec, inputs, mode=mode, options=OPTS, link=link, seed=2, switch=engine)
    assert engine.errors == []
    for out, plan in zip(res.outputs, res.plans):
        v = verify(out, inputs, 16, mode, getattr(plan, "agreed", None))
        assert v.ok, v.message
    if link.loss:
        assert sum(w.stats.retransmissions for w in res.windows) > 0
    assert np.array_equal(res.outputs[0], res.outputs[2])


def test_switch_program_drop_simulator_loss_is_recovered() -> None:
    """Loss injected by switchml.p4's own drop simulator (what `make run LOSS=...` uses), both directions."""
    prog = program_dict(16, 64)
    codec = Codec.from_program_json(prog)
    job = make_job(2, num_elems=16, size=8)
    engine = EngineSwitch(prog, job, p4info(16, 64))
    engine.sw.rng.seed(11)  # the drop simulator's random(): repeatable, so both directions surely lose some
    for w in job.workers:  # ~3 % per direction
        engine.sw.tables["SwitchMLIngress.drop_sim_ingress"].insert(
            (w.switch_port,), "SwitchMLIngress.set_ingress_drop_prob", [2000])
        engine.sw.tables["SwitchMLEgress.drop_sim_egress"].insert(
            (w.switch_port,), "SwitchMLEgress.set_egress_drop_prob", [2000])
    inputs = [rank_input(16 * 60, 3, r, "int32") for r in range(2)]
    res = run_allreduce(job, codec, inputs, mode="int32", options=OPTS, seed=1, switch=engine)
    assert verify(res.outputs[0], inputs, 16, "int32").ok and verify(res.outputs[1], inputs, 16, "int32").ok
    dropped_in = engine.sw.counters["SwitchMLIngress.ina_drop_sim_ingress"].read(job.job_id)[0]
    dropped_out = engine.sw.counters["SwitchMLEgress.ina_drop_sim_egress"].read(job.job_id)[0]
    assert dropped_in > 0 and dropped_out > 0
    assert sum(w.stats.retransmissions for w in res.windows) > 0
    assert engine.errors == []


def test_switch_program_gone_gives_clear_error() -> None:
    prog = program_dict(16, 64)
    codec = Codec.from_program_json(prog)
    job = make_job(2, num_elems=16, size=8)
    engine = EngineSwitch(prog, job, p4info(16, 64))
    inputs = [rank_input(16 * 100, 3, r, "float32") for r in range(2)]
    with pytest.raises(SwitchUnreachable, match=r"\(slot \d, set [01]\) after 9 transmissions"):
        run_allreduce(job, codec, inputs, mode="float32", options=OPTS, switch=engine, switch_dies_at=0.02)


def test_cli_workers_against_switch_program_over_udp(tmp_path: Path) -> None:
    """Three `python -m worker` processes, real UDP sockets, the compiled program on the engine: verified result."""
    prog = program_dict(16, 64)
    program_path = tmp_path / "switchml.json"
    program_path.write_text(json.dumps(prog))
    ports = free_udp_ports(3)
    d = make_job(3, num_elems=16, size=16).to_dict()
    d["switch"]["ip"] = "127.0.0.1"
    for w, p in zip(d["workers"], ports):
        w["ip"], w["udp_port"] = "127.0.0.1", p
    job = JobConfig.from_dict(d)
    job_path = tmp_path / "job.json"
    job.save(job_path)
    with UdpRefSwitch(EngineSwitch(prog, job, p4info(16, 64))) as server:
        procs = [subprocess.Popen(
            [sys.executable, "-m", "worker", "--job", str(job_path), "--rank", str(r), "--program-json",
             str(program_path), "--switch-port", str(server.address[1]), "--size", "5000", "--verify", "--json",
             "--window", "16"],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for r in range(3)]
        outs = [p.communicate(timeout=120) for p in procs]
    assert server.model.errors == []
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        rep = json.loads(out)
        assert rep["verified"] and rep["max_error_over_bound"] <= 1.0 and rep["size"] == 5000
