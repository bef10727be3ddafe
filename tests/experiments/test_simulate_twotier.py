"""Two-tier scenarios on the packet simulator (`topology = "two-tier"`): the keys, a verified row whose bottleneck is
an uplink when the uplinks bind (ATP's two levels, and the host baselines over TCP beside it on the same network), and
what the two-tier network cannot run refused at load."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.scenario import ScenarioError, load_scenario
from experiments.simulate import run_point

TWO_TIER = """
[scenario]
repetitions = 1
seed = 4
[network]
engine = "sim"
topology = "two-tier"
racks = 2
bw_mbps = 10000
uplink_mbps = 1000
[sweep]
protocols = ["atp"]
workers = [6]
sizes = [1024]
dtype = "float32"
"""


def scenario(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "two-tier.toml"
    path.write_text(text)
    return path


def test_a_two_tier_scenario_gives_a_verified_row_bound_by_an_uplink(tmp_path: Path) -> None:
    sc = load_scenario(scenario(tmp_path, TWO_TIER))
    assert (sc.topology, sc.racks, sc.levels, sc.uplink_mbps) == ("two-tier", 2, 2, 1000.0)
    row = run_point(sc, sc.runs()[0], 1)
    assert row.verified and row.error == "" and row.engine == "sim"
    # one rack aggregate per packet goes up, but on 10x slower links than the workers': an uplink binds
    assert row.switch_aggregated > 0 and row.max_error_over_bound is not None
    assert row.bottleneck.split()[0] in ("s1->s3", "s2->s3") and row.bound == "network"
    assert row.wire_frames >= 6 * 1024 // 32  # every worker's packets, counted on the workers' links


@pytest.mark.parametrize("protocol", ["ring", "ps"])
def test_a_host_baseline_runs_on_the_same_two_tiers_over_tcp(tmp_path: Path, protocol: str) -> None:
    text = TWO_TIER.replace('["atp"]', f'["atp", "{protocol}"]').replace("sizes = [1024]", "sizes = [32768]")
    sc = load_scenario(scenario(tmp_path, text))
    atp, host = (run_point(sc, p, 1) for p in sc.runs())
    assert host.protocol == protocol and host.verified and host.error == "", host.error
    assert host.switch_aggregated == 0 and atp.verified
    # a ring's neighbours across racks, a PS shard's peers: the traffic crosses the 10x slower uplinks
    assert host.bottleneck.split()[0] in ("s1->s3", "s2->s3", "s3->s1", "s3->s2") and host.bound == "network"
    assert host.elapsed_s > atp.elapsed_s  # ATP's racks send one aggregate up; the hosts send their data


def test_a_leaf_spine_scenario_runs_atp_and_the_ring_on_one_network(tmp_path: Path) -> None:
    text = (TWO_TIER.replace('topology = "two-tier"', 'topology = "leaf-spine"\nspines = 3')
            .replace('["atp"]', '["atp", "ring"]').replace("sizes = [1024]", "sizes = [32768]"))
    sc = load_scenario(scenario(tmp_path, text))
    assert (sc.topology, sc.racks, sc.spines, sc.uplink_mbps) == ("leaf-spine", 2, 3, 1000.0)
    atp, ring = (run_point(sc, p, 1) for p in sc.runs())
    assert atp.verified and ring.verified and atp.error == ring.error == "", (atp.error, ring.error)
    assert atp.switch_aggregated > 0 and ring.switch_aggregated == 0
    # leaves s1 s2, spines s3 s4 s5, the PS's leaf s6: an uplink binds, the spines' links are the uplinks
    assert atp.bottleneck.split()[0] in {f"{a}->{b}" for a in ("s1", "s2", "s6") for b in ("s3", "s4", "s5")}
    assert ring.bound == "network" and ring.elapsed_s > atp.elapsed_s


def test_host_baselines_alone_take_more_than_a_bitmap_per_rack(tmp_path: Path) -> None:
    sc = load_scenario(scenario(tmp_path, TWO_TIER.replace('["atp"]', '["ring"]').replace("workers = [6]",
                                                                                          "workers = [65]")))
    assert sc.workers == (65,)


@pytest.mark.parametrize("change, key, message", [
    (("topology = \"two-tier\"\nracks = 2", "racks = 2"), "network.racks", "only with topology"),
    (("racks = 2\n", ""), "network.racks", "needs its number of racks"),
    (("engine = \"sim\"\n", ""), "network.topology", "runs on the simulator"),
    (("[\"atp\"]", "[\"switchml\"]"), "sweep.protocols", "switchml aggregates in exactly one switch"),
    (("workers = [6]", "workers = [1]"), "sweep.workers", "cannot fill 2 racks"),
    (("workers = [6]", "workers = [65]"), "sweep.workers", "2 racks of at most 32"),
    (("racks = 2", "racks = 2\nlevels = 1"), "sweep.workers", None),
    (("racks = 2", "racks = 33"), "network.racks", "out of range"),
    (("racks = 2", "racks = 2\nspines = 2"), "network.spines", "only with topology = .leaf-spine."),
    (("topology = \"two-tier\"", "topology = \"leaf-spine\"\nspines = 65"), "network.spines", "out of range"),
    (("workers = [6]", "workers = [1020]"), "sweep.workers", "need 511 ports"),  # 510 hosts and an uplink
])
def test_what_two_tiers_cannot_run_is_refused_at_load(tmp_path: Path, change: tuple[str, str], key: str,
                                                      message: str | None) -> None:
    text = TWO_TIER.replace(*change)
    if message is None:  # one level: every worker in the PS's rack switch's 32-bit bitmap
        text = text.replace("workers = [6]", "workers = [40]")
        message = "one level"
    with pytest.raises(ScenarioError, match=key.replace(".", r"\.") + ".*" + message):
        load_scenario(scenario(tmp_path, text))


def test_two_tiers_take_up_to_1024_workers(tmp_path: Path) -> None:
    sc = load_scenario(scenario(tmp_path, TWO_TIER.replace("racks = 2", "racks = 32").replace(
        "workers = [6]", "workers = [64, 1024]")))
    assert sc.workers == (64, 1024)
