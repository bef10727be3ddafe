"""tables_ctl.json: ternary priorities, range, two-field exact, const entries, hit/miss and action_run branching,
conditionals, keyless (direct action call) tables; plus the control-plane rules of MatchTable."""

from __future__ import annotations

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import raw

from switch.errors import MatchError, MatchErrorCode


def _frame(src: str = "10.0.0.1", dst: str = "10.0.0.2", l4=UDP, payload: bytes = b"") -> bytes:
    return raw(Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02") / IP(src=src, dst=dst) / l4() / payload)


def _ip(s: str) -> int:
    return int.from_bytes(bytes(int(x) for x in s.split(".")), "big")


@pytest.fixture
def sw(load):
    sw = load("tables_ctl")
    fwd = sw.tables["MyIngress.fwd"]
    for cls in (0, 1, 2, 3, 0xFF):
        fwd.insert((cls, _ip("10.0.0.2")), "MyIngress.set_port", (10 + (cls & 0xF),))
    return sw


def _port(sw, frame) -> list[int]:
    return [p for p, _ in sw.process(1, frame)]


def test_ternary_higher_priority_wins(sw):
    acl = sw.tables["MyIngress.acl"]
    acl.insert(((_ip("10.0.0.0"), 0xFF000000), (0, 0)), "MyIngress.set_cls", (1,), priority=10)
    acl.insert(((_ip("10.0.0.1"), 0xFFFFFFFF), (17, 0xFF)), "MyIngress.set_cls", (2,), priority=20)
    assert _port(sw, _frame(src="10.0.0.1")) == [12]            # both match: priority 20 wins
    assert _port(sw, _frame(src="10.0.0.1", l4=TCP)) == [11]    # protocol 6: only the /8 entry matches
    acl.modify(((_ip("10.0.0.0"), 0xFF000000), (0, 0)), "MyIngress.set_cls", (3,), priority=10)
    assert _port(sw, _frame(src="10.0.0.1", l4=TCP)) == [13]
    acl.insert(((_ip("10.0.0.1"), 0xFFFFFFFF), (0, 0)), "MyIngress.set_cls", (0,), priority=30)
    assert _port(sw, _frame(src="10.0.0.1")) == [10]


def test_miss_branch_runs_range_table(sw):
    by_len = sw.tables["MyIngress.by_len"]
    by_len.insert(((0, 40),), "MyIngress.set_cls", (1,), priority=1)
    by_len.insert(((41, 1500),), "MyIngress.set_cls", (2,), priority=1)
    assert _port(sw, _frame(payload=b"")) == [11]              # totalLen 28
    assert _port(sw, _frame(payload=b"x" * 12)) == [11]        # totalLen 40 (inclusive bound)
    assert _port(sw, _frame(payload=b"x" * 13)) == [12]        # totalLen 41
    # an acl hit skips by_len (__HIT__ goes straight to fwd)
    sw.tables["MyIngress.acl"].insert(((0, 0), (0, 0)), "MyIngress.set_cls", (3,), priority=1)
    assert _port(sw, _frame(payload=b"x" * 13)) == [13]


def test_exact_two_fields_and_default_drop(sw):
    assert _port(sw, _frame(dst="10.0.0.9")) == []             # fwd miss → default drop
    assert sw.stats["dropped_ingress"] == 1


def test_const_entries_only_after_set_port(sw):
    out = sw.process(1, _frame())                               # UDP → qos const entry mark(0x20)
    assert out[0][1][15] == 0x20
    out = sw.process(1, _frame(l4=TCP))                         # TCP → mark(0x40)
    assert out[0][1][15] == 0x40
    icmp = raw(Ether() / IP(src="10.0.0.1", dst="10.0.0.2", proto=1) / b"\x08\x00\x00\x00")
    out = sw.process(1, icmp)                                   # const default NoAction: diffserv untouched
    assert out[0][1][15] == 0


def test_const_table_refuses_changes(sw):
    qos = sw.tables["MyIngress.qos"]
    assert qos.is_const and qos.default_is_const
    assert [(e.key, e.data) for e in qos.entries] == [((17,), (0x20,)), ((6,), (0x40,))]
    with pytest.raises(MatchError) as ei:
        qos.insert((1,), "MyIngress.mark", (1,))
    assert ei.value.code is MatchErrorCode.TABLE_IS_CONST
    with pytest.raises(MatchError) as ei:
        qos.delete((17,))
    assert ei.value.code is MatchErrorCode.TABLE_IS_CONST
    with pytest.raises(MatchError) as ei:
        qos.set_default("MyIngress.mark", (1,))
    assert ei.value.code is MatchErrorCode.DEFAULT_ACTION_IS_CONST


def test_conditional_then_keyless_table_drops(sw):
    sw.tables["MyIngress.acl"].insert(((0, 0), (0, 0)), "MyIngress.set_cls", (0xFF,), priority=1)
    assert _port(sw, _frame()) == []                            # fwd hit (port 25) then meta.cls == 0xff → drop()
    assert sw.stats["dropped_ingress"] == 1


def test_table_api_errors(sw):
    fwd, acl = sw.tables["MyIngress.fwd"], sw.tables["MyIngress.acl"]
    with pytest.raises(MatchError) as ei:
        fwd.insert((0, _ip("10.0.0.2")), "MyIngress.set_port", (1,))
    assert ei.value.code is MatchErrorCode.DUPLICATE_ENTRY
    with pytest.raises(MatchError) as ei:
        fwd.insert((0,), "MyIngress.set_port", (1,))
    assert ei.value.code is MatchErrorCode.BAD_MATCH_KEY
    with pytest.raises(MatchError) as ei:
        fwd.insert((7, 7), "MyIngress.set_cls", (1,))
    assert ei.value.code is MatchErrorCode.ACTION_NOT_IN_TABLE
    with pytest.raises(MatchError) as ei:
        fwd.insert((7, 7), "MyIngress.set_port", ())
    assert ei.value.code is MatchErrorCode.BAD_ACTION_DATA
    with pytest.raises(MatchError) as ei:
        fwd.insert((7, 7), "MyIngress.set_port", (1,), priority=5)
    assert ei.value.code is MatchErrorCode.UNEXPECTED_PRIORITY
    with pytest.raises(MatchError) as ei:
        acl.insert(((0, 0), (0, 0)), "MyIngress.set_cls", (1,))
    assert ei.value.code is MatchErrorCode.MISSING_PRIORITY
    with pytest.raises(MatchError) as ei:
        fwd.delete((9, 9))
    assert ei.value.code is MatchErrorCode.ENTRY_NOT_FOUND
    # same ternary key, different priority: two entries
    acl.insert(((0, 0), (0, 0)), "MyIngress.set_cls", (1,), priority=1)
    acl.insert(((0, 0), (0, 0)), "MyIngress.set_cls", (2,), priority=2)
    assert acl.lookup_entry(((0, 0), (0, 0)), priority=2).data == (2,)
    assert fwd.lookup_entry((9, 9)) is None


def test_values_masked_to_field_width_and_table_full(load):
    sw = load("tables_ctl")
    fwd = sw.tables["MyIngress.fwd"]
    e = fwd.insert((0x1FF, 0x1_0A00_0002), "MyIngress.set_port", (0x3FF,))
    assert e.key == (0xFF, 0x0A000002) and e.data == (0x1FF,)
    fwd.clear()
    assert fwd.entries == []
    fwd.max_size = 2
    fwd.insert((1, 1), "MyIngress.set_port", (1,))
    fwd.insert((1, 2), "MyIngress.set_port", (1,))
    with pytest.raises(MatchError) as ei:
        fwd.insert((1, 3), "MyIngress.set_port", (1,))
    assert ei.value.code is MatchErrorCode.TABLE_FULL
