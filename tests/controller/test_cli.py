"""`python -m controller` as a user runs it, against an in-process switch's P4Runtime server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from compiler import compile_file
from switch.runtime import P4RuntimeServer
from switch.v1model import V1Switch
from tests.paths import ROOT
from worker.job import JobConfig
from worker.switchml.header import INA_UDP_PORT, MSG_DATA, Codec, InaHeader, pool_index

NUM_ELEMS = 16


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("cli")
    result = compile_file(str(ROOT / "p4src" / "switchml.p4"), defines={"INA_NUM_ELEMS": str(NUM_ELEMS),
                                                                         "INA_POOL_SIZE": "16"})
    (out / "p.json").write_text(json.dumps(result.json))
    (out / "p.p4info.txt").write_text(result.p4info_text)
    job = JobConfig.from_dict({
        "job_id": 7, "num_elems": NUM_ELEMS, "switch": {"ip": "10.0.0.254", "mac": "00:00:0a:00:00:fe"},
        "pool": {"base": 4, "size": 4},
        "workers": [{"rank": r, "ip": f"10.0.0.{r + 1}", "mac": f"00:00:0a:00:00:{r + 1:02x}", "udp_port": 50000,
                     "switch_port": r + 1} for r in range(3)]})
    job.save(out / "job.json")
    return {"json": out / "p.json", "p4info": out / "p.p4info.txt", "job": out / "job.json"}


@pytest.fixture
def switch() -> Iterator[tuple[V1Switch, str]]:
    sw = V1Switch(device_id=1)
    server = P4RuntimeServer(sw, device_id=1)
    port = server.start("127.0.0.1:0")
    yield sw, f"127.0.0.1:{port}"
    server.stop(0)


def cli(addr: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "controller", "--grpc-addr", addr, "--device-id", "1", "--target",
                           "embedded", *args],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)


def test_setup_then_counters_slots_and_watch_show_the_running_job(files: dict[str, Path],
                                                                  switch: tuple[V1Switch, str]) -> None:
    sw, addr = switch
    setup = cli(addr, "setup", str(files["job"]), "--p4info", str(files["p4info"]), "--json", str(files["json"]))
    assert setup.returncode == 0, setup.stderr
    assert "job 7: 3 workers, slots [4, 8), multicast group 8" in setup.stdout

    # two of three workers contribute to slot 5, set 1: the slot is incomplete, bitmap 0b011
    job = JobConfig.load(files["job"])
    codec = Codec.from_program_json(files["json"])
    for rank in (0, 1):
        w = job.workers[rank]
        hdr = InaHeader(msg_type=MSG_DATA, job_id=7, pool_index=pool_index(5, 1), packet_id=1, exponent=140,
                        flags=0, worker_rank=rank)
        frame = (Ether(src=w.mac, dst=job.switch.mac) / IP(src=w.ip, dst=job.switch.ip)
                 / UDP(sport=w.udp_port, dport=INA_UDP_PORT) / codec.encode(hdr, np.arange(NUM_ELEMS, dtype=np.int32)))
        assert sw.process(w.switch_port, bytes(frame)) == []

    counters = cli(addr, "counters", "7")
    assert counters.returncode == 0, counters.stderr
    line = next(x for x in counters.stdout.splitlines() if x.startswith("ina_aggregated"))
    assert line.split()[1] == "2"

    slots = cli(addr, "slots", "5", "1")
    assert slots.returncode == 0, slots.stderr
    row = next(x for x in slots.stdout.splitlines() if x.split()[:2] == ["5", "1"])
    assert row.split()[2:] == [f"{0b11:032b}", "1", "140", "0,1"]

    watch = cli(addr, "watch", str(files["job"]), "--iterations", "1", "--slots", "4")
    assert watch.returncode == 0, watch.stderr
    assert "ina_aggregated" in watch.stdout and f"{0b11:032b}" in watch.stdout

    reset = cli(addr, "job-reset", str(files["job"]))
    assert reset.returncode == 0, reset.stderr
    after = cli(addr, "slots", "5", "1")
    assert next(x for x in after.stdout.splitlines() if x.split()[:2] == ["5", "1"]).split()[2] == "0" * 32


def test_unreachable_switch_is_one_clear_line(files: dict[str, Path]) -> None:
    result = cli("127.0.0.1:1", "--timeout", "0.5", "counters", "1")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "error: cannot reach the switch's P4Runtime server at 127.0.0.1:1 within 0.5s"]


def test_atp_setup_aggregators_ecn_and_counters(tmp_path: Path, switch: tuple[V1Switch, str]) -> None:
    from topo.inprocess import frame
    from worker.atp.header import ATP_UDP_PORT, AtpCodec, AtpHeader

    sw, addr = switch
    result = compile_file(str(ROOT / "p4src" / "atp.p4"), defines={"ATP_NUM_ELEMS": "16", "ATP_NUM_AGTR": "32"})
    (tmp_path / "atp.json").write_text(json.dumps(result.json))
    (tmp_path / "atp.p4info.txt").write_text(result.p4info_text)
    job = JobConfig.from_dict({
        "job_id": 5, "num_elems": 16, "switch": {"ip": "10.0.0.254", "mac": "00:00:0a:00:00:fe"},
        "pool": {"base": 0, "size": 32},
        "workers": [{"rank": r, "ip": f"10.0.0.{r + 1}", "mac": f"00:00:0a:00:00:{r + 1:02x}", "udp_port": 50000,
                     "switch_port": r + 1} for r in range(2)],
        "ps": {"ip": "10.0.0.9", "mac": "00:00:0a:00:00:09", "switch_port": 9}})
    job.save(tmp_path / "job.json")
    setup = cli(addr, "--protocol", "atp", "setup", str(tmp_path / "job.json"), "--p4info",
                str(tmp_path / "atp.p4info.txt"), "--json", str(tmp_path / "atp.json"))
    assert setup.returncode == 0, setup.stderr
    assert "job 5: 2 workers, aggregators [0, 32), multicast group 6" in setup.stdout
    codec = AtpCodec.from_program_json(tmp_path / "atp.json")
    w, ps = job.workers[1], job.ps
    assert ps is not None
    h = AtpHeader(bitmap0=2, fan_in0=2, fan_in1=1, job_id=5, seq=9, agtr=3, rank=1)
    assert sw.process(w.switch_port, frame(w.mac, ps.mac, w.ip, ps.ip, w.udp_port, ATP_UDP_PORT,
                                           codec.encode(h, np.zeros(16, dtype=np.int32)))) == []
    aggs = cli(addr, "--protocol", "atp", "aggregators", "2", "3")
    assert aggs.returncode == 0, aggs.stderr
    row = next(x for x in aggs.stdout.splitlines() if x.split()[:1] == ["3"])
    assert row.split()[1:] == ["5", "9", f"{0b10:032b}", "1", "-", "1"]
    assert next(x for x in aggs.stdout.splitlines() if x.split()[:1] == ["2"]).split()[1] == "free"
    assert cli(addr, "--protocol", "atp", "ecn", "0").returncode == 0
    counters = cli(addr, "--protocol", "atp", "counters", "5")
    assert next(x for x in counters.stdout.splitlines() if x.startswith("atp_aggregated")).split()[1] == "1"
    wrong = cli(addr, "slots", "0", "1")  # SwitchML's controller on the ATP program: one clear line
    assert wrong.returncode == 1 and wrong.stderr.count("\n") == 1 and "the switch runs atp.p4" in wrong.stderr
    asserted = cli(addr, "--protocol", "switchml", "counters", "5")  # the pipeline says which program it is
    assert asserted.returncode == 1 and "runs atp.p4, not switchml.p4" in asserted.stderr
    wrong = cli(addr, "--protocol", "atp", "slots", "0", "1")
    assert wrong.returncode == 1 and "the switch runs atp.p4 (counters, aggregators, watch" in wrong.stderr


def test_setup_with_a_bad_job_file_leaves_the_running_switch_untouched(files: dict[str, Path], tmp_path: Path,
                                                                      switch: tuple[V1Switch, str]) -> None:
    """Issue 26: `setup` used to push the pipeline (wiping the installed jobs) before it read the job file."""
    sw, addr = switch
    assert cli(addr, "setup", str(files["job"]), "--p4info", str(files["p4info"]), "--json",
               str(files["json"])).returncode == 0
    entries = len(sw.tables["SwitchMLIngress.ina_workers"].entries)
    bad = tmp_path / "bad.json"
    bad.write_text('{"job_id": 8}')
    r = cli(addr, "setup", str(bad), "--p4info", str(files["p4info"]), "--json", str(files["json"]))
    assert r.returncode != 0 and "error:" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "pipeline pushed" not in r.stdout
    assert len(sw.tables["SwitchMLIngress.ina_workers"].entries) == entries == 3


def test_with_simple_switch_grpc_on_path_the_cli_asks_the_switch(files: dict[str, Path], tmp_path: Path,
                                                                  switch: tuple[V1Switch, str]) -> None:
    """Issue 26 bug 1: with simple_switch_grpc installed, every command against the embedded switch failed after 3 s
    with "build BMv2 with Thrift"; without --target the controller now asks the switch."""
    _, addr = switch
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "simple_switch_grpc").write_text("#!/bin/sh\nexit 0\n")
    (stub / "simple_switch_grpc").chmod(0o755)
    env = {**os.environ, "PATH": f"{stub}:{os.environ['PATH']}"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "controller", "--grpc-addr", addr, "--device-id", "1", *args],
                              capture_output=True, text=True, timeout=60, cwd=ROOT, env=env)

    assert run("setup", str(files["job"]), "--p4info", str(files["p4info"]), "--json",
               str(files["json"])).returncode == 0
    for args in (("counters", "7"), ("slots", "4", "2"), ("watch", str(files["job"]), "--iterations", "1")):
        r = run(*args)
        assert r.returncode == 0 and "Thrift" not in r.stderr, r.stderr


def test_mismatches_say_what_to_do(files: dict[str, Path], tmp_path: Path, switch: tuple[V1Switch, str]) -> None:
    _, addr = switch
    r = subprocess.run([sys.executable, "-m", "controller", "--grpc-addr", addr, "counters", "1"],  # device id 0
                       capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1
    assert "started with another device id: pass --device-id N" in r.stderr
    assert cli(addr, "setup", str(files["job"]), "--p4info", str(files["p4info"]), "--json",
               str(files["json"])).returncode == 0
    twice = cli(addr, "job-create", str(files["job"]))
    assert twice.returncode == 1 and twice.stderr.strip().splitlines() == [
        f"error: job 7 is already installed on {addr} (job-reset clears its state; setup pushes the pipeline again "
        "and installs it afresh)"]
    absent = cli(addr, "counters", "99")
    assert absent.returncode == 1 and absent.stdout == ""
    assert f"job 99 is not installed on {addr} (installed: 7;" in absent.stderr
    extra = tmp_path / "extra.json"
    extra.write_text(json.dumps({**json.loads(files["job"].read_text()), "worker": []}))
    typo = cli(addr, "job-reset", str(extra))
    assert typo.returncode == 1 and f"{extra}: job: unknown key 'worker'" in typo.stderr
