"""MeterEntry and DirectMeterEntry (and a TableEntry's meter_config), as PI's device manager and its BMv2 target
answer them (proto/frontend/src/device_mgr.cpp, behavioral-model PI/src/direct_res_spec.cpp).

A MeterConfig's rates are units per second (packets or bytes, the meter's unit) and become BMv2's units per
microsecond; committed first, then peak. MODIFY without a config (or with all four values -1) resets the cell, which
then marks every packet green; INSERT and DELETE are INVALID_ARGUMENT; a cell the target refuses (CIR above PIR) is
UNKNOWN as PI reports it. Reads give a cell's config only when it has one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from finsy.proto import p4r

from switch.errors import MatchError
from switch.runtime.p4info import DIRECT_METER, METER, TableInfo
from switch.runtime.status import Code, P4RuntimeError, invalid

if TYPE_CHECKING:
    from switch.runtime.device import Device
    from switch.sim.meters import Meter, MeterArray

MAX_BURST = 0xFFFF_FFFF


def _rates(config: p4r.MeterConfig | None) -> list[tuple[float, int]]:
    """BMv2 rates of a MeterConfig ([] = reset), validated as PI's validate_meter_spec."""
    if config is None or (config.cir, config.cburst, config.pir, config.pburst) == (-1, -1, -1, -1):
        return []
    for what, v in (("CIR", config.cir), ("CBurst", config.cburst), ("PIR", config.pir), ("PBurst", config.pburst)):
        if v < -1:
            raise invalid(f"Negative meter {what}")
    if config.cburst > MAX_BURST:
        raise P4RuntimeError(Code.UNIMPLEMENTED, "CBurst too large")
    if config.pburst > MAX_BURST:
        raise P4RuntimeError(Code.UNIMPLEMENTED, "Pburst too large")
    return [(config.cir / 1e6, config.cburst), (config.pir / 1e6, config.pburst)]


def _set(cell: Meter, rates: list[tuple[float, int]], what: str) -> None:
    if not rates:
        cell.reset()
        return
    try:
        cell.set_rates(rates)
    except MatchError:
        raise P4RuntimeError(Code.UNKNOWN, f"Error when writing {what} spec") from None


def _config(cell: Meter | None) -> p4r.MeterConfig | None:
    if cell is None or not cell.config:
        return None
    (cir, cburst), (pir, pburst) = cell.config[0], cell.config[-1]
    return p4r.MeterConfig(cir=int(cir * 1e6), cburst=cburst, pir=int(pir * 1e6), pburst=pburst)


def _check_update(update_type: int) -> None:
    if update_type == p4r.Update.UNSPECIFIED:
        raise invalid("Update type is not set")
    if update_type == p4r.Update.INSERT:
        raise invalid("INSERT update type not supported for meters")
    if update_type == p4r.Update.DELETE:
        raise invalid("DELETE update type not supported for meters")
    if update_type != p4r.Update.MODIFY:
        raise invalid("Invalid update type")


# --- indirect meters ---------------------------------------------------------------------------------------------

def _array(device: Device, meter_id: int) -> MeterArray:
    if not device.index.is_valid_id(meter_id, METER):
        raise invalid("Invalid P4 id")
    return device.switch.meters[device.index.meters[meter_id]]


def meter_write(device: Device, update_type: int, me: p4r.MeterEntry) -> None:
    array = _array(device, me.meter_id)
    if not me.HasField("index"):
        raise P4RuntimeError(Code.UNIMPLEMENTED, "Wildcard write is not supported for indirect meters yet")
    if me.index.index < 0:
        raise invalid("A negative number is not a valid index value")
    _check_update(update_type)
    rates = _rates(me.config if me.HasField("config") else None)
    if me.index.index >= array.size:
        raise P4RuntimeError(Code.UNKNOWN, "Error when writing meter spec")
    _set(array.cells[me.index.index], rates, "meter")


def _read_cells(device: Device, meter_id: int, me: p4r.MeterEntry, out: list[p4r.Entity]) -> None:
    array = _array(device, meter_id)
    if me.HasField("index"):
        if me.index.index < 0:
            raise invalid("A negative number is not a valid index value")
        if me.index.index >= array.size:
            raise P4RuntimeError(Code.UNKNOWN, "Error when reading meter spec from target")
        indices = [me.index.index]
    else:
        indices = list(range(array.size))
    for i in indices:
        msg = p4r.MeterEntry(meter_id=meter_id, index=p4r.Index(index=i))
        config = _config(array.cells[i])
        if config is not None:
            msg.config.CopyFrom(config)
        out.append(p4r.Entity(meter_entry=msg))


def meter_read(device: Device, me: p4r.MeterEntry, out: list[p4r.Entity]) -> None:
    """One cell, every cell of a meter (no index) or of every meter (meter_id 0)."""
    for meter_id in ([me.meter_id] if me.meter_id else list(device.index.meters)):
        _read_cells(device, meter_id, me, out)


# --- direct meters -----------------------------------------------------------------------------------------------

def direct_array(device: Device, table: TableInfo) -> MeterArray:
    rid = table.direct_resource(DIRECT_METER)
    if rid is None:
        raise invalid("Table has no direct meters")
    return device.switch.meters[device.index.direct_meters[rid]]


def set_entry_config(device: Device, table: TableInfo, entry: Any, config: p4r.MeterConfig) -> None:
    """A TableEntry's meter_config (INSERT / MODIFY)."""
    array = direct_array(device, table)
    _set(array.entry_cell(entry), _rates(config), "direct meter")


def entry_config(entry: Any) -> p4r.MeterConfig | None:
    return _config(entry.meter)


def direct_meter_write(device: Device, update_type: int, dme: p4r.DirectMeterEntry, table: TableInfo,
                       entry: Any) -> None:
    array = direct_array(device, table)
    _check_update(update_type)
    _set(array.entry_cell(entry), _rates(dme.config if dme.HasField("config") else None), "direct meter")
