"""A SwitchML all-reduce job through a switch under test: 4 worker processes (`python -m worker`) in their own
namespaces, the switch programmed with p4src/switchml.p4 by the project's controller. The figure is aggregated
elements/s: the tensor's elements over the slowest worker's all-reduce time (start barrier excluded), verified."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import time
from pathlib import Path

from controller.client import P4RuntimeClient
from controller.registers import DetectedRegisters
from controller.switchml import SwitchMLController
from topo.netns import REPO, Host
from worker.codec import header_and_payload, load_program
from worker.job import JobConfig, PoolRange
from worker.launch import collect, worker_argv
from worker.switchml.header import INA_HEADER_TYPE
from worker.switchml.plugin import SWITCHML

SOURCE = SWITCHML.p4_source
WORKLOAD = str(SWITCHML.program)
"""The workload's name in the benchmark's reports: its program's."""
POOL = PoolRange(base=0, size=64)
WINDOW = 32
"""Packets in flight per worker: fixed, so that every switch under test (and every version's, results/bench/switch.md) sees
the same workload; the workers' own default is the pool up to worker.switchml.worker.SWITCHML_WINDOW."""


def star_address(i: int) -> tuple[str, str]:
    """Host i's (MAC, IPv4) as in the project's Mininet star (topo.fabric): 00:00:0a:00:00:0i, 10.0.0.i."""
    from topo.addresses import host_ip, host_mac

    return host_mac(i), host_ip(i)


@dataclasses.dataclass
class JobSetup:
    """The job every switch runs: its file, elements per packet and the fabric's forwarding."""

    job: JobConfig
    path: Path
    forwarding: tuple[list[tuple[str, int]], list[int]]


def prepare_job(hosts: list[Host], program_json: Path, run_dir: Path) -> JobSetup:
    """One job of len(hosts) workers (rank r on host r+1, switch port r+1), written to run_dir/job.json; every host
    gets a static ARP entry for the switch's service address."""
    from topo.star import SWITCH_IP, SWITCH_MAC, StarFabric

    fabric = StarFabric(len(hosts))
    num_elems = header_and_payload(load_program(program_json), INA_HEADER_TYPE)[1]
    job = fabric.job_config(1, [h.port for h in hosts], num_elems=num_elems, pool=POOL)
    for h in hosts:
        h.add_neighbour(SWITCH_IP, SWITCH_MAC)
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / "job.json"
    job.save(path)
    return JobSetup(job, path, fabric.forwarding("s1"))


def install_job(client: P4RuntimeClient, thrift_port: int, setup: JobSetup) -> None:
    """L2 entries and the job on a switch whose pipeline is set."""
    ctl = SwitchMLController(client, DetectedRegisters(client, thrift_port))
    ctl.install_forwarding(*setup.forwarding)
    ctl.create_job(setup.job)


@dataclasses.dataclass
class JobRun:
    """One all-reduce: elements/s (None if any worker failed) and what the workers said."""

    size: int
    elements_per_s: float | None
    elapsed_s: float
    retransmissions: int
    error: str = ""


def run_job(hosts: list[Host], setup: JobSetup, program_json: Path, run_dir: Path, size: int, *, seed: int = 1,
            timeout: float = 120.0) -> JobRun:
    """All workers at once (start barrier), verified; bounded by `timeout` seconds."""
    barrier = run_dir / "barrier"
    shutil.rmtree(barrier, ignore_errors=True)
    barrier.mkdir(parents=True)
    procs = []
    started = time.monotonic()
    for rank, h in enumerate(hosts):
        argv = h.cmd(*worker_argv(setup.path, rank, SWITCHML.name, size, seed=seed, window=WINDOW,
                                  program_json=program_json, barrier=barrier, barrier_timeout=min(timeout, 60.0)))
        procs.append(subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    deadline = started + timeout
    outcomes = [collect(rank, p, deadline, started, f"killed after {timeout:g} s") for rank, p in enumerate(procs)]
    reports = [o.report for o in outcomes]
    errors = [o.error() for o in outcomes if not (o.ok and o.report.get("verified", False))]
    elapsed = max((float(r.get("elapsed_s", 0.0)) for r in reports), default=0.0)
    retx = sum(int(r.get("retransmissions", 0)) for r in reports)
    if errors or elapsed <= 0:
        return JobRun(size, None, elapsed, retx, "; ".join(errors)[-1000:] or "no timing reported")
    return JobRun(size, size / elapsed, elapsed, retx)
