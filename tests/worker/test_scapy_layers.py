"""Scapy layers derived from the compiled programs, for ATP as for SwitchML, and a capture decoded with them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Packet, split_layers
from scapy.utils import wrpcap

from worker.atp.header import ATP_UDP_PORT, AtpCodec, AtpHeader
from worker.codec import CodecError
from worker.scapy_layers import bind_program_layer, main
from worker.switchml.header import INA_UDP_PORT, MSG_DATA, Codec, InaHeader


@pytest.fixture(autouse=True)
def unbound() -> Iterator[None]:
    """The bindings these tests make are global in scapy: undone, so other tests' layers dissect their ports."""
    before = {id(g) for g in UDP.payload_guess}
    yield
    for guess in list(UDP.payload_guess):
        fields, layer = guess
        if id(guess) not in before and isinstance(layer, type) and issubclass(layer, Packet):
            split_layers(UDP, layer, **fields)


def atp_frame(codec: AtpCodec, values: np.ndarray) -> bytes:
    payload = codec.encode(AtpHeader(bitmap0=0b100, fan_in0=3, job_id=5, seq=77, agtr=9, rank=2), values)
    return bytes(Ether() / IP(src="10.0.0.3", dst="10.0.0.254") / UDP(sport=50000, dport=ATP_UDP_PORT) / payload)


def test_atp_frames_decode_with_every_field(program_dir: Path) -> None:
    """Issue 26: ATP frames decoded as Raw (there was no ATP layer)."""
    codec = AtpCodec.from_program_json(program_dir / "atp.json")
    layer = bind_program_layer(program_dir / "atp.json")
    values = np.arange(-codec.num_elems // 2, codec.num_elems // 2, dtype=np.int32)
    atp = Ether(atp_frame(codec, values))[layer]
    assert (atp.job_id, atp.seq, atp.agtr, atp.rank, atp.bitmap0, atp.fan_in0) == (5, 77, 9, 2, 0b100, 3)
    assert atp.values == values.tolist()
    assert "ATP" in atp.summary() and "seq=77" in atp.summary()


def test_a_capture_decodes_from_the_command_line(program_dir: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    sml = Codec.from_program_json(program_dir / "switchml.json")
    payload = sml.encode(InaHeader(msg_type=MSG_DATA, job_id=1, pool_index=3, packet_id=11),
                         np.ones(sml.num_elems, dtype=np.int32))
    frame = Ether() / IP(src="10.0.0.1", dst="10.0.0.254") / UDP(sport=50000, dport=INA_UDP_PORT) / payload
    wrpcap(str(tmp_path / "c.pcap"), [frame, frame])
    assert main([str(program_dir / "switchml.json"), str(tmp_path / "c.pcap"), "-n", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and "SWITCHML" in lines[0] and "job_id=1" in lines[0] and "pool_index=3" in lines[0]


def test_the_wrong_codec_names_the_program(program_dir: Path) -> None:
    with pytest.raises(CodecError, match="atp.json is the atp program: use worker.atp.header.AtpCodec"):
        Codec.from_program_json(program_dir / "atp.json")
    with pytest.raises(CodecError, match="switchml.json is the switchml program: use worker.switchml.header.Codec"):
        AtpCodec.from_program_json(program_dir / "switchml.json")
