"""TableEntry and DirectCounterEntry: P4Runtime writes/reads of match-action tables, validated as PI.

Default entries are written with MODIFY + `is_default_action` (empty match, priority 0; no action = reset); INSERT
and DELETE of a default entry are INVALID_ARGUMENT. Writes to a table with const entries are PERMISSION_DENIED
(P4Runtime spec §"Constant Tables"), except MODIFY of a non-const default action.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from finsy.proto import p4i, p4r

from switch.errors import MatchError
from switch.runtime import action_profiles, codec, meters
from switch.runtime.p4info import ACTION, DIRECT_COUNTER, DIRECT_METER, TABLE, TableInfo
from switch.runtime.status import Code, P4RuntimeError, from_match_error, invalid

if TYPE_CHECKING:
    from switch.runtime.device import Device

INVALID_ID = "Invalid P4 id"


@dataclass
class EntryMeta:
    """What P4Runtime stores beside an engine entry (returned on read for read-write symmetry)."""

    metadata: bytes = b""
    controller_metadata: int = 0
    idle_timeout_ns: int = 0


def table_info(device: Device, table_id: int) -> TableInfo:
    index = device.index
    if not index.is_valid_id(table_id, TABLE):
        raise invalid(INVALID_ID)
    return index.tables[table_id]


def _default_of(mt: Any) -> tuple[str, tuple[int, ...], Any]:
    d = mt.default
    if isinstance(d, tuple):  # contract form (action, data)
        return d[0], tuple(d[1]), None
    return d.action, tuple(d.data), d


def _validate_action(device: Device, table: TableInfo, te: p4r.TableEntry) -> None:
    """PI's validate_action: indirect tables, const default actions, action membership and scope."""
    if table.implementation_id and te.is_default_action:
        action_profiles.check_action(table, te)
    if te.is_default_action and table.const_default_action_id:
        raise P4RuntimeError(Code.PERMISSION_DENIED, f"Cannot set / reset default action for table {table.name} "
                                                     "which has a const default action")
    action_profiles.check_action(table, te, action_profiles.table_state(device, table))
    if not te.HasField("action") or table.implementation_id:
        return
    action_id = te.action.action.action_id
    if not device.index.is_valid_id(action_id, ACTION):
        raise invalid(INVALID_ID)
    scope = table.action_scopes.get(action_id)
    if scope is None:
        raise invalid("Invalid action for table")
    if scope == p4i.ActionRef.TABLE_ONLY and te.is_default_action:
        raise P4RuntimeError(Code.PERMISSION_DENIED, "Cannot use TABLE_ONLY action as default action")
    if scope == p4i.ActionRef.DEFAULT_ONLY and not te.is_default_action:
        raise P4RuntimeError(Code.PERMISSION_DENIED, "Cannot use DEFAULT_ONLY action in table entry")


def _action(device: Device, te: p4r.TableEntry) -> tuple[str, list[int]]:
    info = device.index.actions[te.action.action.action_id]
    return info.name, codec.action_data(info, te.action.action)


def _check_resources(device: Device, table: TableInfo, te: p4r.TableEntry) -> None:
    if te.HasField("meter_config") or te.HasField("meter_counter_data"):
        if table.direct_resource(DIRECT_METER) is None:
            raise invalid("Table has no direct meters")
        if te.HasField("meter_counter_data"):
            raise P4RuntimeError(Code.UNIMPLEMENTED, "Meter counters are not supported")
        meters._rates(te.meter_config)  # validated before anything changes
    if te.HasField("counter_data") and table.direct_resource(DIRECT_COUNTER) is None:
        raise invalid("Table has no direct counters")
    if te.idle_timeout_ns < 0:
        raise invalid("idle_timeout_ns must be a positive value")
    if te.idle_timeout_ns > 0 and not table.supports_idle_timeout:
        raise invalid("idle_timeout_ns must be set to 0 for tables which do not support idle timeout")
    if te.idle_timeout_ns > 0:
        raise P4RuntimeError(Code.UNIMPLEMENTED, "Entry ageing (idle timeout) is not supported")


def _key(table: TableInfo, te: p4r.TableEntry) -> tuple[tuple, int]:
    if te.is_default_action:
        if len(te.match):
            raise invalid("Non-empty key for default entry")
        if te.priority != 0:
            raise invalid("Non-zero priority for default entry")
        return (), 0
    return codec.match_key(table, te)


def _set_counters(device: Device, table: TableInfo, entry: Any, data: p4r.CounterData) -> None:
    unit = device.index.direct_counters[table.direct_resource(DIRECT_COUNTER)].unit
    if unit in (p4i.CounterSpec.PACKETS, p4i.CounterSpec.BOTH):
        entry.packets = data.packet_count & 0xFFFF_FFFF_FFFF_FFFF
    if unit in (p4i.CounterSpec.BYTES, p4i.CounterSpec.BOTH):
        entry.bytes = data.byte_count & 0xFFFF_FFFF_FFFF_FFFF


def write(device: Device, update_type: int, te: p4r.TableEntry) -> None:
    """One TableEntry update (INSERT / MODIFY / DELETE)."""
    table = table_info(device, te.table_id)
    if te.HasField("time_since_last_hit"):
        raise invalid("has_time_since_last_hit must not be set in WriteRequest")
    if update_type == p4r.Update.UNSPECIFIED:
        raise invalid("Update type is not set")
    if update_type not in (p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE):
        raise invalid("Invalid update type")
    mt = device.switch.tables[table.name]
    try:
        if update_type == p4r.Update.INSERT:
            _insert(device, table, mt, te)
        elif update_type == p4r.Update.MODIFY:
            _modify(device, table, mt, te)
        else:
            _delete(device, table, mt, te)
    except MatchError as exc:
        raise from_match_error(exc) from None


def _refuse_const(table: TableInfo) -> None:
    if table.is_const:
        raise P4RuntimeError(Code.PERMISSION_DENIED,
                             f"Table {table.name} has const entries: it cannot be modified at runtime")


def _insert(device: Device, table: TableInfo, mt: Any, te: p4r.TableEntry) -> None:
    if te.is_default_action:
        raise invalid("Cannot use INSERT for default entry")
    if not te.HasField("action"):
        raise invalid("'action' field must be set")
    key, priority = _key(table, te)
    _validate_action(device, table, te)
    profile = action_profiles.table_state(device, table)
    name, data = _action(device, te) if profile is None else ("", [])
    _check_resources(device, table, te)
    _refuse_const(table)
    if mt.lookup_entry(key, priority) is not None:
        raise P4RuntimeError(Code.ALREADY_EXISTS, "Match entry exists, use MODIFY if you wish to change action")
    if profile is not None:
        entry = profile.engine.insert(mt, key, priority, **action_profiles.target_of(profile, te))
    else:
        entry = mt.insert(key, name, data, priority)
    if te.HasField("counter_data"):
        _set_counters(device, table, entry, te.counter_data)
    if te.HasField("meter_config"):
        meters.set_entry_config(device, table, entry, te.meter_config)
    device.entry_meta[entry] = EntryMeta(bytes(te.metadata), te.controller_metadata, te.idle_timeout_ns)


def _modify(device: Device, table: TableInfo, mt: Any, te: p4r.TableEntry) -> None:
    key, priority = _key(table, te)
    _validate_action(device, table, te)
    profile = action_profiles.table_state(device, table)
    if profile is not None:
        if not te.HasField("action"):
            raise invalid("'action' field must be set for non-default entries")
        _check_resources(device, table, te)
        _refuse_const(table)
        entry = mt.lookup_entry(key, priority)
        if entry is None:
            raise P4RuntimeError(Code.NOT_FOUND, "Cannot find match entry")
        profile.engine.point(entry, **action_profiles.target_of(profile, te))
        device.entry_meta[entry] = EntryMeta(bytes(te.metadata), te.controller_metadata, te.idle_timeout_ns)
        if te.HasField("counter_data"):
            _set_counters(device, table, entry, te.counter_data)
        if te.HasField("meter_config"):
            meters.set_entry_config(device, table, entry, te.meter_config)
        return
    action = _action(device, te) if te.HasField("action") else None
    if action is None and not te.is_default_action:
        raise invalid("'action' field must be set for non-default entries")
    _check_resources(device, table, te)
    if te.is_default_action:
        if action is None:
            mt.reset_default()
        else:
            mt.set_default(*action)
        _, _, entry = _default_of(mt)
        meta = EntryMeta() if action is None else EntryMeta(bytes(te.metadata), te.controller_metadata, 0)
        device.default_meta[table.id] = meta
    else:
        _refuse_const(table)
        if mt.lookup_entry(key, priority) is None:
            raise P4RuntimeError(Code.NOT_FOUND, "Cannot find match entry")
        entry = mt.modify(key, action[0], action[1], priority)
        device.entry_meta[entry] = EntryMeta(bytes(te.metadata), te.controller_metadata, te.idle_timeout_ns)
    if te.HasField("counter_data") and entry is not None:
        _set_counters(device, table, entry, te.counter_data)
    if te.HasField("meter_config") and entry is not None:
        meters.set_entry_config(device, table, entry, te.meter_config)


def _delete(device: Device, table: TableInfo, mt: Any, te: p4r.TableEntry) -> None:
    if te.is_default_action:
        raise invalid("Cannot use DELETE for default entry")
    key, priority = _key(table, te)
    _refuse_const(table)
    entry = mt.lookup_entry(key, priority)
    if entry is None:
        raise P4RuntimeError(Code.NOT_FOUND, "Cannot find match entry")
    profile = action_profiles.table_state(device, table)
    if profile is not None:
        profile.engine.forget(entry)
    mt.delete(key, priority)
    device.entry_meta.pop(entry, None)


# --- reads -------------------------------------------------------------------------------------------------------

def _action_id(device: Device, name: str) -> int | None:
    return device.index.names.get((ACTION, name))


def _entry_message(device: Device, table: TableInfo, entry: Any, requested: p4r.TableEntry) -> p4r.TableEntry:
    msg = p4r.TableEntry(table_id=table.id)
    msg.match.extend(codec.field_matches(table, entry.key))
    if table.needs_priority:
        msg.priority = entry.priority
    profile = action_profiles.table_state(device, table)
    action_id = _action_id(device, entry.action)
    if profile is not None:
        msg.action.CopyFrom(action_profiles.action_of(profile, entry))
    elif action_id is not None:
        msg.action.action.CopyFrom(codec.action_message(device.index.actions[action_id], entry.data))
    if getattr(entry, "is_const", False) or table.is_const:
        msg.is_const = True
    meta = device.entry_meta.get(entry)
    if meta is not None:
        msg.metadata = meta.metadata
        msg.controller_metadata = meta.controller_metadata
        msg.idle_timeout_ns = meta.idle_timeout_ns
    if requested.HasField("counter_data") and table.direct_resource(DIRECT_COUNTER) is not None:
        msg.counter_data.packet_count = entry.packets
        msg.counter_data.byte_count = entry.bytes
    config = meters.entry_config(entry)
    if requested.HasField("meter_config") and config is not None:
        msg.meter_config.CopyFrom(config)
    return msg


def _default_message(device: Device, table: TableInfo, mt: Any, requested: p4r.TableEntry) -> p4r.TableEntry:
    if requested.HasField("time_since_last_hit"):
        raise invalid("Default table entries do not support entry ageing, do not set "
                      "'time_since_last_hit' in your ReadRequest")
    action, data, entry = _default_of(mt)
    msg = p4r.TableEntry(table_id=table.id, is_default_action=True)
    action_id = _action_id(device, action)
    if action_id is not None:
        msg.action.action.CopyFrom(codec.action_message(device.index.actions[action_id], data))
    meta = device.default_meta.get(table.id)
    if meta is not None:
        msg.metadata = meta.metadata
        msg.controller_metadata = meta.controller_metadata
    if requested.HasField("counter_data") and entry is not None and table.direct_resource(DIRECT_COUNTER):
        msg.counter_data.packet_count = entry.packets
        msg.counter_data.byte_count = entry.bytes
    return msg


def _read_one(device: Device, table: TableInfo, requested: p4r.TableEntry, out: list[p4r.Entity]) -> None:
    mt = device.switch.tables[table.name]
    if requested.is_default_action:
        out.append(p4r.Entity(table_entry=_default_message(device, table, mt, requested)))
        return
    if requested.HasField("time_since_last_hit") and not table.supports_idle_timeout:
        raise invalid("Do not set time_since_last_hit for a ReadRequest if the table does not support idle "
                      "timeout; yes, that includes wildcard reads")
    if len(requested.match):
        key, priority = codec.match_key(table, requested)
        try:
            entry = mt.lookup_entry(key, priority)
        except MatchError as exc:
            raise from_match_error(exc) from None
        entries = [] if entry is None else [entry]
    else:
        entries = mt.entries
    for entry in entries:
        out.append(p4r.Entity(table_entry=_entry_message(device, table, entry, requested)))


def read(device: Device, requested: p4r.TableEntry, out: list[p4r.Entity]) -> None:
    """Entries matching a (possibly wildcard) TableEntry: table_id 0 = all tables, empty match = all entries."""
    if requested.table_id == 0:
        for table in device.index.tables.values():
            _read_one(device, table, requested, out)
    else:
        _read_one(device, table_info(device, requested.table_id), requested, out)


# --- direct meters -----------------------------------------------------------------------------------------------

def _direct_meter_table(device: Device, dme: p4r.DirectMeterEntry) -> TableInfo:
    if not dme.HasField("table_entry"):
        raise invalid("Missing table_entry field in DirectMeterEntry")
    table = table_info(device, dme.table_entry.table_id)
    meters.direct_array(device, table)
    return table


def direct_meter_write(device: Device, update_type: int, dme: p4r.DirectMeterEntry) -> None:
    """MODIFY sets (or, without config, resets) the direct meter of one entry."""
    table = _direct_meter_table(device, dme)
    meters.direct_meter_write(device, update_type, dme, table, _handle(device, table, dme.table_entry))


def direct_meter_read(device: Device, dme: p4r.DirectMeterEntry, out: list[p4r.Entity]) -> None:
    """Direct meter of one entry, or of every entry of the table when the match is empty."""
    if dme.HasField("table_entry") and dme.table_entry.table_id == 0:
        raise P4RuntimeError(Code.UNIMPLEMENTED, "Reading all direct meters for ALL tables is not supported yet")
    table = _direct_meter_table(device, dme)
    te = dme.table_entry
    pairs: list[tuple[p4r.TableEntry, Any]] = []
    if len(te.match) or te.is_default_action:
        pairs.append((te, _handle(device, table, te)))
    else:
        for entry in device.switch.tables[table.name].entries:
            key = p4r.TableEntry(table_id=table.id)
            key.match.extend(codec.field_matches(table, entry.key))
            if table.needs_priority:
                key.priority = entry.priority
            pairs.append((key, entry))
    for key, entry in pairs:
        msg = p4r.DirectMeterEntry()
        msg.table_entry.CopyFrom(key)
        config = meters.entry_config(entry)
        if config is not None:
            msg.config.CopyFrom(config)
        out.append(p4r.Entity(direct_meter_entry=msg))


# --- direct counters ---------------------------------------------------------------------------------------------

def _direct_counter_table(device: Device, dce: p4r.DirectCounterEntry) -> TableInfo:
    if not dce.HasField("table_entry"):
        raise invalid("Missing table_entry field in DirectCounterEntry")
    table = table_info(device, dce.table_entry.table_id)
    if table.direct_resource(DIRECT_COUNTER) is None:
        raise invalid("Table has no direct counters")
    return table


def _handle(device: Device, table: TableInfo, te: p4r.TableEntry) -> Any:
    mt = device.switch.tables[table.name]
    if te.is_default_action:
        _key(table, te)
        return _default_of(mt)[2]
    key, priority = codec.match_key(table, te)
    entry = mt.lookup_entry(key, priority)
    if entry is None:
        raise invalid("Cannot map table entry to handle")
    return entry


def direct_counter_write(device: Device, update_type: int, dce: p4r.DirectCounterEntry) -> None:
    """MODIFY sets the direct counter of one entry, DELETE zeroes it; INSERT is INVALID_ARGUMENT."""
    table = _direct_counter_table(device, dce)
    entry = _handle(device, table, dce.table_entry)
    if update_type == p4r.Update.UNSPECIFIED:
        raise invalid("Update type is not set")
    if update_type == p4r.Update.INSERT:
        raise invalid("INSERT update type not supported for counters")
    if update_type == p4r.Update.MODIFY:
        _set_counters(device, table, entry, dce.data)
    elif update_type == p4r.Update.DELETE:
        entry.packets = entry.bytes = 0
    else:
        raise invalid("Invalid update type")


def direct_counter_read(device: Device, dce: p4r.DirectCounterEntry, out: list[p4r.Entity]) -> None:
    """Direct counter of one entry, or of every entry of the table when the match is empty."""
    if dce.HasField("table_entry") and dce.table_entry.table_id == 0:
        raise P4RuntimeError(Code.UNIMPLEMENTED,
                             "Reading all direct counters for ALL tables is not supported yet")
    table = _direct_counter_table(device, dce)
    te = dce.table_entry
    if len(te.match) or te.is_default_action:
        entry = _handle(device, table, te)
        msg = p4r.DirectCounterEntry()
        msg.table_entry.CopyFrom(te)
        msg.data.packet_count, msg.data.byte_count = entry.packets, entry.bytes
        out.append(p4r.Entity(direct_counter_entry=msg))
        return
    for entry in device.switch.tables[table.name].entries:
        msg = p4r.DirectCounterEntry()
        msg.table_entry.table_id = table.id
        msg.table_entry.match.extend(codec.field_matches(table, entry.key))
        if table.needs_priority:
            msg.table_entry.priority = entry.priority
        msg.data.packet_count, msg.data.byte_count = entry.packets, entry.bytes
        out.append(p4r.Entity(direct_counter_entry=msg))
