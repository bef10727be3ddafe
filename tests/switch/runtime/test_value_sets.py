"""Parser value sets end to end: the compiler's parse_vsets/P4Info, the engine's membership test, and ValueSetEntry
over gRPC (MODIFY replaces the members, reads return them as exact matches, PI's refusals)."""

from __future__ import annotations

import pytest
from finsy.proto import p4r, rpc_code

from compiler import compile_file
from switch.v1model import V1Switch
from tests.paths import TESTS

from .conftest import Client, rpc_error, update, write_errors

Code = rpc_code.Code
PROGRAM = TESTS / "compiler" / "p4" / "value_sets.p4"


@pytest.fixture(scope="module")
def compiled():  # type: ignore[no-untyped-def]
    return compile_file(PROGRAM)


@pytest.fixture
def vs_client(client: Client, compiled) -> Client:  # type: ignore[no-untyped-def]
    client.p4info = compiled.p4info
    client.set_pipeline(__import__("json").dumps(compiled.json).encode(), p4info=compiled.p4info)
    return client


def vs_id(c: Client, name: str) -> int:
    return next(v.preamble.id for v in c.p4info.value_sets if v.preamble.alias == name)


def member(*values: bytes) -> p4r.ValueSetMember:
    return p4r.ValueSetMember(match=[p4r.FieldMatch(field_id=i + 1, exact=p4r.FieldMatch.Exact(value=v))
                                     for i, v in enumerate(values)])


def r(sw: V1Switch, t: int, p: int) -> int:
    (port, out), = sw.process(0, t.to_bytes(2, "big") + bytes([p, 0, 0xEE]))
    return out[3]


def test_json_and_p4info(compiled) -> None:  # type: ignore[no-untyped-def]
    assert compiled.json["parse_vsets"] == [
        {"name": "P.types", "id": 0, "compressed_bitwidth": 16, "max_size": 4},
        {"name": "P.pairs", "id": 1, "compressed_bitwidth": 24, "max_size": 2}]
    vs = {v.preamble.name: v for v in compiled.p4info.value_sets}
    assert [(m.id, m.name, m.bitwidth) for m in vs["P.types"].match] == [(1, "", 16)] and vs["P.types"].size == 4
    assert [(m.id, m.name, m.bitwidth) for m in vs["P.pairs"].match] == [(1, "t", 16), (2, "p", 8)]
    assert vs["P.pairs"].preamble.id >> 24 == 0x03


def test_members_over_p4runtime(vs_client: Client, switch: V1Switch) -> None:
    assert (r(switch, 0x0800, 1), r(switch, 0x1234, 1)) == (0, 2)
    vs_client.write(update(p4r.Update.MODIFY, value_set_entry=p4r.ValueSetEntry(
        value_set_id=vs_id(vs_client, "types"), members=[member(b"\x08\x00"), member(b"\x86\xdd")])))
    vs_client.write(update(p4r.Update.MODIFY, value_set_entry=p4r.ValueSetEntry(
        value_set_id=vs_id(vs_client, "pairs"), members=[member(b"\x08\x06", b"\x07")])))
    assert [r(switch, 0x0800, 1), r(switch, 0x86DD, 1), r(switch, 0x1234, 1), r(switch, 0x0806, 7),
            r(switch, 0x0806, 8)] == [1, 1, 2, 3, 0]
    [e] = vs_client.read(p4r.Entity(value_set_entry=p4r.ValueSetEntry(value_set_id=vs_id(vs_client, "types"))))
    assert [[fm.exact.value for fm in m.match] for m in e.value_set_entry.members] == [[b"\x08\x00"], [b"\x86\xdd"]]
    assert len(vs_client.read(p4r.Entity(value_set_entry=p4r.ValueSetEntry()))) == 2  # id 0: every set
    vs_client.write(update(p4r.Update.MODIFY, value_set_entry=p4r.ValueSetEntry(value_set_id=vs_id(vs_client, "types"))))
    assert r(switch, 0x0800, 1) == 0  # emptied


def test_refusals(vs_client: Client) -> None:
    types, pairs = vs_id(vs_client, "types"), vs_id(vs_client, "pairs")
    cases = [
        (p4r.Update.INSERT, p4r.ValueSetEntry(value_set_id=types, members=[member(b"\x01")]), Code.INVALID_ARGUMENT),
        (p4r.Update.MODIFY, p4r.ValueSetEntry(value_set_id=types, members=[member(b"\x01\x00\x00")]),
         Code.INVALID_ARGUMENT),                                                  # does not fit 16 bits
        (p4r.Update.MODIFY, p4r.ValueSetEntry(value_set_id=pairs, members=[member(b"\x01")]), Code.INVALID_ARGUMENT),
        (p4r.Update.MODIFY, p4r.ValueSetEntry(value_set_id=types, members=[member(bytes([i])) for i in range(5)]),
         Code.RESOURCE_EXHAUSTED),                                                # size 4
        (p4r.Update.MODIFY, p4r.ValueSetEntry(value_set_id=types + 1, members=[]), Code.INVALID_ARGUMENT),
    ]
    errors = write_errors(rpc_error(vs_client.write, *[update(k, value_set_entry=e) for k, e, _ in cases]))
    assert [code for code, _ in errors] == [c for _, _, c in cases]
