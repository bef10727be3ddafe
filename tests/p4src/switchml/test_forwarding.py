"""switchml.p4: L2 forwarding of non-INA traffic, flooding, and the per-port drop simulator."""

from __future__ import annotations

import pytest

BROADCAST = 0xFFFF_FFFF_FFFF
FLOOD_GROUP = 99
PORTS = (1, 2, 3, 4)


def mac_int(text: str) -> int:
    return int(text.replace(":", ""), 16)


@pytest.fixture
def l2(ina):
    """Hosts h1..h4 on ports 1..4 (the workers' addresses), broadcast flooded to every port."""
    ig = "SwitchMLIngress."
    for p in PORTS:
        ina.sw.tables[ig + "l2_forward"].insert((mac_int(ina.worker(p - 1).mac),), ig + "l2_set_port", [p])
    ina.sw.tables[ig + "l2_forward"].insert((BROADCAST,), ig + "l2_flood", [FLOOD_GROUP])
    ina.sw.pre.set_group(FLOOD_GROUP, [(p, 0) for p in PORTS])
    return ina


def ping(src, dst) -> bytes:
    from scapy.layers.inet import ICMP, IP
    from scapy.layers.l2 import Ether

    return bytes(Ether(src=src.mac, dst=dst.mac) / IP(src=src.ip, dst=dst.ip) / ICMP() / (b"x" * 20))


def test_unicast_forwarded_unchanged(l2):
    h1, h3 = l2.worker(0), l2.worker(2)
    frame = ping(h1, h3)
    assert l2.send(1, frame) == [(3, frame)]


def test_non_ina_udp_and_bad_checksum_forwarded_unchanged(l2):
    """Only INA results get their IPv4 checksum recomputed; other packets leave byte for byte."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    h1, h2 = l2.worker(0), l2.worker(1)
    frame = bytes(Ether(src=h1.mac, dst=h2.mac) / IP(src=h1.ip, dst=h2.ip, chksum=0x1234)
                  / UDP(sport=48864, dport=48865) / b"payload")
    assert l2.send(1, frame) == [(2, frame)]


def test_broadcast_flooded_except_ingress_port(l2):
    from scapy.layers.l2 import ARP, Ether

    h2 = l2.worker(1)
    arp = bytes(Ether(src=h2.mac, dst="ff:ff:ff:ff:ff:ff") / ARP(op=1, hwsrc=h2.mac, psrc=h2.ip, pdst="10.0.0.3"))
    assert l2.send(2, arp) == [(1, arp), (3, arp), (4, arp)]


def test_unknown_destination_dropped(l2):
    h1 = l2.worker(0)
    stranger = l2.worker(0, port=1, host=0x77)
    assert l2.send(1, ping(h1, stranger)) == []


def test_runt_frame_dropped(l2):
    assert l2.send(1, b"\x00\x01\x02") == []


def test_ingress_drop_probability_100_percent(l2):
    w0, w1 = l2.worker(0), l2.worker(1)
    l2.add_job(1, [w0, w1], mgid=10)
    l2.set_drop_probability(w0.port, ingress=65535)
    for _ in range(3):
        assert l2.send(w0, l2.data(w0, 1, 0, 0, [1] * l2.num_elems)) == []
    assert l2.bitmap(0, 0) == 0
    assert l2.count("ina_drop_sim_ingress", 1) == 3
    assert l2.count("ina_received", 1) == 0
    # non-INA traffic from that port is lost too, counted at the no-job index
    assert l2.send(w0, ping(w0, w1)) == []
    assert l2.count("ina_drop_sim_ingress", l2.NO_JOB) == 1
    # other ports unaffected
    assert l2.send(w1, ping(w1, w0)) != []


def test_drop_probability_zero_never_drops(l2):
    w0, w1 = l2.worker(0), l2.worker(1)
    l2.add_job(1, [w0, w1], mgid=10)
    for p in PORTS:
        l2.set_drop_probability(p, ingress=0, egress=0)
    a, b = [3] * l2.num_elems, [4] * l2.num_elems
    assert l2.send(w0, l2.data(w0, 1, 0, 0, a)) == []
    last = l2.data(w1, 1, 0, 0, b)
    assert l2.send(w1, last) == [(w.port, l2.expected_result(last, w, l2.sums(a, b), 128)) for w in (w0, w1)]
    for _ in range(20):
        frame = ping(w0, w1)
        assert l2.send(1, frame) == [(2, frame)]
    assert l2.count("ina_drop_sim_ingress", 1) == 0 and l2.count("ina_drop_sim_egress", 1) == 0


def test_egress_drop_probability_100_percent_drops_one_replica(l2):
    w0, w1 = l2.worker(0), l2.worker(1)
    l2.add_job(1, [w0, w1], mgid=10)
    l2.set_drop_probability(w1.port, egress=65535)
    a, b = [3] * l2.num_elems, [-4] * l2.num_elems
    l2.send(w0, l2.data(w0, 1, 0, 0, a))
    last = l2.data(w1, 1, 0, 0, b)
    assert l2.send(w1, last) == [(w0.port, l2.expected_result(last, w0, l2.sums(a, b), 128))]
    assert (l2.bitmap(0, 0), l2.countdown(0, 0)) == (0b11, 0)      # aggregation itself happened
    assert l2.count("ina_drop_sim_egress", 1) == 1
    assert l2.count("ina_results_sent", 1) == 1
    # w1 retransmits; its answer is lost again on the way out
    assert l2.send(w1, l2.data(w1, 1, 0, 0, b, flags=1)) == []
    assert l2.count("ina_retx_answered", 1) == 1
    assert l2.count("ina_drop_sim_egress", 1) == 2


def test_half_drop_probability_drops_some(l2):
    """prob = 32768 (about 50 %): of 200 pings some but far from all are lost (bounds are > 7 sigma)."""
    w0, w1 = l2.worker(0), l2.worker(1)
    l2.set_drop_probability(w0.port, ingress=32768)
    frame = ping(w0, w1)
    delivered = sum(len(l2.send(1, frame)) for _ in range(200))
    assert 50 <= delivered <= 150
    assert l2.count("ina_drop_sim_ingress", l2.NO_JOB) == 200 - delivered
