"""The protocol interface's own rules: how a spec spends switch memory, what a plug-in folder must hold, and which
of an experiment's knobs make its network."""

from __future__ import annotations

from pathlib import Path

import pytest

from worker.protocols import PROTOCOLS, load_plugins


def test_a_static_partition_and_a_shared_pool_spend_memory_as_their_specs_say() -> None:
    sml, atp = PROTOCOLS["switchml"], PROTOCOLS["atp"]
    # SwitchML: two sets of N values per slot, one partition per job; ATP: one pool of N-value aggregators
    assert sml.pool_size(16384, 64, partitions=2) == 16384 // (2 * 2 * 64)
    assert atp.pool_size(16384, 32, partitions=2) == 16384 // 32
    assert (sml.jobs_at_once(8, 2), sml.jobs_at_once(8), atp.jobs_at_once(8, 2)) == (2, 8, 8)


def test_a_plugin_folder_must_be_a_package_with_a_protocol(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="is not a Python package"):
        load_plugins(str(tmp_path))
    (tmp_path / "noproto").mkdir()
    (tmp_path / "noproto" / "__init__.py").write_text("X = 1\n")
    with pytest.raises(ValueError, match="defines no PROTOCOL"):
        load_plugins(str(tmp_path / "noproto"))
    assert load_plugins("") == []


def test_only_the_networks_knobs_make_a_network() -> None:
    from experiments.config import ExperimentConfig

    base = ExperimentConfig(workers=4)
    assert base.network == ExperimentConfig(workers=4, protocol="ring", size=1, loss=0.5, seed=9).network
    assert base.network.changes(ExperimentConfig(workers=5, bw=2.0).network) == ["workers 4 -> 5", "bw None -> 2.0"]
