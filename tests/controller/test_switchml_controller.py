"""SwitchMLController against the embedded switch over real P4Runtime: job setup, reduction, inspection, loss."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from compiler import compile_file
from controller.client import ControllerError, P4RuntimeClient
from controller.registers import P4RuntimeRegisters
from controller.switchml import SwitchMLController
from switch.runtime import P4RuntimeServer
from switch.v1model import V1Switch
from tests.paths import ROOT
from worker.job import JobConfig
from worker.switchml.header import INA_UDP_PORT, MSG_DATA, MSG_RESULT, Codec, InaHeader, pool_index

NUM_ELEMS = 16
POOL = 8


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("switchml")
    result = compile_file(str(ROOT / "p4src" / "switchml.p4"),
                          defines={"INA_NUM_ELEMS": str(NUM_ELEMS), "INA_POOL_SIZE": str(POOL)})
    (out / "switchml.json").write_text(json.dumps(result.json))
    (out / "switchml.p4info.txt").write_text(result.p4info_text)
    return out / "switchml.p4info.txt", out / "switchml.json"


def job_config(job_id: int = 3, n: int = 2, base: int = 2, size: int = 4) -> JobConfig:
    return JobConfig.from_dict({
        "job_id": job_id, "num_elems": NUM_ELEMS, "switch": {"ip": "10.0.0.254", "mac": "00:00:0a:00:00:fe"},
        "pool": {"base": base, "size": size},
        "workers": [{"rank": r, "ip": f"10.0.0.{r + 1}", "mac": f"00:00:0a:00:00:{r + 1:02x}",
                     "udp_port": 50000 + r, "switch_port": r + 1} for r in range(n)]})


class Rig:
    """An in-process switch with its P4Runtime server and a connected SwitchMLController."""

    def __init__(self, program: tuple[Path, Path]) -> None:
        self.sw = V1Switch(device_id=1)
        self.server = P4RuntimeServer(self.sw, device_id=1)
        port = self.server.start("127.0.0.1:0")
        self.client = P4RuntimeClient(f"127.0.0.1:{port}", device_id=1, election_id=5).connect()
        self.client.set_pipeline(*program)
        self.ctl = SwitchMLController(self.client, P4RuntimeRegisters(self.client))
        self.codec = Codec.from_program_json(program[1])

    def data(self, job: JobConfig, rank: int, slot: int, set_: int, values: list[int], exponent: int = 0) -> bytes:
        w = job.workers[rank]
        hdr = InaHeader(msg_type=MSG_DATA, job_id=job.job_id, pool_index=pool_index(slot, set_), packet_id=slot,
                        exponent=exponent, flags=0, worker_rank=rank)
        payload = self.codec.encode(hdr, np.array(values, dtype=np.int32))
        pkt = (Ether(src=w.mac, dst=job.switch.mac) / IP(src=w.ip, dst=job.switch.ip)
               / UDP(sport=w.udp_port, dport=INA_UDP_PORT) / payload)
        return bytes(pkt)

    def close(self) -> None:
        self.client.close()
        self.server.stop()


@pytest.fixture
def rig(program: tuple[Path, Path]) -> Iterator[Rig]:
    r = Rig(program)
    yield r
    r.close()


def test_job_reduces_and_is_inspectable(rig: Rig) -> None:
    job = job_config()
    rig.ctl.install_forwarding([(w.mac, w.switch_port) for w in job.workers], [1, 2])
    mgid = rig.ctl.create_job(job)
    assert rig.sw.pre.groups[mgid] == [(1, 0), (2, 1)]

    a, b = list(range(NUM_ELEMS)), [1000 * i - 7 for i in range(NUM_ELEMS)]
    assert rig.sw.process(1, rig.data(job, 0, slot=3, set_=1, values=a, exponent=130)) == []
    out = rig.sw.process(2, rig.data(job, 1, slot=3, set_=1, values=b, exponent=133))
    assert sorted(port for port, _ in out) == [1, 2]
    for port, frame in out:
        pkt = Ether(frame)
        w = job.workers[port - 1]
        assert (pkt[Ether].dst, pkt[IP].dst, pkt[UDP].dport, pkt[UDP].sport) == (w.mac, w.ip, w.udp_port,
                                                                                 INA_UDP_PORT)
        hdr, values = rig.codec.decode(bytes(pkt[UDP].payload))
        assert (hdr.msg_type, hdr.exponent, hdr.pool_index) == (MSG_RESULT, 133, pool_index(3, 1))
        assert 1 <= hdr.flags >> 1 <= 127 and hdr.flags >> 1 == rig.ctl._epochs[job.job_id]  # the job's epoch
        assert values.tolist() == [x + y for x, y in zip(a, b)]

    counters = rig.ctl.counters(job.job_id)
    assert counters["ina_received"][0] == 2
    assert counters["ina_aggregated"][0] == 2
    assert counters["ina_multicast"][0] == 1
    assert counters["ina_results_sent"][0] == 2

    (s,) = [s for s in rig.ctl.slots(3, 1) if s.set == 1]
    assert (s.bitmap, s.countdown, s.exponent, s.contributors()) == (0b11, 0, 133, [0, 1])
    rig.ctl.reset_job(job)
    assert all(s.bitmap == 0 and s.countdown == 0 for s in rig.ctl.slots(job.pool.base, job.pool.size))


def test_unknown_sender_is_dropped_and_counted(rig: Rig) -> None:
    job = job_config()
    rig.ctl.create_job(job)
    stranger = job_config(n=3).workers[2]
    frame = bytearray(rig.data(job, 0, slot=2, set_=0, values=[1] * NUM_ELEMS))
    assert rig.sw.process(stranger.switch_port, bytes(frame)) == []
    assert rig.ctl.counters(job.job_id)["ina_drop_unknown"][0] == 1


def test_loss_settings(rig: Rig) -> None:
    job = job_config()
    rig.ctl.create_job(job)
    rig.ctl.set_drop_probability(1, ingress=1.0)
    assert rig.sw.process(1, rig.data(job, 0, slot=2, set_=0, values=[1] * NUM_ELEMS)) == []
    assert rig.ctl.counters(job.job_id)["ina_drop_sim_ingress"][0] == 1
    rig.ctl.set_drop_probability(1, ingress=0.0)  # modify, not a second insert
    assert rig.sw.process(1, rig.data(job, 0, slot=2, set_=0, values=[1] * NUM_ELEMS)) == []
    assert rig.ctl.counters(job.job_id)["ina_aggregated"][0] == 1
    with pytest.raises(ValueError, match="not in"):
        rig.ctl.set_drop_probability(1, egress=1.5)


def test_second_job_on_same_id_is_refused(rig: Rig) -> None:
    job = job_config()
    rig.ctl.create_job(job)
    with pytest.raises(ControllerError) as err:
        rig.ctl.create_job(job)
    assert any(u.code == "ALREADY_EXISTS" for u in err.value.updates)


def test_unreachable_switch_fails_fast() -> None:
    client = P4RuntimeClient("127.0.0.1:1", timeout=0.5)
    with pytest.raises(ControllerError, match="cannot reach"):
        client.connect()


def test_thrift_registers_unreachable_says_why_in_bounded_time() -> None:
    import socket
    import time

    from controller.client import ControllerError
    from controller.registers import ThriftRegisters

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.monotonic()
    with pytest.raises(ControllerError) as err:
        ThriftRegisters("127.0.0.1", port, timeout=0.5, connect_window_s=0.6)
    assert 0.5 <= time.monotonic() - t0 < 5
    msg = str(err.value)
    assert f"cannot reach BMv2's Thrift runtime at 127.0.0.1:{port} (tried for 0.6 s" in msg
    assert "built without Thrift support" in msg and "simple_switch_grpc --help" in msg


def test_every_install_of_a_job_gets_a_new_epoch(rig: Rig) -> None:
    """The controller gives a job a new epoch each time it installs it (after a switch restart), 1..127 cyclically."""
    table = rig.sw.tables["SwitchMLIngress.ina_epochs"]
    rig.ctl.create_job(job_config(job_id=3), epoch=127)
    rig.ctl._epochs[4] = 127  # as if job 4 had been installed with epoch 127 before the switch restarted
    rig.ctl.create_job(job_config(job_id=4, base=0, size=2))
    assert sorted((e.key, e.data) for e in table.entries) == [((3,), (127,)), ((4,), (1,))]
    with pytest.raises(ValueError, match="epoch must be 1..127"):
        rig.ctl.create_job(job_config(job_id=5, base=6, size=2), epoch=0)


def _drop_stream(client: P4RuntimeClient) -> None:
    """End the client's arbitration stream as a network failure would, and wait until the server forgot it."""
    import time

    client._closing = False
    client._requests.put(None)  # the request iterator ends: the server sees the stream close
    assert client._reader is not None
    client._reader.join(5)
    deadline = time.monotonic() + 5
    while client._stream_lost is False and time.monotonic() < deadline:
        time.sleep(0.01)


def test_a_controller_that_lost_its_stream_takes_mastership_again(rig: Rig) -> None:
    """Mastership lives on the stream: once it is gone the switch refuses the controller's writes; the client then
    opens a new stream, is primary again with the same election id, and the write goes through."""
    job = job_config()
    _drop_stream(rig.client)
    assert rig.client._stream_lost
    rig.ctl.create_job(job)
    assert rig.client.is_primary and not rig.client._stream_lost
    assert rig.sw.tables["SwitchMLIngress.ina_jobs"].entries


def test_a_lost_stream_does_not_override_a_new_primary(rig: Rig, program: tuple[Path, Path]) -> None:
    _drop_stream(rig.client)
    other = P4RuntimeClient(rig.client.address, device_id=1, election_id=9).connect()
    try:
        with pytest.raises(ControllerError, match="not primary"):
            rig.ctl.create_job(job_config())
        assert not rig.sw.tables["SwitchMLIngress.ina_jobs"].entries
    finally:
        other.close()
