"""EsaController against the embedded switch over real P4Runtime: each job's priority in its atp_jobs entry, its PS
in esa_servers, a priority changed on a running switch (also from a fresh controller, as the CLI is), the priority
register cleared with the pool, and the ESA counter read."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import pytest

from compiler import compile_file
from controller.client import P4RuntimeClient
from controller.esa import EsaController, default_priority
from controller.programs import controller_for
from controller.registers import P4RuntimeRegisters
from switch.v1model import V1Switch
from tests.paths import ROOT
from worker.job import JobConfig, PsSpec

N = 16


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("esa")
    result = compile_file(str(ROOT / "p4src" / "esa.p4"), defines={"ATP_NUM_ELEMS": str(N), "ATP_NUM_AGTR": "64"})
    (out / "esa.json").write_text(json.dumps(result.json))
    (out / "esa.p4info.txt").write_text(result.p4info_text)
    return out / "esa.p4info.txt", out / "esa.json"


def job_config(job_id: int, ps_ip: str) -> JobConfig:
    return JobConfig.from_dict({
        "job_id": job_id, "num_elems": N, "switch": {"ip": "10.0.0.254", "mac": "00:00:0a:00:00:fe"},
        "pool": {"base": 0, "size": 64},
        "workers": [{"rank": r, "ip": f"10.0.{job_id}.{r + 1}", "mac": f"00:00:00:00:{job_id:02x}:{r + 1:02x}",
                     "udp_port": 50000 + r, "switch_port": 10 * job_id + r} for r in range(2)],
        "ps": {"ip": ps_ip, "mac": "00:00:0a:00:00:09", "switch_port": 9}})


@pytest.fixture
def rig(program: tuple[Path, Path], serve) -> tuple[V1Switch, P4RuntimeClient]:
    sw, client = serve(program)
    return sw, client


def job_entry(sw: V1Switch, job_id: int) -> tuple[str, list[int]]:
    entry = sw.tables["AtpIngress.atp_jobs"].lookup_entry((job_id,))
    assert entry is not None
    return entry.action, list(entry.data)


def test_jobs_get_their_priority_and_their_ps_as_eviction_target(rig) -> None:
    sw, client = rig
    assert controller_for("esa") is EsaController
    ctl = EsaController(client, P4RuntimeRegisters(client), priorities={2: 40})
    ctl.create_job(job_config(1, "10.0.0.9"))
    ctl.create_job(replace(job_config(2, "10.0.0.10"), priority=9))  # the controller's own setting wins
    ctl.create_job(replace(job_config(3, "10.0.0.11"), priority=9))  # the job file's
    assert job_entry(sw, 1) == ("AtpIngress.atp_set_job", [0, 2, 0, default_priority(1)])
    assert job_entry(sw, 2) == ("AtpIngress.atp_set_job", [0, 3, 0, 40])
    assert job_entry(sw, 3) == ("AtpIngress.atp_set_job", [0, 4, 0, 9])
    servers = sw.tables["AtpIngress.esa_servers"]
    assert list(servers.lookup_entry((2,)).data) == [0x00000a000009, 0x0a00000a]
    ctl.set_priority(1, 7)
    assert job_entry(sw, 1)[1] == [0, 2, 0, 7]
    # a fresh controller (the CLI's) reads the entry back to change it
    fresh = EsaController(client, P4RuntimeRegisters(client))
    fresh.set_priority(2, 200)
    assert job_entry(sw, 2)[1] == [0, 3, 0, 200]
    with pytest.raises(ValueError, match="job 9 is not installed"):
        fresh.set_priority(9, 1)
    assert 9 not in fresh.priorities  # a refused change is not remembered
    with pytest.raises(ValueError, match="0..255"):
        fresh.set_priority(2, 256)
    assert ctl.counters(1)["atp_evicted"] == (0, 0)


def test_a_pool_reset_clears_the_owners_priorities(rig) -> None:
    sw, client = rig
    ctl = EsaController(client, P4RuntimeRegisters(client))
    job = job_config(1, "10.0.0.9")
    ctl.create_job(job)
    sw.registers["AtpIngress.atp_priority"].write(5, 99)
    sw.registers["AtpIngress.atp_owner"].write(5, 1 << 32 | 3)
    ctl.reset_job(replace(job, ps=PsSpec(ip="10.0.0.9", mac="00:00:0a:00:00:09", switch_port=9)))
    assert sw.registers["AtpIngress.atp_priority"].read(5) == 0 and sw.registers["AtpIngress.atp_owner"].read(5) == 0
    sw.registers["AtpIngress.atp_priority"].write(4, 17)
    show = next(c for c in EsaController.CLI if c.name == "aggregators")
    lines = show.run(ctl, argparse.Namespace(first=4, count=2)).splitlines()
    assert lines[0].endswith("priority") and lines[1].endswith("  17") and lines[2].endswith("  0")
    assert [c.name for c in EsaController.CLI] == ["aggregators", "ecn", "priority"]
