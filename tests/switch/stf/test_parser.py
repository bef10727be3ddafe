"""STF syntax as real files write it (p4c testdata, P4Testgen output), and errors with file:line."""

from __future__ import annotations

import pytest

from switch.stf import commands as c
from switch.stf.packets import ExpectedPacket
from switch.stf.parser import StfSyntaxError, parse_stf

REAL_WORLD = """\
# SPDX-License-Identifier: Apache-2.0
# comment lines, blank lines and trailing comments are ignored

add test1 0 data.f1:0x****0101 ingress.setb1(val:0x7f, port:2)
ADD test1 503 data.f1:0x****0202 ingress.setb1(val:7, port:3)   # keywords in any case
add ex1 100 extra$0.h:0x25** act1(val:0x25)
add ipv4_da_lpm ipv4.dstAddr:0x0a010065 ingress.do_resubmit(new_ipv4_dstAddr:0x0a010001)
add tbl  hdr.ip.dst : 0x0a000000 / 8   act ( port : 1 ) = A
add "ingress.t" 1 "hdr.h.a":0b1*** "hdr.h.b":0x00FF "ingress.act"("x":0x01,"y":2)
add tab1 dstAddr:0xa1a2a3a4a5a6 act(port:2) = A
setdefault ethertype_match l2_packet()
setdefault "ingress.t" "ingress.act"("x":0x01,"y":2)

#          f1       f2      h1  b1 b2
expect 2 00000101 ******** **** 7f 66
packet 0 00000101 00000202 0303 55 66 7777 88 00
expect 3 0a0b0c0d$
expect 5
no_packet
wait

mirroring_add 5 4
mirroring_add_mc 6 1113
mc_mgrp_create 1113
mc_node_create 400 6
mc_node_create 401 7 8
mc_node_associate 1113 0
register_write MyIngress.r 3 0x10
register_read r 3
register_read r 3 == 16
register_reset r
counter_read MyIngress.c 1
check_counter cntDum(10) packets == 2
check_counter cntDum($A)
check_counter c(0) bytes >= 64
remove all
"""


def test_real_world_file() -> None:
    script = parse_stf(REAL_WORLD, "t.stf")
    cmds = script.commands
    assert [type(x).__name__ for x in cmds[:9]] == ["Add"] * 7 + ["SetDefault"] * 2
    assert cmds[0] == c.Add(4, "test1", 0, (("data.f1", "0x****0101"),), "ingress.setb1",
                            (("val", "0x7f"), ("port", "2")))
    assert cmds[1].priority == 503 and cmds[1].line == 5
    assert cmds[2].matches == (("extra[0].h", "0x25**"),)
    assert cmds[3].priority is None and cmds[3].action == "ingress.do_resubmit"
    assert cmds[4] == c.Add(8, "tbl", None, (("hdr.ip.dst", "0x0a000000/8"),), "act", (("port", "1"),), "A")
    assert cmds[5] == c.Add(9, "ingress.t", 1, (("hdr.h.a", "0b1***"), ("hdr.h.b", "0x00FF")), "ingress.act",
                            (("x", "0x01"), ("y", "2")))
    assert cmds[7] == c.SetDefault(11, "ethertype_match", "l2_packet", ())
    assert cmds[8].table == "ingress.t" and cmds[8].args == (("x", "0x01"), ("y", "2"))

    exp, pkt, exact, any_ = cmds[9:13]
    assert exp == c.Expect(15, 2, ExpectedPacket("00000101********" + "****7F66"))
    assert pkt == c.Packet(16, 0, bytes.fromhex("00000101000002020303556677778800"))
    assert exact.pattern == ExpectedPacket("0A0B0C0D", exact=True)
    assert any_ == c.Expect(18, 5, None)
    assert isinstance(cmds[13], c.NoPacket) and isinstance(cmds[14], c.Wait)

    assert cmds[15] == c.Mirroring(22, "mirroring_add", 5, 4)
    assert cmds[16] == c.Mirroring(23, "mirroring_add_mc", 6, 1113)
    assert cmds[17] == c.Multicast(24, "mc_mgrp_create", (1113,))
    assert cmds[19] == c.Multicast(26, "mc_node_create", (401,), (7, 8))
    assert cmds[20] == c.Multicast(27, "mc_node_associate", (1113, 0))
    assert cmds[21] == c.RegisterOp(28, "register_write", "MyIngress.r", 3, 16)
    assert cmds[22] == c.RegisterOp(29, "register_read", "r", 3)
    assert cmds[23].check == c.Check(None, "==", 16)
    assert cmds[24] == c.RegisterOp(31, "register_reset", "r")
    assert cmds[25] == c.CounterOp(32, "counter_read", "MyIngress.c", 1)
    assert cmds[26] == c.CheckCounter(33, "cntDum", 10, c.Check("packets", "==", 2))
    assert cmds[27] == c.CheckCounter(34, "cntDum", "A", c.Check(None, "==", 0))
    assert cmds[28].check == c.Check("bytes", ">=", 64)
    assert cmds[29] == c.Remove(36, None)
    assert script.ports == {0, 2, 3, 5}


def test_tabs_and_crlf() -> None:
    script = parse_stf("packet\t1\t0102\r\nexpect\t2 01 02\r\n")
    assert script.commands == [c.Packet(1, 1, b"\x01\x02"), c.Expect(2, 2, ExpectedPacket("0102"))]


def test_empty_and_comment_only_files() -> None:
    assert parse_stf("").commands == []
    assert parse_stf("# Empty file: BMv2 crashes at start\n\n").commands == []


def test_all_errors_reported_with_file_and_line() -> None:
    text = "packet 0 0102\nfrobnicate 1 2\npacket x 00\nexpect 1 01$02\nadd t k:1 act(p:1\nadd t k act()\n"
    with pytest.raises(StfSyntaxError) as info:
        parse_stf(text, "bad.stf")
    msgs = [str(e) for e in info.value.errors]
    assert msgs[0] == "bad.stf:2: unknown STF command 'frobnicate'"
    assert msgs[1].startswith("bad.stf:3: port must be a decimal number")
    assert msgs[2].startswith("bad.stf:4: '$' may only end")
    assert msgs[3].startswith("bad.stf:5: missing ')'")
    assert msgs[4].startswith("bad.stf:6: match key must be <field>:<value>")
    assert len(msgs) == 5


@pytest.mark.parametrize(
    "line, msg",
    [
        ("packet 1", "usage: packet"),
        ("packet 1 012", "odd number"),
        ("expect", "usage: expect"),
        ("wait 3", "takes no arguments"),
        ("mirroring_add 5", "usage: mirroring_add <session> <port>"),
        ("mc_node_create 1 2 | 3", "LAG"),
        ("mc_node_associate 1", "usage: mc_node_associate"),
        ("register_write r 1", "usage: register_write"),
        ("register_read r 1 = 3", "<op>"),
        ("check_counter c 1", "usage: check_counter"),
        ("check_counter c(1) packets ~ 3", "<op>"),
        ("meter_set_rates m 0 1:1 2", "bad rate '2'"),
        ("meter_set_rates m 0", "usage: meter_set_rates <meter> <index>"),
        ("meter_array_set_rates m x:1", "bad rate 'x:1'"),
        ("meter_get_rates m", "usage: meter_get_rates"),
        ("setdefault t a() extra", "usage: setdefault"),
        ("add t k:1 a(p:1) junk", "unexpected text"),
        ("add t k:1 a(p)", "action argument must be"),
    ],
)
def test_bad_lines(line: str, msg: str) -> None:
    with pytest.raises(StfSyntaxError, match=msg):
        parse_stf(line)


def test_wildcard_bytes_double_spaces_and_annotated_key_names() -> None:
    text = """\
#t_range
expect 21 15 **** ** 01 ** $
packet  0 15 0000 00 01 b0
add t1 ethernet.srcAddr.slice:0x1f dstAddr_lsbs:0x010101010101 ingressImpl.foo(out_port:3)
"""
    exp, pkt, add = parse_stf(text).commands
    assert exp == c.Expect(2, 21, ExpectedPacket("15******01**", exact=True))
    assert pkt == c.Packet(3, 0, bytes.fromhex("15000000 01b0"))
    assert add.matches == (("ethernet.srcAddr.slice", "0x1f"), ("dstAddr_lsbs", "0x010101010101"))
    assert add.action == "ingressImpl.foo"
