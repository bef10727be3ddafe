"""The packet simulator's two-tier network (topo.sim.fabric): ATP on rack switches under the PS's rack switch, each
switch an engine of its own programmed as Mininet's, exact results, one aggregate per rack on the uplinks, loss at
the host ports, and jobs wider than ATP's 32-bit worker bitmap (worker.atp.bitmap)."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import numpy as np
import pytest

from tests.paths import ROOT
from topo.inprocess import EngineCache
from topo.sim import LinkSpec
from topo.sim.fabric import FabricSimNetwork, fabric_job
from topo.twotier import TwoTierFabric
from worker.atp.bitmap import Contributions
from worker.atp.header import RESEND
from worker.job import PoolRange
from worker.verify import check_exact, wrapping_sum

OUT = ROOT / "out"
ENGINES = EngineCache()  # loading an engine costs ~1 s: the tests' networks reuse three


@cache
def program() -> dict[str, Any]:
    return json.loads((OUT / "atp.json").read_text())


def net(racks: int, per_rack: int, *, levels: int = 2, **kw: Any) -> FabricSimNetwork:
    f = TwoTierFabric(racks * per_rack, racks=racks, levels=levels, ps=True)
    return FabricSimNetwork(program(), f, [fabric_job(f, 32, PoolRange(0, 64))], p4info=OUT / "atp.p4info.txt",
                             engines=ENGINES.many(program(), racks + 1), **kw)


def small_ints(n: int, size: int, seed: int = 1) -> list[np.ndarray]:
    """int32 inputs whose sums fit (full-range ones overflow: ATP then resends them raw, past the switches)."""
    bound = 2**31 // n
    return [np.random.default_rng([seed, r]).integers(-bound, bound, size, dtype=np.int64).astype(np.int32)
            for r in range(n)]


def uplink_frames(n: FabricSimNetwork) -> dict[str, int]:
    return {p.name: p.frames for p in n.report().ports if p.host is None}


def test_two_level_atp_is_exact_at_every_worker_and_the_report_names_every_port() -> None:
    n = net(2, 3, link=LinkSpec(100e9, 1e-6), seed=1)
    data = small_ints(6, 32 * 40 + 5)
    run = n.allreduce({1: data}, "int32")[1]
    ref = wrapping_sum(data)
    assert all(check_exact(r, ref).ok for r in run.results)
    assert run.ps.stats.contributions_in_switch == 6 * 41 and run.ps.stats.raw_sequences == 0
    names = {p.name for p in n.report().ports}
    assert {"h1->s1", "s1->h1", "h4->s2", "h7->s3", "s3->h7", "s1->s3", "s3->s1", "s2->s3", "s3->s2"} <= names
    assert len(names) == 2 * (7 + 2)  # 6 workers and the PS, 2 uplinks: each link both ways


def test_two_levels_send_one_aggregate_per_rack_up_one_level_every_workers_packet() -> None:
    data = small_ints(6, 32 * 41)
    ups = {}
    for levels in (1, 2):
        n = net(2, 3, levels=levels, link=LinkSpec(100e9, 1e-6), seed=2)
        run = n.allreduce({1: data}, "int32")[1]
        assert all(check_exact(r, wrapping_sum(data)).ok for r in run.results)
        ups[levels] = uplink_frames(n)
    assert ups[2]["s1->s3"] == ups[2]["s2->s3"] == 41  # one rack aggregate per packet
    assert ups[1]["s1->s3"] == ups[1]["s2->s3"] == 3 * 41  # each worker's packet goes up
    assert ups[2]["s3->s1"] == 41 and ups[1]["s3->s1"] == 3 * 41  # one ACK per rack, or one per worker


def test_a_seeded_lossy_run_is_exact_replays_and_loses_only_at_host_ports() -> None:
    def run(seed: int) -> tuple[float, int, int]:
        n = net(2, 3, link=LinkSpec(10e9, 1e-6), seed=seed, loss=0.03)
        # the workers' ports on s1 and s2, the PS's on s3; the uplinks lose nothing
        assert {name: sorted(p.rules[0].ports or ()) for name, p in n.plans.items()} == n.fabric.host_ports()
        data = small_ints(6, 32 * 30, seed)
        r = n.allreduce({1: data}, "int32")[1]
        assert all(check_exact(x, wrapping_sum(data)).ok for x in r.results)
        return (n.report().sim_s, sum(w.stats.retransmissions for w in r.windows),
                sum(p.stats["drop"] for p in n.plans.values()))

    a, b = run(5), run(5)
    assert a == b and a[1] > 0 and a[2] > 0
    assert run(6) != a


def test_a_job_wider_than_the_worker_bitmap_aggregates_per_rack_even_under_loss() -> None:
    data = small_ints(34, 32 * 20)
    n = net(2, 17, link=LinkSpec(100e9, 1e-6), seed=3, loss=0.02)
    run = n.allreduce({1: data}, "int32")[1]
    assert all(check_exact(r, wrapping_sum(data)).ok for r in run.results)
    st = run.ps.stats
    assert st.completed == 20 and st.contributions_in_switch > 0 and st.ambiguous > 0


def test_wide_bitmaps_are_places_in_racks_and_a_flushed_mix_of_racks_is_not_named() -> None:
    f = TwoTierFabric(40, racks=2, ps=True)
    wide = Contributions(fabric_job(f, 32, PoolRange(0, 8)))
    assert wide.wide and wide.bit(0) == 0 and wide.bit(25) == 5
    assert wide.ranks(0b101, 0b10, 0) == 1 << 20 | 1 << 22  # rack 1's places 0 and 2: ranks 20 and 22
    assert wide.ranks(0xFFFFF, 0b11, 0) == (1 << 40) - 1  # a completed second-level aggregate
    assert wide.ranks(0xFFFFF, 0b11, RESEND) is None  # complete racks and maybe a partial one: which?
    narrow = Contributions(fabric_job(TwoTierFabric(6, racks=2, ps=True), 32, PoolRange(0, 8)))
    assert not narrow.wide and narrow.bit(4) == 4 and narrow.ranks(0b110011, 0b11, RESEND) == 0b110011
    with pytest.raises(ValueError, match="rack 0 has 33 workers"):
        Contributions(fabric_job(TwoTierFabric(66, racks=2, ps=True), 32, PoolRange(0, 8)))


def test_one_switch_programs_and_restarts_are_refused() -> None:
    f = TwoTierFabric(4, racks=2, ps=True)
    with pytest.raises(ValueError, match="switchml aggregates in exactly one switch"):
        sw = json.loads((OUT / "switchml.json").read_text())
        FabricSimNetwork(sw, f, [fabric_job(f, 64, PoolRange(0, 8))], p4info=OUT / "switchml.p4info.txt",
                          link=LinkSpec(1e9))
    with pytest.raises(ValueError, match="supported on the star"):
        net(2, 2, link=LinkSpec(1e9)).restart_at(1e-3)


def test_a_host_baseline_crosses_the_racks_over_tcp_exactly() -> None:
    """The ring on the same two tiers (its ranks TCP hosts, the switches' L2 forwarding only): exact sums, and each
    uplink direction carries one neighbour's stream and another's ACKs, as each host link does."""
    from topo.sim.hosts import _idle_rtt, host_allreduce
    from worker.protocols import PROTOCOLS

    sw = json.loads((OUT / "switchml.json").read_text())
    f = TwoTierFabric(4, racks=2)
    link, uplink = LinkSpec(1e9, 2e-6), LinkSpec(4e9, 5e-6)
    n = FabricSimNetwork(sw, f, [fabric_job(f, 64, PoolRange(0, 8))], p4info=OUT / "switchml.p4info.txt",
                          protocol=PROTOCOLS["ring"], link=link, uplink=uplink, service_s=1e-6, seed=2)
    data = small_ints(4, 20000)
    runs = host_allreduce(n, {1: data}, "int32")
    for got in runs[1].results:
        check_exact(got, wrapping_sum(data))
    frames = {p.name: p.frames for p in n.report().ports}
    assert frames["s1->s3"] == frames["s3->s2"] == frames["h2->s1"] > 0  # h2 -> h3's data, h1 -> h4's ACKs
    assert frames["s2->s3"] == frames["s3->s1"] == frames["h4->s2"] > 0
    hop = lambda s: (66 + s.overhead_bytes) * 8 / s.rate_bps + s.delay_s  # noqa: E731 (an ACK with timestamps)
    assert _idle_rtt(n, 1, 2) == pytest.approx(2 * 2 * hop(link) + 2 * 1e-6)  # the rack switch, both ways
    assert _idle_rtt(n, 1, 3) == pytest.approx(2 * (2 * hop(link) + 2 * hop(uplink)) + 2 * 3e-6)


# ---------------------------------------------------------------------------------------------------- leaf-spine


def leaf_spine(racks: int, per_rack: int, spines: int, *, levels: int = 2, **kw: Any) -> FabricSimNetwork:
    from topo.leafspine import LeafSpineFabric

    f = LeafSpineFabric(racks * per_rack, racks=racks, spines=spines, levels=levels, ps=True)
    return FabricSimNetwork(program(), f, [fabric_job(f, 32, PoolRange(0, 64))], p4info=OUT / "atp.p4info.txt",
                            engines=ENGINES.many(program(), len(f.switches)), **kw)


def test_leaf_spine_atp_crosses_the_spine_of_each_racks_route_exactly() -> None:
    """Two levels over three leaves and two spines: each rack's aggregates go up through the spine its route to the
    PS takes (rack r: spine (r + 7) % 2, the PS being h7), the PS's ACK for the rack comes back the same way,
    addressed to the rack's leaf; the other spine carries nothing. One level: every worker's packet goes up."""
    data = small_ints(6, 32 * 41)
    for levels, per_packet in ((2, 1), (1, 2)):
        n = leaf_spine(3, 2, 2, levels=levels, link=LinkSpec(100e9, 1e-6), seed=4)
        run = n.allreduce({1: data}, "int32")[1]
        assert all(check_exact(r, wrapping_sum(data)).ok for r in run.results)
        assert run.ps.stats.raw_sequences == 0 and sum(w.stats.retransmissions for w in run.windows) == 0
        ups = uplink_frames(n)
        # leaves s1 s2 s3, spines s4 s5, the PS's leaf s6
        for r, used, idle in ((0, "s5", "s4"), (1, "s4", "s5"), (2, "s5", "s4")):
            leaf = f"s{r + 1}"
            assert ups[f"{leaf}->{used}"] == ups[f"{used}->{leaf}"] == per_packet * 41, (levels, ups)
            assert ups[f"{leaf}->{idle}"] == ups[f"{idle}->{leaf}"] == 0
        assert ups["s6->s5"] == 2 * per_packet * 41 and ups["s6->s4"] == per_packet * 41  # racks 0, 2 | rack 1


def test_leaf_spine_under_loss_is_exact_and_replays() -> None:
    def run(seed: int) -> tuple[float, int]:
        n = leaf_spine(2, 3, 2, link=LinkSpec(10e9, 1e-6), seed=seed, loss=0.03)
        data = small_ints(6, 32 * 30, seed)
        r = n.allreduce({1: data}, "int32")[1]
        assert all(check_exact(x, wrapping_sum(data)).ok for x in r.results)
        return n.report().sim_s, sum(w.stats.retransmissions for w in r.windows)

    a = run(5)
    assert a == run(5) and a[1] > 0


def test_a_host_baseline_spreads_over_the_spines() -> None:
    """The ring over two leaves and two spines: the destinations' routes (leaf r to host h: spine (r + h) % 2) put
    its cross-leaf streams on both spines."""
    from topo.leafspine import LeafSpineFabric
    from topo.sim.hosts import host_allreduce
    from worker.protocols import PROTOCOLS

    sw = json.loads((OUT / "switchml.json").read_text())
    f = LeafSpineFabric(4, racks=2, spines=2)
    n = FabricSimNetwork(sw, f, [fabric_job(f, 64, PoolRange(0, 8))], p4info=OUT / "switchml.p4info.txt",
                         protocol=PROTOCOLS["ring"], link=LinkSpec(1e9, 2e-6), seed=2)
    data = small_ints(4, 20000)
    runs = host_allreduce(n, {1: data}, "int32")
    for got in runs[1].results:
        check_exact(got, wrapping_sum(data))
    ups = uplink_frames(n)
    # h2 -> h3 from leaf 0 through spine (0 + 3) % 2 = 1 (s4); h4 -> h1 from leaf 1 through spine (1 + 1) % 2 = 0 (s3)
    assert ups["s1->s4"] == ups["s4->s2"] > 0 and ups["s2->s3"] == ups["s3->s1"] > 0
    assert ups["s5->s3"] == ups["s5->s4"] == 0  # the PS's leaf: no PS here
