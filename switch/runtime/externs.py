"""CounterEntry and RegisterEntry: indexed counter and register arrays.

Counters as PI: MODIFY sets a cell (the fields the counter's unit covers), DELETE zeroes it, INSERT is
INVALID_ARGUMENT, a write without index is UNIMPLEMENTED; reads without index return every cell, counter_id 0 every
counter. Registers are an extension over real BMv2 (PI answers UNIMPLEMENTED, which `strict_bmv2` reproduces):
MODIFY writes one cell (or all cells when the index is unset), reads follow the counter wildcard rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from finsy.proto import p4d, p4i, p4r

from switch.errors import MatchError
from switch.runtime.codec import decode, encode
from switch.runtime.p4info import COUNTER, REGISTER, CounterInfo, RegisterInfo
from switch.runtime.status import Code, P4RuntimeError, from_match_error, invalid

if TYPE_CHECKING:
    from switch.runtime.device import Device

INVALID_ID = "Invalid P4 id"
MASK64 = 0xFFFF_FFFF_FFFF_FFFF


def _cells(entry: p4r.CounterEntry | p4r.RegisterEntry, size: int) -> list[int]:
    """The cell indices an entry addresses: its index (checked), or every cell when the index is unset."""
    if entry.HasField("index"):
        _check_index(entry.index.index, size)
        return [entry.index.index]
    return list(range(size))


def _check_index(index: int, size: int) -> None:
    if index < 0:
        raise invalid("A negative number is not a valid index value")
    if index >= size:
        raise P4RuntimeError(Code.OUT_OF_RANGE, f"Index {index} out of range (size {size})")


def _counter(device: Device, counter_id: int) -> CounterInfo:
    if not device.index.is_valid_id(counter_id, COUNTER):
        raise invalid(INVALID_ID)
    return device.index.counters[counter_id]


def counter_write(device: Device, update_type: int, ce: p4r.CounterEntry) -> None:
    info = _counter(device, ce.counter_id)
    if not ce.HasField("index"):
        raise P4RuntimeError(Code.UNIMPLEMENTED, "Wildcard write is not supported for indirect counters yet")
    array = device.switch.counters[info.name]
    _check_index(ce.index.index, array.size)
    index = ce.index.index
    try:
        if update_type == p4r.Update.UNSPECIFIED:
            raise invalid("Update type is not set")
        if update_type == p4r.Update.INSERT:
            raise invalid("INSERT update type not supported for counters")
        if update_type == p4r.Update.MODIFY:
            packets, nbytes = array.read(index)
            if info.unit in (p4i.CounterSpec.PACKETS, p4i.CounterSpec.BOTH):
                packets = ce.data.packet_count & MASK64
            if info.unit in (p4i.CounterSpec.BYTES, p4i.CounterSpec.BOTH):
                nbytes = ce.data.byte_count & MASK64
            array.write(index, packets, nbytes)
        elif update_type == p4r.Update.DELETE:
            array.write(index, 0, 0)
        else:
            raise invalid("Invalid update type")
    except MatchError as exc:
        raise from_match_error(exc) from None


def _counter_cells(device: Device, info: CounterInfo, ce: p4r.CounterEntry, out: list[p4r.Entity]) -> None:
    array = device.switch.counters[info.name]
    indices = _cells(ce, array.size)
    for i in indices:
        packets, nbytes = array.read(i)
        msg = p4r.CounterEntry(counter_id=info.id, index=p4r.Index(index=i))
        msg.data.packet_count, msg.data.byte_count = packets, nbytes
        out.append(p4r.Entity(counter_entry=msg))


def counter_read(device: Device, ce: p4r.CounterEntry, out: list[p4r.Entity]) -> None:
    if ce.counter_id == 0:
        for info in device.index.counters.values():
            _counter_cells(device, info, ce, out)
    else:
        _counter_cells(device, _counter(device, ce.counter_id), ce, out)


# --- registers ---------------------------------------------------------------------------------------------------

def _register(device: Device, register_id: int) -> RegisterInfo:
    if not device.index.is_valid_id(register_id, REGISTER):
        raise invalid(INVALID_ID)
    return device.index.registers[register_id]


def register_write(device: Device, update_type: int, re: p4r.RegisterEntry) -> None:
    if device.strict_bmv2:
        raise P4RuntimeError(Code.UNIMPLEMENTED, "Register writes are not supported yet")
    info = _register(device, re.register_id)
    if update_type == p4r.Update.UNSPECIFIED:
        raise invalid("Update type is not set")
    if update_type in (p4r.Update.INSERT, p4r.Update.DELETE):
        raise invalid("Only MODIFY is supported for registers")
    if update_type != p4r.Update.MODIFY:
        raise invalid("Invalid update type")
    if re.data.WhichOneof("data") != "bitstring":
        raise invalid(f"Register '{info.name}' holds bit<{info.bitwidth}>: data must be a bitstring")
    value = decode(re.data.bitstring, info.bitwidth)
    array = device.switch.registers[info.name]
    indices = _cells(re, array.size)
    try:
        for i in indices:
            array.write(i, value)
    except MatchError as exc:
        raise from_match_error(exc) from None


def _register_cells(device: Device, info: RegisterInfo, re: p4r.RegisterEntry, out: list[p4r.Entity]) -> None:
    array = device.switch.registers[info.name]
    indices = _cells(re, array.size)
    for i in indices:
        msg = p4r.RegisterEntry(register_id=info.id, index=p4r.Index(index=i),
                                data=p4d.P4Data(bitstring=encode(array.read(i))))
        out.append(p4r.Entity(register_entry=msg))


def register_read(device: Device, re: p4r.RegisterEntry, out: list[p4r.Entity]) -> None:
    if device.strict_bmv2:
        raise P4RuntimeError(Code.UNIMPLEMENTED, "Register reads are not supported yet")
    if re.register_id == 0:
        for info in device.index.registers.values():
            _register_cells(device, info, re, out)
    else:
        _register_cells(device, _register(device, re.register_id), re, out)
