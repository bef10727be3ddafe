"""ReleaseController against the embedded switch over real P4Runtime: each job's timeout and an equal priority in
its atp_jobs entry, a timeout changed on a running switch (also from a fresh controller, as the CLI is), deadlines and
the evicted-owner memory cleared with the pool, the deadline in the CLI's aggregator view."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import pytest

from compiler import compile_file
from controller.client import P4RuntimeClient
from controller.programs import controller_for
from controller.registers import P4RuntimeRegisters
from controller.release import DEFAULT_TIMEOUT_US, EQUAL_PRIORITY, ReleaseController
from switch.v1model import V1Switch
from tests.paths import ROOT
from worker.job import JobConfig, JobConfigError

N = 16


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("release")
    result = compile_file(str(ROOT / "p4src" / "release.p4"), defines={"ATP_NUM_ELEMS": str(N),
                                                                       "ATP_NUM_AGTR": "64"})
    (out / "release.json").write_text(json.dumps(result.json))
    (out / "release.p4info.txt").write_text(result.p4info_text)
    return out / "release.p4info.txt", out / "release.json"


def job_config(job_id: int, **extra: object) -> JobConfig:
    return JobConfig.from_dict({
        "job_id": job_id, "num_elems": N, "switch": {"ip": "10.0.0.254", "mac": "00:00:0a:00:00:fe"},
        "pool": {"base": 0, "size": 64},
        "workers": [{"rank": r, "ip": f"10.0.{job_id}.{r + 1}", "mac": f"00:00:00:00:{job_id:02x}:{r + 1:02x}",
                     "udp_port": 50000 + r, "switch_port": 10 * job_id + r} for r in range(2)],
        "ps": {"ip": f"10.0.0.{8 + job_id}", "mac": "00:00:0a:00:00:09", "switch_port": 9}, **extra})


@pytest.fixture
def rig(program: tuple[Path, Path], serve) -> tuple[V1Switch, P4RuntimeClient]:
    sw, client = serve(program)
    return sw, client


def job_params(sw: V1Switch, job_id: int) -> list[int]:
    entry = sw.tables["AtpIngress.atp_jobs"].lookup_entry((job_id,))
    assert entry is not None and entry.action == "AtpIngress.atp_set_job"
    return list(entry.data)


def test_jobs_get_their_timeout_and_the_same_priority(rig) -> None:
    sw, client = rig
    assert controller_for("release") is ReleaseController
    ctl = ReleaseController(client, P4RuntimeRegisters(client), timeouts={2: 300})
    ctl.create_job(job_config(1))
    ctl.create_job(job_config(2, release_us=7))  # the controller's own setting wins
    ctl.create_job(job_config(3, release_us=0, priority=5))  # the job file's
    assert job_params(sw, 1) == [0, 2, 0, EQUAL_PRIORITY, DEFAULT_TIMEOUT_US]
    assert job_params(sw, 2) == [0, 3, 0, EQUAL_PRIORITY, 300]
    assert job_params(sw, 3) == [0, 4, 0, 5, 0]
    assert list(sw.tables["AtpIngress.esa_servers"].lookup_entry((2,)).data) == [0x00000a000009, 0x0a00000a]
    ctl.set_timeout(1, 50)
    assert job_params(sw, 1) == [0, 2, 0, EQUAL_PRIORITY, 50]
    fresh = ReleaseController(client, P4RuntimeRegisters(client))
    fresh.set_timeout(3, 2**32 - 1)
    fresh.set_priority(3, 6)  # ESA's command still works, and keeps the timeout
    assert job_params(sw, 3) == [0, 4, 0, 6, 2**32 - 1]
    with pytest.raises(ValueError, match="job 9 is not installed"):
        fresh.set_timeout(9, 1)
    assert 9 not in fresh.timeouts
    with pytest.raises(ValueError, match="timeout must be"):
        fresh.set_timeout(1, -1)
    assert ctl.counters(1)["atp_expired"] == (0, 0) and ctl.counters(1)["atp_evicted"] == (0, 0)
    with pytest.raises(ValueError, match="job 4: timeout must be"):
        ReleaseController(client, P4RuntimeRegisters(client), timeouts={4: 2**32})


def test_a_job_file_timeout_is_checked_and_kept() -> None:
    assert JobConfig.from_dict(job_config(1, release_us=12).to_dict()).release_us == 12
    assert "release_us" not in job_config(1).to_dict()
    with pytest.raises(JobConfigError, match="release_us"):
        job_config(1, release_us=-1)


def test_a_pool_reset_clears_deadlines_and_evicted_owners(rig) -> None:
    sw, client = rig
    ctl = ReleaseController(client, P4RuntimeRegisters(client))
    job = job_config(1)
    ctl.create_job(job)
    for name, value in (("deadline", 1234), ("evicted_owner", 1 << 32 | 3), ("priority", 9)):
        sw.registers[f"AtpIngress.atp_{name}"].write(5, value)
    ctl.reset_job(replace(job))
    assert [sw.registers[f"AtpIngress.atp_{n}"].read(5) for n in ("deadline", "evicted_owner", "priority")] == [0] * 3
    sw.registers["AtpIngress.atp_deadline"].write(4, 777)
    show = next(c for c in ReleaseController.CLI if c.name == "aggregators")
    lines = show.run(ctl, argparse.Namespace(first=4, count=2)).splitlines()
    assert lines[0].endswith("priority  deadline_us") and lines[1].endswith("  777") and lines[2].endswith("  -")
    assert [c.name for c in ReleaseController.CLI] == ["aggregators", "ecn", "priority", "timeout"]
