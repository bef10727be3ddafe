"""CPU layouts of an experiment (topo.cpus): which CPUs the switch processes and the hosts' processes get."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from topo.cpus import CpuLayout


def test_split_gives_each_switch_a_cpu_and_the_hosts_the_rest() -> None:
    layout = CpuLayout.plan("split", switches=1, available=[0, 1])
    assert (layout.switches, layout.hosts) == ((0,), (1,))
    assert layout.switch_argv(["python", "-m", "switch"]) == ["taskset", "-c", "0", "python", "-m", "switch"]
    assert layout.host_argv(["python", "-m", "worker"]) == ["taskset", "-c", "1", "python", "-m", "worker"]
    assert layout.describe() == "switch on CPU 0, hosts on CPU 1"
    wide = CpuLayout.plan("split", switches=3, available=[7, 2, 3, 4, 5, 6])
    assert (wide.switches, wide.hosts) == ((2, 3, 4), (5, 6, 7))
    assert [wide.switch_argv(["s"], i)[2] for i in range(3)] == ["2", "3", "4"]
    assert wide.host_argv(["w"])[:3] == ["taskset", "-c", "5,6,7"]


@pytest.mark.parametrize("switches, cpus", [(1, [0]), (3, [0, 1]), (3, [0, 1, 2, 3, 4])])
def test_split_without_a_cpu_per_switch_and_as_many_for_the_hosts_is_shared(switches: int, cpus: list[int]) -> None:
    layout = CpuLayout.plan("split", switches=switches, available=cpus)
    assert not layout.split
    assert layout.switch_argv(["s"]) == ["s"] and layout.host_argv(["w"]) == ["w"]


def test_shared_confines_nothing_and_bad_modes_are_refused() -> None:
    assert CpuLayout.plan("shared", available=range(8)) == CpuLayout()
    assert CpuLayout().describe().startswith("shared")
    with pytest.raises(ValueError, match="unknown CPU layout 'half'.*split, shared"):
        CpuLayout.plan("half")
    with pytest.raises(ValueError, match="switches must be >= 1"):
        CpuLayout.plan("split", switches=0)


def test_the_confined_command_runs_on_the_planned_cpu() -> None:
    cpu = sorted(os.sched_getaffinity(0))[-1]
    layout = CpuLayout(switches=(cpu,), hosts=(cpu,))
    argv = layout.host_argv(["python3", "-c", "import os; print(sorted(os.sched_getaffinity(0)))"])
    assert subprocess.run(argv, capture_output=True, text=True, check=True, timeout=30).stdout.strip() == f"[{cpu}]"


def test_workers_run_without_receive_coalescing_when_the_switch_has_a_cpu_of_its_own(tmp_path: Path) -> None:
    """Coalescing spares a switch that shares the workers' CPUs; split, the runner turns it off, and an experiment's
    own worker options still win."""
    from dataclasses import replace

    from experiments.config import ExperimentConfig
    from experiments.session import _worker_argv
    from worker.__main__ import build_parser
    from worker.driver import WindowOptions

    cfg = ExperimentConfig(workers=4)
    split = CpuLayout.plan("split", available=[0, 1])
    parse = build_parser().parse_args

    def coalescing(cfg: ExperimentConfig, layout: CpuLayout) -> float:
        return parse(_worker_argv(cfg, tmp_path / "job.json", 0, None, layout)[3:]).rx_coalesce

    assert coalescing(cfg, split) == 0
    assert coalescing(cfg, CpuLayout()) == WindowOptions().rx_coalesce > 0  # shared: the worker's default
    assert coalescing(replace(cfg, worker_args=("--rx-coalesce", "0.2")), split) == 0.2


def test_the_runner_leaves_the_window_to_the_protocol_unless_the_experiment_sets_it(tmp_path: Path) -> None:
    """No --window by default (SwitchML then keeps its pool in flight up to SWITCHML_WINDOW, ATP ATP_WINDOW); an
    experiment's is passed."""
    from dataclasses import replace

    from experiments.config import ExperimentConfig
    from experiments.session import _worker_argv
    from worker.__main__ import build_parser
    from worker.atp.worker import ATP_WINDOW
    from worker.switchml.worker import SWITCHML_WINDOW

    cfg = ExperimentConfig(workers=4, pool_size=48)

    def window(cfg: ExperimentConfig) -> int | None:
        return build_parser().parse_args(_worker_argv(cfg, tmp_path / "job.json", 0, None, CpuLayout())[3:]).window

    assert window(cfg) is None and cfg.window_width == 48
    assert replace(cfg, pool_size=256).window_width == SWITCHML_WINDOW == 64
    assert window(replace(cfg, protocol="atp")) is None and replace(cfg, protocol="atp").window_width == ATP_WINDOW
    assert window(replace(cfg, window=8)) == 8 == replace(cfg, window=8).window_width
