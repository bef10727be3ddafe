"""The bound verdict (experiments.bound): the rule, and runs that force it (Mininet, root)."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.bound import Bound, verdict
from experiments.config import ExperimentConfig
from experiments.session import run_experiment
from topo.target import Target


@pytest.mark.parametrize(("bound", "expected"), [
    (Bound(link_busy=0.95, switch_busy=0.99, host_busy=0.99), "network"),  # a saturated link binds first
    (Bound(link_busy=0.50, switch_busy=0.85, host_busy=0.99), "switch-cpu"),
    (Bound(link_busy=None, switch_busy=0.85, host_busy=0.2), "switch-cpu"),
    (Bound(link_busy=0.30, switch_busy=0.40, host_busy=0.81), "host-cpu"),
    (Bound(link_busy=0.79, switch_busy=0.79, host_busy=0.79), "latency"),
    (Bound(link_busy=None, switch_busy=0.1, host_busy=0.1), "latency"),
])
def test_the_rule(bound: Bound, expected: str) -> None:
    assert verdict(bound) == expected == bound.verdict
    assert bound.describe().startswith(f"bound: {expected} (")


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
