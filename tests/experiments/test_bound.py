"""The bound verdict (experiments.bound): the rule, and runs that force it (Mininet, root)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from experiments.bound import OUTSIDE, STALL, VERDICTS, WAIT, WASTE, Bound, verdict
from experiments.config import ExperimentConfig
from experiments.load import OutsideLoad
from experiments.result import ExperimentResult
from experiments.rows import CSV_FIELDS, Row
from experiments.scenario import load_scenario
from experiments.session import run_experiment
from topo.target import Target
from worker.launch import WorkerOutcome


SHARED = OutsideLoad(others_cpus=1.5)


@pytest.mark.parametrize(("bound", "expected"), [
    (Bound(link_busy=0.95, switch_busy=0.99, host_busy=0.99), "network"),  # a saturated link binds first
    (Bound(link_busy=0.95, switch_busy=0.3, host_busy=0.3, retransmitted=0.25), "retransmissions"),
    (Bound(link_busy=0.95, switch_busy=0.3, host_busy=0.3, retransmitted=0.24), "network"),
    (Bound(link_busy=0.95, switch_busy=0.3, host_busy=0.3, switch_wait=0.6, outside=SHARED), "network"),
    (Bound(link_busy=0.50, switch_busy=0.85, host_busy=0.99), "switch-cpu"),
    (Bound(link_busy=None, switch_busy=0.45, host_busy=0.5, switch_wait=0.6, outside=SHARED), "contended"),
    (Bound(link_busy=None, switch_busy=0.45, host_busy=0.5, host_wait=0.2, outside=OutsideLoad(0.2, 0.05)),
     "contended"),  # the hypervisor's steal is load from outside too
    # the hosts waiting for each other on a CPU they share is not a busy machine
    (Bound(link_busy=None, switch_busy=0.92, host_busy=0.92, host_wait=0.44, outside=OutsideLoad(0.03)),
     "switch-cpu"),
    (Bound(link_busy=None, switch_busy=0.3, host_busy=0.3, switch_wait=0.19, outside=SHARED), "latency"),
    (Bound(link_busy=None, switch_busy=0.85, host_busy=0.2), "switch-cpu"),
    (Bound(link_busy=0.30, switch_busy=0.40, host_busy=0.81), "host-cpu"),
    (Bound(link_busy=0.26, switch_busy=0.1, host_busy=0.03, retransmitted=0.49, queue_drops=2786), "transport"),
    (Bound(link_busy=0.5, switch_busy=0.1, host_busy=0.1, tcp_timeouts=1), "transport"),
    (Bound(link_busy=0.5, switch_busy=0.1, host_busy=0.1, retransmitted=0.009), "latency"),
    (Bound(link_busy=0.79, switch_busy=0.79, host_busy=0.79), "latency"),
    (Bound(link_busy=None, switch_busy=0.1, host_busy=0.1), "latency"),
])
def test_the_rule(bound: Bound, expected: str) -> None:
    assert verdict(bound) == expected == bound.verdict
    assert bound.describe().startswith(f"bound: {expected} (")
    assert expected in VERDICTS


def test_the_line_says_what_the_verdict_rests_on() -> None:
    shared = Bound(link_busy=None, switch_busy=0.45, host_busy=0.49, switch_wait=0.6, host_wait=0.32,
                   outside=OutsideLoad(0.98))
    assert "waited for a CPU: switch 60 %, hosts 32 % (other processes 0.98 CPUs)" in shared.describe()
    wasted = Bound(link_busy=1.17, switch_busy=0.3, host_busy=0.5, retransmitted=0.773, efficiency=0.12)
    assert "resent 77.3 % of packets" in wasted.describe() and "efficiency 12 %" in wasted.describe()
    tcp = Bound(link_busy=0.26, switch_busy=0.1, host_busy=0.03, retransmitted=0.49, queue_drops=27, tcp_timeouts=3)
    assert "27 queue drops, 3 TCP timeouts" in tcp.describe()
    quiet = Bound(link_busy=None, switch_busy=0.1, host_busy=0.1, outside=OutsideLoad(0.02))
    assert "waited" not in quiet.describe() and "resent" not in quiet.describe()


def test_runs_csv_carries_what_the_verdict_rests_on(tmp_path: Path) -> None:
    """A sweep's row holds the measurements behind the verdict, as the verdict itself reads them."""
    (tmp_path / "s.toml").write_text("[sweep]\nprotocols = ['switchml']\nworkers = [2]\nsizes = [1024]\n")
    sc = load_scenario(tmp_path / "s.toml")
    b = Bound(link_busy=None, switch_busy=0.45, host_busy=0.5, switch_wait=0.6, host_wait=0.32,
              outside=OutsideLoad(0.9, 0.1), retransmitted=0.02, queue_drops=3, tcp_timeouts=1, efficiency=0.78)
    cfg = ExperimentConfig(workers=2, size=1024)
    worker = WorkerOutcome(0, 0, {"ok": True, "verified": True, "elapsed_s": 1.0})
    r = ExperimentResult(cfg, [worker], {}, Path("/dev/null"), bound=b)
    row = Row.of(sc.runs()[0], 1, sc, r).csv_row()
    assert {k: row[k] for k in ("switch_wait_fraction", "host_wait_fraction", "outside_cpus", "retransmitted_fraction",
                                "queue_drops", "tcp_timeouts", "efficiency", "bound")} == {
        "switch_wait_fraction": 0.6, "host_wait_fraction": 0.32, "outside_cpus": 1.0, "retransmitted_fraction": 0.02,
        "queue_drops": 3, "tcp_timeouts": 1, "efficiency": 0.78, "bound": "contended"}
    assert row["seed"] == sc.seed + 1 and set(row) == set(CSV_FIELDS)


def _base(program: tuple[Path, Path], tmp_path: Path, **kw: object) -> dict[str, object]:
    return dict(target=Target.EMBEDDED, program_json=program[0], p4info=program[1], run_dir=tmp_path, workers=4,
                timeout_s=60.0, **kw)


@contextlib.contextmanager
def busy_loops(n: int) -> Iterator[None]:
    """n busy loops (`while :; do :; done`), each in a session of its own, killed at the end: someone else's job."""
    hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"], start_new_session=True) for _ in range(n)]
    try:
        time.sleep(0.5)
        yield
    finally:
        for h in hogs:
            os.killpg(h.pid, signal.SIGKILL)
            h.wait()


@pytest.mark.mininet
def test_a_busy_machine_reads_contended_and_a_quiet_one_does_not(program: tuple[Path, Path],
                                                                  tmp_path: Path) -> None:
    """`make run`'s setting (4 workers, unlimited links) beside a busy loop per CPU: the switch and the hosts wait
    for CPUs that the loops hold. Alone, the same run is not `contended`."""
    cfg = ExperimentConfig(size=1 << 16, **_base(program, tmp_path))
    alone = run_experiment(cfg)
    assert alone.correct and alone.bound is not None, alone.table()
    if alone.bound.outside.cpus < OUTSIDE:  # a machine that is busy already (make test beside a build) cannot say
        assert alone.bound.verdict != "contended", alone.bound.describe()
    with busy_loops(os.cpu_count() or 1):
        shared = run_experiment(cfg)
    b = shared.bound
    assert shared.correct and b is not None, shared.table()
    assert b.verdict == "contended", b.describe()
    assert b.outside.others_cpus >= OUTSIDE and max(b.switch_wait, b.host_wait) >= WAIT, b
    assert "bound: contended (" in shared.table() and "other processes" in shared.table()


@pytest.mark.mininet
def test_a_link_full_of_resends_is_not_network_bound(program: tuple[Path, Path], tmp_path: Path) -> None:
    """A 20 ms timer that nothing restarts, on 1 Mbit/s links whose queues hold a window for longer than that:
    most packets on the link are copies. The link is full, and the verdict says of what."""
    r = run_experiment(ExperimentConfig(size=8192, bw=1.0, worker_args=(
        "--fixed-timeout", "--timeout-ms", "20", "--no-restart-on-progress"), **_base(program, tmp_path)))
    b = r.bound
    assert r.correct and b is not None, r.table()
    sent = sum(int(w.report["packets_sent"]) for w in r.workers)
    resent = sum(int(w.report["retransmissions"]) for w in r.workers)
    assert b.retransmitted == pytest.approx(resent / sent) and b.retransmitted >= WASTE, b
    assert b.link_busy is not None and b.link_busy >= 0.8, b
    assert b.verdict == "retransmissions", b.describe()
    assert b.efficiency is not None and b.efficiency < 0.3, b  # the tensor is a small part of what the link carried


@pytest.mark.mininet
def test_tcp_through_short_queues_reads_transport(program: tuple[Path, Path], tmp_path: Path) -> None:
    """The PS baseline into 4-packet queues at 10 Mbit/s: incast drops at the queues, TCP resends and times out,
    the links are far from full. Not `latency`: the verdict names the transport, the line its drops."""
    r = run_experiment(ExperimentConfig(protocol="ps", size=1 << 16, bw=10.0, queue_packets=4,
                                        **_base(program, tmp_path)))
    b = r.bound
    assert r.correct and b is not None, r.table()
    assert b.queue_drops > 0 and b.retransmitted >= STALL, b
    assert b.link_busy is not None and b.link_busy < 0.8, b
    shared = max(b.switch_wait, b.host_wait) >= WAIT and b.outside.cpus >= OUTSIDE  # the rule's step before
    assert b.verdict == ("contended" if shared else "transport"), b.describe()
    assert f"{b.queue_drops} queue drops" in r.table()


@pytest.mark.mininet
def test_a_slow_link_binds_and_an_unlimited_one_does_not(program: tuple[Path, Path], tmp_path: Path) -> None:
    """2 Mbit/s: each worker's link carries its packets back to back (network). Unlimited veth links: no link binds,
    and the verdict names the CPU that was busiest, by its own measurement."""
    base = dict(target=Target.EMBEDDED, program_json=program[0], p4info=program[1], run_dir=tmp_path, workers=4,
                timeout_s=60.0)
    slow = run_experiment(ExperimentConfig(size=32768, bw=2.0, **base))
    assert slow.correct and slow.bound is not None, slow.table()
    assert slow.bound.verdict == "network" and slow.bound.link_busy >= 0.8, slow.bound
    assert slow.bound.switch_busy < 0.5, slow.bound  # the switch idles between packets at 2 Mbit/s
    assert "bound: network (busiest link" in slow.table()
    fast = run_experiment(ExperimentConfig(size=1 << 20, **base))
    b = fast.bound
    assert fast.correct and b is not None and b.link_busy is None, fast.table()
    assert b.verdict != "network"
    if b.verdict == "switch-cpu":
        assert b.switch_busy >= 0.8
    elif b.verdict == "host-cpu":
        assert b.host_busy >= 0.8 > b.switch_busy
    else:
        assert max(b.switch_busy, b.host_busy) < 0.8
