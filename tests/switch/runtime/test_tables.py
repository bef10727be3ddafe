"""TableEntry writes/reads through gRPC: engine effect, read-back bytes, PI's validation and per-update errors."""

from __future__ import annotations

import grpc
import pytest
from finsy.proto import p4r, rpc_code

from .conftest import CPU_PORT, Client, rpc_error, update, write_errors

Code = rpc_code.Code
INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE
MAC_B = bytes.fromhex("00000000000b")
MAC_A = bytes.fromhex("00000000000a")


def frame(dst: bytes, src: bytes = MAC_A, ether_type: int = 0x0800, payload: bytes = b"hello") -> bytes:
    return dst + src + ether_type.to_bytes(2, "big") + payload


def exact(fid: int, value: bytes) -> p4r.FieldMatch:
    return p4r.FieldMatch(field_id=fid, exact=p4r.FieldMatch.Exact(value=value))


def ternary(fid: int, value: bytes, mask: bytes) -> p4r.FieldMatch:
    return p4r.FieldMatch(field_id=fid, ternary=p4r.FieldMatch.Ternary(value=value, mask=mask))


def action(c: Client, name: str, *params: bytes) -> p4r.TableAction:
    return p4r.TableAction(action=p4r.Action(action_id=c.action_id(name), params=[
        p4r.Action.Param(param_id=i + 1, value=v) for i, v in enumerate(params)]))


def dmac_entry(c: Client, mac: bytes, port: bytes) -> p4r.TableEntry:
    return p4r.TableEntry(table_id=c.table_id("dmac"), match=[exact(1, mac)], action=action(c, "forward", port))


def test_insert_forwards_and_reads_back_canonical(loaded: Client, switch) -> None:
    loaded.write(update(INSERT, table_entry=dmac_entry(loaded, MAC_B, b"\x00\x03")))  # padded port
    assert switch.process(1, frame(MAC_B)) == [(3, frame(MAC_B))]
    [entity] = loaded.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=loaded.table_id("dmac"))))
    te = entity.table_entry
    assert te.match[0].exact.value == b"\x0b"  # canonical: leading zeros stripped
    assert te.action.action.action_id == loaded.action_id("forward")
    assert te.action.action.params[0].value == b"\x03"
    assert te.priority == 0 and not te.is_default_action


def test_modify_and_delete(loaded: Client, switch) -> None:
    loaded.write(update(INSERT, table_entry=dmac_entry(loaded, MAC_B, b"\x03")))
    loaded.write(update(MODIFY, table_entry=dmac_entry(loaded, MAC_B, b"\x04")))
    assert switch.process(1, frame(MAC_B)) == [(4, frame(MAC_B))]
    loaded.write(update(DELETE, table_entry=p4r.TableEntry(table_id=loaded.table_id("dmac"), match=[exact(1, MAC_B)])))
    assert switch.process(1, frame(MAC_B)) == [(0, frame(MAC_B))]  # miss: NoAction leaves egress_spec 0
    assert loaded.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=loaded.table_id("dmac")))) == []


def test_duplicate_missing_and_batch_error_details(loaded: Client) -> None:
    entry = dmac_entry(loaded, MAC_B, b"\x03")
    loaded.write(update(INSERT, table_entry=entry))
    other = dmac_entry(loaded, MAC_A, b"\x02")
    missing = dmac_entry(loaded, bytes.fromhex("0000000000ff"), b"\x02")
    exc = rpc_error(loaded.write, update(INSERT, table_entry=entry), update(INSERT, table_entry=other),
                    update(MODIFY, table_entry=missing), update(DELETE, table_entry=missing))
    errors = write_errors(exc)
    assert [code for code, _ in errors] == [Code.ALREADY_EXISTS, Code.OK, Code.NOT_FOUND, Code.NOT_FOUND]
    assert "Match entry exists" in errors[0][1]
    # CONTINUE_ON_ERROR: the good update in the middle was applied
    assert len(loaded.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=loaded.table_id("dmac"))))) == 2


def invalid_updates(c: Client) -> list[tuple[str, p4r.TableEntry]]:
    dmac, acl = c.table_id("dmac"), c.table_id("acl")
    fwd = action(c, "forward", b"\x01")
    return [
        ("Invalid P4 id", p4r.TableEntry(table_id=0x02000099, match=[exact(1, MAC_B)], action=fwd)),
        ("Invalid P4 id", p4r.TableEntry(table_id=c.action_id("forward"), match=[exact(1, MAC_B)], action=fwd)),
        ("does not fit", p4r.TableEntry(table_id=dmac, match=[exact(1, b"\x01" + MAC_B)], action=fwd)),
        ("Invalid action for table", p4r.TableEntry(table_id=dmac, match=[exact(1, MAC_B)],
                                                    action=action(c, "send_to_cpu"))),
        ("Unexpected number of action parameters", p4r.TableEntry(table_id=dmac, match=[exact(1, MAC_B)],
                                                                  action=action(c, "forward"))),
        ("does not fit", p4r.TableEntry(table_id=dmac, match=[exact(1, MAC_B)], action=action(c, "forward", b"\x02\x00"))),
        ("Non-zero priority", p4r.TableEntry(table_id=dmac, match=[exact(1, MAC_B)], action=fwd, priority=3)),
        ("Zero priority", p4r.TableEntry(table_id=acl, match=[ternary(1, b"\x08\x00", b"\xff\xff")],
                                         action=action(c, "drop"))),
        ("value & mask == value", p4r.TableEntry(table_id=acl, match=[ternary(1, b"\x08\x01", b"\xff\x00")],
                                                 action=action(c, "drop"), priority=1)),
        ("0 mask", p4r.TableEntry(table_id=acl, match=[ternary(1, b"\x00", b"\x00")], action=action(c, "drop"),
                                  priority=1)),
        ("Invalid match type", p4r.TableEntry(table_id=dmac, match=[p4r.FieldMatch(
            field_id=1, lpm=p4r.FieldMatch.LPM(value=MAC_B, prefix_len=48))], action=fwd)),
        ("'action' field must be set", p4r.TableEntry(table_id=dmac, match=[exact(1, MAC_B)])),
        ("Cannot use INSERT for default entry", p4r.TableEntry(table_id=dmac, is_default_action=True, action=fwd)),
    ]


def test_invalid_arguments_as_pi(loaded: Client) -> None:
    cases = invalid_updates(loaded)
    for why, te in cases:  # single-update requests: still UNKNOWN + one p4.v1.Error
        [(code, message)] = write_errors(rpc_error(loaded.write, update(INSERT, table_entry=te)))
        assert code == Code.INVALID_ARGUMENT and why in message, (why, message)
    errors = write_errors(rpc_error(loaded.write, *[update(INSERT, table_entry=te) for _, te in cases]))
    assert [code for code, _ in errors] == [Code.INVALID_ARGUMENT] * len(cases)
    for name in ("dmac", "acl"):
        assert loaded.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=loaded.table_id(name)))) == []


def test_update_type_unspecified(loaded: Client) -> None:
    [(code, message)] = write_errors(rpc_error(
        loaded.write, update(p4r.Update.UNSPECIFIED, table_entry=dmac_entry(loaded, MAC_B, b"\x01"))))
    assert code == Code.INVALID_ARGUMENT and message == "Update type is not set"


def test_atomic_modes_unimplemented(loaded: Client) -> None:
    err = rpc_error(loaded.write, update(INSERT, table_entry=dmac_entry(loaded, MAC_B, b"\x01")),
                    atomicity=p4r.WriteRequest.ROLLBACK_ON_ERROR)
    assert err.code() == grpc.StatusCode.UNIMPLEMENTED


def test_ternary_priorities_higher_wins(loaded: Client, switch) -> None:
    acl = loaded.table_id("acl")
    low = p4r.TableEntry(table_id=acl, match=[ternary(1, b"\x08\x00", b"\xff\xff")], priority=10,
                         action=action(loaded, "drop"))
    high = p4r.TableEntry(table_id=acl, match=[ternary(2, MAC_A, b"\xff\xff\xff\xff\xff\xff")], priority=20,
                          action=action(loaded, "send_to_cpu"))
    loaded.write(update(INSERT, table_entry=low), update(INSERT, table_entry=high))
    out = switch.process(1, frame(MAC_B))
    assert [p for p, _ in out] == [CPU_PORT]  # priority 20 (to CPU) beats 10 (drop)
    read = {e.table_entry.priority: e.table_entry for e in loaded.read(
        p4r.Entity(table_entry=p4r.TableEntry(table_id=acl)))}
    assert set(read) == {10, 20}
    assert [(m.field_id, m.ternary.value, m.ternary.mask) for m in read[10].match] == [(1, b"\x08\x00", b"\xff\xff")]
    assert [(m.field_id, m.ternary.value) for m in read[20].match] == [(2, b"\x0a")]
    # the same match with another priority is another entry; DELETE needs the priority
    loaded.write(update(DELETE, table_entry=p4r.TableEntry(table_id=acl, match=list(low.match), priority=10)))
    assert [e.table_entry.priority for e in loaded.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=acl)))] == [20]


def test_read_single_entry_by_key(loaded: Client) -> None:
    loaded.write(update(INSERT, table_entry=dmac_entry(loaded, MAC_B, b"\x03")),
                 update(INSERT, table_entry=dmac_entry(loaded, MAC_A, b"\x02")))
    query = p4r.TableEntry(table_id=loaded.table_id("dmac"), match=[exact(1, MAC_A)])
    [entity] = loaded.read(p4r.Entity(table_entry=query))
    assert entity.table_entry.action.action.params[0].value == b"\x02"
    assert loaded.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=loaded.table_id("dmac"),
                                                             match=[exact(1, b"\x77")]))) == []


def test_metadata_round_trip(loaded: Client) -> None:
    entry = dmac_entry(loaded, MAC_B, b"\x03")
    entry.metadata = b"cookie!"
    entry.controller_metadata = 99
    loaded.write(update(INSERT, table_entry=entry))
    [entity] = loaded.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=loaded.table_id("dmac"))))
    assert entity.table_entry.metadata == b"cookie!" and entity.table_entry.controller_metadata == 99


def test_default_action_modify_read_reset(loaded: Client, switch) -> None:
    dmac = loaded.table_id("dmac")
    loaded.write(update(MODIFY, table_entry=p4r.TableEntry(table_id=dmac, is_default_action=True,
                                                           action=action(loaded, "forward", b"\x07"))))
    assert switch.process(1, frame(MAC_B)) == [(7, frame(MAC_B))]
    [entity] = loaded.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=dmac, is_default_action=True)))
    assert entity.table_entry.is_default_action
    assert entity.table_entry.action.action.action_id == loaded.action_id("forward")
    assert entity.table_entry.action.action.params[0].value == b"\x07"
    # wildcard reads do not include the default entry
    assert loaded.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=dmac))) == []
    loaded.write(update(MODIFY, table_entry=p4r.TableEntry(table_id=dmac, is_default_action=True)))  # reset
    [entity] = loaded.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=dmac, is_default_action=True)))
    assert entity.table_entry.action.action.action_id == loaded.action_id("NoAction")
    bad = [
        ("Non-empty key", p4r.TableEntry(table_id=dmac, is_default_action=True, match=[exact(1, MAC_B)],
                                         action=action(loaded, "drop"))),
        ("Cannot use DELETE", p4r.TableEntry(table_id=dmac, is_default_action=True)),
    ]
    [(code, msg)] = write_errors(rpc_error(loaded.write, update(MODIFY, table_entry=bad[0][1])))
    assert code == Code.INVALID_ARGUMENT and bad[0][0] in msg
    [(code, msg)] = write_errors(rpc_error(loaded.write, update(DELETE, table_entry=bad[1][1])))
    assert code == Code.INVALID_ARGUMENT and bad[1][0] in msg


def test_const_table_refused_and_readable(loaded: Client) -> None:
    tid = loaded.table_id("ether_const")
    entry = p4r.TableEntry(table_id=tid, match=[exact(1, b"\x12\x34")], action=action(loaded, "drop"))
    for kind in (INSERT, MODIFY, DELETE):
        [(code, _)] = write_errors(rpc_error(loaded.write, update(kind, table_entry=entry)))
        assert code == Code.PERMISSION_DENIED
    [entity] = loaded.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=tid)))
    assert entity.table_entry.match[0].exact.value == b"\x99\x99" and entity.table_entry.is_const
    assert entity.table_entry.action.action.action_id == loaded.action_id("drop")


def test_read_all_tables(loaded: Client) -> None:
    loaded.write(update(INSERT, table_entry=dmac_entry(loaded, MAC_B, b"\x03")))
    tables = sorted(e.table_entry.table_id for e in loaded.read(p4r.Entity(table_entry=p4r.TableEntry())))
    assert tables == sorted([loaded.table_id("dmac"), loaded.table_id("ether_const")])


def test_direct_counters(loaded: Client, switch) -> None:
    acl = loaded.table_id("acl")
    match = [ternary(1, b"\x08\x00", b"\xff\xff")]
    loaded.write(update(INSERT, table_entry=p4r.TableEntry(table_id=acl, match=match, priority=5,
                                                           action=action(loaded, "drop"))))
    f = frame(MAC_B)
    switch.process(1, f)
    switch.process(2, f)
    dce = p4r.DirectCounterEntry(table_entry=p4r.TableEntry(table_id=acl, match=match, priority=5))
    [entity] = loaded.read(p4r.Entity(direct_counter_entry=dce))
    assert (entity.direct_counter_entry.data.packet_count, entity.direct_counter_entry.data.byte_count) == \
        (2, 2 * len(f))
    # table reads include counter_data when asked for it
    [entity] = loaded.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=acl, counter_data=p4r.CounterData())))
    assert entity.table_entry.counter_data.packet_count == 2
    dce.data.packet_count, dce.data.byte_count = 100, 1000
    loaded.write(update(MODIFY, direct_counter_entry=dce))
    [entity] = loaded.read(p4r.Entity(direct_counter_entry=p4r.DirectCounterEntry(
        table_entry=p4r.TableEntry(table_id=acl))))  # empty match: all entries of the table
    assert entity.direct_counter_entry.data.packet_count == 100
    assert entity.direct_counter_entry.table_entry.priority == 5
    [(code, _)] = write_errors(rpc_error(loaded.write, update(INSERT, direct_counter_entry=dce)))
    assert code == Code.INVALID_ARGUMENT
    no_counter = p4r.DirectCounterEntry(table_entry=p4r.TableEntry(table_id=loaded.table_id("dmac")))
    assert rpc_error(loaded.read, p4r.Entity(direct_counter_entry=no_counter)).code() == \
        grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.parametrize("field", ["meter_config"])
def test_direct_meter_on_table_without_meter(loaded: Client, field: str) -> None:
    entry = dmac_entry(loaded, MAC_B, b"\x01")
    getattr(entry, field).cir = 1
    [(code, message)] = write_errors(rpc_error(loaded.write, update(INSERT, table_entry=entry)))
    assert code == Code.INVALID_ARGUMENT and "no direct meters" in message


def test_table_full_is_resource_exhausted(loaded: Client) -> None:
    acl = loaded.table_id("acl")  # size 256
    updates = [update(INSERT, table_entry=p4r.TableEntry(
        table_id=acl, match=[ternary(1, i.to_bytes(2, "big"), b"\xff\xff")], priority=1,
        action=action(loaded, "drop"))) for i in range(257)]
    loaded.write(*updates[:256])
    # (one batch of 257 would do too, but its 257 details exceed gRPC's default 8 KiB trailer limit on clients)
    [(code, _)] = write_errors(rpc_error(loaded.write, updates[256]))
    assert code == Code.RESOURCE_EXHAUSTED
