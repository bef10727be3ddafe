"""AtpController against the embedded switch over real P4Runtime: job roles, aggregation to the PS, ACK, aggregator
inspection, ECN threshold, loss, counters."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from compiler import compile_file
from controller.atp import ECN_OFF, AtpController
from controller.registers import P4RuntimeRegisters
from switch.v1model import V1Switch
from tests.paths import ROOT
from topo.inprocess import frame
from worker.atp.header import ACK, ATP_UDP_PORT, ECN, AtpCodec, AtpHeader
from worker.job import JobConfig

N = 16


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("atp")
    result = compile_file(str(ROOT / "p4src" / "atp.p4"), defines={"ATP_NUM_ELEMS": str(N), "ATP_NUM_AGTR": "64"})
    (out / "atp.json").write_text(json.dumps(result.json))
    (out / "atp.p4info.txt").write_text(result.p4info_text)
    return out / "atp.p4info.txt", out / "atp.json"


def job_config(job_id: int = 3, n: int = 2) -> JobConfig:
    return JobConfig.from_dict({
        "job_id": job_id, "num_elems": N, "switch": {"ip": "10.0.0.254", "mac": "00:00:0a:00:00:fe"},
        "pool": {"base": 0, "size": 64},
        "workers": [{"rank": r, "ip": f"10.0.0.{r + 1}", "mac": f"00:00:0a:00:00:{r + 1:02x}",
                     "udp_port": 50000 + r, "switch_port": r + 1} for r in range(n)],
        "ps": {"ip": "10.0.0.9", "mac": "00:00:0a:00:00:09", "switch_port": 9}})


@pytest.fixture
def rig(program: tuple[Path, Path], serve) -> tuple[V1Switch, AtpController, AtpCodec]:
    sw, client = serve(program)
    return sw, AtpController(client, P4RuntimeRegisters(client)), AtpCodec.from_program_json(program[1])


def test_job_aggregates_to_the_ps_and_the_ack_frees_and_reaches_every_worker(rig) -> None:
    sw, ctl, codec = rig
    job = job_config()
    ps = job.ps
    assert ps is not None
    hosts = [(w.mac, w.switch_port) for w in job.workers] + [(ps.mac, ps.switch_port)]
    ctl.install_forwarding(hosts, [p for _, p in hosts])
    assert ctl.create_job(job) == job.job_id + 1
    ctl.reset_job(job)
    vals = [np.arange(N, dtype=np.int32) * (r + 1) for r in range(2)]
    out = []
    for r, w in enumerate(job.workers):
        h = AtpHeader(bitmap0=1 << r, fan_in0=2, fan_in1=1, job_id=job.job_id, seq=1, agtr=7, rank=r)
        out = sw.process(w.switch_port, frame(w.mac, ps.mac, w.ip, ps.ip, w.udp_port, ATP_UDP_PORT,
                                              codec.encode(h, vals[r])))
        if r == 0:
            (state,) = ctl.aggregators(7, 1)
            assert (state.job_id, state.seq, state.contributors(), state.count) == (job.job_id, 1, [0], 1)
            assert ctl.occupancy(0, 64) == {job.job_id: 1}
    assert [p for p, _ in out] == [ps.switch_port]
    agg_hdr, agg = codec.decode(out[0][1][42:])
    assert agg_hdr.bitmap0 == 0b11 and np.array_equal(agg, vals[0] + vals[1])
    ack = AtpHeader(bitmap0=0b11, flags=ACK, job_id=job.job_id, seq=1, agtr=7, agtr_next=7)
    got = sw.process(ps.switch_port, frame(ps.mac, job.switch.mac, ps.ip, job.switch.ip, ATP_UDP_PORT, ATP_UDP_PORT,
                                           codec.encode(ack, agg)))
    assert sorted(p for p, _ in got) == [w.switch_port for w in job.workers]
    assert ctl.aggregators(7, 1)[0].free and ctl.occupancy(0, 64) == {}
    c = ctl.counters(job.job_id)
    assert c["atp_received"][0] == 3 and c["atp_aggregated"][0] == 2 and c["atp_freed"][0] == 1
    assert c["atp_acks_sent"][0] == 2


def test_ecn_threshold_and_loss_are_set_over_p4runtime(rig) -> None:
    sw, ctl, codec = rig
    job = job_config(n=1)
    ps = job.ps
    assert ps is not None
    ctl.install_forwarding([(ps.mac, ps.switch_port)], [ps.switch_port])
    ctl.create_job(job)
    w = job.workers[0]

    def send(seq: int) -> AtpHeader:
        h = AtpHeader(bitmap0=1, fan_in0=1, fan_in1=1, job_id=job.job_id, seq=seq, agtr=seq, rank=0)
        (out,) = sw.process(w.switch_port, frame(w.mac, ps.mac, w.ip, ps.ip, w.udp_port, ATP_UDP_PORT,
                                                 codec.encode(h, np.zeros(N, dtype=np.int32))))
        return codec.decode(out[1][42:])[0]

    assert not send(1).flags & ECN
    ctl.set_ecn_threshold(0)
    assert send(2).flags & ECN
    ctl.set_ecn_threshold(None)
    assert not send(3).flags & ECN
    with pytest.raises(ValueError):
        ctl.set_ecn_threshold(ECN_OFF + 1)
    ctl.set_drop_probability(w.switch_port, ingress=1.0)
    h = AtpHeader(bitmap0=1, fan_in0=1, fan_in1=1, job_id=job.job_id, seq=4, agtr=4)
    assert sw.process(w.switch_port, frame(w.mac, ps.mac, w.ip, ps.ip, w.udp_port, ATP_UDP_PORT,
                                           codec.encode(h, np.zeros(N, dtype=np.int32)))) == []
    assert ctl.counters(job.job_id)["atp_drop_sim_ingress"][0] == 1


def test_a_job_without_a_ps_is_refused(rig) -> None:
    _, ctl, _ = rig
    d = job_config().to_dict()
    del d["ps"]
    with pytest.raises(ValueError, match="parameter server"):
        ctl.create_job(JobConfig.from_dict(d))
