"""P4Runtime bytestrings ↔ integers, and TableEntry match keys / actions ↔ the engine's key tuples and action data.

Validation follows PI (proto/frontend/src/device_mgr.cpp, common.cpp): a bytestring may be canonical (leading zero
bytes stripped) or padded, but its significant bits must fit the field; reads return canonical bytestrings (zero is
b"\\x00"). Don't-care matches are expressed by omitting the field, so a zero ternary mask, an LPM prefix length of 0 or
a full range given explicitly are INVALID_ARGUMENT.
"""

from __future__ import annotations

from typing import Any, Sequence

from finsy.proto import p4r

from switch.runtime.p4info import (
    MATCH_EXACT, MATCH_LPM, MATCH_OPTIONAL, MATCH_RANGE, MATCH_TERNARY, ActionInfo, TableInfo,
)
from switch.runtime.status import Code, P4RuntimeError, invalid


def decode(value: bytes, bitwidth: int) -> int:
    """A P4Runtime bytestring as an unsigned int; INVALID_ARGUMENT if it does not fit in `bitwidth` bits."""
    number = int.from_bytes(value, "big")
    if number.bit_length() > bitwidth:
        raise invalid(f"Bytestring provided does not fit within {bitwidth} bits")
    return number


def encode(number: int) -> bytes:
    """The canonical P4Runtime bytestring of a non-negative int (no leading zero bytes; zero is one zero byte)."""
    return number.to_bytes(max(1, (number.bit_length() + 7) // 8), "big")


def encode_padded(number: int, bitwidth: int) -> bytes:
    """`number` as exactly ceil(bitwidth/8) bytes."""
    return number.to_bytes((bitwidth + 7) // 8, "big")


def mask_of(bitwidth: int) -> int:
    return (1 << bitwidth) - 1


# --- match keys ----------------------------------------------------------------------------------------------------

def match_key(table: TableInfo, entry: p4r.TableEntry) -> tuple[tuple[Any, ...], int]:
    """(engine key tuple, priority) for a non-default TableEntry, validated as PI's construct_match_key."""
    if len(entry.match) > len(table.match_fields):
        raise invalid("Too many fields in match key")
    given: dict[int, p4r.FieldMatch] = {}
    for fm in entry.match:
        if fm.field_id in given:
            raise invalid(f"Duplicate field id {fm.field_id} in match key")
        given[fm.field_id] = fm
    key: list[Any] = []
    matched = 0
    for info in table.match_fields:
        fm = given.get(info.id)
        width = info.bitwidth
        if fm is None:
            if info.match_type in (MATCH_LPM, MATCH_TERNARY):
                key.append((0, 0))
            elif info.match_type == MATCH_OPTIONAL:
                key.append((0, 0) if info.ternary_in_json else (0, True))
            elif info.match_type == MATCH_RANGE:
                key.append((0, mask_of(width)))
            else:
                raise invalid("Missing non-ternary field in match key")
            continue
        matched += 1
        kind = fm.WhichOneof("field_match_type")
        expected = {MATCH_EXACT: "exact", MATCH_LPM: "lpm", MATCH_TERNARY: "ternary",
                    MATCH_RANGE: "range", MATCH_OPTIONAL: "optional"}[info.match_type]
        if kind != expected:
            raise invalid("Invalid match type")
        if info.match_type == MATCH_EXACT:
            key.append(decode(fm.exact.value, width))
        elif info.match_type == MATCH_LPM:
            value = decode(fm.lpm.value, width)
            plen = fm.lpm.prefix_len
            if plen < 0:
                raise invalid("Prefix length cannot be < 0")
            if plen > width:
                raise invalid("Prefix length cannot be > bitwidth")
            if plen == 0:
                raise invalid("Invalid reprsentation of 'don't care' LPM match, "
                              "omit match field instead of using a prefix length of 0")
            if value & mask_of(width - plen):
                raise invalid("Invalid LPM value, incorrect number of trailing zeros")
            key.append((value, plen))
        elif info.match_type == MATCH_TERNARY:
            value = decode(fm.ternary.value, width)
            mask = decode(fm.ternary.mask, width)
            if mask == 0:
                raise invalid("Invalid representation of 'don't care' ternary match, "
                              "omit match field instead of using 0 mask")
            if value & ~mask:
                raise invalid("Invalid ternary value, make sure value & mask == value")
            key.append((value, mask))
        elif info.match_type == MATCH_RANGE:
            low = decode(fm.range.low, width)
            high = decode(fm.range.high, width)
            if low == 0 and high == mask_of(width):
                raise invalid("Invalid representation of 'don't care' range match, "
                              "omit match field instead of using low=0 and high=2**bitwidth-1")
            if low > high:
                raise invalid("Invalid range value, make sure low <= high")
            key.append((low, high))
        elif info.ternary_in_json:
            key.append((decode(fm.optional.value, width), mask_of(width)))
        else:
            key.append((decode(fm.optional.value, width), False))
    if matched != len(entry.match):
        raise invalid("Unknown field in match key")
    if not table.needs_priority and entry.priority > 0:
        raise invalid("Non-zero priority for non-ternary match")
    if table.needs_priority and entry.priority == 0:
        raise invalid("Zero priority for ternary match")
    if entry.priority < 0:
        raise invalid("Negative priority")
    return tuple(key), entry.priority


def field_matches(table: TableInfo, key: Sequence[Any]) -> list[p4r.FieldMatch]:
    """The FieldMatch list of an engine key, canonical bytestrings, don't-care fields omitted (read-write symmetry)."""
    out: list[p4r.FieldMatch] = []
    for info, item in zip(table.match_fields, key):
        width = info.bitwidth
        fm = p4r.FieldMatch(field_id=info.id)
        if info.match_type == MATCH_EXACT:
            fm.exact.value = encode(item)
        elif info.match_type == MATCH_LPM:
            value, plen = item
            if plen == 0:
                continue
            fm.lpm.value = encode(value)
            fm.lpm.prefix_len = plen
        elif info.match_type == MATCH_TERNARY:
            value, mask = item
            if mask == 0:
                continue
            fm.ternary.value = encode(value)
            fm.ternary.mask = encode(mask)
        elif info.match_type == MATCH_RANGE:
            low, high = item
            if low == 0 and high == mask_of(width):
                continue
            fm.range.low = encode(low)
            fm.range.high = encode(high)
        elif info.ternary_in_json:  # an OPTIONAL field over a JSON ternary key: (value, mask)
            value, mask = item
            if mask == 0:
                continue
            fm.optional.value = encode(value)
        else:
            value, wildcard = item
            if wildcard:
                continue
            fm.optional.value = encode(value)
        out.append(fm)
    return out


# --- actions -------------------------------------------------------------------------------------------------------

def action_data(action: ActionInfo, msg: p4r.Action) -> list[int]:
    """Parameter values of an Action message in P4Info parameter order, validated as PI's construct_action_data."""
    if len(msg.params) != len(action.params):
        raise invalid("Unexpected number of action parameters")
    values: dict[int, int] = {}
    for param in msg.params:
        width = action.param_bitwidth(param.param_id)
        if width is None:
            raise invalid("Unknown action parameter")
        if param.param_id in values:
            raise invalid(f"Duplicate action parameter id {param.param_id}")
        values[param.param_id] = decode(param.value, width)
    return [values[pid] for pid, _, _ in action.params]


def action_message(action: ActionInfo, data: Sequence[int]) -> p4r.Action:
    """The Action message for an action and its engine data (canonical bytestrings)."""
    msg = p4r.Action(action_id=action.id)
    for (pid, _, _), value in zip(action.params, data):
        msg.params.add(param_id=pid, value=encode(value))
    return msg


def port_from_bytes(value: bytes) -> int:
    """A Replica's bytes `port` as an int, as PI's bytestring_to_pi_port (at most 4 bytes)."""
    if not value:
        raise invalid("Port must not be the empty string")
    if len(value) > 4:
        raise P4RuntimeError(Code.UNIMPLEMENTED, f"Got port of {len(value)} bytes, but only 4 bytes are supported")
    return int.from_bytes(value, "big")
