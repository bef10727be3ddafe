"""JobConfig: JSON round trip and validation errors that name the problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.worker.ina_fixtures import make_job
from worker.job import JobConfig, JobConfigError


def test_round_trip_through_file(tmp_path: Path) -> None:
    job = make_job(3, job_id=4, base=32, size=8)
    path = tmp_path / "job.json"
    job.save(path)
    data = json.loads(path.read_text())
    assert data == {
        "job_id": 4, "num_elems": 8,
        "switch": {"ip": "10.0.0.254", "mac": "00:00:0a:00:00:fe"},
        "pool": {"base": 32, "size": 8},
        "workers": [
            {"rank": r, "ip": f"10.0.0.{r + 1}", "mac": f"00:00:0a:00:00:0{r + 1}", "udp_port": 50000 + r,
             "switch_port": r + 1}
            for r in range(3)
        ],
    }
    assert JobConfig.load(path) == job
    assert job.num_workers == 3 and job.worker(2).udp_port == 50002


def test_a_priority_round_trips_and_is_left_out_when_unset() -> None:
    d = make_job(2).to_dict()
    assert "priority" not in d and JobConfig.from_dict(d).priority is None
    d["priority"] = 7
    job = JobConfig.from_dict(d)
    assert job.priority == 7 and job.to_dict()["priority"] == 7 and JobConfig.from_dict(job.to_dict()) == job


def test_workers_sorted_by_rank() -> None:
    d = make_job(2).to_dict()
    d["workers"].reverse()
    assert [w.rank for w in JobConfig.from_dict(d).workers] == [0, 1]


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda d: d.pop("pool"), "missing key 'pool'"),
        (lambda d: d.update(job_id=256), "job_id: 256 out of range"),
        (lambda d: d.update(num_elems="64"), "num_elems: expected an integer"),
        (lambda d: d["switch"].update(ip="10.0.0.300"), "switch.ip: '10.0.0.300' is not an IPv4 address"),
        (lambda d: d["workers"][1].update(mac="00:00:0a:00:00"), "is not a MAC address"),
        (lambda d: d["workers"][1].update(rank=0), "ranks must be 0..1"),
        (lambda d: d["workers"][1].update(udp_port=70000), "udp_port: 70000 out of range"),
        (lambda d: d["pool"].update(base=32760, size=16), "exceeds 32768 slots"),
        (lambda d: d["workers"][1].pop("switch_port"), "job.workers[1]: missing key 'switch_port'"),
        (lambda d: d.update(workers=[]), "at least one worker"),
        (lambda d: d["workers"][1].update(ip="10.0.0.1", udp_port=50000), "share the same (ip, udp_port)"),
        (lambda d: d.update(priority=256), "priority: 256 out of range"),
    ],
)
def test_validation_errors_name_the_key(mutate, needle: str) -> None:
    d = make_job(2).to_dict()
    mutate(d)
    with pytest.raises(JobConfigError) as exc:
        JobConfig.from_dict(d)
    assert needle in str(exc.value)


def test_too_many_workers() -> None:
    d = make_job(2).to_dict()
    d["workers"] = [dict(d["workers"][0], rank=r, udp_port=40000 + r) for r in range(33)]
    with pytest.raises(JobConfigError, match=r"rank=32\]\.rank: 32 out of range \[0, 31\]"):
        JobConfig.from_dict(d)


def test_load_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(JobConfigError, match="bad.json: not valid JSON"):
        JobConfig.load(bad)
    with pytest.raises(JobConfigError, match="cannot read job file"):
        JobConfig.load(tmp_path / "missing.json")


def test_unknown_rank() -> None:
    with pytest.raises(JobConfigError, match="rank 5 not in job 7"):
        make_job(2).worker(5)


def _workers(d: dict, n: int) -> dict:
    """`d` (a job's JSON form) with n workers, ranks 0..n-1."""
    return dict(d, workers=[dict(d["workers"][0], rank=r, udp_port=40000 + r) for r in range(n)])


def test_a_wider_program_allows_more_workers(tmp_path: Path) -> None:
    """max_workers: the switch program's bitmap width (switchml.p4 -D INA_MAX_WORKERS), 32 unless given."""
    d = _workers(make_job(2).to_dict(), 300)
    with pytest.raises(JobConfigError, match=r"rank=32\]\.rank: 32 out of range \[0, 31\] .*INA_MAX_WORKERS"):
        JobConfig.from_dict(d)
    job = JobConfig.from_dict(d, max_workers=512)
    assert job.num_workers == 300 and job.max_workers == 512
    with pytest.raises(JobConfigError, match=r"rank=256\]\.rank: 256 out of range \[0, 255\]"):
        JobConfig.from_dict(d, max_workers=256)
    # not part of the job file, nor of equality
    path = tmp_path / "job.json"
    job.save(path)
    assert "max_workers" not in path.read_text()
    assert JobConfig.load(path, max_workers=300) == job
    with pytest.raises(JobConfigError, match="job.json: workers\\[rank=32\\]"):
        JobConfig.load(path)


@pytest.mark.parametrize("bad", [0, 1025, 2048])
def test_max_workers_is_at_most_atps_two_levels(bad: int) -> None:
    """switchml.p4's widest bitmap holds 512 (its controller checks a job against its program); ATP on two levels
    holds 32 racks of 32."""
    with pytest.raises(JobConfigError, match=rf"max_workers: {bad} out of range \[1, 1024\]"):
        JobConfig.from_dict(make_job(2).to_dict(), max_workers=bad)


def test_max_workers_below_the_job_refuses_it() -> None:
    with pytest.raises(JobConfigError, match=r"rank=2\]\.rank: 2 out of range \[0, 1\]"):
        JobConfig.from_dict(make_job(3).to_dict(), max_workers=2)
