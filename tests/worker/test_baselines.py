"""Host-based baselines (ring all-reduce, sharded parameter server) and the collective registry: exact int32 sums and
float32 within the summation bound over in-memory links, TCP links on localhost, clear errors in bounded time when a
peer is missing, dies or runs a different all-reduce, and the worker CLI's --protocol."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from tests.paths import ROOT
from worker.collective import CollectiveOptions
from worker.host.base import HostCollective, chunk_bounds
from worker.host.peers import PeerProtocolError, PeerUnreachable, connect_mesh, socketpair_mesh
from worker.host.ps import ShardedPS
from worker.host.ring import Ring
from worker.job import JobConfig, PoolRange, SwitchAddress, WorkerSpec
from worker.protocols import PROTOCOLS, open_collective
from worker.verify import float_sum_bound, rank_input, verify_float_sum

REPO = ROOT
HOST = [Ring, ShardedPS]


def run_all(cls: type[HostCollective], inputs: list[np.ndarray], dtype: str | None = None,
            links=None) -> list:
    """Run one all-reduce on every rank (one thread each) over in-memory links; results (or exceptions) by rank."""
    n = len(inputs)
    links = links or socketpair_mesh(n, timeout=5.0)
    out: list = [None] * n

    def go(r: int) -> None:
        try:
            out[r] = cls(r, n, links[r]).run(inputs[r], dtype)
        except Exception as exc:  # noqa: BLE001 - inspected by the test
            out[r] = exc
    threads = [threading.Thread(target=go, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    for lk in links:
        lk.close()
    return out


@pytest.mark.parametrize("cls", HOST, ids=lambda c: c.name)
@pytest.mark.parametrize("n", [2, 3, 4, 7, 8])
@pytest.mark.parametrize("size", [0, 1, 5, 1000, 12345])
def test_int32_sums_are_exact(cls: type[HostCollective], n: int, size: int) -> None:
    inputs = [rank_input(size, 7, r, "int32") for r in range(n)]  # full int32 range: the sums wrap
    ref = np.sum(np.stack([x.astype(np.int64) for x in inputs]), axis=0).astype(np.uint32).view(np.int32) \
        if size else np.zeros(0, np.int32)
    for r, res in enumerate(run_all(cls, inputs)):
        assert not isinstance(res, Exception), res
        assert res.array.dtype == np.int32 and np.array_equal(res.array, ref), f"rank {r}"
        assert res.stats.elements == size


@pytest.mark.parametrize("cls", HOST, ids=lambda c: c.name)
@pytest.mark.parametrize("n", [2, 5, 8])
def test_float32_within_the_summation_bound_and_identical_on_every_rank(cls: type[HostCollective], n: int) -> None:
    inputs = [rank_input(4099, 3, r, "float32") for r in range(n)]
    results = run_all(cls, inputs)
    for res in results:
        assert verify_float_sum(res.array, inputs, "float32").ok
        assert np.array_equal(res.array, results[0].array)  # every rank gets the same bits
    assert results[0].array.shape == (4099,) and results[0].array.dtype == np.float32


def test_float_sum_bound_rejects_a_result_outside_it() -> None:
    inputs = [np.array([1.0, 1e-3, -2.5], np.float32), np.array([3.0, 2e-3, 2.5], np.float32)]
    exact = np.array([4.0, 3e-3, 0.0], np.float32)
    assert verify_float_sum(exact, inputs, "float32").ok
    bound = float_sum_bound(inputs)
    assert bound[2] == pytest.approx(2 ** -24 / (1 - 2 ** -24) * 5.0, rel=1e-9)
    off = exact.copy()
    off[0] = np.nextafter(np.float32(4.0), np.float32(5.0))  # 1 ulp of 4.0 = 2^-21 > bound 2^-24 * 4
    v = verify_float_sum(off, inputs, "float32")
    assert not v.ok and "1 of 3 elements outside" in v.message


@pytest.mark.parametrize("cls", HOST, ids=lambda c: c.name)
def test_traffic_per_rank_is_2_n_minus_1_over_n_of_the_tensor(cls: type[HostCollective]) -> None:
    n, size = 4, 40000
    res = run_all(cls, [rank_input(size, 1, r, "float32") for r in range(n)])
    header = 12 * len(cls.peers_needed(0, n))
    assert res[0].stats.bytes_sent - header == 2 * (n - 1) * (size // n) * 4


@pytest.mark.parametrize("cls", HOST, ids=lambda c: c.name)
def test_consecutive_runs_and_shapes(cls: type[HostCollective]) -> None:
    n = 3
    links = socketpair_mesh(n, timeout=5.0)
    colls = [cls(r, n, links[r]) for r in range(n)]
    outs: list = [[] for _ in range(n)]

    def go(r: int) -> None:
        for k in range(3):
            outs[r].append(colls[r].allreduce(np.full((2, 3), k + r, np.int32)))
    threads = [threading.Thread(target=go, args=(r,)) for r in range(n)]
    [t.start() for t in threads]
    [t.join(30) for t in threads]
    for r in range(n):
        assert [o.tolist() for o in outs[r]] == [np.full((2, 3), 3 * k + 3, np.int32).tolist() for k in range(3)]


@pytest.mark.parametrize("cls", HOST, ids=lambda c: c.name)
def test_ranks_running_different_all_reduces_fail_clearly(cls: type[HostCollective]) -> None:
    inputs = [np.zeros(100, np.int32), np.zeros(100, np.int32), np.zeros(99, np.int32)]
    results = run_all(cls, inputs)
    errs = [r for r in results if isinstance(r, PeerProtocolError)]
    assert errs and all(isinstance(r, Exception) for r in results)
    assert any("disagree" in str(e) and "99" in str(e) for e in errs)


@pytest.mark.parametrize("cls", HOST, ids=lambda c: c.name)
def test_a_rank_that_is_gone_is_named_in_bounded_time(cls: type[HostCollective]) -> None:
    n = 3
    links = socketpair_mesh(n, timeout=1.0)
    links[2].close()  # rank 2 is gone before it sends anything
    out: list = [None, None]

    def go(r: int) -> None:
        try:
            cls(r, n, links[r]).run(np.ones(10, np.int32))
        except Exception as exc:  # noqa: BLE001 - inspected below
            out[r] = exc
    t0 = time.monotonic()
    threads = [threading.Thread(target=go, args=(r,)) for r in range(2)]
    [t.start() for t in threads]
    [t.join(30) for t in threads]
    assert time.monotonic() - t0 < 10
    for r in (0, 1):
        assert isinstance(out[r], PeerUnreachable) and out[r].rank == 2 and "rank 2" in str(out[r])


def free_tcp_ports(k: int) -> list[int]:
    socks = [socket.socket() for _ in range(k)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def loopback_job(n: int, ports: list[int]) -> JobConfig:
    return JobConfig(job_id=3, num_elems=64, switch=SwitchAddress(ip="127.0.0.254", mac="00:00:0a:00:00:fe"),
                     pool=PoolRange(base=0, size=8),
                     workers=[WorkerSpec(rank=r, ip="127.0.0.1", mac=f"00:00:0a:00:00:{r + 1:02x}", udp_port=ports[r],
                                         switch_port=r + 1) for r in range(n)])


@pytest.mark.parametrize("protocol", ["ring", "ps"])
def test_registry_opens_tcp_links_on_localhost(protocol: str) -> None:
    n = 3
    job = loopback_job(n, free_tcp_ports(n))
    inputs = [rank_input(5000, 2, r, "float32") for r in range(n)]
    out: list = [None] * n

    def go(r: int) -> None:
        with open_collective(protocol, job, r, CollectiveOptions(connect_timeout=10)) as c:
            run = c.run(inputs[r])
            out[r] = (run, c.verify(run, inputs, "float32"))
    threads = [threading.Thread(target=go, args=(r,)) for r in range(n)]
    [t.start() for t in threads]
    [t.join(30) for t in threads]
    assert all(o is not None and o[1].ok for o in out), out
    assert out[0][0].stats.retransmissions == 0


def test_registry_knows_every_collective_and_refuses_unknown_names() -> None:
    assert {"switchml", "ring", "ps"} <= set(PROTOCOLS)
    with pytest.raises(ValueError, match="unknown protocol 'nccl'; choose one of"):
        open_collective("nccl", loopback_job(2, [1, 2]), 0)


def test_missing_peer_is_named_within_the_connect_timeout() -> None:
    ports = free_tcp_ports(3)
    endpoints = [("127.0.0.1", p) for p in ports]
    t0 = time.monotonic()
    with pytest.raises(PeerUnreachable) as exc:  # rank 0 connects to 1 and 2, neither listens
        connect_mesh(0, endpoints, {1, 2}, timeout=0.5)
    assert time.monotonic() - t0 < 3
    assert exc.value.rank == 1 and f"cannot reach rank 1 at 127.0.0.1:{ports[1]}/tcp" in str(exc.value)
    with pytest.raises(PeerUnreachable) as exc:  # rank 2 waits for 0 and 1 to connect
        connect_mesh(2, endpoints, {0, 1}, timeout=0.5)
    assert "rank 0 (127.0.0.1), rank 1 (127.0.0.1) did not connect within 0.5 s" in str(exc.value)


def test_chunk_bounds_cover_the_tensor() -> None:
    assert chunk_bounds(10, 3) == [0, 3, 6, 10]
    assert chunk_bounds(2, 4) == [0, 0, 1, 1, 2]


@pytest.mark.parametrize("protocol", ["ring", "ps"])
def test_cli_algo_over_localhost(tmp_path: Path, protocol: str) -> None:
    n = 2
    job = loopback_job(n, free_tcp_ports(n))
    path = tmp_path / "job.json"
    job.save(path)
    procs = [subprocess.Popen([sys.executable, "-m", "worker", "--job", str(path), "--rank", str(r), "--algo", protocol,
                               "--size", "3000", "--dtype", "int32", "--verify", "--json", "--connect-timeout", "20"],
                              cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for r in range(n)]
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        rep = json.loads(out.strip().splitlines()[-1])
        assert rep["ok"] and rep["verified"] and rep["protocol"] == protocol and rep["elements"] == 3000
        assert rep["bytes_sent"] == 12 + 3000 * 4  # n = 2: 2(n-1)/n = 1x the tensor, plus the run header


def test_cli_peer_that_never_starts_exits_2_naming_it(tmp_path: Path) -> None:
    job = loopback_job(2, free_tcp_ports(2))
    path = tmp_path / "job.json"
    job.save(path)
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "worker", "--job", str(path), "--rank", "0", "--algo", "ring",
                        "--size", "10", "--connect-timeout", "1", "--json"], cwd=REPO, capture_output=True, text=True,
                       timeout=60)
    assert time.monotonic() - t0 < 30
    assert r.returncode == 2
    rep = json.loads(r.stdout.strip().splitlines()[-1])
    assert rep["peer"] == 1 and "cannot reach rank 1" in rep["error"]
