"""parser_features.json: masked select, header stacks, verify, lookahead, checksum verification, parser errors
that do not drop, push/pop on stacks; plus malformed / truncated frames."""

from __future__ import annotations

import struct

import pytest
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether
from scapy.packet import raw

ERR = {"NoError": 0, "PacketTooShort": 1, "NoMatch": 2, "StackOutOfBounds": 3, "IpOptions": 7}
ETH_MPLS = bytes.fromhex("020000000001020000000002" "8847")


def mpls(label: int, bos: int, ttl: int = 9) -> bytes:
    return struct.pack("!I", (label << 12) | (bos << 8) | ttl)


def res(frame: bytes) -> tuple[int, int, int, int]:
    """(perr, cerr, magic, top) from the 9-byte res header the program puts in front."""
    perr, cerr, magic, rest = struct.unpack("!IBBH", frame[:8])
    top = (rest << 4) | (frame[8] >> 4)
    return perr, cerr, magic, top


def ipv4(ttl: int = 64, payload: bytes = b"\x00\x01") -> bytes:
    return raw(IP(src="1.1.1.1", dst="2.2.2.2", ttl=ttl, proto=253) / payload)


@pytest.fixture
def sw(load):
    return load("parser_features")


def test_masked_select_and_valid_checksum(sw):
    f = raw(Ether(type=0x0800)) + ipv4()
    (port, out), = sw.process(2, f)
    assert port == 1
    assert res(out) == (ERR["NoError"], 0, 0, 0)
    assert out[9:] == f
    g = raw(Ether(type=0x08AB)) + ipv4()                       # 0x08ab &&& 0xff00 still selects parse_ipv4
    assert res(sw.process(2, g)[0][1])[1] == 0


def test_checksum_error_flag_without_drop(sw):
    ip = bytearray(ipv4())
    ip[10] ^= 0xFF
    (port, out), = sw.process(2, raw(Ether(type=0x0800)) + bytes(ip))
    assert res(out)[:2] == (ERR["NoError"], 1)


def test_lookahead_select(sw):
    (p, out), = sw.process(2, raw(Ether(type=0x0800)) + ipv4(payload=b"\xbe\xef\x01"))
    assert res(out)[2] == 1
    (p, out), = sw.process(2, raw(Ether(type=0x0800)) + ipv4(payload=b"\xbe\xee\x01"))
    assert res(out)[2] == 0


def test_verify_failure_sets_program_error_and_continues(sw):
    ip = IP(src="1.1.1.1", dst="2.2.2.2", proto=253, options=b"\x01\x01\x01\x01") / b"\xbe\xef"
    (port, out), = sw.process(2, raw(Ether(type=0x0800) / ip))
    assert port == 1
    perr, _cerr, magic, _top = res(out)
    assert perr == ERR["IpOptions"] and magic == 0          # parsing stopped at the verify
    assert sw.stats["parser_errors"] == 1


def test_header_stack_extract_and_last_bos(sw):
    f = ETH_MPLS + mpls(5, 0) + mpls(6, 0) + mpls(7, 1) + ipv4()
    (port, out), = sw.process(2, f)
    assert res(out) == (ERR["NoError"], 0, 0, 5)
    assert out[9:] == f


def test_stack_overflow_is_parser_error_not_drop(sw):
    f = ETH_MPLS + mpls(5, 0) + mpls(6, 0) + mpls(7, 0) + mpls(8, 1) + ipv4()
    (port, out), = sw.process(2, f)
    assert res(out)[0] == ERR["StackOutOfBounds"]
    assert out[9:] == f                                         # the unparsed rest is payload, emitted unchanged


def test_packet_cut_inside_stack_element(sw):
    f = ETH_MPLS + mpls(5, 0)[:2]
    (port, out), = sw.process(2, f)
    assert res(out)[0] == ERR["PacketTooShort"]
    assert out[9:] == f


def test_truncated_and_empty_frames_do_not_crash(sw):
    for f in (b"", b"\x01", raw(Ether(type=0x0800))[:13], raw(Ether(type=0x0800)) + ipv4()[:19]):
        (port, out), = sw.process(2, f)
        assert res(out)[0] == ERR["PacketTooShort"]
        assert out[9:] == f
    assert sw.stats["errors"] == 0 and sw.stats["transmitted"] == 4


def test_pop_front(sw):
    f = ETH_MPLS + mpls(100, 0) + mpls(6, 1) + ipv4()
    (port, out), = sw.process(2, f)
    assert out[9:] == ETH_MPLS + mpls(6, 1) + ipv4()


def test_push_front(sw):
    f = ETH_MPLS + mpls(200, 0) + mpls(6, 1) + ipv4()
    (port, out), = sw.process(2, f)
    assert out[9:] == ETH_MPLS + mpls(999, 0, 64) + mpls(200, 0) + mpls(6, 1) + ipv4()


def test_select_without_default_gives_no_match(load, fixture_dict):
    j = fixture_dict("parser_features")
    start = j["parsers"][0]["parse_states"][0]
    start["transitions"] = [t for t in start["transitions"] if t["type"] != "default"]
    from switch.v1model import V1Switch
    sw = V1Switch()
    sw.load(j)
    f = raw(Ether(type=0x86DD)) + b"\x00" * 40
    (port, out), = sw.process(2, f)
    assert res(out)[0] == ERR["NoMatch"]
    assert out[9:] == f


@pytest.mark.parametrize("name", ["basic_forward", "tables_ctl", "v1_features", "parser_features", "agg64"])
def test_random_frames_never_raise(load, name):
    import random
    rng = random.Random(1234)
    sw = load(name)
    for _ in range(300):
        n = rng.choice([0, 1, 13, 14, 15, 33, 34, 35, 60, 200, 400])
        f = bytes(rng.getrandbits(8) for _ in range(n))
        if n >= 14 and rng.random() < 0.7:   # steer into the deeper parse states
            f = f[:12] + rng.choice([b"\x08\x00", b"\x88\x47", b"\x88\xb5"]) + f[14:]
        sw.process(rng.randrange(8), f)
    assert sw.stats["received"] == 300
    assert sw.stats["errors"] == 0, sw.last_error


@pytest.mark.parametrize("name", ["basic_forward", "tables_ctl", "v1_features", "parser_features", "agg64"])
def test_traced_code_forwards_the_same_bytes(load, name):
    import random
    rng = random.Random(99)
    plain = load(name)
    lines: list[str] = []
    traced = load(name, trace=lambda pid, msg: lines.append(msg))
    for _ in range(100):
        n = rng.choice([14, 34, 60, 120, 330])
        f = bytes(rng.getrandbits(8) for _ in range(n))
        f = f[:12] + rng.choice([b"\x08\x00", b"\x88\x47", b"\x88\xb5"]) + f[14:]
        assert traced.process(1, f) == plain.process(1, f)
    assert len(lines) > 100
