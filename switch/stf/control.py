"""STF control-plane commands applied to the engine API (switch/__init__.py), translated the way bmv2stf.py and
simple_switch_CLI would translate them for BMv2.

- Names: a table or action is found by its exact JSON name, else by a unique suffix (bmv2stf: `endswith`; when
  several match, the one whose suffix starts at a `.` wins). Key fields follow bmv2stf's `TableKeyInstance.set`
  (exact, then `.$valid$` forms, then `.<name>` suffix). Registers/counters: exact name, else unique suffix.
- Priorities: bmv2stf sends `10000 - prio` to BMv2, where a lower number wins, so a higher STF priority wins. The
  engine also lets the higher number win, so the engine priority is `prio + 1` (kept ≥ 1). Tables without
  ternary/range/optional keys ignore the STF priority, as bmv2stf does.
- Multicast: simple_switch_CLI's two-level PRE model (groups ← L1 nodes with a rid and a port list) is kept here and
  flattened into the engine's `pre.set_group(mgid, [(port, rid), ...])` after every change; node handles are
  assigned lowest-free-first from 0, as BMv2 does.
- Entry handles: as in BMv2, each table numbers its entries lowest-free-first from 0 (JSON const entries first, in
  order). simple_switch_CLI reads a direct counter cell by entry handle, so `counter_read <direct> <h>` and
  `check_counter <direct>(<h>)` take such a number; `add ... = name` gives the entry a name usable as `$name`.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any, Iterable

from . import commands as c
from .values import BadValue, parse_int, parse_key, wildcard_key

_PRIORITY_KINDS = ("ternary", "range", "optional")


class ControlError(Exception):
    """A control-plane command that cannot be applied (unknown name, bad value, refused by the switch)."""


def resolve(name: str, candidates: Iterable[str], what: str) -> str:
    """The candidate `name` designates: exact, else a unique suffix (dot-boundary suffixes preferred)."""
    names = list(candidates)
    if name in names:
        return name
    hits = [n for n in names if n.endswith(name)]
    if len(hits) > 1:
        dotted = [n for n in hits if n.endswith("." + name)]
        if len(dotted) == 1:
            return dotted[0]
        raise ControlError(f"{what} name {name!r} is ambiguous: {', '.join(sorted(hits))}")
    if hits:
        return hits[0]
    close = difflib.get_close_matches(name, names, n=3)
    hint = f"; did you mean {' or '.join(repr(n) for n in close)}?" if close else ""
    known = "" if close or len(names) > 12 else f" (known: {', '.join(sorted(names)) or 'none'})"
    raise ControlError(f"no {what} named {name!r}{hint}{known}")


def resolve_key_field(name: str, fields: list[str]) -> int:
    """Index of the key field an STF `<field>:` designates (bmv2stf's lookup order)."""
    for cand in (name, name + "$", name + ".$valid$"):
        if cand in fields:
            return fields.index(cand)
    if name.endswith(".valid") and name[:-5] + "$valid$" in fields:
        return fields.index(name[:-5] + "$valid$")
    hits = [
        i for i, f in enumerate(fields)
        if f.endswith("." + name) or f.endswith("." + name + "$") or (name == "valid" and f.endswith(".$valid$"))
    ]
    if not hits and name == "valid" and "$valid$" in fields:
        hits = [fields.index("$valid$")]
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise ControlError(f"key field {name!r} is ambiguous: {', '.join(fields[i] for i in hits)}")
    raise ControlError(f"table has no key field {name!r} (key: {', '.join(fields) or 'none'})")


@dataclass
class McNode:
    """A simple_switch_CLI L1 node: a rid and a port list, associated to at most one group."""

    rid: int
    ports: tuple[int, ...]
    group: int | None = None


@dataclass
class ControlPlane:
    """The control-plane state an STF run adds on top of the engine (PRE nodes, entry handles) and the operations."""

    sw: Any
    nodes: dict[int, McNode] = field(default_factory=dict)
    groups: dict[int, list[int]] = field(default_factory=dict)  # mgid -> node handles in association order
    named: dict[str, tuple[str, int]] = field(default_factory=dict)  # `= name` of an add -> (table, entry handle)
    entry_handles: dict[str, dict[int, tuple[tuple, int]]] = field(default_factory=dict)  # table -> handle -> key, prio

    # --- tables --------------------------------------------------------------------------------------------

    def table(self, name: str) -> Any:
        return self.sw.tables[resolve(name, self.sw.tables.keys(), "table")]

    def _handles(self, table: Any) -> dict[int, tuple[tuple, int]]:
        """BMv2 entry handles of `table`; entries present before the first STF command (const ones) come first."""
        if table.name not in self.entry_handles:
            self.entry_handles[table.name] = {i: (e.key, e.priority) for i, e in enumerate(table.entries)}
        return self.entry_handles[table.name]

    def _new_handle(self, table: Any, key: tuple, prio: int) -> int:
        handles = self._handles(table)
        h = next(i for i in range(len(handles) + 1) if i not in handles)
        handles[h] = (key, prio)
        return h

    def _forget(self, table: Any, key: tuple, prio: int) -> None:
        """Free the handle of the entry (key, prio) is about to delete."""
        entry = table.lookup_entry(key, prio)
        handles = self._handles(table)
        for h, (k, p) in list(handles.items()):
            if table.lookup_entry(k, p) is entry:
                del handles[h]

    def entry_of(self, table: Any, handle: int) -> Any:
        """The entry with BMv2 handle `handle` in `table`."""
        key_prio = self._handles(table).get(handle)
        entry = table.lookup_entry(*key_prio) if key_prio else None
        if entry is None:
            raise ControlError(f"table {table.name!r} has no entry with handle {handle}")
        return entry

    def _action(self, table: Any, name: str) -> str:
        return resolve(name, list(table.action_names), f"action of table {table.name!r}")

    def _action_data(self, table: Any, action: str, args: tuple[tuple[str, str], ...]) -> list[int]:
        info = table.action_info(action) or self.sw.actions[action]  # the table's own action of that name
        params = list(info.params)
        names = [p[0] for p in params]
        given: dict[str, str] = {}
        for pname, text in args:
            if pname not in names:
                raise ControlError(
                    f"action {action!r} has no parameter {pname!r} (parameters: {', '.join(names) or 'none'})"
                )
            given[pname] = text
        missing = [n for n in names if n not in given]
        if missing:
            raise ControlError(f"action {action!r}: missing parameter(s) {', '.join(missing)}")
        data = []
        for pname, width in params:
            try:
                value = parse_int(given[pname])
            except BadValue as e:
                raise ControlError(f"action parameter {pname!r}: {e}") from None
            data.append(value & ((1 << width) - 1) if width else value)
        return data

    def _key(self, table: Any, matches: tuple[tuple[str, str], ...]) -> tuple:
        fields = list(table.key)
        names = [f.name for f in fields]
        items = [wildcard_key(f.match_type, f.bitwidth) for f in fields]
        for fname, text in matches:
            i = resolve_key_field(fname, names)
            f = fields[i]
            try:
                items[i] = parse_key(f.match_type, text, f.bitwidth)
            except BadValue as e:
                raise ControlError(f"key field {f.name!r} ({f.match_type}, {f.bitwidth} bits): {e}") from None
        return tuple(items)

    @staticmethod
    def _priority(table: Any, priority: int | None) -> int:
        if not any(f.match_type in _PRIORITY_KINDS for f in table.key):
            return 0
        if priority is None:
            raise ControlError(f"table {table.name!r} has ternary/range/optional keys: the add needs a priority")
        return priority + 1

    def add(self, cmd: c.Add) -> str:
        table = self.table(cmd.table)
        action = self._action(table, cmd.action)
        key = self._key(table, cmd.matches)
        prio = self._priority(table, cmd.priority)
        self._handles(table)  # number the entries that exist before this one first
        table.insert(key, action, self._action_data(table, action, cmd.args), prio)
        handle = self._new_handle(table, key, prio)
        if cmd.handle is not None:
            self.named[cmd.handle] = (table.name, handle)
        return f"{table.name}: added {action} with handle {handle}"

    def set_default(self, cmd: c.SetDefault) -> str:
        table = self.table(cmd.table)
        action = self._action(table, cmd.action)
        table.set_default(action, self._action_data(table, action, cmd.args))
        return f"{table.name}: default action {action}"

    def remove(self, cmd: c.Remove) -> str:
        if cmd.table is None:
            removed = 0
            for table in self.sw.tables.values():
                if getattr(table, "is_const", False):
                    continue
                for entry in list(table.entries):
                    if getattr(entry, "is_const", False):
                        continue
                    self._forget(table, entry.key, entry.priority)
                    table.delete(entry.key, entry.priority)
                    removed += 1
            return f"removed {removed} entries"
        table = self.table(cmd.table)
        key = self._key(table, cmd.matches)
        prio = self._priority(table, cmd.priority)
        if table.lookup_entry(key, prio) is not None:
            self._forget(table, key, prio)
        table.delete(key, prio)
        return f"{table.name}: entry removed"

    # --- counters and registers ----------------------------------------------------------------------------

    def counter_values(self, name: str, index: int | str) -> tuple[str, int, int]:
        """(counter name, packets, bytes) of one cell. For a direct counter the index is an entry handle: a number
        (BMv2's) or the name an `add ... = name` gave."""
        cname = resolve(name, self.sw.counters.keys(), "counter")
        ctr = self.sw.counters[cname]
        if not getattr(ctr, "is_direct", False):
            if isinstance(index, str):
                raise ControlError(f"counter {cname!r} is not direct: index it by number, not by entry ${index}")
            self._check_index(cname, index, ctr.size)
            packets, nbytes = ctr.read(index)
            return cname, packets, nbytes
        table = self.sw.tables[ctr.table]
        if isinstance(index, str):
            if index not in self.named:
                raise ControlError(f"no entry named {index!r} (name one with 'add ... = {index}')")
            tname, handle = self.named[index]
            if tname != table.name:
                raise ControlError(f"entry {index!r} is in table {tname!r}, counter {cname!r} counts {table.name!r}")
            index = handle
        entry = self.entry_of(table, index)
        return cname, entry.packets, entry.bytes

    @staticmethod
    def _check_index(name: str, index: int, size: int) -> None:
        if not 0 <= index < size:
            raise ControlError(f"index {index} out of range for {name!r} (size {size})")

    def meter_op(self, cmd: c.MeterOp) -> str:
        mname = resolve(cmd.meter, self.sw.meters.keys(), "meter")
        array = self.sw.meters[mname]
        if array.is_direct:
            if cmd.index is None:
                raise ControlError(f"{cmd.verb}: meter {mname!r} is direct: name an entry handle")
            cells = [array.entry_cell(self.entry_of(self.sw.tables[array.table], cmd.index))]
        else:
            cells = array.cells if cmd.index is None else [array.cell(cmd.index)]
        if cmd.verb == "meter_get_rates":
            return f"{mname}[{cmd.index}]: " + " ".join(f"{r}:{b}" for r, b in cells[0].config)
        for cell in cells:
            cell.set_rates(list(cmd.rates))
        return f"{mname}: rates set"

    def counter_op(self, cmd: c.CounterOp) -> str:
        cname = resolve(cmd.counter, self.sw.counters.keys(), "counter")
        ctr = self.sw.counters[cname]
        if cmd.verb == "counter_reset":
            if getattr(ctr, "is_direct", False):
                for entry in self.sw.tables[ctr.table].entries:
                    entry.packets = entry.bytes = 0
            else:
                ctr.reset()
            return f"{cname}: reset"
        assert cmd.index is not None
        if cmd.verb == "counter_write":
            if getattr(ctr, "is_direct", False):
                entry = self.entry_of(self.sw.tables[ctr.table], cmd.index)
                entry.packets, entry.bytes = cmd.packets, cmd.bytes
            else:
                self._check_index(cname, cmd.index, ctr.size)
                ctr.write(cmd.index, cmd.packets, cmd.bytes)
            return f"{cname}[{cmd.index}] := packets={cmd.packets} bytes={cmd.bytes}"
        _, packets, nbytes = self.counter_values(cname, cmd.index)
        return f"{cname}[{cmd.index}] = packets={packets} bytes={nbytes}"

    def register_op(self, cmd: c.RegisterOp) -> tuple[str, str, list[tuple[int, int]]]:
        """Apply a register command; returns the register's full name, a message and the (index, value) cells read."""
        rname = resolve(cmd.register, self.sw.registers.keys(), "register")
        reg = self.sw.registers[rname]
        if cmd.verb == "register_reset":
            reg.reset()
            return rname, f"{rname}: reset", []
        if cmd.verb == "register_write":
            assert cmd.index is not None and cmd.value is not None
            self._check_index(rname, cmd.index, reg.size)
            reg.write(cmd.index, cmd.value)
            return rname, f"{rname}[{cmd.index}] := {cmd.value}", []
        indices = range(reg.size) if cmd.index is None else [cmd.index]
        for i in indices:
            self._check_index(rname, i, reg.size)
        cells = [(i, reg.read(i)) for i in indices]
        return rname, f"{rname}: " + ", ".join(f"[{i}]={v}" for i, v in cells), cells

    # --- mirroring -----------------------------------------------------------------------------------------

    def mirroring(self, cmd: c.Mirroring) -> str:
        mirror = self.sw.mirror
        if cmd.verb == "mirroring_add":
            mirror.set_session(cmd.session, egress_port=cmd.target)
            return f"mirror session {cmd.session} -> port {cmd.target}"
        if cmd.verb == "mirroring_add_mc":
            mirror.set_session(cmd.session, mgid=cmd.target)
            return f"mirror session {cmd.session} -> multicast group {cmd.target}"
        if cmd.verb == "mirroring_delete":
            mirror.delete_session(cmd.session)
            return f"mirror session {cmd.session} deleted"
        sessions = mirror.sessions
        if cmd.session not in sessions:
            raise ControlError(f"mirror session {cmd.session} does not exist")
        return f"mirror session {cmd.session}: {sessions[cmd.session]}"

    # --- multicast (simple_switch_CLI PRE commands) --------------------------------------------------------

    def _group(self, mgid: int) -> list[int]:
        if mgid not in self.groups:
            raise ControlError(f"multicast group {mgid} does not exist (mc_mgrp_create it first)")
        return self.groups[mgid]

    def _node(self, handle: int) -> McNode:
        if handle not in self.nodes:
            raise ControlError(f"no multicast node with handle {handle}")
        return self.nodes[handle]

    def _push(self, mgid: int) -> None:
        replicas = []
        for h in self.groups[mgid]:
            node = self.nodes[h]
            replicas.extend((port, node.rid) for port in sorted(set(node.ports)))
        self.sw.pre.set_group(mgid, replicas)

    def multicast(self, cmd: c.Multicast) -> str:
        verb, nums = cmd.verb, cmd.numbers
        if verb == "mc_mgrp_create":
            if nums[0] in self.groups:
                raise ControlError(f"multicast group {nums[0]} already exists")
            self.groups[nums[0]] = []
            self._push(nums[0])
            return f"multicast group {nums[0]} created"
        if verb == "mc_mgrp_destroy":
            for h in self._group(nums[0]):
                self.nodes[h].group = None
            del self.groups[nums[0]]
            self.sw.pre.delete_group(nums[0])
            return f"multicast group {nums[0]} destroyed"
        if verb == "mc_node_create":
            handle = next(h for h in range(len(self.nodes) + 1) if h not in self.nodes)
            self.nodes[handle] = McNode(nums[0], cmd.ports)
            return f"node with rid {nums[0]} ports {list(cmd.ports)} created with handle {handle}"
        if verb == "mc_node_update":
            node = self._node(nums[0])
            node.ports = cmd.ports
            if node.group is not None:
                self._push(node.group)
            return f"node {nums[0]} ports {list(cmd.ports)}"
        if verb == "mc_node_destroy":
            node = self._node(nums[0])
            if node.group is not None:
                self.groups[node.group].remove(nums[0])
                self._push(node.group)
            del self.nodes[nums[0]]
            return f"node {nums[0]} destroyed"
        mgid, handle = nums
        members = self._group(mgid)
        node = self._node(handle)
        if verb == "mc_node_associate":
            if node.group is not None:
                raise ControlError(f"node {handle} is already associated with group {node.group}")
            node.group = mgid
            members.append(handle)
        else:  # mc_node_dissociate
            if node.group != mgid:
                raise ControlError(f"node {handle} is not associated with group {mgid}")
            node.group = None
            members.remove(handle)
        self._push(mgid)
        return f"group {mgid}: nodes {members}"
