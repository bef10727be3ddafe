"""P4Info indexing, packet I/O bit packing, arbitration and device-config decoding (no gRPC, no engine)."""

from __future__ import annotations

import json

import pytest
from finsy.proto import p4i, p4r, rpc_code

from switch.runtime import pipeline
from switch.runtime.arbitration import Arbitration, Connection
from switch.runtime.p4info import PacketMetadataInfo, build_index
from switch.runtime.packetio import PacketIO
from switch.runtime.status import Code, P4RuntimeError, batch_status

# --- P4Info index --------------------------------------------------------------------------------------------------

def small_p4info() -> p4i.P4Info:
    info = p4i.P4Info()
    act = info.actions.add()
    act.preamble.id, act.preamble.name = 0x01000001, "fwd"
    act.params.add(id=1, name="port", bitwidth=9)
    tbl = info.tables.add()
    tbl.preamble.id, tbl.preamble.name = 0x02000001, "t"
    tbl.match_fields.add(id=1, name="k", bitwidth=8, match_type=p4i.MatchField.TERNARY)
    tbl.action_refs.add(id=0x01000001)
    return info


def test_index_by_id_and_name() -> None:
    index = build_index(small_p4info())
    assert index.tables[0x02000001].needs_priority
    assert index.names[(0x02, "t")] == 0x02000001
    assert index.is_valid_id(0x01000001, 0x01) and not index.is_valid_id(0x01000001, 0x02)
    assert not index.is_valid_id(0x02000002, 0x02)


@pytest.mark.parametrize("mutate,message", [
    (lambda i: setattr(i.tables[0].preamble, "id", 0x01000009), "prefix"),
    (lambda i: setattr(i.tables[0].preamble, "id", 0x01000001), "prefix"),
    (lambda i: i.tables[0].action_refs.add(id=0x01000042), "unknown action"),
    (lambda i: i.tables[0].match_fields.add(id=1, name="k2", bitwidth=8, match_type=p4i.MatchField.EXACT),
     "duplicate match field"),
])
def test_index_refuses_inconsistent_p4info(mutate, message: str) -> None:
    info = small_p4info()
    mutate(info)
    with pytest.raises(P4RuntimeError) as exc:
        build_index(info)
    assert exc.value.code == Code.INVALID_ARGUMENT and message in exc.value.message


# --- packet I/O ------------------------------------------------------------------------------------------------------

def header(name: str, *fields: tuple[str, int]) -> PacketMetadataInfo:
    return PacketMetadataInfo(0x04000001, name, tuple((i + 1, n, w) for i, (n, w) in enumerate(fields)))


def test_packet_out_packs_fields_msb_first() -> None:
    io = PacketIO(None, header("packet_out", ("egress_port", 9), ("_pad", 7)))
    out = p4r.PacketOut(payload=b"\xaa\xbb", metadata=[p4r.PacketMetadata(metadata_id=1, value=b"\x03")])
    assert io.frame_from_packet_out(out) == b"\x01\x80\xaa\xbb"  # 3 << 7, missing _pad is zero


def test_packet_out_odd_widths_and_errors() -> None:
    io = PacketIO(None, header("packet_out", ("a", 3), ("b", 5), ("c", 12)))  # 20 bits -> 3 bytes
    out = p4r.PacketOut(payload=b"P", metadata=[
        p4r.PacketMetadata(metadata_id=3, value=b"\x0a\xbc"),
        p4r.PacketMetadata(metadata_id=1, value=b"\x05"),
        p4r.PacketMetadata(metadata_id=2, value=b"\x11")])
    # 101 10001 1010_1011_1100 0000 -> 0xB1 0xAB 0xC0
    assert io.frame_from_packet_out(out) == b"\xb1\xab\xc0P"
    with pytest.raises(P4RuntimeError, match="Unknown metadata id"):
        io.frame_from_packet_out(p4r.PacketOut(metadata=[p4r.PacketMetadata(metadata_id=9, value=b"\x01")]))
    with pytest.raises(P4RuntimeError, match="does not fit"):
        io.frame_from_packet_out(p4r.PacketOut(metadata=[p4r.PacketMetadata(metadata_id=1, value=b"\x08")]))
    with pytest.raises(P4RuntimeError, match="Unexpected metadata"):
        PacketIO(None, None).frame_from_packet_out(
            p4r.PacketOut(metadata=[p4r.PacketMetadata(metadata_id=1, value=b"\x01")]))


def test_packet_in_splits_header() -> None:
    io = PacketIO(header("packet_in", ("ingress_port", 9), ("_pad", 7)), None)
    msg = io.packet_in_from_frame(b"\x01\x80payload")
    assert msg.payload == b"payload"
    assert [(m.metadata_id, m.value) for m in msg.metadata] == [(1, b"\x03"), (2, b"\x00")]
    assert io.packet_in_from_frame(b"\x01") is None  # shorter than the header: dropped as PI does
    assert PacketIO(None, None).packet_in_from_frame(b"raw").payload == b"raw"


# --- arbitration -----------------------------------------------------------------------------------------------------

class Inbox(list):
    def status(self, i: int = -1) -> tuple[int, int]:
        upd = self[i].arbitration
        return upd.status.code, (upd.election_id.high << 64) | upd.election_id.low


def test_primary_is_highest_and_changes_are_announced() -> None:
    arb = Arbitration()
    a_in, b_in = Inbox(), Inbox()
    a = Connection(0, "", 5, a_in.append)
    arb.join(a)
    assert a_in.status() == (rpc_code.Code.OK, 5)
    b = Connection(0, "", 7, b_in.append)
    arb.join(b)  # new primary: everyone is told
    assert b_in.status() == (rpc_code.Code.OK, 7)
    assert a_in.status() == (rpc_code.Code.ALREADY_EXISTS, 7)
    arb.check_writer(0, "", 7)
    with pytest.raises(P4RuntimeError) as exc:
        arb.check_writer(0, "", 5)
    assert exc.value.code == Code.PERMISSION_DENIED
    with pytest.raises(P4RuntimeError):
        arb.join(Connection(0, "", 7, Inbox().append))  # duplicate election id
    arb.leave(b)
    assert a_in.status() == (rpc_code.Code.OK, 5)
    arb.check_writer(0, "", 5)
    arb.update(a, 1)  # still primary (alone): only a is told
    assert a_in.status() == (rpc_code.Code.OK, 1)
    before = len(a_in)
    arb.update(a, 1)  # same election id again: nothing happens (PI)
    assert len(a_in) == before


def test_writer_without_stream() -> None:
    arb = Arbitration()
    arb.check_writer(0, "", None)  # no stream, no election id: allowed (PI)
    with pytest.raises(P4RuntimeError):
        arb.check_writer(0, "", 1)  # election id but nobody arbitrated


def test_batch_status_details_one_error_per_update() -> None:
    assert batch_status([None, None]) is None
    status = batch_status([None, P4RuntimeError(Code.NOT_FOUND, "gone")])
    assert status.code == Code.UNKNOWN and len(status.details) == 2
    errors = []
    for any_msg in status.details:
        err = p4r.Error()
        assert any_msg.Unpack(err)
        errors.append((err.canonical_code, err.message, err.space))
    assert errors == [(Code.OK, "", ""), (Code.NOT_FOUND, "gone", "ALL-sswitch-p4org")]


# --- device config -----------------------------------------------------------------------------------------------

def test_device_config_raw_and_legacy_wrapper() -> None:
    program = {"header_types": [], "pipelines": []}
    raw = json.dumps(program).encode()
    assert pipeline.device_config_json(raw) == program
    # p4::tmp::P4DeviceConfig{reassign: true, device_data: raw}: field 1 varint, field 3 bytes
    wrapped = b"\x08\x01" + b"\x1a" + bytes([len(raw)]) + raw
    assert pipeline.device_config_json(wrapped) == program
    for bad in (b"", b"not json", b"\x1a\x05ab"):
        with pytest.raises(P4RuntimeError) as exc:
            pipeline.device_config_json(bad)
        assert exc.value.code == Code.INVALID_ARGUMENT


def test_a_key_p4runtime_gives_no_width_is_accepted_as_pi_accepts_it() -> None:
    """p4c writes an `error`-typed key into the P4Info without a bitwidth (issue1062-1-bmv2.p4) and into the JSON as
    32 bits: the pipeline is set, as PI sets it; a real width mismatch is still refused."""
    from finsy.proto import p4i

    program = {"header_types": [{"name": "m_t", "id": 0, "fields": [["my_err", 32, False]]}],
               "headers": [{"name": "m", "id": 0, "header_type": "m_t", "metadata": True}],
               "actions": [{"name": "NoAction", "id": 0, "runtime_data": [], "primitives": []}],
               "pipelines": [{"name": "ingress", "tables": [{"name": "ingress.t", "id": 0, "actions": ["NoAction"],
                                                             "key": [{"match_type": "exact", "name": "m.my_err",
                                                                      "target": ["m", "my_err"], "mask": None}]}]}]}
    info = p4i.P4Info()
    act = info.actions.add()
    act.preamble.id, act.preamble.name = 0x01000001, "NoAction"
    tbl = info.tables.add()
    tbl.preamble.id, tbl.preamble.name = 0x02000001, "ingress.t"
    mf = tbl.match_fields.add()
    mf.id, mf.name, mf.match_type = 1, "m.my_err", p4i.MatchField.EXACT
    tbl.action_refs.add().id = 0x01000001
    config = p4r.ForwardingPipelineConfig(p4info=info, p4_device_config=json.dumps(program).encode())
    assert pipeline.verify(config).index.tables[0x02000001].name == "ingress.t"
    config.p4info.tables[0].match_fields[0].bitwidth = 16
    with pytest.raises(P4RuntimeError, match="is 16 bits, 32 in the BMv2 JSON"):
        pipeline.verify(config)
