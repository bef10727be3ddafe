"""The STF runner's semantics (bmv2stf.py's) on a stand-in switch with a fixed L2 program (tests/switch/stf/fakeswitch.py)."""

from __future__ import annotations

import pytest

from switch.stf import run_stf
from switch.stf.testing import assert_stf
from tests.switch.stf.fakeswitch import FakeSwitch

# dst=00:00:00:00:00:02 src=00:00:00:00:00:01 type=0x1234 payload
PKT2 = "000000000002 000000000001 1234 cafe"
PKT3 = "000000000003 000000000001 1234 beef"

FORWARD = f"""
add dmac hdr.ethernet.dstAddr:0x000000000002 forward(port:2)
add dmac dstAddr:0x000000000003 MyIngress.forward(port:3)
expect 2 {PKT2}
packet 1 {PKT2}
packet 1 {PKT3}
expect 3 {PKT3}$
"""


def test_forwarding_passes() -> None:
    result = assert_stf(FakeSwitch(), FORWARD)
    assert result.sent == 2 and len(result.received) == 2
    assert result.checked_ports == [1, 2, 3]
    assert result.summary().startswith("PASS <stf>: 2 packets sent, 2 received on 3 checked port(s)")


def test_wrong_expectation_fails_with_diff() -> None:
    stf = FORWARD.replace(f"expect 2 {PKT2}", "expect 2 000000000002 000000000001 1234 cafF")
    result = run_stf(FakeSwitch(), stf)
    assert not result.passed and not result.errors
    report = result.report()
    assert report.startswith("FAIL <stf>:")
    assert "port 2: expected 1 packet(s), received 1; 1 differ" in report
    assert "#1 DIFFERS (expect at <stf>:4, sent by packet at line 5)" in report
    exp_line = next(ln for ln in report.splitlines() if " expected 00" in ln)
    rcv_line = next(ln for ln in report.splitlines() if " received 00" in ln)
    mark_line = report.splitlines()[report.splitlines().index(rcv_line) + 1]
    assert exp_line.endswith("CA FF") and rcv_line.endswith("CA FE")
    assert mark_line.rstrip().endswith("^") and mark_line.count("^") == 1
    assert len(mark_line.rstrip()) == len(rcv_line)
    with pytest.raises(AssertionError, match="DIFFERS"):
        assert_stf(FakeSwitch(), stf)


def test_missing_and_unexpected_packets() -> None:
    # port 2 (named by a packet line) gets a frame nobody expects; the expectation on port 4 is never met
    stf = f"""
add dmac dstAddr:0x000000000002 forward(port:2)
packet 1 {PKT2}
expect 4 {PKT2}
packet 2 {PKT3}
"""
    result = run_stf(FakeSwitch(), stf)
    report = result.report()
    assert "port 2: expected 0 packet(s), received 1" in report
    assert "#1 UNEXPECTED (sent by packet at <stf>:3):" in report
    assert "port 4: expected 1 packet(s), received 0" in report
    assert "#1 MISSING (expect at <stf>:4):" in report


def test_dollar_rejects_longer_packet_and_prefix_accepts_it() -> None:
    base = "add dmac dstAddr:0x000000000002 forward(port:2)\npacket 1 " + PKT2 + "\n"
    assert run_stf(FakeSwitch(), base + "expect 2 000000000002 000000000001 1234\n").passed
    assert run_stf(FakeSwitch(), base + "expect 2 ************ ************ 1234 ****$\n").passed
    result = run_stf(FakeSwitch(), base + "expect 2 000000000002 000000000001 1234 $\n")
    assert not result.passed and "12 34 $" in result.report()


def test_expectations_are_ordered_per_port() -> None:
    stf = f"""
add dmac dstAddr:0x000000000002 forward(port:2)
add dmac dstAddr:0x000000000003 forward(port:2)
packet 1 {PKT2}
packet 1 {PKT3}
expect 2 {PKT3}
expect 2 {PKT2}
"""
    result = run_stf(FakeSwitch(), stf)
    assert "#1 DIFFERS" in result.report() and "#2 DIFFERS" in result.report()
    assert run_stf(FakeSwitch(), stf.replace(f"expect 2 {PKT3}\nexpect 2 {PKT2}", f"expect 2 {PKT2}\nexpect 2 {PKT3}")).passed


def test_default_drop_and_unnamed_ports() -> None:
    # no entry: the default action drops; a frame to port 9 (named by no line) is dropped like BMv2 does
    stf = f"""
packet 1 {PKT2}
add dmac dstAddr:0x000000000003 forward(port:9)
packet 1 {PKT3}
no_packet
"""
    result = assert_stf(FakeSwitch(), stf)
    assert [(r.port, r.cause_line) for r in result.dropped] == [(9, 4)]
    assert "1 to unnamed ports dropped" in result.summary()


def test_expect_without_data_accepts_any_number() -> None:
    stf = f"""
add dmac dstAddr:0x000000000002 forward(port:2)
expect 2
packet 1 {PKT2}
packet 1 {PKT2}
"""
    assert_stf(FakeSwitch(), stf)
    assert_stf(FakeSwitch(), "expect 2\n")  # zero frames is fine too


def test_ternary_priority_higher_stf_number_wins() -> None:
    stf_tpl = """
add dmac dstAddr:0x000000000002 forward(port:2)
add acl {drop_prio} etherType:0x12** drop()
add acl {pass_prio} etherType:0x1234 NoAction()
packet 1 {pkt}
"""
    pkt = PKT2
    passes = stf_tpl.format(drop_prio=10, pass_prio=20, pkt=pkt) + f"expect 2 {pkt}\n"
    assert_stf(FakeSwitch(), passes)
    drops = stf_tpl.format(drop_prio=20, pass_prio=10, pkt=pkt)
    assert_stf(FakeSwitch(), drops)
    # priority 0 (as in p4c's ternary2-bmv2.stf) is valid and loses to any higher one
    assert_stf(FakeSwitch(), stf_tpl.format(drop_prio=0, pass_prio=1, pkt=pkt) + f"expect 2 {pkt}\n")


def test_ternary_without_priority_is_an_error() -> None:
    result = run_stf(FakeSwitch(), "add acl etherType:0x1234 drop()\n")
    assert result.errors == [
        "<stf>:1: table 'MyIngress.acl' has ternary/range/optional keys: the add needs a priority"
    ]


def test_lpm_longest_prefix() -> None:
    ip = "000000000009 000000000001 0800 4500001c000100004011 0000 0a000001 {dst}"
    stf = f"""
add route hdr.ipv4.dstAddr:0x0a000000/8 forward(port:2)
add route dstAddr:0x0a0102** forward(port:3)
add route dstAddr:10.1.2.128/25 forward(port:4)
packet 1 {ip.format(dst="0a630000")}
expect 2 {ip.format(dst="0a630000")}
packet 1 {ip.format(dst="0a010201")}
expect 3 {ip.format(dst="0a010201")}
packet 1 {ip.format(dst="0a010281")}
expect 4 {ip.format(dst="0a010281")}
"""
    assert_stf(FakeSwitch(), stf)


def test_setdefault_and_remove() -> None:
    stf = f"""
setdefault dmac forward(port:5)
packet 1 {PKT3}
expect 5 {PKT3}
add dmac dstAddr:0x000000000003 forward(port:3)
packet 1 {PKT3}
expect 3 {PKT3}
remove dmac dstAddr:0x000000000003
packet 1 {PKT3}
expect 5 {PKT3}
add dmac dstAddr:0x000000000003 forward(port:3)
remove all
packet 1 {PKT3}
expect 5 {PKT3}
"""
    assert_stf(FakeSwitch(), stf)


def test_multicast_with_mc_commands() -> None:
    stf = f"""
add dmac dstAddr:0x000000000002 flood(grp:1113)
mc_mgrp_create 1113
mc_node_create 400 6
mc_node_create 401 7 8
mc_node_associate 1113 0
mc_node_associate 1113 1
packet 1 {PKT2}
expect 6 000000000002 90 0000000001 1234 cafe
expect 7 000000000002 91 0000000001 1234 cafe
expect 8 000000000002 91 0000000001 1234 cafe
mc_node_update 1 7
mc_node_create 402 6
mc_node_associate 1113 2
packet 1 {PKT2}
expect 6 000000000002 90 0000000001 1234 cafe
expect 7 000000000002 91 0000000001 1234 cafe
expect 6 000000000002 92 0000000001 1234 cafe
"""
    sw = FakeSwitch()
    assert_stf(sw, stf)
    assert sw.pre.groups[1113] == [(6, 400), (7, 401), (6, 402)]


def test_multicast_errors_name_the_line() -> None:
    result = run_stf(FakeSwitch(), "mc_node_create 1 2\nmc_node_associate 7 0\n")
    assert result.errors == ["<stf>:2: multicast group 7 does not exist (mc_mgrp_create it first)"]
    result = run_stf(FakeSwitch(), "mc_mgrp_create 1\nmc_mgrp_create 1\n")
    assert result.errors == ["<stf>:2: multicast group 1 already exists"]


def test_clone_via_mirroring_add() -> None:
    stf = f"""
add dmac dstAddr:0x000000000002 forward_and_clone(port:2, session:5)
mirroring_add 5 4
packet 1 {PKT2}
expect 2 {PKT2}
expect 4 {PKT2}
"""
    sw = FakeSwitch()
    assert_stf(sw, stf)
    assert sw.mirror.sessions[5] == {"egress_port": 4, "mgid": None}


def test_registers_and_counters() -> None:
    stf = f"""
add dmac dstAddr:0x000000000002 forward(port:2) = h2
register_write seen 1 10
packet 1 {PKT2}
packet 1 {PKT2}
expect 2 {PKT2}
expect 2 {PKT2}
register_read MyIngress.seen 1 == 12
register_read seen 3 == 0
check_counter rx(1) packets == 2
check_counter rx(1) bytes == 32
check_counter MyIngress.rx(3)
check_counter dmac_hits($h2) packets == 2
check_counter dmac_hits(h2) bytes > 31
counter_write rx 1 0 0
check_counter rx(1) packets == 0
register_reset seen
register_read seen 1 == 0
"""
    result = assert_stf(FakeSwitch(), stf)
    assert result.checks == 10
    assert "<stf>:8: MyIngress.seen: [1]=12" in result.log


def test_failed_checks_are_reported_with_lines() -> None:
    stf = f"""
packet 1 {PKT2}
register_read seen 1 == 5
check_counter rx(1) packets != 1
check_counter rx(1)
"""
    result = run_stf(FakeSwitch(), stf)
    assert result.failures == [
        "<stf>:3: register MyIngress.seen[1] is 1, expected == 5",
        "<stf>:4: MyIngress.rx(1) packets is 1, expected != 1",
        "<stf>:5: MyIngress.rx(1) packets is 1, expected == 0",
        "<stf>:5: MyIngress.rx(1) bytes is 16, expected == 0",
    ]


@pytest.mark.parametrize(
    "stf, error",
    [
        ("add nosuch k:1 a()", "<stf>:1: no table named 'nosuch'"),
        ("add dmac dstAddr:1 fly(port:1)", "<stf>:1: no action of table 'MyIngress.dmac' named 'fly'"),
        ("add dmac srcAddr:1 drop()", "<stf>:1: table has no key field 'srcAddr' (key: hdr.ethernet.dstAddr)"),
        ("add dmac dstAddr:1 forward()", "<stf>:1: action 'MyIngress.forward': missing parameter(s) port"),
        ("add dmac dstAddr:1 forward(port:1, ttl:3)", "<stf>:1: action 'MyIngress.forward' has no parameter 'ttl'"),
        ("add dmac dstAddr:0x1* drop()", "<stf>:1: key field 'hdr.ethernet.dstAddr' (exact, 48 bits): don't-care"),
        ("add dmac dstAddr:1 drop()\nadd dmac dstAddr:1 drop()", "<stf>:2: duplicate entry"),
        ("register_write seen 8 1", "<stf>:1: index 8 out of range for 'MyIngress.seen' (size 8)"),
        ("check_counter dmac_hits(0)", "<stf>:1: table 'MyIngress.dmac' has no entry with handle 0"),
        ("check_counter dmac_hits($x)", "<stf>:1: no entry named 'x'"),
        ("add route dstAddr:0x0a000000/8 forward(port:1) = r\ncheck_counter dmac_hits($r)",
         "<stf>:2: entry 'r' is in table 'MyIngress.route', counter 'MyIngress.dmac_hits' counts 'MyIngress.dmac'"),
        ("check_counter rx($x)", "<stf>:1: counter 'MyIngress.rx' is not direct"),
        ("mirroring_delete 3", "<stf>:1: mirror session not found"),
    ],
)
def test_control_plane_errors(stf: str, error: str) -> None:
    result = run_stf(FakeSwitch(), stf + f"\npacket 1 {PKT2}\n")
    assert not result.passed and len(result.errors) == 1, result.report()
    assert result.errors[0].startswith(error), result.errors[0]
    assert result.sent == 0  # the run stops at the bad command
    assert result.summary().startswith("ERROR")


def test_ignore_cli_errors_behaves_like_bmv2stf() -> None:
    stf = f"add dmac dstAddr:1 drop()\nadd dmac dstAddr:1 drop()\nadd dmac dstAddr:0x000000000002 forward(port:2)\npacket 1 {PKT2}\nexpect 2 {PKT2}\n"
    result = run_stf(FakeSwitch(), stf, ignore_cli_errors=True)
    assert result.passed and result.warnings[0].startswith("ignored (as bmv2stf would): <stf>:2: duplicate entry")


def test_engine_failure_on_a_packet_is_an_error_not_a_traceback() -> None:
    sw = FakeSwitch()
    sw.process = lambda port, frame: 1 / 0  # type: ignore[method-assign]
    result = run_stf(sw, f"packet 1 {PKT2}\n")
    assert result.errors == ["<stf>:1: the switch failed on this packet: ZeroDivisionError: division by zero"]


def test_name_resolution_rules() -> None:
    from switch.stf.control import ControlError, resolve, resolve_key_field

    tables = ["ingress.t", "ingress.tt", "egress.t2", "MyIngress.ipv4_lpm"]
    assert resolve("ingress.t", tables, "table") == "ingress.t"
    assert resolve("lpm", tables, "table") == "MyIngress.ipv4_lpm"  # bmv2stf: plain endswith
    assert resolve("t2", tables, "table") == "egress.t2"
    assert resolve("t", tables, "table") == "ingress.t"  # several end in 't': the one at a '.' boundary
    with pytest.raises(ControlError, match="ambiguous"):
        resolve("t", ["ingress.t", "egress.t"], "table")
    with pytest.raises(ControlError, match="did you mean 'ingress.tt'"):
        resolve("ingress.ttt", tables, "table")
    keys = ["hdr.ethernet.dstAddr", "hdr.extra[0].h", "hdr.h.$valid$", "meta.m.f", "hdr.m.f"]
    assert resolve_key_field("ethernet.dstAddr", keys) == 0
    assert resolve_key_field("extra[0].h", keys) == 1
    assert resolve_key_field("hdr.h", keys) == 2  # bmv2stf's '<hdr>.$valid$' form
    assert resolve_key_field("hdr.h.valid", keys) == 2
    with pytest.raises(ControlError, match="ambiguous"):
        resolve_key_field("m.f", keys)


def test_direct_counters_by_bmv2_entry_handle() -> None:
    # handles are per table, lowest free first: removing entry 0 frees handle 0 for the next add
    stf = f"""
add dmac dstAddr:0x000000000002 forward(port:2)
add dmac dstAddr:0x000000000003 forward(port:3)
packet 1 {PKT3}
packet 1 {PKT3}
expect 3 {PKT3}
expect 3 {PKT3}
check_counter dmac_hits(1) packets == 2
check_counter dmac_hits(0) packets == 0
counter_read dmac_hits 1
remove dmac dstAddr:0x000000000002
add dmac dstAddr:0x000000000004 forward(port:4) = four
check_counter dmac_hits(0) packets == 0
counter_write dmac_hits 1 7 70
check_counter dmac_hits(1) bytes == 70
counter_reset dmac_hits
check_counter dmac_hits(1) packets == 0
"""
    result = assert_stf(FakeSwitch(), stf)
    assert "<stf>:10: MyIngress.dmac_hits[1] = packets=2 bytes=32" in result.log
    assert "<stf>:12: MyIngress.dmac: added MyIngress.forward with handle 0" in result.log


def test_engine_internal_errors_are_reported() -> None:
    # the engine counts exceptions it catches per packet in stats["errors"] and keeps the text in last_error
    import collections

    sw = FakeSwitch()
    sw.stats = collections.Counter()  # type: ignore[attr-defined]

    def broken(port: int, frame: bytes) -> list:
        sw.stats["errors"] += 1  # type: ignore[attr-defined]
        sw.last_error = "AttributeError: boom"  # type: ignore[attr-defined]
        return []

    sw.process = broken  # type: ignore[method-assign]
    result = run_stf(sw, f"packet 1 {PKT2}\nexpect 2 {PKT2}\n")
    assert result.errors == ["<stf>:1: the switch failed on this packet: AttributeError: boom"]
    assert "#1 MISSING" in result.report()
