"""Fabrics without Mininet: where hosts plug in, L2 entries, job files and the job roles installed per switch."""

from __future__ import annotations

from typing import Any

import pytest

from topo.addresses import host_ip
from topo.star import StarFabric
from topo.twotier import TwoTierFabric
from worker.job import PoolRange


class Recorder:
    """Stands in for a controller: records create_job calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, dict[str, Any]]] = []

    def create_job(self, job: Any, **kw: Any) -> None:
        self.calls.append((job, kw))


def test_star_hosts_on_their_numbered_ports_ps_last() -> None:
    f = StarFabric(3, ps=True)
    assert f.switches == ["s1"] and f.ps_host == 4
    assert [f.attachment(h).port for h in range(1, 5)] == [1, 2, 3, 4]
    entries, flood = f.forwarding("s1")
    assert [p for _, p in entries] == [1, 2, 3, 4] and flood == [1, 2, 3, 4]
    job = f.job_config(1, [1, 2, 3], num_elems=32, pool=PoolRange(0, 8))
    assert job.ps is not None and job.ps.switch_port == 4 and {w.rack for w in job.workers} == {0}
    assert f.metered_links() == {"ps": ["s1-eth4"]}


def test_two_tier_layout_and_forwarding() -> None:
    f = TwoTierFabric(5, racks=2, ps=True)
    assert f.switches == ["s1", "s2", "s3"] and f.spine == "s3"
    assert f.rack_hosts(0) == [1, 2, 3] and f.rack_hosts(1) == [4, 5]
    assert (f.attachment(3).switch, f.attachment(3).port) == ("s1", 3)
    assert (f.attachment(4).switch, f.attachment(4).port) == ("s2", 1)
    assert (f.attachment(6).switch, f.attachment(6).port) == ("s3", 3)
    assert f.uplink_port(0) == 4 and f.uplink_port(1) == 3
    tor0, flood0 = f.forwarding("s1")
    assert dict(tor0) == {"00:00:0a:00:00:01": 1, "00:00:0a:00:00:02": 2, "00:00:0a:00:00:03": 3,
                          "00:00:0a:00:00:04": 4, "00:00:0a:00:00:05": 4, "00:00:0a:00:00:06": 4}
    assert flood0 == [1, 2, 3, 4]
    spine, flood = f.forwarding("s3")
    assert [p for _, p in spine] == [1, 1, 1, 2, 2, 3] and flood == [1, 2, 3]
    assert f.host_ports() == {"s1": [1, 2, 3], "s2": [1, 2], "s3": [3]}
    assert f.metered_links() == {"ps": ["s3-eth3"], "uplinks": ["s1-eth4", "s2-eth3"]}


def test_two_levels_install_a_rack_role_per_rack_switch_and_merge_above() -> None:
    f = TwoTierFabric(4, racks=2, levels=2, ps=True)
    job = f.job_config(7, [1, 2, 3, 4], num_elems=32, pool=PoolRange(0, 64))
    assert [w.rack for w in job.workers] == [0, 0, 1, 1] and job.racks == [0, 1]
    assert [w.switch_port for w in job.workers] == [1, 2, 1, 2]
    ctls = {s: Recorder() for s in f.switches}
    f.install_job(ctls, job)
    assert [kw for _, kw in ctls["s1"].calls] == [{"level": 0, "rack": 0, "ack_port": 3}]
    assert [kw for _, kw in ctls["s2"].calls] == [{"level": 0, "rack": 1, "ack_port": 3}]
    assert [kw for _, kw in ctls["s3"].calls] == [{"level": 1, "rack_ports": {0: 1, 1: 2}}]


def test_one_level_installs_only_the_ps_rack_switch_with_the_racks_ports() -> None:
    f = TwoTierFabric(4, racks=2, levels=1, ps=True)
    job = f.job_config(7, [1, 2, 3, 4], num_elems=32, pool=PoolRange(0, 64))
    assert {w.rack for w in job.workers} == {0}  # one level: every worker in ATP's rack 0 (fan-in 4)
    ctls = {s: Recorder() for s in f.switches}
    f.install_job(ctls, job)
    assert ctls["s1"].calls == [] and ctls["s2"].calls == []
    (seen, kw), = ctls["s3"].calls
    assert kw == {"level": 0, "rack": 0}
    assert [(w.ip, w.switch_port) for w in seen.workers] == [(host_ip(1), 1), (host_ip(2), 1), (host_ip(3), 2),
                                                             (host_ip(4), 2)]


def test_two_tier_refuses_what_it_cannot_run() -> None:
    with pytest.raises(ValueError, match="cannot fill 3 racks"):
        TwoTierFabric(2, racks=3)
    with pytest.raises(ValueError, match="levels must be 1 or 2"):
        TwoTierFabric(4, levels=3)
    f = TwoTierFabric(4)
    with pytest.raises(ValueError, match="run it on the star"):
        f.check("switchml", "switchml", True)
    f.check("ring", "switchml", False)
    f.check("atp", "atp", True)
    # a job of a program without a PS (SwitchML's, for the baselines' network) is installed nowhere
    ctls = {s: Recorder() for s in f.switches}
    f.install_job(ctls, f.job_config(1, [1, 2, 3, 4], num_elems=64, pool=PoolRange(0, 8)))
    assert all(not c.calls for c in ctls.values())


def test_a_ps_per_job_has_its_own_host_port_and_job_file_entry() -> None:
    from topo.topologies import make_fabric

    f = make_fabric("star", 4, ps=True, ps_hosts=2)
    assert f.hosts == 6 and f.ps_host == 5 and f.ps_host_list == [5, 6]
    assert [f.ps_host_of(j) for j in range(4)] == [5, 6, 5, 6]
    jobs = [f.job_config(j + 1, [2 * j + 1, 2 * j + 2], num_elems=32, pool=PoolRange(0, 8), ps_host=f.ps_host_of(j))
            for j in range(2)]
    assert [(j.ps.ip, j.ps.switch_port) for j in jobs] == [(host_ip(5), 5), (host_ip(6), 6)]
    assert f.metered_links() == {"ps": ["s1-eth5", "s1-eth6"]}
    entries, flood = f.forwarding("s1")
    assert [p for _, p in entries] == [1, 2, 3, 4, 5, 6]
    assert StarFabric(4, ps=False, ps_hosts=3).hosts == 4  # no PS: ps_hosts is moot
    with pytest.raises(ValueError, match="one PS host"):
        make_fabric("twotier", 4, ps=True, ps_hosts=2)


def test_leaf_spine_layout_routes_per_destination_and_floods_along_a_tree() -> None:
    from topo.addresses import host_mac, rack_address
    from topo.leafspine import LeafSpineFabric

    f = LeafSpineFabric(5, racks=2, spines=2, ps=True)
    # leaves s1 s2, spines s3 s4, the PS's leaf s5 (the last: the PS's switch)
    assert f.switches == ["s1", "s2", "s3", "s4", "s5"] and f.ps_host == 6
    assert f.rack_hosts(0) == [1, 2, 3] and f.rack_hosts(1) == [4, 5]
    assert (f.attachment(6).switch, f.attachment(6).port) == ("s5", 3)  # after its two spine ports
    assert f.inter_links() == [("s1", 4, "s3", 1), ("s1", 5, "s4", 1), ("s2", 3, "s3", 2), ("s2", 4, "s4", 2),
                               ("s5", 1, "s3", 3), ("s5", 2, "s4", 3)]
    entries, flood = f.forwarding("s1")
    # local hosts on their ports; h4 through spine (0 + 4) % 2 = 0 (port 4), h5 through spine 1 (port 5), the PS's h6
    # through spine 0
    assert entries == [(host_mac(1), 1), (host_mac(2), 2), (host_mac(3), 3), (host_mac(4), 4), (host_mac(5), 5),
                       (host_mac(6), 4)]
    assert flood == [1, 2, 3, 4]  # its hosts and spine 0 only: no loop through two spines
    entries, flood = f.forwarding("s4")
    assert dict(entries) == {**{host_mac(h): 1 for h in (1, 2, 3)}, host_mac(4): 2, host_mac(5): 2, host_mac(6): 3,
                             rack_address(0)[0]: 1, rack_address(1)[0]: 2}
    assert f.hops(1, 3) == 0 and f.hops(1, 4) == 2 and f.hops(4, 6) == 2
    assert "2 leaves (3+2 workers) and the PS's leaf under 2 spines" in f.describe()
    with pytest.raises(ValueError, match="switchml aggregates in exactly one switch"):
        f.check("switchml", "switchml", True)
    with pytest.raises(ValueError, match="spines must be 1..64"):
        LeafSpineFabric(4, spines=0)
    from topo.topologies import make_fabric

    made = make_fabric("leafspine", 5, ps=True, racks=2, spines=3)
    assert isinstance(made, LeafSpineFabric) and made.spines == 3 and made.switches[-1] == "s6"
    with pytest.raises(ValueError, match="one PS host"):
        make_fabric("leafspine", 5, ps=True, ps_hosts=2)


def test_leaf_spine_atp_levels_take_the_spine_of_each_racks_route_to_the_ps() -> None:
    from topo.addresses import rack_address
    from topo.leafspine import LeafSpineFabric

    f = LeafSpineFabric(4, racks=2, spines=3, ps=True)  # PS h5; rack r reaches it through spine (r + 5) % 3
    job = f.job_config(1, [1, 2, 3, 4], num_elems=32, pool=PoolRange(0, 8))
    ctls = {name: Recorder() for name in f.switches}
    f.install_job(ctls, job)
    assert ctls["s1"].calls[0][1] == {"level": 0, "rack": 0, "ack_port": 3 + 2}  # 2 hosts, then spines 0 1 2: spine 2
    assert ctls["s2"].calls[0][1] == {"level": 0, "rack": 1, "ack_port": 3 + 0}  # spine 0
    top = ctls[f.ps_leaf].calls[0][1]
    assert top == {"level": 1, "rack_ports": {0: 3, 1: 1}, "rack_addresses": {0: rack_address(0), 1: rack_address(1)}}
    assert all(not ctls[f.spine(j)].calls for j in range(3))
    one = LeafSpineFabric(4, racks=2, spines=3, levels=1, ps=True)
    ctls = {name: Recorder() for name in one.switches}
    one.install_job(ctls, one.job_config(1, [1, 2, 3, 4], num_elems=32, pool=PoolRange(0, 8)))
    (seen, kw), = ctls[one.ps_leaf].calls
    assert kw == {"level": 0, "rack": 0} and [w.switch_port for w in seen.workers] == [3, 3, 1, 1]
