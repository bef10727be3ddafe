"""Codec derived from BMv2 JSON header_types: exact bytes per the brief's layout, layout variants, errors, scapy."""

from __future__ import annotations

import copy
import json
import struct

import numpy as np
import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from tests.worker.ina_fixtures import LAYOUT_JSON
from worker.codec import CodecError, HeaderSpec, MalformedPacket
from worker.switchml.header import Codec, InaHeader, pool_index, split_pool_index
from worker.switchml.scapy_layers import bind_ina_layer, make_ina_layer


def layout() -> dict:
    return json.loads(LAYOUT_JSON.read_text())


def brief_bytes(msg_type, job_id, pool_idx, packet_id, exponent, flags, rank, values) -> bytes:
    """The brief's layout written out by hand: 1+1+2+4+1+1+2 bytes big endian, then int32 big endian."""
    hdr = bytes([msg_type, job_id]) + pool_idx.to_bytes(2, "big") + packet_id.to_bytes(4, "big") + bytes(
        [exponent, flags]) + rank.to_bytes(2, "big")
    return hdr + b"".join(v.to_bytes(4, "big", signed=True) for v in values)


def test_layout_from_fixture(codec: Codec) -> None:
    assert [(f.name, f.width, f.offset) for f in codec.ina.fields] == [
        ("msg_type", 8, 0), ("job_id", 8, 8), ("pool_index", 16, 16), ("packet_id", 32, 32),
        ("exponent", 8, 64), ("flags", 8, 72), ("worker_rank", 16, 80)]
    assert (codec.header_len, codec.num_elems, codec.packet_len) == (12, 8, 44)


def test_encode_exact_bytes(codec: Codec) -> None:
    values = [0, 1, -1, 2**31 - 1, -(2**31), 0x12345678, -2, 7]
    hdr = InaHeader(msg_type=1, job_id=0xAB, pool_index=pool_index(0x1234, 1), packet_id=0xDEADBEEF,
                    exponent=130, flags=1, worker_rank=0x0102)
    data = codec.encode(hdr, np.array(values, dtype=np.int32))
    assert data == brief_bytes(1, 0xAB, 0x9234, 0xDEADBEEF, 130, 1, 0x0102, values)
    assert data[:12].hex() == "01ab9234deadbeef82010102"
    back, vals = codec.decode(data)
    assert back == hdr and back.slot == 0x1234 and back.set == 1
    assert vals.dtype == np.int32 and vals.tolist() == values


def test_encode_wraps_wider_integers(codec: Codec) -> None:
    data = codec.encode(InaHeader(), np.array([2**32 - 1, 2**31, 0, 0, 0, 0, 0, 0], dtype=np.int64))
    assert data[12:20] == bytes.fromhex("ffffffff80000000")


def test_encode_rejects_wrong_payload(codec: Codec) -> None:
    with pytest.raises(ValueError, match="8 elements"):
        codec.encode(InaHeader(), np.zeros(7, np.int32))
    with pytest.raises(ValueError, match="integers"):
        codec.encode(InaHeader(), np.zeros(8, np.float32))


@pytest.mark.parametrize("length", [0, 5, 12, 43, 45])
def test_decode_rejects_wrong_length(codec: Codec, length: int) -> None:
    with pytest.raises(MalformedPacket, match="bytes"):
        codec.decode(bytes(length))


def test_payload_as_data_header_with_many_fields() -> None:
    prog = layout()
    prog["header_types"].append({"name": "ina_data_h", "id": 9, "fields": [[f"d{i}", 32, False] for i in range(64)]})
    prog["headers"] = [h for h in prog["headers"] if not h["name"].startswith("elems")]
    prog["headers"].append({"name": "data", "id": 6, "header_type": "ina_data_h", "metadata": False})
    prog["header_stacks"] = []
    prog["deparsers"][0]["order"] = ["ethernet", "ipv4", "udp", "ina", "data"]
    c = Codec.from_program_json(prog)
    assert c.num_elems == 64 and c.packet_len == 12 + 256
    vals = np.arange(-32, 32, dtype=np.int32)
    assert c.decode(c.encode(InaHeader(packet_id=5), vals))[1].tolist() == vals.tolist()


def test_payload_stops_at_first_non_element_header() -> None:
    prog = layout()
    prog["header_types"].append({"name": "trailer_h", "id": 9, "fields": [["x", 16, False]]})
    prog["headers"].append({"name": "trailer", "id": 40, "header_type": "trailer_h", "metadata": False})
    order = prog["deparsers"][0]["order"]
    order.insert(order.index("elems[3]"), "trailer")
    assert Codec.from_program_json(prog).num_elems == 3


def test_derived_from_file_path_and_dict_agree(tmp_path) -> None:
    path = tmp_path / "prog.json"
    path.write_text(LAYOUT_JSON.read_text())
    a, b = Codec.from_program_json(str(path)), Codec.from_program_json(layout())
    h = InaHeader(2, 1, 3, 4, 5, 0, 6)
    assert a.encode(h, np.ones(8, np.int32)) == b.encode(h, np.ones(8, np.int32))


def test_unaligned_layout_uses_bit_packing() -> None:
    """A layout struct cannot express (4-bit fields, extra field) still packs exactly, MSB first."""
    prog = layout()
    ina = next(t for t in prog["header_types"] if t["name"] == "ina_h")
    ina["fields"] = [["msg_type", 4, False], ["version", 4, False], ["job_id", 8, False], ["pool_index", 16, False],
                     ["packet_id", 32, False], ["exponent", 8, False], ["flags", 8, False],
                     ["worker_rank", 16, False]]
    c = Codec.from_program_json(prog)
    assert c.ina.struct_format() is None and c.header_len == 12
    data = c.encode(InaHeader(msg_type=2, job_id=9, pool_index=0x8001, packet_id=1, exponent=128, flags=0,
                              worker_rank=3), np.zeros(8, np.int32))
    assert data[:12].hex() == "20098001000000018000" + "0003"
    assert c.decode(data)[0] == InaHeader(2, 9, 0x8001, 1, 128, 0, 3)


def test_extra_byte_aligned_field_is_zero_and_ignored() -> None:
    prog = layout()
    ina = next(t for t in prog["header_types"] if t["name"] == "ina_h")
    ina["fields"].append(["reserved", 16, False])
    c = Codec.from_program_json(prog)
    data = c.encode(InaHeader(msg_type=1, worker_rank=0xFFFF), np.zeros(8, np.int32))
    assert c.header_len == 14 and data[10:14] == b"\xff\xff\x00\x00"
    assert c.decode_header(data).worker_rank == 0xFFFF


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda p: p["header_types"].pop(5), "no header type 'ina_h'"),
        (lambda p: p["header_types"][5]["fields"].pop(4), "lacks field(s) exponent"),
        (lambda p: p["header_types"][5]["fields"].append(["odd", 3, False]), "not a whole number of bytes"),
        (lambda p: p["header_types"][5]["fields"].append(["v", "*", False]), "varbit"),
        (lambda p: p.update(headers=[h for h in p["headers"] if h["name"] != "ina"]), "no header instance"),
        (lambda p: p.update(headers=[h for h in p["headers"] if not h["name"].startswith("elems")]),
         "no payload elements"),
    ],
)
def test_bad_program_json(mutate, needle: str) -> None:
    prog = copy.deepcopy(layout())
    mutate(prog)
    with pytest.raises(CodecError) as exc:
        Codec.from_program_json(prog)
    assert needle in str(exc.value)


def test_bad_program_path(tmp_path) -> None:
    with pytest.raises(CodecError, match="cannot read program JSON"):
        Codec.from_program_json(tmp_path / "nope.json")
    (tmp_path / "x.json").write_text("[1")
    with pytest.raises(CodecError, match="not valid JSON"):
        Codec.from_program_json(tmp_path / "x.json")


def test_header_spec_signed_unpack() -> None:
    spec = HeaderSpec.from_json({"name": "t", "fields": [["a", 4, True], ["b", 12, False]]})
    assert spec.unpack(spec.pack([-1, 0xABC])) == (-1, 0xABC)
    assert spec.pack([-1, 0xABC]) == b"\xfa\xbc"


def test_pool_index_helpers() -> None:
    assert pool_index(5, 1) == 0x8005 and split_pool_index(0x8005) == (5, 1)
    with pytest.raises(ValueError):
        pool_index(0x8000, 0)


def test_scapy_layer_from_same_json_dissects_frames(codec: Codec) -> None:
    ina_layer = make_ina_layer(codec)
    bind_ina_layer(ina_layer)
    values = [3, -3, 0, 1, 2, 3, 4, 2**31 - 1]
    payload = codec.encode(InaHeader(2, 7, pool_index(4, 1), 99, 131, 0, 1), np.array(values, np.int32))
    frame = bytes(Ether() / IP(src="10.0.0.254", dst="10.0.0.2") / UDP(sport=48864, dport=50001) / payload)
    pkt = Ether(frame)
    ina = pkt[ina_layer]
    assert (ina.msg_type, ina.job_id, ina.pool_index, ina.packet_id, ina.exponent, ina.worker_rank) == (
        2, 7, 0x8004, 99, 131, 1)
    assert ina.values == values
    assert "INA RESULT job=7 slot=4 set=1 id=99" in pkt.summary()
    # building with scapy gives the codec's bytes
    built = ina_layer(msg_type=1, job_id=7, pool_index=4, packet_id=1, exponent=128, worker_rank=0,
                      values=list(range(8)))
    assert bytes(built) == codec.encode(InaHeader(1, 7, 4, 1, 128, 0, 0), np.arange(8, dtype=np.int32))
    data_frame = Ether(bytes(Ether() / IP() / UDP(sport=50000, dport=48864) / bytes(built)))
    assert data_frame.haslayer(ina_layer)


def test_struct_fast_path_matches_bit_packing(codec: Codec) -> None:
    h = InaHeader(1, 2, 0x8003, 0x01020304, 5, 1, 9)
    wire = (1, 2, 0x8003, 0x01020304, 5, 1, 9)
    assert codec.encode_header(h) == codec.ina.pack(wire) == struct.pack("!BBHIBBH", *wire)
