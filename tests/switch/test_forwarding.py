"""basic_forward.json: IPv4 LPM forwarding, bytes on the wire exact."""

from __future__ import annotations

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import raw

from switch.sim.calculations import csum16

FWD = "MyIngress.ipv4_forward"


def _frame(dst: str, ttl: int = 64, payload: bytes = b"payload!") -> bytes:
    return raw(Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02") / IP(src="192.168.1.1", dst=dst, ttl=ttl) /
               UDP(sport=1234, dport=5678) / payload)


def test_forward_rewrites_macs_ttl_and_checksum(load):
    sw = load("basic_forward")
    sw.tables["MyIngress.ipv4_lpm"].insert(((0x0A000100, 24),), FWD, (0x00AABBCCDDEE, 3))
    frame = _frame("10.0.1.5", ttl=64)
    out = sw.process(1, frame)
    assert len(out) == 1
    port, got = out[0]
    assert port == 3
    assert got[0:6] == bytes.fromhex("00aabbccddee")           # new dst = action data
    assert got[6:12] == bytes.fromhex("020000000001")          # new src = old dst
    assert got[12:14] == b"\x08\x00"
    ip = got[14:34]
    assert ip[8] == 63                                          # TTL decremented
    assert csum16(ip) == 0                                      # header checksum valid again
    assert ip[10:12] != frame[24:26]                            # ...and changed
    assert got[34:] == frame[34:]                               # UDP + payload untouched
    expected = raw(Ether(dst="00:aa:bb:cc:dd:ee", src="02:00:00:00:00:01") /
                   IP(src="192.168.1.1", dst="10.0.1.5", ttl=63) / UDP(sport=1234, dport=5678) / b"payload!")
    assert got == expected


def test_lpm_longest_prefix_wins(load):
    sw = load("basic_forward")
    t = sw.tables["MyIngress.ipv4_lpm"]
    t.insert(((0x0A000000, 8),), FWD, (1, 1))
    t.insert(((0x0A000100, 24),), FWD, (2, 2))
    t.insert(((0x0A000105, 32),), FWD, (3, 3))
    t.insert(((0, 0),), FWD, (4, 4))
    assert [p for p, _ in sw.process(0, _frame("10.0.1.5"))] == [3]
    assert [p for p, _ in sw.process(0, _frame("10.0.1.6"))] == [2]
    assert [p for p, _ in sw.process(0, _frame("10.9.9.9"))] == [1]
    assert [p for p, _ in sw.process(0, _frame("11.0.0.1"))] == [4]
    t.delete(((0x0A000100, 24),))
    assert [p for p, _ in sw.process(0, _frame("10.0.1.6"))] == [1]


def test_default_action_drops(load):
    sw = load("basic_forward")
    assert sw.process(1, _frame("10.0.0.1")) == []
    assert sw.stats["dropped_ingress"] == 1
    assert sw.stats["received"] == 1 and sw.stats["transmitted"] == 0


def test_set_default_and_reset_default(load):
    sw = load("basic_forward")
    t = sw.tables["MyIngress.ipv4_lpm"]
    t.set_default(FWD, (0x0000000000AA, 7))
    out = sw.process(1, _frame("8.8.8.8"))
    assert [p for p, _ in out] == [7] and out[0][1][:6] == bytes.fromhex("0000000000aa")
    t.reset_default()
    assert sw.process(1, _frame("8.8.8.8")) == []


def test_non_ipv4_skips_table_and_goes_to_port_zero(load):
    # egress_spec starts at 0 (metadata reset on receive); no table runs, so simple_switch sends it to port 0
    sw = load("basic_forward")
    arp = raw(Ether(dst="ff:ff:ff:ff:ff:ff", src="02:00:00:00:00:02", type=0x0806) / (b"\x00" * 28))
    assert sw.process(5, arp) == [(0, arp)]


def test_ttl_wraps_modulo_width(load):
    sw = load("basic_forward")
    sw.tables["MyIngress.ipv4_lpm"].insert(((0, 0),), FWD, (1, 1))
    (port, got), = sw.process(1, _frame("1.1.1.1", ttl=0))
    assert got[14 + 8] == 255
    assert csum16(got[14:34]) == 0


def test_drop_port_is_configurable(fixture_dict):
    from switch.v1model import V1Switch
    sw = V1Switch(drop_port=100)
    sw.load(fixture_dict("basic_forward"))
    t = sw.tables["MyIngress.ipv4_lpm"]
    t.insert(((0x0A000000, 8),), FWD, (1, 100))
    t.insert(((0x0B000000, 8),), FWD, (1, 511))
    assert sw.process(1, _frame("10.0.0.1")) == []                 # egress_spec == drop port
    assert [p for p, _ in sw.process(1, _frame("11.0.0.1"))] == [511]
    assert sw.process(1, _frame("12.0.0.1")) == []                 # default drop(): mark_to_drop uses port 100
    assert sw.stats["dropped_ingress"] == 2
