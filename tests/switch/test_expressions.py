"""Expression semantics (infinite precision, truncation on write), hash calculations and traces, on variants of
basic_forward.json whose `MyIngress.drop` default action is replaced by test primitives."""

from __future__ import annotations

import copy
import zlib

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import raw

from switch.sim.calculations import crc16
from switch.v1model import V1Switch

FRAME = raw(Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02") / IP(src="1.2.3.4", dst="5.6.7.8") / UDP() / b"x")
M48 = (1 << 48) - 1


def F(h, f):
    return {"type": "field", "value": [h, f]}


def HEX(v):
    return {"type": "hexstr", "value": hex(v) if v >= 0 else "-" + hex(-v)}


def OP(op, left, right, **kw):
    return {"type": "expression", "value": dict(op=op, left=left, right=right, **kw)}


def assign(dst, src):
    return {"op": "assign", "parameters": [dst, {"type": "expression", "value": src}]}


def run_prims(fixture_dict, prims, extra=None) -> bytes:
    """Load basic_forward with the default action's primitives replaced; return the frame sent to port 1."""
    j = copy.deepcopy(fixture_dict("basic_forward"))
    act = next(a for a in j["actions"] if a["name"] == "MyIngress.drop")
    act["primitives"] = prims + [{"op": "assign", "parameters": [F("standard_metadata", "egress_spec"), HEX(1)]}]
    if extra:
        extra(j)
    sw = V1Switch()
    sw.load(j)
    (port, out), = sw.process(0, FRAME)
    assert sw.stats["errors"] == 0, sw.last_error
    return out


def dst_after(fixture_dict, expr, extra=None) -> int:
    out = run_prims(fixture_dict, [assign(F("ethernet", "dstAddr"), expr)], extra)
    return int.from_bytes(out[:6], "big")


@pytest.mark.parametrize("expr,expected", [
    (OP("+", HEX(M48), HEX(2)), 1),                                        # wraps on write
    (OP("-", HEX(0), HEX(1)), M48),
    (OP("*", F("ipv4", "ttl"), HEX(3)), 64 * 3),
    (OP("<<", HEX(1), HEX(50)), 0),                                        # shifted out of 48 bits
    (OP(">>", OP("<<", HEX(1), HEX(50)), HEX(10)), 1 << 40),               # infinite precision before truncation
    (OP("&", OP("~", None, HEX(0)), HEX(0xFF)), 0xFF),
    (OP("two_comp_mod", HEX(0x181), HEX(8)), (-127) & M48),
    (OP("two_comp_mod", HEX(-129), HEX(8)), 127),
    (OP("?", HEX(7), HEX(9), cond=OP("==", F("ipv4", "ttl"), HEX(64))), 7),
    (OP("?", HEX(7), HEX(9), cond=OP("!=", F("ipv4", "ttl"), HEX(64))), 9),
    (OP("b2d", None, OP("d2b", None, HEX(5))), 1),
    (OP("b2d", None, OP("and", OP("d2b", None, F("ipv4", "$valid$")), OP("not", None, OP("<", HEX(3), HEX(2))))), 1),
    (OP("|", OP("<<", F("ipv4", "srcAddr"), HEX(16)), HEX(0xABCD)), (0x01020304 << 16) | 0xABCD),
    (OP("^", HEX(0xF0F0), HEX(0xFFFF)), 0x0F0F),
    (OP("usat_cast", HEX(300), HEX(8)), 255),
    (OP("sat_cast", HEX(-300), HEX(8)), (-128) & M48),
])
def test_expression(fixture_dict, expr, expected):
    assert dst_after(fixture_dict, expr) == expected


def test_ingress_timestamp_reaches_a_program_that_reads_it(fixture_dict):
    """The switch reads its clock only for timestamp fields the generated code uses; this program uses one."""
    import time

    j = copy.deepcopy(fixture_dict("basic_forward"))
    act = next(a for a in j["actions"] if a["name"] == "MyIngress.drop")
    act["primitives"] = [assign(F("ethernet", "srcAddr"), {"type": "field", "value": ["standard_metadata",
                                                                                      "ingress_global_timestamp"]}),
                         {"op": "assign", "parameters": [F("standard_metadata", "egress_spec"), HEX(1)]}]
    sw = V1Switch()
    sw.load(j)
    time.sleep(0.003)
    (_port, out), = sw.process(0, FRAME)
    stamp = int.from_bytes(out[6:12], "big")
    assert 3000 <= stamp <= sw.now_us()


def test_signed_field_reads_as_twos_complement(fixture_dict):
    def add_signed(j):
        j["header_types"][0]["fields"].append(["metadata.s", 8, True])
    prims = [{"op": "assign", "parameters": [F("scalars", "metadata.s"), HEX(-3)]},
             assign(F("ethernet", "dstAddr"), OP(">>", F("scalars", "metadata.s"), HEX(1)))]
    out = run_prims(fixture_dict, prims, add_signed)
    assert int.from_bytes(out[:6], "big") == (-2) & M48


def _hash_prims(algo: str):
    def add_calc(j):
        j["calculations"].append({"name": "h", "id": 9, "algo": algo,
                                  "input": [F("ipv4", "srcAddr"), F("ipv4", "dstAddr"),
                                            {"type": "hexstr", "value": "0x5", "bitwidth": 4},
                                            F("ipv4", "version")]})
    prim = {"op": "modify_field_with_hash_based_offset",
            "parameters": [F("ethernet", "srcAddr"), HEX(10), {"type": "calculation", "value": "h"}, HEX(1 << 32)]}
    return [prim], add_calc


@pytest.mark.parametrize("algo,fn", [
    ("crc32", zlib.crc32),
    ("crc16", crc16),
    ("identity", lambda b: int.from_bytes(b[:8], "big")),
    ("xor16", lambda b: 0x0102 ^ 0x0304 ^ 0x0506 ^ 0x0708 ^ 0x5400),
    ("csum16", lambda b: ~(0x0102 + 0x0304 + 0x0506 + 0x0708 + 0x5400) & 0xFFFF),
])
def test_hash_inputs_are_bit_packed(fixture_dict, algo, fn):
    prims, extra = _hash_prims(algo)
    out = run_prims(fixture_dict, prims, extra)
    data = bytes([1, 2, 3, 4, 5, 6, 7, 8, 0x54])                # 4-bit 0x5 then 4-bit version 4: one byte
    assert int.from_bytes(out[6:12], "big") == 10 + fn(data) % (1 << 32)


@pytest.mark.parametrize("algo", ["csum16", "cksum16"])
def test_csum16_of_bit_packed_fields_matches_the_byte_definition(fixture_dict, algo):
    """csum16 over fields of odd widths, constants and a whole header (81 + 112 bits: 7 pad bits, an odd byte
    count) — computed by the engine without materialising the bytes — against the RFC 1071 sum over the bytes."""
    import random

    inputs = [F("ipv4", "version"), {"type": "hexstr", "value": "0x5", "bitwidth": 4}, F("ipv4", "ttl"),
              F("ipv4", "flags"), F("ipv4", "fragOffset"), F("ethernet", "srcAddr"),
              {"type": "hexstr", "value": "0x1", "bitwidth": 1}, {"type": "header", "value": "ethernet"}]

    def add_calc(j):
        j["calculations"].append({"name": "h", "id": 9, "algo": algo, "input": inputs})
    prims = [{"op": "modify_field_with_hash_based_offset",
              "parameters": [F("ethernet", "dstAddr"), HEX(0), {"type": "calculation", "value": "h"}, HEX(1 << 16)]}]
    j = copy.deepcopy(fixture_dict("basic_forward"))
    act = next(a for a in j["actions"] if a["name"] == "MyIngress.drop")
    act["primitives"] = prims + [{"op": "assign", "parameters": [F("standard_metadata", "egress_spec"), HEX(1)]}]
    add_calc(j)
    sw = V1Switch()
    sw.load(j)
    rng = random.Random(5)
    for n in range(300):
        pick = rng.choice
        src = pick([0, M48, rng.getrandbits(48)])
        ip = IP(src="1.2.3.4", dst="5.6.7.8", ttl=pick([0, 255, rng.getrandbits(8)]), flags=pick([0, 7, rng.getrandbits(3)]),
                frag=pick([0, 8191, rng.getrandbits(13)]))
        mac = ":".join(f"{b:02x}" for b in src.to_bytes(6, "big"))
        frame = raw(Ether(dst=pick(["00:00:00:00:00:00", "ff:ff:ff:ff:ff:ff", "02:00:00:00:00:01"]), src=mac)
                    / ip / UDP() / b"x")
        (_port, out), = sw.process(0, frame)
        e = Ether(frame)
        bits = [(e[IP].version, 4), (5, 4), (e[IP].ttl, 8), (int(e[IP].flags), 3), (e[IP].frag, 13),
                (int.from_bytes(frame[6:12], "big"), 48), (1, 1),
                (int.from_bytes(frame[:6], "big"), 48), (int.from_bytes(frame[6:12], "big"), 48), (0x0800, 16)]
        acc, nb = 0, 0
        for v, w in bits:
            acc, nb = (acc << w) | v, nb + w
        data = (acc << (-nb % 8)).to_bytes((nb + 7) // 8, "big") + b"\x00"  # odd length: one zero byte more
        total = sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data) - 1, 2))
        while total >> 16:
            total = (total & 0xFFFF) + (total >> 16)
        assert int.from_bytes(out[:6], "big") == ~total & 0xFFFF, f"frame {n}"


def test_trace_reports_parser_tables_and_egress(load):
    lines: list[tuple[str, str]] = []
    sw = load("basic_forward", trace=lambda pid, msg: lines.append((pid, msg)))
    sw.tables["MyIngress.ipv4_lpm"].insert(((0x05060700, 24),), "MyIngress.ipv4_forward", (0xAA, 3))
    sw.process(1, FRAME)
    text = "\n".join(m for _, m in lines)
    assert {pid for pid, _ in lines} == {"1.0"}
    for needle in ("Processing packet received on port 1", "Parser 'parser' entering state 'start'",
                   "Extracting header 'ipv4'", "Applying table 'MyIngress.ipv4_lpm'", "* hdr.ipv4.dstAddr: 05060708",
                   "Table 'MyIngress.ipv4_lpm': hit with handle 0", "Action entry is MyIngress.ipv4_forward - aa,3,",
                   "Primitive hdr.ipv4.ttl = hdr.ipv4.ttl - 1", 'Condition "hdr.ipv4.isValid()" (node_2) is true',
                   "Egress port is 3", "Deparsing header 'ethernet'", "Updating checksum 'cksum'",
                   "Transmitting packet of size 43 out of port 3"):
        assert needle in text, needle
    sw.process(1, raw(Ether() / IP(dst="9.9.9.9")))
    assert ("2.0", "Table 'MyIngress.ipv4_lpm': miss") in lines
    assert ("2.0", "Action entry is MyIngress.drop - ") in lines
    assert any("Dropping packet at the end of ingress" in m for pid, m in lines if pid == "2.0")


def test_untraced_code_has_no_trace_calls_and_trace_can_be_switched_on(load):
    sw = load("basic_forward")
    assert "_T(" not in sw.generated_source
    t = sw.tables["MyIngress.ipv4_lpm"]
    t.insert(((0x05060700, 24),), "MyIngress.ipv4_forward", (0xAA, 3))
    lines: list[str] = []
    sw.trace = lambda pid, msg: lines.append(msg)
    assert "_T(" in sw.generated_source
    assert sw.tables["MyIngress.ipv4_lpm"] is t and len(t.entries) == 1
    assert [p for p, _ in sw.process(1, FRAME)] == [3]
    assert any("hit" in m for m in lines)
    sw.trace = None
    n = len(lines)
    assert [p for p, _ in sw.process(1, FRAME)] == [3]
    assert len(lines) == n


def test_truncate_primitive_cuts_the_frame(fixture_dict):
    out = run_prims(fixture_dict, [{"op": "truncate", "parameters": [HEX(20)]}])
    assert out == FRAME[:20]


def test_exit_skips_the_rest_of_ingress(fixture_dict):
    def add_table(j):
        # after the (default) action of ipv4_lpm, a second table would set egress_spec 5
        j["actions"].append({"name": "to5", "id": 50, "runtime_data": [], "primitives": [
            {"op": "assign", "parameters": [F("standard_metadata", "egress_spec"), HEX(5)]}]})
        j["pipelines"][0]["tables"].append({
            "name": "tbl_to5", "id": 50, "key": [], "match_type": "exact", "type": "simple", "max_size": 1024,
            "with_counters": False, "support_timeout": False, "direct_meters": None, "action_ids": [50],
            "actions": ["to5"], "base_default_next": None, "next_tables": {"to5": None},
            "default_entry": {"action_id": 50, "action_const": True, "action_data": [], "action_entry_const": True}})
        lpm = j["pipelines"][0]["tables"][0]
        lpm["next_tables"] = {a: "tbl_to5" for a in lpm["actions"]}
    prims = [{"op": "assign", "parameters": [F("standard_metadata", "egress_spec"), HEX(1)]}, {"op": "exit", "parameters": []}]
    j = copy.deepcopy(fixture_dict("basic_forward"))
    add_table(j)
    sw = V1Switch()
    sw.load(j)
    assert [p for p, _ in sw.process(0, FRAME)] == [5]           # without exit the second table runs
    act = next(a for a in j["actions"] if a["name"] == "MyIngress.drop")
    act["primitives"] = prims
    sw.load(j)
    assert [p for p, _ in sw.process(0, FRAME)] == [1]           # exit: tbl_to5 skipped, egress still runs


def test_log_msg_only_in_trace(fixture_dict):
    j = copy.deepcopy(fixture_dict("basic_forward"))
    act = next(a for a in j["actions"] if a["name"] == "MyIngress.drop")
    act["primitives"] = [{"op": "log_msg", "parameters": [
        {"type": "string", "value": "ttl={} proto={} {odd}"},
        {"type": "parameters_vector", "value": [F("ipv4", "ttl"), F("ipv4", "protocol")]}]}]
    lines: list[str] = []
    sw = V1Switch(trace=lambda pid, m: lines.append(m))
    sw.load(j)
    sw.process(0, FRAME)
    assert "ttl=64 proto=17 {odd}" in lines
    sw2 = V1Switch()
    sw2.load(j)
    sw2.process(0, FRAME)
    assert sw2.stats["errors"] == 0


def test_udp_checksum_with_payload(fixture_dict):
    """A p4c-style update_checksum_with_payload for UDP on agg64: the headers after udp (ina, data) and the payload
    are part of the sum, and the result is what scapy computes."""
    import struct
    j = copy.deepcopy(fixture_dict("agg64"))
    j["calculations"].append({"name": "calc_udp", "id": 5, "algo": "csum16", "input": [
        F("ipv4", "srcAddr"), F("ipv4", "dstAddr"), {"type": "hexstr", "value": "0x00", "bitwidth": 8},
        F("ipv4", "protocol"), F("udp", "length"), F("udp", "srcPort"), F("udp", "dstPort"), F("udp", "length"),
        {"type": "payload", "value": None}]})
    j["checksums"].append({"name": "cksum_udp", "id": 5, "target": ["udp", "checksum"], "type": "generic",
                           "calculation": "calc_udp", "verify": False, "update": True,
                           "if_cond": OP("d2b", None, F("udp", "$valid$"))})
    sw = V1Switch()
    sw.load(j)
    ina = struct.pack("!BBHIBBH", 1, 0, 3, 7, 128, 0, 0) + struct.pack("!64i", *range(64)) + b"tail"
    frame = raw(Ether() / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=4000, dport=48864, chksum=0) / ina)
    (port, out), = sw.process(1, frame)
    got = Ether(out)
    sent = got[UDP].chksum
    del got[UDP].chksum
    assert sent == Ether(raw(got))[UDP].chksum != 0


def test_key_slice_mask_matches_on_the_slice(fixture_dict):
    j = copy.deepcopy(fixture_dict("basic_forward"))
    key = j["pipelines"][0]["tables"][0]["key"][0]
    key.update(match_type="exact", name="hdr.ipv4.dstAddr[31:24]", mask="0xff000000")
    j["pipelines"][0]["tables"][0]["match_type"] = "exact"
    sw = V1Switch()
    sw.load(j)
    t = sw.tables["MyIngress.ipv4_lpm"]
    assert t.key[0].bitwidth == 8
    t.insert((5,), "MyIngress.ipv4_forward", (1, 4))
    assert [p for p, _ in sw.process(0, FRAME)] == [4]            # dst 5.6.7.8: top byte 5


def test_conditional_jumps_inside_an_action(fixture_dict):
    """p4c's `if` in an action: `_jump_if_zero(cond, else)` … `_jump(end)` … else-branch."""
    def prims(ttl_cmp: int):
        return [
            {"op": "_jump_if_zero", "parameters": [OP("b2d", None, OP("==", F("ipv4", "ttl"), HEX(ttl_cmp))), HEX(3)]},
            assign(F("ethernet", "dstAddr"), HEX(0x111)),
            {"op": "_jump", "parameters": [HEX(4)]},
            assign(F("ethernet", "dstAddr"), HEX(0x222)),
        ]
    assert int.from_bytes(run_prims(fixture_dict, prims(64))[:6], "big") == 0x111
    assert int.from_bytes(run_prims(fixture_dict, prims(65))[:6], "big") == 0x222


def test_a_loop_in_an_action_runs_every_iteration(fixture_dict):
    """p4c's `for` in an action: 200 iterations of a 4-primitive loop (BMv2 bounds no loop; an earlier step bound of
    64 per primitive dropped the packet)."""
    def extra(j):
        j["header_types"][0]["fields"].append(["i", 8, False])
    i = F("scalars", "i")
    dst = F("ethernet", "dstAddr")
    prims = [
        {"op": "assign", "parameters": [i, HEX(0)]},
        {"op": "_jump_if_zero", "parameters": [OP("b2d", None, OP("<", i, HEX(200))), HEX(5)]},
        assign(dst, OP("&", OP("+", dst, HEX(1)), HEX((1 << 48) - 1))),
        assign(i, OP("&", OP("+", i, HEX(1)), HEX(0xFF))),
        {"op": "_jump", "parameters": [HEX(1)]},
    ]
    before = int.from_bytes(FRAME[:6], "big")
    assert int.from_bytes(run_prims(fixture_dict, prims, extra)[:6], "big") == before + 200


def test_an_endless_jump_loop_costs_the_packet_not_the_switch(fixture_dict, monkeypatch):
    monkeypatch.setattr("switch.sim.gen_actions.MAX_JUMP_STEPS", 1000)  # the real bound takes seconds to reach
    j = copy.deepcopy(fixture_dict("basic_forward"))
    act = next(a for a in j["actions"] if a["name"] == "MyIngress.drop")
    act["primitives"] = [{"op": "_jump", "parameters": [HEX(0)]}]
    sw = V1Switch()
    sw.load(j)
    assert sw.process(0, FRAME) == []
    assert sw.stats["dropped"] == 1 and "endless jump loop" in (sw.last_error or "")


def test_priority_beyond_queue_count_drops_like_simple_switch(fixture_dict):
    out_prims = [{"op": "assign", "parameters": [F("standard_metadata", "priority"), HEX(3)]}]
    j = copy.deepcopy(fixture_dict("basic_forward"))
    act = next(a for a in j["actions"] if a["name"] == "MyIngress.drop")
    act["primitives"] = out_prims + [{"op": "assign", "parameters": [F("standard_metadata", "egress_spec"), HEX(1)]}]
    sw = V1Switch()
    sw.load(j)
    assert sw.process(0, FRAME) == [] and sw.stats["dropped_priority"] == 1
    sw = V1Switch(priority_queues=8)
    sw.load(j)
    assert [p for p, _ in sw.process(0, FRAME)] == [1]


def test_register_index_recomputed_after_its_field_changes(fixture_dict):
    j = copy.deepcopy(fixture_dict("basic_forward"))
    j["header_types"][0]["fields"].append(["metadata.i", 8, False])
    j["register_arrays"].append({"name": "r", "id": 0, "size": 8, "bitwidth": 8})
    reg = {"type": "register_array", "value": "r"}
    act = next(a for a in j["actions"] if a["name"] == "MyIngress.drop")
    mi = F("scalars", "metadata.i")
    act["primitives"] = [
        {"op": "assign", "parameters": [mi, HEX(2)]},
        {"op": "register_write", "parameters": [reg, mi, HEX(0x11)]},
        {"op": "assign", "parameters": [mi, HEX(3)]},
        {"op": "register_write", "parameters": [reg, mi, HEX(0x05)]},
        {"op": "register_read", "parameters": [mi, reg, mi]},            # meta.i = r[3] = 5
        {"op": "register_write", "parameters": [reg, mi, HEX(0x55)]},    # r[5]
        {"op": "register_write", "parameters": [reg, mi, HEX(0x56)]},    # r[5] again (same index, cached)
    ]
    sw = V1Switch()
    sw.load(j)
    sw.process(0, FRAME)
    assert sw.registers["r"].cells() == [0, 0, 0x11, 0x05, 0, 0x56, 0, 0]
