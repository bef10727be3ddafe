"""Meters through P4Runtime, checked on packets: MeterEntry on an indexed meter, a TableEntry's meter_config and
DirectMeterEntry on a direct meter (tests/compiler/p4/meters.p4), with BMv2's colours and PI's refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import grpc
import pytest
from finsy.proto import p4r, rpc_code

from compiler import compile_file
from switch.runtime import P4RuntimeServer
from switch.v1model.switch import V1Switch

from .conftest import CPU_PORT, Client, rpc_error, update, write_errors

Code = rpc_code.Code
INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE
PROGRAM = Path(__file__).parents[2] / "compiler" / "p4" / "meters.p4"
DST = bytes.fromhex("000000000001")
GREEN, YELLOW, RED = 0, 1, 2


@pytest.fixture(scope="module")
def compiled():
    return compile_file(PROGRAM)


@pytest.fixture
def meters(compiled) -> Iterator[tuple[Client, V1Switch]]:
    sw = V1Switch(drop_port=511, cpu_port=CPU_PORT, device_id=0)
    srv = P4RuntimeServer(sw, device_id=0, cpu_port=CPU_PORT)
    port = srv.start("127.0.0.1:0")
    c = Client(port, compiled.p4info)
    c.set_pipeline(json.dumps(compiled.json).encode())
    for m in sw.meters.values():  # a stopped clock: tokens come back only when a test moves it
        m.clock = _Clock(m.origin)
    try:
        yield c, sw
    finally:
        c.close()
        srv.stop(0)


class _Clock:
    def __init__(self, t: int) -> None:
        self.t = t

    def __call__(self) -> int:
        return self.t


def meter_id(c: Client, name: str) -> int:
    return c._find(c.p4info.meters, name).preamble.id


def config(cir: int, cburst: int, pir: int, pburst: int) -> p4r.MeterConfig:
    return p4r.MeterConfig(cir=cir, cburst=cburst, pir=pir, pburst=pburst)


def frame(ether_type: int, dst: bytes = DST, pad: int = 50) -> bytes:
    return dst + bytes(6) + ether_type.to_bytes(2, "big") + bytes(pad)


def colours(sw: V1Switch, f: bytes, n: int) -> list[tuple[int, int] | None]:
    """(indexed meter colour, direct meter colour) per packet, None when dropped."""
    out = []
    for _ in range(n):
        r = sw.process(0, f)
        out.append((r[0][1][11], r[0][1][10]) if r else None)
    return out


def forward_entry(c: Client, meter: p4r.MeterConfig | None = None) -> p4r.TableEntry:
    te = p4r.TableEntry(table_id=c.table_id("dmac"), match=[p4r.FieldMatch(field_id=1, exact=p4r.FieldMatch.Exact(
        value=DST))])
    te.action.action.action_id = c.action_id("forward")
    te.action.action.params.add(param_id=1, value=b"\x02")
    if meter is not None:
        te.meter_config.CopyFrom(meter)
    return te


def test_indexed_meter_colours_packets_by_cell(meters) -> None:
    c, sw = meters
    mid = meter_id(c, "per_type")
    c.write(update(INSERT, table_entry=forward_entry(c)))
    # 1 packet/s committed with a burst of 2, peak burst 3: green, green, yellow, then red
    c.write(update(MODIFY, meter_entry=p4r.MeterEntry(meter_id=mid, index=p4r.Index(index=1),
                                                      config=config(1, 2, 1, 3))))
    assert [x[0] for x in colours(sw, frame(0x0801), 5)] == [GREEN, GREEN, YELLOW, RED, RED]
    assert [x[0] for x in colours(sw, frame(0x0802), 3)] == [GREEN] * 3  # another cell, unconfigured
    # one second later each bucket has one token more: one packet passes both, green; the next is red
    sw.meters["I.per_type"].clock.t += 1_000_000
    assert [x[0] for x in colours(sw, frame(0x0801), 2)] == [GREEN, RED]
    [e] = c.read(p4r.Entity(meter_entry=p4r.MeterEntry(meter_id=mid, index=p4r.Index(index=1))))
    assert e.meter_entry.config == config(1, 2, 1, 3)
    cells = c.read(p4r.Entity(meter_entry=p4r.MeterEntry(meter_id=mid)))
    assert [x.meter_entry.HasField("config") for x in cells] == [i == 1 for i in range(16)]
    # MODIFY without a config resets the cell: green again, and it reads back without config
    c.write(update(MODIFY, meter_entry=p4r.MeterEntry(meter_id=mid, index=p4r.Index(index=1))))
    assert [x[0] for x in colours(sw, frame(0x0801), 4)] == [GREEN] * 4
    [e] = c.read(p4r.Entity(meter_entry=p4r.MeterEntry(meter_id=mid, index=p4r.Index(index=1))))
    assert not e.meter_entry.HasField("config")


def test_direct_meter_colours_hits_and_drops_red(meters) -> None:
    c, sw = meters
    # bytes: a 64-byte frame against bursts of 128 (committed) and 192 (peak): green, green, yellow, red (dropped)
    c.write(update(INSERT, table_entry=forward_entry(c, config(1, 128, 1000, 192))))
    assert [x[1] if x else None for x in colours(sw, frame(0x0801), 4)] == [GREEN, GREEN, YELLOW, None]
    requested = p4r.TableEntry(table_id=c.table_id("dmac"), meter_config=p4r.MeterConfig())
    [e] = c.read(p4r.Entity(table_entry=requested))
    assert e.table_entry.meter_config == config(1, 128, 1000, 192)
    [d] = c.read(p4r.Entity(direct_meter_entry=p4r.DirectMeterEntry(
        table_entry=p4r.TableEntry(table_id=c.table_id("dmac")))))
    assert d.direct_meter_entry.config == config(1, 128, 1000, 192)
    # a new config refills the buckets (BMv2 set_rate: tokens = burst)
    c.write(update(MODIFY, direct_meter_entry=p4r.DirectMeterEntry(table_entry=forward_entry(c),
                                                                   config=config(1, 64, 1, 64))))
    assert [x[1] if x else None for x in colours(sw, frame(0x0801), 2)] == [GREEN, None]
    # the indexed meter of the same packets stayed unconfigured: green throughout
    c.write(update(MODIFY, direct_meter_entry=p4r.DirectMeterEntry(table_entry=forward_entry(c))))
    assert colours(sw, frame(0x0801), 2) == [(GREEN, GREEN)] * 2


def test_meter_refusals_as_pi(meters) -> None:
    c, sw = meters
    mid = meter_id(c, "per_type")
    cell = p4r.MeterEntry(meter_id=mid, index=p4r.Index(index=0), config=config(1, 1, 1, 1))
    cases = [
        (INSERT, cell, Code.INVALID_ARGUMENT),
        (DELETE, cell, Code.INVALID_ARGUMENT),
        (MODIFY, p4r.MeterEntry(meter_id=mid, config=config(1, 1, 1, 1)), Code.UNIMPLEMENTED),  # no index
        (MODIFY, p4r.MeterEntry(meter_id=mid, index=p4r.Index(index=-1)), Code.INVALID_ARGUMENT),
        (MODIFY, p4r.MeterEntry(meter_id=mid, index=p4r.Index(index=16)), Code.UNKNOWN),
        (MODIFY, p4r.MeterEntry(meter_id=mid, index=p4r.Index(index=0), config=config(-2, 1, 1, 1)),
         Code.INVALID_ARGUMENT),
        (MODIFY, p4r.MeterEntry(meter_id=mid, index=p4r.Index(index=0), config=config(5, 1, 1, 1)), Code.UNKNOWN),
        (MODIFY, p4r.MeterEntry(meter_id=mid, index=p4r.Index(index=0), config=config(1, 1 << 32, 1, 1)),
         Code.UNIMPLEMENTED),
        (MODIFY, p4r.MeterEntry(meter_id=mid + 1, index=p4r.Index(index=0)), Code.INVALID_ARGUMENT),
    ]
    errors = write_errors(rpc_error(c.write, *[update(k, meter_entry=e) for k, e, _ in cases]))
    assert [code for code, _ in errors] == [want for _, _, want in cases]
    # a direct meter of an entry that does not exist, and a meter counter request
    err = rpc_error(c.write, update(MODIFY, direct_meter_entry=p4r.DirectMeterEntry(table_entry=forward_entry(c))))
    assert write_errors(err)[0][0] == Code.INVALID_ARGUMENT
    te = forward_entry(c)
    te.meter_counter_data.green.packet_count = 1
    assert write_errors(rpc_error(c.write, update(INSERT, table_entry=te)))[0][0] == Code.UNIMPLEMENTED
    assert sw.tables["I.dmac"].entries == []
    assert rpc_error(c.read, p4r.Entity(meter_entry=p4r.MeterEntry(
        meter_id=mid, index=p4r.Index(index=99)))).code() == grpc.StatusCode.UNKNOWN
