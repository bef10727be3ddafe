"""The workers' start barrier: the library function and the CLI's --barrier."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.paths import ROOT
from tests.worker.ina_fixtures import LAYOUT_JSON, make_job
from tests.worker.ina_refswitch import SwitchModel
from tests.worker.ina_udpswitch import UdpRefSwitch, local_job
from worker.barrier import BarrierError, BarrierTimeout, PeerFailed, file_barrier, mark_failed
from worker.job import JobConfig
from worker.switchml.header import Codec

REPO = ROOT


def test_barrier_releases_when_all_ranks_are_ready(tmp_path: Path) -> None:
    waited: dict[int, float] = {}
    released: dict[int, float] = {}

    def party(rank: int, delay: float) -> None:
        time.sleep(delay)
        waited[rank] = file_barrier(tmp_path / "b", rank, 3, timeout=10)
        released[rank] = time.monotonic()

    threads = [threading.Thread(target=party, args=(r, 0.1 * r)) for r in range(3)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert sorted(waited) == [0, 1, 2]
    assert all(t - t0 >= 0.2 for t in released.values())  # nobody left before the last (200 ms) arrived
    assert max(released.values()) - min(released.values()) < 0.1
    assert waited[0] > waited[2]
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == ["ready-0", "ready-1", "ready-2"]


def test_barrier_timeout_names_the_missing_ranks(tmp_path: Path) -> None:
    (tmp_path / "ready-2").touch()
    with pytest.raises(BarrierTimeout, match=r"rank\(s\) \[1, 3\] not ready after 0\.\d s"):
        file_barrier(tmp_path, 0, 4, timeout=0.05)


def test_barrier_unusable_directory(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(BarrierError, match="start barrier"):
        file_barrier(tmp_path / "file" / "sub", 0, 1, timeout=1)


def test_cli_workers_start_together(codec: Codec, tmp_path: Path) -> None:
    job = local_job(2)
    path = tmp_path / "job.json"
    job.save(path)
    with UdpRefSwitch(SwitchModel(codec, [job])) as server:
        common = ["--job", str(path), "--program-json", str(LAYOUT_JSON), "--switch-port", str(server.address[1]),
                  "--size", "500", "--verify", "--json", "--barrier", str(tmp_path / "barrier")]
        first = subprocess.Popen([sys.executable, "-m", "worker", *common, "--rank", "0"], cwd=REPO,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)  # rank 0 is set up and waits; without the barrier its packets would time out meanwhile
        second = subprocess.run([sys.executable, "-m", "worker", *common, "--rank", "1"], cwd=REPO,
                                capture_output=True, text=True, timeout=60)
        out, err = first.communicate(timeout=60)
    assert first.returncode == 0 and second.returncode == 0, (err, second.stderr)
    r0, r1 = json.loads(out), json.loads(second.stdout)
    assert r0["verified"] and r1["verified"]
    assert r0["barrier_wait_s"] > 0.3 and r0["retransmissions"] == 0


def test_cli_barrier_timeout_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "job.json"
    local_job(2).save(path)
    res = subprocess.run([sys.executable, "-m", "worker", "--job", str(path), "--rank", "1", "--program-json",
                          str(LAYOUT_JSON), "--barrier", str(tmp_path / "b"), "--barrier-timeout", "0.1"],
                         cwd=REPO, capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert "rank(s) [0] not ready after" in res.stderr


def test_failed_rank_releases_the_others(tmp_path: Path) -> None:
    released: list[BaseException] = []

    def waiter() -> None:
        try:
            file_barrier(tmp_path, 0, 3, timeout=30)
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            released.append(exc)

    t = threading.Thread(target=waiter)
    t0 = time.monotonic()
    t.start()
    time.sleep(0.1)
    mark_failed(tmp_path, 2)
    t.join(10)
    assert time.monotonic() - t0 < 5
    assert len(released) == 1 and isinstance(released[0], PeerFailed)
    assert "rank(s) [2] failed before the start" in str(released[0])


def test_cli_failure_before_barrier_is_announced(tmp_path: Path) -> None:
    path = tmp_path / "job.json"
    job = make_job(2, ip_prefix="198.51.100").to_dict()  # TEST-NET-2: rank 0 cannot bind, exits 5 and tells rank 1
    job["switch"]["ip"] = "127.0.0.254"  # rank 1, bound to 127.0.0.1, can reach it (nobody answers: no need)
    JobConfig.from_dict(job).save(path)
    barrier = tmp_path / "b"
    argv = [sys.executable, "-m", "worker", "--job", str(path), "--program-json", str(LAYOUT_JSON), "--barrier",
            str(barrier)]
    failing = subprocess.run([*argv, "--rank", "0"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert failing.returncode == 5 and "cannot bind" in failing.stderr
    assert (barrier / "failed-0").exists()
    t0 = time.monotonic()
    res = subprocess.run([*argv, "--rank", "1", "--bind", "127.0.0.1"], cwd=REPO, capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 2 and "rank(s) [0] failed before the start" in res.stderr
    assert time.monotonic() - t0 < 30  # not the 60 s barrier timeout
