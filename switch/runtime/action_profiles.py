"""ActionProfileMember, ActionProfileGroup and indirect table entries, as PI's action profile manager programs BMv2
(proto/frontend/src/action_prof_mgr.cpp, one target call per member added to or removed from a group).

A member id maps to BMv2 member handles: the first made with the member, and, for a member of weight w in some
group, copies 2..w made when first needed (PI's weighted members: BMv2 groups hold a member once, so weight is
copies). A group's update walks its old and new members in member-id order, removing then adding copies; a group's
deletion drops the copies no group needs any more. An entry of an indirect table names a member id or a group id;
one-shot action sets, watch ports' liveness and a default action for an indirect table are not implemented (the
last is PI's INVALID_ARGUMENT).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from finsy.proto import p4i, p4r

from switch.errors import MatchError
from switch.runtime import codec
from switch.runtime.p4info import ACTION, ACTION_PROFILE, TableInfo
from switch.runtime.status import Code, P4RuntimeError, invalid

if TYPE_CHECKING:
    from switch.runtime.device import Device
    from switch.sim.action_profiles import ActionProfile


@dataclass
class _Member:
    action: p4r.Action
    name: str
    data: list[int]
    handles: list[int] = field(default_factory=list)
    weight_counts: dict[int, int] = field(default_factory=dict)   # weight → groups using the member at that weight


@dataclass
class _Group:
    handle: int
    max_size: int
    members: dict[int, tuple[int, p4r.ActionProfileGroup.Member]] = field(default_factory=dict)  # id → (weight, as sent)


@dataclass
class ProfileState:
    """One P4Info action profile: its engine object and the controller's ids."""

    id: int
    name: str
    info: p4i.ActionProfile
    engine: ActionProfile
    members: dict[int, _Member] = field(default_factory=dict)
    groups: dict[int, _Group] = field(default_factory=dict)

    @property
    def max_group_size(self) -> int:
        return self.info.max_group_size


def states(device: Device, p4info: p4i.P4Info) -> dict[int, ProfileState]:
    return {ap.preamble.id: ProfileState(ap.preamble.id, ap.preamble.name, ap,
                                         device.switch.action_profiles[ap.preamble.name])
            for ap in p4info.action_profiles if ap.preamble.name in device.switch.action_profiles}


def _profile(device: Device, profile_id: int) -> ProfileState:
    if not device.index.is_valid_id(profile_id, ACTION_PROFILE):
        raise invalid("Invalid P4 id")
    state = device.action_profiles.get(profile_id)
    if state is None:
        raise P4RuntimeError(Code.INTERNAL, f"action profile {profile_id} is not in the device config")
    return state


def _action(device: Device, state: ProfileState, action: p4r.Action) -> tuple[str, list[int]]:
    if not device.index.is_valid_id(action.action_id, ACTION):
        raise invalid("Invalid P4 id")
    allowed = {a for t in state.info.table_ids if t in device.index.tables
               for a in device.index.tables[t].action_scopes}
    if action.action_id not in allowed:
        raise invalid("Invalid action for action profile")
    info = device.index.actions[action.action_id]
    return info.name, codec.action_data(info, action)


def _target(call: Any, message: str) -> Any:
    try:
        return call()
    except MatchError:
        raise P4RuntimeError(Code.UNKNOWN, message) from None


# --- members ---------------------------------------------------------------------------------------------------

def member_write(device: Device, update_type: int, m: p4r.ActionProfileMember) -> None:
    state = _profile(device, m.action_profile_id)
    ap = state.engine
    if update_type == p4r.Update.INSERT:
        name, data = _action(device, state, m.action)
        if m.member_id in state.members:
            raise P4RuntimeError(Code.ALREADY_EXISTS, f"Duplicate member id: {m.member_id}")
        handle = _target(lambda: ap.add_member(name, data), "Error when creating member on target")
        state.members[m.member_id] = _Member(m.action, name, data, [handle])
    elif update_type == p4r.Update.MODIFY:
        name, data = _action(device, state, m.action)
        member = state.members.get(m.member_id)
        if member is None:
            raise P4RuntimeError(Code.NOT_FOUND, f"Member id does not exist: {m.member_id}")
        for h in member.handles:
            _target(lambda h=h: ap.modify_member(h, name, data), "Error when modifying member on target")
        member.action, member.name, member.data = m.action, name, data
    elif update_type == p4r.Update.DELETE:
        member = state.members.get(m.member_id)
        if member is None:
            raise P4RuntimeError(Code.NOT_FOUND, f"Member id does not exist: {m.member_id}")
        for h in member.handles:
            _target(lambda h=h: ap.delete_member(h), "Error when deleting member on target")
        del state.members[m.member_id]
    else:
        raise invalid("Invalid update type")


def _read(device: Device, profile_id: int, wanted: int, kind: str, items: Any, out: list[p4r.Entity],
          message: Any) -> None:
    """Reads of members or groups (`kind`): of one profile or all (profile id 0), one id or all (id 0); an id named
    in a named profile that does not hold it is NOT_FOUND."""
    for pid in [profile_id] if profile_id else list(device.action_profiles):
        state = _profile(device, pid)
        held = items(state)
        for i in sorted(held):
            if not wanted or i == wanted:
                out.append(message(pid, i, held[i]))
        if wanted and profile_id and wanted not in held:
            raise P4RuntimeError(Code.NOT_FOUND, f"{kind} id does not exist: {wanted}")


def member_read(device: Device, m: p4r.ActionProfileMember, out: list[p4r.Entity]) -> None:
    def message(pid: int, mid: int, member: _Member) -> p4r.Entity:
        return p4r.Entity(action_profile_member=p4r.ActionProfileMember(action_profile_id=pid, member_id=mid,
                                                                         action=member.action))
    _read(device, m.action_profile_id, m.member_id, "Member", lambda st: st.members, out, message)


# --- groups ----------------------------------------------------------------------------------------------------

def _set_members(state: ProfileState, group_id: int, g: p4r.ActionProfileGroup) -> None:
    """PI's group_update_members with BMv2's individual adds and removes."""
    total = 0
    for gm in g.members:
        if gm.weight <= 0:
            raise invalid("Member weight must be a positive integer value")
        total += gm.weight
    group = state.groups[group_id]
    limit = group.max_size or state.max_group_size
    if limit > 0 and total > limit:
        raise P4RuntimeError(Code.RESOURCE_EXHAUSTED, "Sum of member weights exceeds maximum group size")
    new: dict[int, tuple[int, p4r.ActionProfileGroup.Member]] = {}
    for gm in g.members:
        if gm.member_id not in state.members:
            raise P4RuntimeError(Code.NOT_FOUND, f"Member id does not exist: {gm.member_id}")
        if gm.member_id in new:
            raise invalid(f"Duplicate member id {gm.member_id} for group {group_id}, use weights instead")
        new[gm.member_id] = (gm.weight, gm)
    ap = state.engine
    for mid in sorted(set(group.members) | set(new)):
        member = state.members[mid]
        cur = group.members.get(mid, (0, None))[0]
        want = new.get(mid, (0, None))[0]
        while len(member.handles) < want:  # PI's create_missing_weighted_members
            member.handles.append(_target(lambda: ap.add_member(member.name, member.data),
                                          "Error when creating member on target"))
        if cur > 0:
            member.weight_counts[cur] -= 1
        for i in range(cur - 1, want - 1, -1):
            _target(lambda i=i: ap.remove_from_group(group.handle, member.handles[i]),
                    "Error when removing member from group on target")
        for i in range(cur, want):
            _target(lambda i=i: ap.add_to_group(group.handle, member.handles[i]),
                    "Error when adding member to group on target")
        if want > 0:
            member.weight_counts[want] = member.weight_counts.get(want, 0) + 1
    group.members = new


def _purge_copies(state: ProfileState, member: _Member) -> None:
    """PI's purge_unused_weighted_members: drop the copies beyond the largest weight still in use."""
    used = max((w for w, n in member.weight_counts.items() if n > 0), default=1)
    member.weight_counts = {w: n for w, n in member.weight_counts.items() if n > 0}
    while len(member.handles) > used:
        h = member.handles.pop()
        _target(lambda: state.engine.delete_member(h), "Error when deleting member on target")


def group_write(device: Device, update_type: int, g: p4r.ActionProfileGroup) -> None:
    state = _profile(device, g.action_profile_id)
    ap = state.engine
    if update_type == p4r.Update.INSERT:
        if g.max_size < 0:
            raise invalid("Group max_size cannot be less than 0")
        if state.max_group_size > 0 and g.max_size > state.max_group_size:
            raise invalid("Group max_size cannot exceed static max_group_size (from P4Info)")
        if g.group_id in state.groups:
            raise P4RuntimeError(Code.ALREADY_EXISTS, f"Duplicate group id: {g.group_id}")
        handle = _target(ap.create_group, "Error when creating group on target")
        state.groups[g.group_id] = _Group(handle, g.max_size)
        _set_members(state, g.group_id, g)
    elif update_type == p4r.Update.MODIFY:
        group = state.groups.get(g.group_id)
        if group is None:
            raise P4RuntimeError(Code.NOT_FOUND, f"Group id does not exist: {g.group_id}")
        if g.max_size != group.max_size:
            raise invalid("Cannot change group max_size after group creation")
        _set_members(state, g.group_id, g)
    elif update_type == p4r.Update.DELETE:
        group = state.groups.get(g.group_id)
        if group is None:
            raise P4RuntimeError(Code.NOT_FOUND, f"Group id does not exist: {g.group_id}")
        if ap.group(group.handle).entries:
            raise P4RuntimeError(Code.UNKNOWN, "Error when deleting group on target")
        for mid, (w, _gm) in group.members.items():
            member = state.members[mid]
            member.weight_counts[w] -= 1
            for h in member.handles[:w]:
                ap.remove_from_group(group.handle, h)
        _target(lambda: ap.delete_group(group.handle), "Error when deleting group on target")
        for mid in group.members:
            _purge_copies(state, state.members[mid])
        del state.groups[g.group_id]
    else:
        raise invalid("Invalid update type")


def group_read(device: Device, g: p4r.ActionProfileGroup, out: list[p4r.Entity]) -> None:
    def message(pid: int, gid: int, group: _Group) -> p4r.Entity:
        msg = p4r.ActionProfileGroup(action_profile_id=pid, group_id=gid, max_size=group.max_size)
        msg.members.extend(gm for _mid, (_w, gm) in sorted(group.members.items()))
        return p4r.Entity(action_profile_group=msg)
    _read(device, g.action_profile_id, g.group_id, "Group", lambda st: st.groups, out, message)


# --- indirect table entries ----------------------------------------------------------------------------------

def table_state(device: Device, table: TableInfo) -> ProfileState | None:
    return device.action_profiles.get(table.implementation_id) if table.implementation_id else None


def check_action(table: TableInfo, te: p4r.TableEntry, state: ProfileState | None = None) -> None:
    """PI's validate_action for the direct / indirect kinds of a TableEntry's action."""
    indirect = bool(table.implementation_id)
    if indirect and te.is_default_action:
        raise invalid(f"Cannot set / reset default action for indirect table {table.id}")
    if not te.HasField("action"):
        return
    kind = te.action.WhichOneof("type")
    if indirect and kind == "action":
        raise invalid(f"Cannot provide direct action for indirect table {table.id}")
    if not indirect and kind != "action":
        raise invalid(f"Cannot provide indirect action for direct table {table.id}")
    if kind == "action_profile_action_set":
        if state is not None and (state.members or state.groups):
            raise invalid("Invalid attempt to mix action selector programming modes")
        raise P4RuntimeError(Code.UNIMPLEMENTED, "One-shot action selector programming is not supported")
    if kind is None:
        raise invalid("Invalid action type")


def target_of(state: ProfileState, te: p4r.TableEntry) -> dict[str, int]:
    """The engine handle an indirect entry points to: {'member': h} or {'group': h} (PI: an unknown id is
    INVALID_ARGUMENT; BMv2 refuses an empty group, and a group in a table without selector)."""
    kind = te.action.WhichOneof("type")
    if kind == "action_profile_member_id":
        member = state.members.get(te.action.action_profile_member_id)
        if member is None:
            raise invalid("Invalid member / group id")
        return {"member": member.handles[0]}
    group = state.groups.get(te.action.action_profile_group_id)
    if group is None:
        raise invalid("Invalid member / group id")
    if not group.members or not state.info.with_selector:
        raise P4RuntimeError(Code.UNKNOWN, "Error when adding match entry to target")
    return {"group": group.handle}


def action_of(state: ProfileState, entry: Any) -> p4r.TableAction:
    """The TableAction a read shows for an indirect entry."""
    if entry.group is not None:
        gid = next(i for i, g in state.groups.items() if g.handle == entry.group.handle)
        return p4r.TableAction(action_profile_group_id=gid)
    for mid, member in state.members.items():
        if id(entry) in state.engine.members[member.handles[0]].entries:  # entries point at a member's first handle
            return p4r.TableAction(action_profile_member_id=mid)
    raise P4RuntimeError(Code.INTERNAL, "Cannot map member handle to member id")
