"""ValueSetEntry: parser value sets written whole, as PI does (device_mgr.cpp): MODIFY replaces the members (INSERT
and DELETE are INVALID_ARGUMENT), more members than the set's size is RESOURCE_EXHAUSTED. A member gives each of the
set's match fields; BMv2 keeps plain values (p4c warns that it ignores `@match` kinds other than exact), so each field
is an exact match (or a ternary/LPM/range one that covers exactly one value). Reads return the members as exact
matches; value_set_id 0 reads every set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from finsy.proto import p4r

from switch.runtime.codec import decode, encode, mask_of
from switch.runtime.p4info import VALUE_SET, ValueSetInfo
from switch.runtime.status import Code, P4RuntimeError, invalid

if TYPE_CHECKING:
    from switch.runtime.device import Device


def _value_set(device: Device, vs_id: int) -> ValueSetInfo:
    if not device.index.is_valid_id(vs_id, VALUE_SET):
        raise invalid("Invalid P4 id")
    return device.index.value_sets[vs_id]


def _field_value(fm: p4r.FieldMatch, width: int) -> int:
    """The one value a member's field match stands for."""
    kind = fm.WhichOneof("field_match_type")
    if kind == "exact":
        return decode(fm.exact.value, width)
    if kind == "ternary" and decode(fm.ternary.mask, width) == mask_of(width):
        return decode(fm.ternary.value, width)
    if kind == "lpm" and fm.lpm.prefix_len == width:
        return decode(fm.lpm.value, width)
    if kind == "range" and decode(fm.range.low, width) == decode(fm.range.high, width):
        return decode(fm.range.low, width)
    if kind == "optional":
        return decode(fm.optional.value, width)
    raise P4RuntimeError(Code.UNIMPLEMENTED, "BMv2 value sets hold plain values: a member's fields must match one value "
                                             f"each, got a {kind} match")


def member_value(info: ValueSetInfo, member: p4r.ValueSetMember) -> int:
    """A member as the engine's compressed value: its fields concatenated at their widths, in P4Info order."""
    given: dict[int, p4r.FieldMatch] = {}
    for fm in member.match:
        if fm.field_id in given:
            raise invalid(f"Duplicate field id {fm.field_id} in value set member")
        given[fm.field_id] = fm
    if set(given) - {m.id for m in info.match}:
        raise invalid("Unknown field id in value set member")
    value = 0
    for m in info.match:
        fm = given.get(m.id)
        if fm is None:
            raise invalid(f"Value set member lacks field {m.name or m.id}")
        value = (value << m.bitwidth) | _field_value(fm, m.bitwidth)
    return value


def write(device: Device, update_type: int, entry: p4r.ValueSetEntry) -> None:
    info = _value_set(device, entry.value_set_id)
    if update_type != p4r.Update.MODIFY:
        raise invalid("Invalid update type for ValueSetEntry (only MODIFY)")
    values = [member_value(info, m) for m in entry.members]
    if len(set(values)) > info.size:
        raise P4RuntimeError(Code.RESOURCE_EXHAUSTED,
                             f"Value set '{info.name}' holds at most {info.size} members, got {len(set(values))}")
    device.switch.value_sets[info.name].set_members(values)


def _entry(device: Device, info: ValueSetInfo) -> p4r.Entity:
    out = p4r.ValueSetEntry(value_set_id=info.id)
    for v in sorted(device.switch.value_sets[info.name].members):
        member = out.members.add()
        shift = sum(m.bitwidth for m in info.match)
        for m in info.match:
            shift -= m.bitwidth
            fm = member.match.add()
            fm.field_id = m.id
            fm.exact.value = encode((v >> shift) & mask_of(m.bitwidth))
    return p4r.Entity(value_set_entry=out)


def read(device: Device, entry: p4r.ValueSetEntry, out: list[p4r.Entity]) -> None:
    infos = device.index.value_sets.values() if entry.value_set_id == 0 else \
        [_value_set(device, entry.value_set_id)]
    out.extend(_entry(device, info) for info in infos)
