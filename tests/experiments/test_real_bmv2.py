"""Against real BMv2, when `simple_switch_grpc` (built with Thrift) is on PATH: what users run there. SwitchML end to
end (2 and 4 workers, with and without loss), ATP (`make run PROTO=atp TARGET=bmv2`), ATP on the two-tier network
with a BMv2 process per switch, a scenario file with `target = "bmv2"`, the controller CLI against a running
simple_switch_grpc, and the controller's register path, which on BMv2 goes through Thrift because PI answers
UNIMPLEMENTED to P4Runtime register access. Passes with simple_switch_grpc 1.15.5 (BMv2 9674187f) and p4c 1.2.4.8.

`make test TARGET=bmv2` runs only these and fails when simple_switch_grpc is missing; a plain `make test` runs them
too where BMv2 is installed and skips them elsewhere (as on our machines and CI, where it cannot be installed).
The program is compiled by `p4c-bm2-ss` when it is on PATH, else by the embedded compiler.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import finsy
import grpc
import pytest

from controller.client import P4RuntimeClient
from controller.registers import ThriftRegisters, open_registers
from controller.switchml import INGRESS, SwitchMLController
from experiments.config import ExperimentConfig
from experiments.session import ExperimentNetwork, run_experiment
from tests.paths import ROOT
from topo.target import Target
from worker.protocols import ATP, ESA, PROTOCOLS, SWITCHML, program_paths, programs

pytestmark = [pytest.mark.bmv2, pytest.mark.timeout(300)]


@pytest.fixture(scope="module", autouse=True)
def bmv2_present() -> None:
    if shutil.which("simple_switch_grpc") is None:
        if os.environ.get("TARGET", "").lower() == "bmv2":
            pytest.fail("TARGET=bmv2 but simple_switch_grpc is not on PATH")
        pytest.skip("simple_switch_grpc is not on PATH (real BMv2 cannot be installed here)")


@pytest.fixture(scope="module")
def program_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """p4src/*.p4 compiled by the target's compiler (p4c-bm2-ss when installed), as `make build` does."""
    out = tmp_path_factory.mktemp("bmv2")
    for name in programs():
        json_path, p4info = program_paths(out, name)
        subprocess.run([*Target.BMV2.compiler_argv0(), "-I", str(ROOT / "p4src"), "-o", str(json_path),
                        "--p4runtime-files", str(p4info), str(ROOT / "p4src" / f"{name}.p4")],
                       check=True, cwd=ROOT, timeout=120)
    return out


@pytest.fixture(scope="module")
def program(program_dir: Path) -> tuple[Path, Path]:
    return program_paths(program_dir, SWITCHML.program)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.mininet
@pytest.mark.parametrize("workers,loss", [(2, 0.0), (4, 0.0), (2, 0.01), (4, 0.01)])
def test_allreduce_on_real_bmv2(program: tuple[Path, Path], tmp_path: Path, workers: int, loss: float) -> None:
    cfg = ExperimentConfig(target=Target.BMV2, program_json=program[0], p4info=program[1], run_dir=tmp_path,
                           workers=workers, size=16384, loss=loss, seed=3, timeout_s=120.0)
    result = run_experiment(cfg)
    assert result.correct, result.table()
    for w in result.workers:
        assert w.report["verified"] and w.report["max_error_over_bound"] <= 1.0
    if loss == 0.0:
        # timers restart on every fresh result (RFC 6298 5.3): a slow switch alone causes no spurious retransmission
        # (before: 63-407 per 4-worker run on simple_switch_grpc 1.15.5); issue 25's bound is under 2 %
        packets = sum(int(w.report["packets_sent"]) for w in result.workers)
        assert result.retransmissions < 0.02 * packets, result.table()


@pytest.mark.mininet
def test_atp_on_real_bmv2(program_dir: Path, tmp_path: Path) -> None:
    """`make run PROTO=atp TARGET=bmv2`: the PS host joins, the switch aggregates (nearly) everything."""
    cfg = ExperimentConfig(protocol=ATP.name, target=Target.BMV2, program_dir=program_dir, run_dir=tmp_path,
                           workers=4, size=16384, seed=3, timeout_s=120.0)
    result = run_experiment(cfg)
    assert result.correct, result.table()
    assert result.ps is not None and result.ps["switch_fraction"] > 0.9, result.table()


@pytest.mark.mininet
def test_esa_evicts_on_real_bmv2(program_dir: Path, tmp_path: Path) -> None:
    """esa.p4 compiled by p4c on simple_switch_grpc: two jobs, each with its PS, share a pool of 8 aggregators; job 1's
    packets evict job 2's partial aggregates (job 1 has the higher priority) and both jobs verify."""
    cfg = ExperimentConfig(protocol=ESA.name, target=Target.BMV2, program_dir=program_dir, run_dir=tmp_path,
                           workers=2, jobs=2, ps_per_job=True, pool_size=8, size=16384, seed=3, timeout_s=120.0)
    with ExperimentNetwork(cfg) as net:
        results = net.run_jobs(cfg)
    for result in results:
        assert result.correct, result.table()
    evicted = sum(result.counters.get("atp_evicted", (0, 0))[0] for result in results)
    assert evicted > 0, [r.table() for r in results]


@pytest.mark.mininet
def test_release_hands_a_stragglers_aggregators_over_on_real_bmv2(program_dir: Path, tmp_path: Path) -> None:
    """release.p4 compiled by p4c on simple_switch_grpc: two jobs, each with its PS, share a pool of 8 aggregators;
    job 1's last worker is 300 ms late, so its partial aggregates pass their 1 ms deadline (BMv2's
    ingress_global_timestamp) and job 2's packets release them to job 1's PS; both jobs verify."""
    cfg = ExperimentConfig(protocol=PROTOCOLS["release"].name, target=Target.BMV2, program_dir=program_dir,
                           run_dir=tmp_path, workers=2, jobs=2, ps_per_job=True, pool_size=8, size=16384, seed=3,
                           timeout_s=120.0, straggler_ms=300.0, straggler_jobs=1, job_release_us=1000)
    with ExperimentNetwork(cfg) as net:
        results = net.run_jobs(cfg)
    for result in results:
        assert result.correct, result.table()
    assert results[0].counters.get("atp_expired", (0, 0))[0] > 0, [r.table() for r in results]


@pytest.mark.mininet
def test_atp_on_two_bmv2_levels(program_dir: Path, tmp_path: Path) -> None:
    """The two-tier network with a simple_switch_grpc per switch: ATP aggregates in the rack switches and above."""
    cfg = ExperimentConfig(protocol=ATP.name, target=Target.BMV2, program_dir=program_dir, run_dir=tmp_path,
                           workers=4, size=16384, topo="twotier", racks=2, levels=2, seed=3, timeout_s=120.0)
    result = run_experiment(cfg)
    assert result.correct, result.table()
    assert len(result.switch_counters) == 3, result.switch_counters  # two racks and the PS's switch, all running
    up_packets, _ = result.links["uplinks"]
    assert 0 < up_packets, result.table()


@pytest.mark.mininet
def test_a_scenario_on_real_bmv2(program: tuple[Path, Path], tmp_path: Path) -> None:
    from experiments.sweep import main as sweep

    scenario = tmp_path / "bmv2-smoke.toml"
    scenario.write_text('[scenario]\nrepetitions = 1\ntimeout_s = 120\n[network]\ntarget = "bmv2"\n'
                        '[sweep]\nprotocols = ["switchml", "ring"]\nworkers = [2]\nsizes = [4096]\n')
    assert sweep([str(scenario), "--results", str(tmp_path / "results"), "--json", str(program[0]), "--p4info",
                  str(program[1]), "--no-progress"]) == 0
    (run_dir,) = (tmp_path / "results").iterdir()
    rows = (run_dir / "runs.csv").read_text().splitlines()
    assert len(rows) == 3 and all(",1," in r for r in rows[1:]), rows  # header + 2 verified runs


def test_controller_cli_against_bmv2(program: tuple[Path, Path], tmp_path: Path) -> None:
    """The README's by-hand use of `python -m controller` on a running simple_switch_grpc: setup from a job file,
    counters, slots (over Thrift, detected by asking the switch), then a job reset."""
    from topo.star import StarFabric
    from worker.job import PoolRange

    job = StarFabric(2).job_config(1, [1, 2], num_elems=64, pool=PoolRange(0, 8))
    job_path = tmp_path / "job.json"
    job.save(job_path)
    with _bmv2(tmp_path) as (grpc_port, thrift_port):
        def cli(*args: str) -> str:
            r = subprocess.run([sys.executable, "-m", "controller", "--grpc-addr", f"127.0.0.1:{grpc_port}",
                                "--device-id", "1", "--thrift-port", str(thrift_port), *args], cwd=ROOT,
                               capture_output=True, text=True, timeout=60)
            assert r.returncode == 0, r.stderr
            return r.stdout
        assert "job 1: 2 workers, slots [0, 8)" in cli("setup", "--p4info", str(program[1]), "--json",
                                                      str(program[0]), str(job_path))
        assert "received" in cli("counters", "1")
        # a partial aggregate in slot 7, set 1 (ranks 0 and 1 of a job that had three), written over Thrift
        ThriftRegisters("127.0.0.1", thrift_port).write(f"{INGRESS}.ina_bitmap", 2 * 7 + 1, 0b011)

        def slot_7_set_1() -> list[str]:
            return next(x.split() for x in cli("slots", "7", "1").splitlines() if x.split()[:2] == ["7", "1"])

        assert slot_7_set_1()[2].endswith("011") and slot_7_set_1()[-1] == "0,1"  # read back over Thrift
        cli("job-reset", str(job_path))  # the job's last slot too: BMv2's range write excludes its end index
        assert set(slot_7_set_1()[2]) == {"0"} and slot_7_set_1()[-1] == "-"


@contextlib.contextmanager
def _bmv2(tmp_path: Path) -> Iterator[tuple[int, int]]:
    """A simple_switch_grpc without ports or program: (gRPC port, Thrift port) while the block runs."""
    grpc_port, thrift_port = _free_port(), _free_port()
    log = (tmp_path / "bmv2.log").open("wb")
    proc = subprocess.Popen(["simple_switch_grpc", "--device-id", "1", "--thrift-port", str(thrift_port), "--no-p4",
                             "--", "--grpc-server-addr", f"127.0.0.1:{grpc_port}"],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while True:
            assert proc.poll() is None, (tmp_path / "bmv2.log").read_text()
            try:
                socket.create_connection(("127.0.0.1", grpc_port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "simple_switch_grpc did not open its gRPC port in 20 s"
                time.sleep(0.1)
        yield grpc_port, thrift_port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_registers_over_thrift(program: tuple[Path, Path], tmp_path: Path) -> None:
    with _bmv2(tmp_path) as (grpc_port, thrift_port):
        client = P4RuntimeClient(f"127.0.0.1:{grpc_port}", device_id=1).connect()
        try:
            client.set_pipeline(program[1], program[0])
            registers = open_registers(client, bmv2=True, thrift_port=thrift_port)
            assert isinstance(registers, ThriftRegisters)
            name = f"{INGRESS}.ina_countdown"
            registers.write(name, 5, 3)
            registers.fill(name, 6, 2, 7)
            assert registers.read_range(name, 4, 4) == [0, 3, 7, 7]
            # PI has no P4Runtime register access: the reason the controller goes through Thrift
            with pytest.raises(Exception) as info:
                client.read(finsy.P4RegisterEntry(name, index=5))
            assert "UNIMPLEMENTED" in str(info.value) or getattr(info.value, "code", lambda: None)() \
                == grpc.StatusCode.UNIMPLEMENTED
            # the controller's own use of it: a fresh job's slots read back cleared
            ctl = SwitchMLController(client, registers)
            registers.write(f"{INGRESS}.ina_bitmap", 0, 0b11)
            ctl.registers.fill(f"{INGRESS}.ina_bitmap", 0, 2, 0)
            assert [s.bitmap for s in ctl.slots(0, 1)] == [0, 0]
        finally:
            client.close()


@pytest.mark.mininet
def test_omnireduce_skips_zero_blocks_on_real_bmv2(program_dir: Path, tmp_path: Path) -> None:
    """omnireduce.p4 compiled by p4c on simple_switch_grpc: 4 workers, 90 % of each one's 64-element blocks zero; the
    results verify, and the switch aggregated one contribution per worker and round, far fewer than the dense
    tensor's packets (a round per stream to announce, one per block non-zero in some worker)."""
    cfg = ExperimentConfig(protocol=PROTOCOLS["omnireduce"].name, target=Target.BMV2, program_dir=program_dir,
                           run_dir=tmp_path, workers=4, size=65536, sparsity=0.9, seed=3, timeout_s=120.0)
    result = run_experiment(cfg)
    assert result.correct, result.table()
    aggregated = result.counters["ina_aggregated"][0]
    dense = 4 * 65536 // 64
    assert 0 < aggregated < 0.5 * dense and aggregated % 4 == 0, result.table()
