"""Action profiles and selectors as BMv2 keeps them (bm_sim/action_profile.cpp, match_tables.cpp): members are
actions with data, numbered by handle (the lowest free one); a group is a set of members; an entry of an `indirect`
table points to a member, one of an `indirect_ws` table to a member or a group. A packet hitting a group entry runs
the member at position hash % size among the group's members in handle order, the hash being the selector's
calculation over its input fields; an empty group runs nothing.

A member's action and data are copied into the entries that point to it (and again when the member changes), so a
member entry costs a packet nothing more than a direct one; a group entry carries `group`, which the generated table
code follows (`e = e.group.pick(F)`) after counting the entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from switch.errors import MatchError, MatchErrorCode
from switch.sim.gen_base import _noop
from switch.sim.tables import ActionInfo, Entry, MatchTable

_NOOP = Entry(None, 0, "", (), _noop, -1)  # what BMv2 runs for an empty group


@dataclass(eq=False)
class Member:
    handle: int
    action: str
    data: tuple[int, ...]
    fn: Any = field(repr=False)
    aid: int = field(repr=False)
    entries: set[int] = field(default_factory=set, repr=False)   # ids of the table entries pointing here
    groups: set[int] = field(default_factory=set, repr=False)    # handles of the groups holding it


@dataclass(eq=False)
class Group:
    handle: int
    profile: ActionProfile = field(repr=False)
    members: list[int] = field(default_factory=list)   # member handles, ascending (BMv2's get_nth order)
    entries: set[int] = field(default_factory=set, repr=False)

    def pick(self, F: list) -> Any:
        """The member a packet runs (its action, data and id, as an entry has them)."""
        n = len(self.members)
        if not n:
            return _NOOP
        h = self.profile.hash(F) if self.profile.hash is not None else 0
        return self.profile.members[self.members[h % n]]


class ActionProfile:
    """`action_profile(size)` / `action_selector(algo, size, width)` of a loaded program."""

    def __init__(self, name: str, pid: int, max_size: int, with_selector: bool) -> None:
        self.name = name
        self.id = pid
        self.max_size = max_size
        self.with_selector = with_selector
        self.hash: Callable[[list], int] | None = None
        """The selector's calculation (set once the program's code exists)."""
        self.tables: list[MatchTable] = []
        self.members: dict[int, Member] = {}
        self.groups: dict[int, Group] = {}

    @staticmethod
    def _free(used: dict[int, Any]) -> int:
        h = 0
        while h in used:
            h += 1
        return h

    def _resolve(self, action: str, data: tuple | list) -> tuple[ActionInfo, Any, tuple[int, ...]]:
        if not self.tables:
            raise MatchError(MatchErrorCode.INVALID_ACTION_NAME, f"action profile {self.name!r} has no table")
        return self.tables[0]._resolve_action(action, data)

    def member(self, handle: int) -> Member:
        m = self.members.get(handle)
        if m is None:
            raise MatchError(MatchErrorCode.ENTRY_NOT_FOUND, f"action profile {self.name!r} has no member {handle}")
        return m

    def group(self, handle: int) -> Group:
        g = self.groups.get(handle)
        if g is None:
            raise MatchError(MatchErrorCode.ENTRY_NOT_FOUND, f"action profile {self.name!r} has no group {handle}")
        return g

    # --- members ----------------------------------------------------------------------------------------------

    def add_member(self, action: str, data: tuple | list = ()) -> int:
        info, fn, d = self._resolve(action, data)
        h = self._free(self.members)
        self.members[h] = Member(h, action, d, fn, info.id)
        return h

    def modify_member(self, handle: int, action: str, data: tuple | list = ()) -> None:
        m = self.member(handle)
        info, fn, d = self._resolve(action, data)
        m.action, m.data, m.fn, m.aid = action, d, fn, info.id
        for t in self.tables:
            for e in t.entries:
                if id(e) in m.entries:
                    self._copy(m, e)

    def delete_member(self, handle: int) -> None:
        m = self.member(handle)
        if m.entries or m.groups:
            raise MatchError(MatchErrorCode.INVALID_VALUE, f"member {handle} of {self.name!r} is still used")
        del self.members[handle]

    # --- groups -----------------------------------------------------------------------------------------------

    def create_group(self) -> int:
        """A new group (BMv2 makes one in a profile without selector too; no table entry can use it there)."""
        h = self._free(self.groups)
        self.groups[h] = Group(h, self)
        return h

    def delete_group(self, handle: int) -> None:
        g = self.group(handle)
        if g.entries:
            raise MatchError(MatchErrorCode.INVALID_VALUE, f"group {handle} of {self.name!r} is still used")
        for mh in g.members:
            self.members[mh].groups.discard(handle)
        del self.groups[handle]

    def add_to_group(self, group: int, member: int) -> None:
        g, m = self.group(group), self.member(member)
        if member in g.members:
            raise MatchError(MatchErrorCode.INVALID_VALUE, f"member {member} already in group {group}")
        g.members.append(member)
        g.members.sort()
        m.groups.add(group)

    def remove_from_group(self, group: int, member: int) -> None:
        g, m = self.group(group), self.member(member)
        if member not in g.members:
            raise MatchError(MatchErrorCode.INVALID_VALUE, f"member {member} not in group {group}")
        g.members.remove(member)
        m.groups.discard(group)

    # --- table entries ----------------------------------------------------------------------------------------

    @staticmethod
    def _copy(m: Member, e: Entry) -> None:
        e.action, e.data, e.fn, e.aid = m.action, m.data, m.fn, m.aid

    def _unlink(self, e: Entry) -> None:
        if e.group is not None:
            e.group.entries.discard(id(e))
            e.group = None
        for m in self.members.values():
            m.entries.discard(id(e))

    def point(self, e: Entry, member: int | None = None, group: int | None = None) -> None:
        """Make table entry `e` run member `member` or group `group` (BMv2 refuses an empty group)."""
        if group is not None:
            g = self.group(group)
            if not g.members:
                raise MatchError(MatchErrorCode.INVALID_VALUE, f"group {group} of {self.name!r} is empty")
            self._unlink(e)
            e.group = g
            g.entries.add(id(e))
            self._copy(self.members[g.members[0]], e)  # what a read shows before a packet picks
        else:
            assert member is not None
            m = self.member(member)
            self._unlink(e)
            self._copy(m, e)
            m.entries.add(id(e))

    def insert(self, table: MatchTable, key: tuple, priority: int = 0, *, member: int | None = None,
               group: int | None = None) -> Entry:
        """An entry of `table` (which this profile implements) pointing to a member or a group."""
        if group is not None:
            self.group(group)
            first = self.groups[group].members
            if not first:
                raise MatchError(MatchErrorCode.INVALID_VALUE, f"group {group} of {self.name!r} is empty")
            m = self.members[first[0]]
        else:
            assert member is not None
            m = self.member(member)
        e = table.insert(key, m.action, m.data, priority)
        self.point(e, member, group)
        return e

    def forget(self, e: Entry) -> None:
        """Table entry `e` is being deleted."""
        self._unlink(e)

    def reset(self) -> None:
        self.members.clear()
        self.groups.clear()
