"""Action profiles and selectors through P4Runtime (tests/compiler/p4/action_profiles.p4): members, groups with
weights, indirect entries, reads and PI's refusals. The expected ports and codes are those real simple_switch_grpc
1.15.5 gave for p4c 1.2.4.8's JSON of the program, the same writes in the same order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import finsy as fy
import pytest

from compiler import compile_file
from controller.client import ControllerError, P4RuntimeClient
from switch.runtime import P4RuntimeServer
from switch.v1model.switch import V1Switch

PROGRAM = Path(__file__).parents[2] / "compiler" / "p4" / "action_profiles.p4"
CPU_PORT = 255


@pytest.fixture
def programmed(tmp_path) -> Iterator[tuple[P4RuntimeClient, V1Switch]]:
    compiled = compile_file(PROGRAM)
    (tmp_path / "p.json").write_text(json.dumps(compiled.json))
    (tmp_path / "p.p4info.txtpb").write_text(compiled.p4info_text)
    sw = V1Switch(drop_port=511, cpu_port=CPU_PORT, device_id=0)
    srv = P4RuntimeServer(sw, device_id=0, cpu_port=CPU_PORT)
    client = P4RuntimeClient(f"127.0.0.1:{srv.start('127.0.0.1:0')}").connect()
    try:
        client.set_pipeline(tmp_path / "p.p4info.txtpb", tmp_path / "p.json")
        yield client, sw
    finally:
        client.close()
        srv.stop(0)


def ports(sw: V1Switch, dst: int, srcs: list[int]) -> list[int | None]:
    out = []
    for src in srcs:
        r = sw.process(1, dst.to_bytes(6, "big") + src.to_bytes(6, "big") + b"\x08\x00" + bytes(46))
        out.append(r[0][0] if r else None)
    return out


def code(fn) -> str:
    try:
        fn()
    except ControllerError as e:
        return e.updates[0].code if e.updates else str(e.code)
    return "ok"


SRCS = [k << 8 for k in range(12)]  # the program overwrites eth.src[7:0] before the selector hashes it


def test_selector_groups_pick_as_bmv2(programmed) -> None:
    c, sw = programmed
    for mid, port in ((1, 2), (2, 3), (3, 4)):
        c.insert(fy.P4ActionProfileMember("I.paths", member_id=mid, action=fy.P4TableAction("I.set_port", port=port)))
    c.insert(fy.P4ActionProfileGroup("I.paths", group_id=10, members=[fy.P4Member(m, weight=1) for m in (1, 2, 3)]))
    c.insert(fy.P4TableEntry("I.ecmp", match=fy.P4TableMatch({"hdr.eth.dst": 1}),
                             action=fy.P4IndirectAction(group_id=10)))
    assert ports(sw, 1, SRCS) == [4, 4, 3, 2, 3, 2, 4, 4, 3, 4, 4, 3]
    # weight 2 for member 1: PI adds a copy of it (BMv2 handle 3) to the group, whose members are then 0, 1, 3
    c.modify(fy.P4ActionProfileGroup("I.paths", group_id=10, members=[fy.P4Member(1, weight=2),
                                                                       fy.P4Member(2, weight=1)]))
    assert ports(sw, 1, SRCS) == [2, 2, 3, 2, 3, 2, 2, 2, 3, 2, 2, 3]
    c.insert(fy.P4TableEntry("I.ecmp", match=fy.P4TableMatch({"hdr.eth.dst": 2}),
                             action=fy.P4IndirectAction(member_id=3)))
    assert ports(sw, 2, SRCS[:3]) == [4, 4, 4]
    c.modify(fy.P4ActionProfileMember("I.paths", member_id=3, action=fy.P4TableAction("I.drop")))
    assert ports(sw, 2, SRCS[:2]) == [None, None]  # the entry follows its member
    assert sorted((g.group_id, [(m.member_id, m.weight) for m in g.members])
                  for g in c.read(fy.P4ActionProfileGroup("I.paths"))) == [(10, [(1, 2), (2, 1)])]
    assert sorted(str(e.action) for e in c.read(fy.P4TableEntry("I.ecmp"))) == [
        "P4IndirectAction(group_id=10)", "P4IndirectAction(member_id=3)"]
    assert [m.member_id for m in c.read(fy.P4ActionProfileMember("I.paths"))] == [1, 2, 3]


def test_profile_members_and_misses(programmed) -> None:
    c, sw = programmed
    c.insert(fy.P4ActionProfileMember("I.ports", member_id=7, action=fy.P4TableAction("I.set_port", port=5)))
    c.insert(fy.P4TableEntry("I.l2", match=fy.P4TableMatch({"hdr.eth.dst": 0x010000000009}),
                             action=fy.P4IndirectAction(member_id=7)))
    assert ports(sw, 0x010000000009, [1]) == [5]
    assert ports(sw, 0x010000000008, [1]) == [0]  # a miss runs nothing (p4c's JSON has no default entry)
    c.delete(fy.P4TableEntry("I.l2", match=fy.P4TableMatch({"hdr.eth.dst": 0x010000000009})))
    c.delete(fy.P4ActionProfileMember("I.ports", member_id=7))
    assert ports(sw, 0x010000000009, [1]) == [0]


def test_refusals_as_pi_on_bmv2(programmed) -> None:
    c, sw = programmed
    for mid, port in ((1, 2), (2, 3), (3, 4)):
        c.insert(fy.P4ActionProfileMember("I.paths", member_id=mid, action=fy.P4TableAction("I.set_port", port=port)))
    c.insert(fy.P4ActionProfileGroup("I.paths", group_id=10, members=[fy.P4Member(1, weight=1)]))
    c.insert(fy.P4TableEntry("I.ecmp", match=fy.P4TableMatch({"hdr.eth.dst": 2}),
                             action=fy.P4IndirectAction(member_id=3)))
    c.insert(fy.P4TableEntry("I.ecmp", match=fy.P4TableMatch({"hdr.eth.dst": 1}),
                             action=fy.P4IndirectAction(group_id=10)))
    c.insert(fy.P4ActionProfileMember("I.ports", member_id=7, action=fy.P4TableAction("I.set_port", port=5)))
    assert [
        code(lambda: c.delete(fy.P4ActionProfileGroup("I.paths", group_id=10))),  # used by an entry
        code(lambda: c.insert(fy.P4ActionProfileGroup("I.paths", group_id=11, members=[fy.P4Member(9, weight=1)]))),
        code(lambda: c.insert(fy.P4ActionProfileGroup("I.paths", group_id=12, members=[fy.P4Member(1, weight=0)]))),
        code(lambda: c.insert(fy.P4ActionProfileMember("I.paths", member_id=1,
                                                       action=fy.P4TableAction("I.set_port", port=1)))),
        code(lambda: c.insert(fy.P4TableEntry("I.ecmp", match=fy.P4TableMatch({"hdr.eth.dst": 3}),
                                              action=fy.P4TableAction("I.set_port", port=1)))),  # one-shot, mixed
        code(lambda: c.modify(fy.P4TableEntry("I.ecmp", is_default_action=True,
                                              action=fy.P4IndirectAction(member_id=1)))),
        code(lambda: c.insert(fy.P4ActionProfileGroup("I.paths", group_id=13))),
        code(lambda: c.insert(fy.P4TableEntry("I.ecmp", match=fy.P4TableMatch({"hdr.eth.dst": 4}),
                                              action=fy.P4IndirectAction(group_id=13)))),  # an empty group
        code(lambda: c.delete(fy.P4ActionProfileMember("I.paths", member_id=3))),  # used by an entry
        code(lambda: c.insert(fy.P4ActionProfileGroup("I.ports", group_id=2, members=[fy.P4Member(7, weight=1)]))),
        code(lambda: c.insert(fy.P4TableEntry("I.l2", match=fy.P4TableMatch({"hdr.eth.dst": 0x010000000007}),
                                              action=fy.P4IndirectAction(group_id=2)))),  # no selector
        code(lambda: c.insert(fy.P4TableEntry("I.l2", match=fy.P4TableMatch({"hdr.eth.dst": 0x010000000006}),
                                              action=fy.P4IndirectAction(member_id=1)))),  # another profile's
    ] == ["UNKNOWN", "NOT_FOUND", "INVALID_ARGUMENT", "ALREADY_EXISTS", "INVALID_ARGUMENT", "INVALID_ARGUMENT", "ok",
          "UNKNOWN", "UNKNOWN", "ok", "UNKNOWN", "INVALID_ARGUMENT"]
    assert ports(sw, 1, SRCS[:2]) == [2, 2]  # nothing refused changed what was there
