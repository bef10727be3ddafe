"""v1_features.json: simple_switch's architecture — multicast, clones, resubmit, recirculate, drops, queues,
counters, registers, instance types (values from v1model: NORMAL 0, I2E 1, E2E 2, RECIRC 4, REPLICATION 5, RESUBMIT 6)."""

from __future__ import annotations

import struct
from typing import NamedTuple

import pytest

ETH = bytes.fromhex("020000000002" "020000000001" "88b5")
PAYLOAD = b"PAYLOAD-0123"


class Info(NamedTuple):
    op: int
    itype: int
    rid: int
    round: int
    qdepth: int
    inport: int
    ing_itype: int
    pktlen: int


def frame(op: int, payload: bytes = PAYLOAD) -> bytes:
    return ETH + struct.pack("!BBHIIHHI", op, 0, 0, 0, 0, 0, 0, 0) + payload


def info(f: bytes) -> Info:
    assert f[:14] == ETH
    return Info(*struct.unpack("!BBHIIHHI", f[14:34]))


@pytest.fixture
def sw(load):
    sw = load("v1_features")
    d = sw.tables["MyIngress.dispatch"]
    d.insert((0,), "MyIngress.to_port", (2,))
    d.insert((1,), "MyIngress.clone_i2e", (2, 5))
    d.insert((2,), "MyIngress.flood", (1,))
    d.insert((3,), "MyIngress.to_port", (4,))
    d.insert((4,), "MyIngress.to_port", (4,))
    d.insert((5,), "MyIngress.to_port", (2,))
    d.insert((6,), "MyIngress.to_port", (2,))
    return sw


def test_unicast_metadata_seen_in_egress(sw):
    (port, f), = sw.process(3, frame(0))
    assert port == 2
    i = info(f)
    assert (i.itype, i.ing_itype, i.inport, i.rid, i.qdepth) == (0, 0, 3, 0, 0)
    assert i.pktlen == len(frame(0))
    assert f[34:] == PAYLOAD


def test_multicast_replicas_carry_rid_and_replication_type(sw):
    sw.pre.set_group(1, [(2, 10), (3, 20), (7, 30)])
    out = sw.process(1, frame(2))
    assert [p for p, _ in out] == [2, 3, 7]
    assert [(info(f).rid, info(f).itype) for _, f in out] == [(10, 5), (20, 5), (30, 5)]
    assert all(f[34:] == PAYLOAD for _, f in out)
    assert sw.stats["replicated"] == 3


def test_multicast_to_unknown_group_sends_nothing(sw):
    assert sw.process(1, frame(2)) == []


def test_i2e_clone_to_session_port(sw):
    sw.mirror.set_session(5, egress_port=9)
    out = sorted(sw.process(1, frame(1)))
    assert [p for p, _ in out] == [2, 9]
    orig, clone = info(out[0][1]), info(out[1][1])
    assert orig.itype == 0 and clone.itype == 1
    # the clone is the packet as it entered ingress (re-parsed), so ingress' writes to hdr.info are not in it
    assert orig.inport == 1 and clone.inport == 0 and clone.ing_itype == 0
    assert clone.pktlen == len(frame(1))


def test_i2e_clone_without_session_is_not_sent(sw):
    assert [p for p, _ in sw.process(1, frame(1))] == [2]


def test_e2e_clone_runs_egress_again(sw):
    sw.mirror.set_session(7, egress_port=8)
    out = sw.process(1, frame(5))
    assert [p for p, _ in out] == [2, 8]
    assert info(out[0][1]).itype == 0
    clone = info(out[1][1])
    assert clone.itype == 2 and clone.inport == 1   # E2E copies the egress PHV: ingress writes kept
    assert sw.stats["cloned_e2e"] == 1


def test_clone_session_to_multicast_group(sw):
    sw.pre.set_group(3, [(5, 1), (6, 2)])
    sw.mirror.set_session(5, mgid=3)
    out = sw.process(1, frame(1))
    assert sorted((p, info(f).itype, info(f).rid) for p, f in out) == [(2, 0, 0), (5, 1, 1), (6, 1, 2)]


def test_resubmit_preserves_field_list(sw):
    out = sw.process(1, frame(3))
    (port, f), = out
    i = info(f)
    assert port == 4
    assert i.round == 2                      # meta.round survived two resubmits (field list 1)
    assert i.ing_itype == 6                  # last ingress pass saw RESUBMIT
    assert i.itype == 0                      # unicast after ingress: instance_type back to NORMAL
    assert i.inport == 0                     # simple_switch resets standard_metadata on resubmit
    assert sw.stats["resubmitted"] == 2


def test_recirculate_preserves_field_list(sw):
    (port, f), = sw.process(1, frame(4))
    i = info(f)
    assert port == 4
    assert i.round == 2 and i.ing_itype == 4  # RECIRC
    assert sw.stats["recirculated"] == 2


def test_egress_drop(sw):
    assert sw.process(1, frame(6)) == []
    assert sw.stats["dropped_egress"] == 1


def test_queue_depth_seen_at_enqueue(sw):
    for _ in range(3):
        sw.receive(1, frame(0))
    out = sw.drain()
    assert [info(f).qdepth for _, f in out] == [0, 1, 2]
    assert sw.drain() == []


def test_full_queue_forces_egress_first(load):
    from switch.v1model import V1Switch
    sw = V1Switch(queue_capacity=2)
    sw.load(load("v1_features").program_json)
    sw.tables["MyIngress.dispatch"].insert((0,), "MyIngress.to_port", (2,))
    for _ in range(5):
        sw.receive(1, frame(0))
    assert len(sw._out) == 3 and sw.stats["queue_full_waits"] == 3
    out = sw.drain()
    assert len(out) == 5 and max(info(f).qdepth for _, f in out) == 1


def test_counters_indirect_and_direct(sw):
    for port in (1, 1, 3):
        sw.process(port, frame(0))
    sw.process(1, frame(9))                  # dispatch miss: direct counter unchanged
    n = len(frame(0))
    assert sw.counters["MyIngress.port_ctr"].read(1) == (3, 3 * n)
    assert sw.counters["MyIngress.port_ctr"].read(3) == (1, n)
    e = sw.tables["MyIngress.dispatch"].lookup_entry((0,))
    assert (e.packets, e.bytes) == (3, 3 * n)
    sw.counters["MyIngress.dispatch_ctr"].reset()
    assert (e.packets, e.bytes) == (0, 0)
    sw.counters["MyIngress.port_ctr"].write(1, 5, 6)
    assert sw.counters["MyIngress.port_ctr"].read(1) == (5, 6)


def test_register_modulo_width(sw):
    reg = sw.registers["MyIngress.acc_reg"]
    assert (reg.size, reg.bitwidth) == (4, 8)
    sw.process(1, frame(0))
    assert reg.read(0) == 200
    sw.process(1, frame(0))
    assert reg.read(0) == 400 % 256
    reg.write(0, 0x1FF)
    assert reg.read(0) == 0xFF
    reg.reset()
    assert reg.read(0) == 0


def test_loop_limit_drops_endless_recirculation(load):
    from switch.v1model import V1Switch
    sw = V1Switch(max_loop=1)
    sw.load(load("v1_features").program_json)
    sw.tables["MyIngress.dispatch"].insert((4,), "MyIngress.to_port", (4,))
    assert sw.process(1, frame(4)) == []
    assert sw.stats["dropped_loop_limit"] == 1 and sw.stats["recirculated"] == 1


def test_trace_ids_of_copies(load):
    lines: list[tuple[str, str]] = []
    sw = load("v1_features", trace=lambda pid, msg: lines.append((pid, msg)))
    sw.tables["MyIngress.dispatch"].insert((2,), "MyIngress.flood", (1,))
    sw.pre.set_group(1, [(2, 10), (3, 20)])
    sw.process(1, frame(2))
    sw.process(1, frame(2))
    sent = [(pid, m) for pid, m in lines if m.startswith("Transmitting")]
    assert [pid for pid, _ in sent] == ["1.1", "1.2", "2.1", "2.2"]
