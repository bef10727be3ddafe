"""A small stand-in for the engine that implements the switch/__init__.py contract the STF runner uses, with one fixed
L2 "program" written in Python. It lets the runner be tested on its own; tests on the real engine use tests/fixtures.

Program: ingress port p counts into counter `MyIngress.rx[p]` and register `MyIngress.seen[p]` (+1);
`MyIngress.acl` (ternary on etherType; priority) may drop; `MyIngress.dmac` (exact on dstAddr, direct counter
`MyIngress.dmac_hits`) forwards to a port, drops, multicasts to a group, or forwards and clones to a mirror session.
Egress rewrites nothing, except that replicas get byte 0 of the source MAC replaced by their rid (low byte), so a
test can tell replicas apart.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from switch.errors import MatchError, MatchErrorCode


@dataclass
class KeyField:
    name: str
    match_type: str
    bitwidth: int


@dataclass
class Entry:
    key: tuple
    priority: int
    action: str
    data: list[int]
    packets: int = 0
    bytes: int = 0


@dataclass
class ActionInfo:
    name: str
    id: int
    params: list[tuple[str, int]]


def _matches(kf: KeyField, item: Any, value: int) -> bool:
    if kf.match_type == "exact":
        return item == value
    if kf.match_type == "lpm":
        v, plen = item
        shift = kf.bitwidth - plen
        return (v >> shift) == (value >> shift)
    if kf.match_type == "ternary":
        v, m = item
        return (value & m) == (v & m)
    raise NotImplementedError(kf.match_type)


@dataclass
class MatchTable:
    name: str
    key: list[KeyField]
    action_names: list[str]
    default: tuple[str, list[int]]
    is_const: bool = False
    entries: list[Entry] = field(default_factory=list)

    infos: dict[str, ActionInfo] = field(default_factory=dict)

    def _find(self, key: tuple, priority: int) -> Entry | None:
        return next((e for e in self.entries if e.key == key and e.priority == priority), None)

    def action_info(self, action: str) -> ActionInfo | None:
        return self.infos.get(action) if action in self.action_names else None

    def insert(self, key: tuple, action: str, data: list[int], priority: int = 0) -> Entry:
        if action not in self.action_names:
            raise MatchError(MatchErrorCode.ACTION_NOT_IN_TABLE, action)
        needs = any(k.match_type == "ternary" for k in self.key)
        if needs and priority <= 0:
            raise MatchError(MatchErrorCode.MISSING_PRIORITY, self.name)
        if self._find(key, priority):
            raise MatchError(MatchErrorCode.DUPLICATE_ENTRY, self.name)
        entry = Entry(key, priority, action, list(data))
        self.entries.append(entry)
        return entry

    def delete(self, key: tuple, priority: int = 0) -> None:
        entry = self._find(key, priority)
        if entry is None:
            raise MatchError(MatchErrorCode.ENTRY_NOT_FOUND, self.name)
        self.entries.remove(entry)

    def lookup_entry(self, key: tuple, priority: int = 0) -> Entry | None:
        return self._find(key, priority)

    def set_default(self, action: str, data: list[int]) -> None:
        if action not in self.action_names:
            raise MatchError(MatchErrorCode.ACTION_NOT_IN_TABLE, action)
        self.default = (action, list(data))

    def apply(self, values: tuple[int, ...], length: int) -> tuple[str, list[int]]:
        hits = [e for e in self.entries if all(_matches(k, i, v) for k, i, v in zip(self.key, e.key, values))]
        if not hits:
            return self.default
        if any(k.match_type == "lpm" for k in self.key):
            best = max(hits, key=lambda e: next(i[1] for k, i in zip(self.key, e.key) if k.match_type == "lpm"))
        else:
            best = max(hits, key=lambda e: e.priority)
        best.packets += 1
        best.bytes += length
        return best.action, best.data


@dataclass
class RegisterArray:
    size: int
    bitwidth: int
    cells: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.cells = [0] * self.size

    def read(self, i: int) -> int:
        return self.cells[i]

    def write(self, i: int, v: int) -> None:
        self.cells[i] = v & ((1 << self.bitwidth) - 1)

    def reset(self) -> None:
        self.cells = [0] * self.size


@dataclass
class CounterArray:
    size: int
    is_direct: bool = False
    table: str | None = None
    cells: list[list[int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.cells = [[0, 0] for _ in range(self.size)]

    def read(self, i: int) -> tuple[int, int]:
        return self.cells[i][0], self.cells[i][1]

    def write(self, i: int, p: int, b: int) -> None:
        self.cells[i] = [p, b]

    def reset(self) -> None:
        self.cells = [[0, 0] for _ in range(self.size)]


class Pre:
    def __init__(self) -> None:
        self.groups: dict[int, list[tuple[int, int]]] = {}

    def set_group(self, mgid: int, replicas: list[tuple[int, int]]) -> None:
        self.groups[mgid] = list(replicas)

    def delete_group(self, mgid: int) -> None:
        if mgid not in self.groups:
            raise MatchError(MatchErrorCode.GROUP_NOT_FOUND, str(mgid))
        del self.groups[mgid]


class Mirror:
    def __init__(self) -> None:
        self.sessions: dict[int, dict[str, Any]] = {}

    def set_session(self, sid: int, egress_port: int | None = None, mgid: int | None = None, truncate: int = 0) -> None:
        self.sessions[sid] = {"egress_port": egress_port, "mgid": mgid}

    def delete_session(self, sid: int) -> None:
        if sid not in self.sessions:
            raise MatchError(MatchErrorCode.SESSION_NOT_FOUND, str(sid))
        del self.sessions[sid]


class FakeSwitch:
    """The fixed L2 program above behind the engine API."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.actions = {
            "MyIngress.forward": ActionInfo("MyIngress.forward", 1, [("port", 9)]),
            "MyIngress.drop": ActionInfo("MyIngress.drop", 2, []),
            "MyIngress.flood": ActionInfo("MyIngress.flood", 3, [("grp", 16)]),
            "MyIngress.forward_and_clone": ActionInfo("MyIngress.forward_and_clone", 4, [("port", 9), ("session", 32)]),
            "NoAction": ActionInfo("NoAction", 5, []),
        }
        self.tables = {
            "MyIngress.dmac": MatchTable(
                "MyIngress.dmac", [KeyField("hdr.ethernet.dstAddr", "exact", 48)],
                ["MyIngress.forward", "MyIngress.drop", "MyIngress.flood", "MyIngress.forward_and_clone"],
                ("MyIngress.drop", []),
            ),
            "MyIngress.acl": MatchTable(
                "MyIngress.acl", [KeyField("hdr.ethernet.etherType", "ternary", 16)],
                ["MyIngress.drop", "NoAction"], ("NoAction", []),
            ),
            "MyIngress.route": MatchTable(
                "MyIngress.route", [KeyField("hdr.ipv4.dstAddr", "lpm", 32)],
                ["MyIngress.forward", "NoAction"], ("NoAction", []),
            ),
        }
        for t in self.tables.values():
            t.infos = {a: self.actions[a] for a in t.action_names}
        self.registers = {"MyIngress.seen": RegisterArray(8, 32)}
        self.counters = {
            "MyIngress.rx": CounterArray(8),
            "MyIngress.dmac_hits": CounterArray(0, is_direct=True, table="MyIngress.dmac"),
        }
        self.pre = Pre()
        self.mirror = Mirror()

    def process(self, port: int, frame: bytes) -> list[tuple[int, bytes]]:
        self.registers["MyIngress.seen"].write(port, self.registers["MyIngress.seen"].read(port) + 1)
        p, b = self.counters["MyIngress.rx"].read(port)
        self.counters["MyIngress.rx"].write(port, p + 1, b + len(frame))
        dst = int.from_bytes(frame[0:6], "big")
        ethertype = int.from_bytes(frame[12:14], "big")
        if self.tables["MyIngress.acl"].apply((ethertype,), len(frame))[0] == "MyIngress.drop":
            return []
        if ethertype == 0x0800 and len(frame) >= 34:
            action, data = self.tables["MyIngress.route"].apply((int.from_bytes(frame[30:34], "big"),), len(frame))
            if action == "MyIngress.forward":
                return [(data[0], frame)]
        action, data = self.tables["MyIngress.dmac"].apply((dst,), len(frame))
        if action == "MyIngress.forward":
            return [(data[0], frame)]
        if action == "MyIngress.forward_and_clone":
            out = [(data[0], frame)]
            session = self.mirror.sessions.get(data[1])
            if session and session["egress_port"] is not None:
                out.append((session["egress_port"], frame))
            return out
        if action == "MyIngress.flood":
            return [
                (p, frame[:6] + bytes([rid & 0xFF]) + frame[7:]) for p, rid in self.pre.groups.get(data[0], [])
            ]
        return []
