"""A third in-network protocol added as a plug-in, as docs/adding-a-protocol.md tells: the example's folder
(docs/examples/labagg, copied to a temporary folder here) and one registry line (`INA_PROTOCOLS=<folder>`), no other
file. Then every tool works with it: the in-process network, the packet simulator, the exactly-once soak with faults, the fuzzing's job
isolation, the controller CLI, `make run` and `make multitenant` (Mininet, root)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from compiler import compile_file
from tests.paths import ROOT

EXAMPLE = ROOT / "docs" / "examples" / "labagg"


class Plugin:
    def __init__(self, folder: Path, out: Path) -> None:
        self.folder, self.out = folder, out
        self.json, self.p4info = out / "labagg.json", out / "labagg.p4info.txt"
        self.env = {**os.environ, "INA_PROTOCOLS": str(folder)}

    def run(self, *argv: str, timeout: float = 300.0) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                              env=self.env)


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plugin]:
    """The example copied to a folder of its own and compiled as `make build` compiles a plug-in's program; while the
    module's tests run it is also registered in this process (the registry and controllers restored after)."""
    from controller.base import CONTROLLERS
    from worker.protocols import PROTOCOLS, load_plugins

    base = tmp_path_factory.mktemp("plugin")
    folder = base / "labagg"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    out = base / "out"
    out.mkdir()
    result = compile_file(str(folder / "labagg.p4"), include_dirs=[str(ROOT / "p4src"), str(folder)])
    (out / "labagg.json").write_text(json.dumps(result.json))
    (out / "labagg.p4info.txt").write_text(result.p4info_text)
    saved = dict(PROTOCOLS), dict(CONTROLLERS)
    try:
        (spec,) = load_plugins(str(folder))
        assert spec.name == "labagg" and spec.p4_source == folder / "labagg.p4"
        yield Plugin(folder, out)
    finally:
        for table, old in zip((PROTOCOLS, CONTROLLERS), saved):
            table.clear()
            table.update(old)
        for name in [m for m in sys.modules if m == "labagg" or m.startswith("labagg.")]:
            del sys.modules[name]
        if str(base) in sys.path:
            sys.path.remove(str(base))


def test_the_registry_lists_it_in_a_process_that_names_its_folder(plugin: Plugin) -> None:
    r = plugin.run("-m", "worker.protocols")
    assert r.returncode == 0, r.stderr
    assert any(line.split()[:3] == ["labagg", "labagg", "in-network"] for line in r.stdout.splitlines())
    r = plugin.run("-m", "worker.protocols", "--plugin-sources")
    assert r.stdout.split() == ["labagg", str(plugin.folder / "labagg.p4")]


def test_the_in_process_network_runs_it_exactly(plugin: Plugin) -> None:
    from switch.faults import FaultPlan
    from topo.inprocess import InProcessNetwork, make_jobs
    from worker.job import PoolRange
    from worker.verify import rank_input

    program = json.loads(plugin.json.read_text())
    jobs = make_jobs(2, 3, 32, [PoolRange(0, 8), PoolRange(8, 8)])
    net = InProcessNetwork(program, jobs, p4info=plugin.p4info, loss=0.05, faults=FaultPlan(seed=3), seed=3)
    for dtype in ("int32", "float32", "int32"):  # sets keep alternating from one all-reduce to the next
        inputs = {j.job_id: [rank_input(32 * 20 + 5, j.job_id, r, dtype) for r in range(3)] for j in jobs}
        runs = net.allreduce(inputs, dtype)
        for j in jobs:
            assert all(v.ok for v in net.verify(j.job_id, runs[j.job_id], inputs[j.job_id], dtype))
            assert net.protocol.accounting(j, runs[j.job_id]) == ""
    assert net.dropped > 0 and sum(w.stats.retransmissions for r in runs.values() for w in r.windows) > 0


def test_the_packet_simulator_runs_it_exactly_with_no_simulator_edit(plugin: Plugin) -> None:
    from switch.faults import FaultPlan
    from topo.inprocess import make_jobs
    from topo.sim import LinkSpec, SimNetwork
    from worker.job import PoolRange
    from worker.verify import rank_input

    program = json.loads(plugin.json.read_text())
    jobs = make_jobs(1, 4, 32, PoolRange(0, 8))
    net = SimNetwork(program, jobs, p4info=plugin.p4info, loss=0.02, faults=FaultPlan(seed=6), seed=6,
                     link=LinkSpec(10e9, 1e-6, buffer_bytes=64 * 1024))
    inputs = {1: [rank_input(32 * 30, 2, r, "int32") for r in range(4)]}
    runs = net.allreduce(inputs, "int32")
    assert all(v.ok for v in net.verify(1, runs[1], inputs[1], "int32"))
    assert net.protocol.name == "labagg" and net.dropped > 0 and net.report().sim_s > 0


def test_the_soak_with_faults_finds_no_wrong_result(plugin: Plugin) -> None:
    r = plugin.run("-m", "experiments.soak", "--protocol", "labagg", "--runs", "60", "--seed", "11",
                   "--program-dir", str(plugin.out))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "runs: 60 (labagg 60)" in r.stdout and "wrong results: 0" in r.stdout and "crashes: 0" in r.stdout
    injected = next(line for line in r.stdout.splitlines() if line.startswith("faults injected:"))
    assert int(injected.split()[2]) > 50, injected


def test_the_fuzzing_keeps_another_jobs_state(plugin: Plugin) -> None:
    from experiments.fuzz import fuzz_frames

    fed, failure = fuzz_frames("labagg", json.loads(plugin.json.read_text()), plugin.p4info, 400, 5)
    assert failure is None and fed == 400


def test_the_controller_cli_installs_and_shows_it(plugin: Plugin) -> None:
    from switch.runtime import P4RuntimeServer
    from switch.v1model import V1Switch
    from topo.frames import udp_frame
    from topo.inprocess import make_jobs
    from worker.collective import CollectiveOptions
    from worker.job import PoolRange
    from worker.protocols import PROTOCOLS

    (job,) = make_jobs(1, 2, 32, PoolRange(4, 4))
    job.save(plugin.out / "job.json")
    sw = V1Switch()
    server = P4RuntimeServer(sw)
    addr = f"127.0.0.1:{server.start('127.0.0.1:0')}"
    try:
        def cli(*args: str) -> subprocess.CompletedProcess[str]:
            return plugin.run("-m", "controller", "--grpc-addr", addr, "--target", "embedded", *args, timeout=60)

        r = cli("setup", str(plugin.out / "job.json"), "--p4info", str(plugin.p4info), "--json", str(plugin.json))
        assert r.returncode == 0 and "pipeline labagg pushed" in r.stdout and "slots [4, 8)" in r.stdout, r.stderr
        rank = PROTOCOLS["labagg"].open_rank(job, 1, CollectiveOptions(program_json=plugin.json))
        first = rank.begin(np.arange(32, dtype=np.int32), "int32").start(0.0)[0]
        w = job.workers[1]
        mac, ip, port = rank.destination()
        sw.process(w.switch_port, udp_frame(mac, w.mac, w.ip, ip, w.udp_port, port, rank.encode(first)))
        r = cli("slots", "4", "1")
        assert r.returncode == 0, r.stderr
        assert r.stdout.splitlines()[1].split() == ["4", "0", f"{0b10:032b}", "1"]  # rank 1 in set 0, count 1
        r = cli("counters", "1")
        assert r.returncode == 0 and any(line.split()[:2] == ["lab_received", "1"] for line in r.stdout.splitlines())
        r = cli("aggregators", "0")
        assert r.returncode == 1 and "aggregators is a command of the atp, esa and release programs" in r.stderr
        assert "runs labagg.p4 (counters, slots, watch show its state)" in r.stderr
    finally:
        server.stop(0)


@pytest.mark.mininet
@pytest.mark.timeout(300)
def test_make_run_and_multitenant_run_it(plugin: Plugin, tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("Mininet needs root")
    r = plugin.run("-m", "experiments.run", "--protocol", "labagg", "--workers", "3", "--size", "8192", "--loss",
                   "0.01", "--target", "embedded", "--program-dir", str(plugin.out), "--run-dir", str(tmp_path / "run"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "labagg all-reduce of 8192 float32 elements, 3 workers" in r.stdout
    assert r.stdout.count(" ✓ ") >= 4  # every rank and the whole run
    r = plugin.run("-m", "experiments.multitenant", "--protocols", "labagg", "--jobs", "2", "--workers", "2",
                   "--size", "4096", "--reps", "1", "--cells", "4096", "--target", "embedded",
                   "--program-dir", str(plugin.out), "--results", str(tmp_path / "results"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "labagg 32 slots per static partition" in r.stdout
