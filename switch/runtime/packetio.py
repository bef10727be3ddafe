"""Packet I/O framing through P4Info `controller_packet_metadata`, as PI's packet_io_mgr.

PacketOut: the metadata of the header named "packet_out" is bit-packed in declaration order (fields not given are
zero) into ceil(Σ bitwidths / 8) bytes prepended to the payload. PacketIn: the first ceil(Σ bitwidths / 8) bytes of a
frame sent to the CPU port are split into the fields of "packet_in" (canonical bytestrings), the rest is the payload.
Without such a header the payload is the whole frame.
"""

from __future__ import annotations

from finsy.proto import p4r

from switch.runtime.codec import decode, encode
from switch.runtime.p4info import PacketMetadataInfo
from switch.runtime.status import invalid


class PacketIO:
    """Frame ↔ PacketIn/PacketOut translation for one pipeline."""

    def __init__(self, packet_in: PacketMetadataInfo | None, packet_out: PacketMetadataInfo | None) -> None:
        self.packet_in_header = packet_in
        self.packet_out_header = packet_out

    @staticmethod
    def _nbytes(header: PacketMetadataInfo) -> int:
        return (sum(width for _, _, width in header.fields) + 7) // 8

    def frame_from_packet_out(self, packet: p4r.PacketOut) -> bytes:
        """The frame to inject on the CPU port; INVALID_ARGUMENT for unknown or too wide metadata."""
        header = self.packet_out_header
        if header is None:
            if len(packet.metadata):
                raise invalid("Unexpected metadata in PacketOut message")
            return bytes(packet.payload)
        values: dict[int, int] = {}
        widths = {mid: width for mid, _, width in header.fields}
        for md in packet.metadata:
            if md.metadata_id not in widths:
                raise invalid("Unknown metadata id in PacketOut message")
            values[md.metadata_id] = decode(md.value, widths[md.metadata_id])
        total_bits = sum(widths.values())
        packed = 0
        for mid, _, width in header.fields:
            packed = (packed << width) | values.get(mid, 0)
        nbytes = self._nbytes(header)
        packed <<= nbytes * 8 - total_bits
        return packed.to_bytes(nbytes, "big") + bytes(packet.payload)

    def packet_in_from_frame(self, frame: bytes) -> p4r.PacketIn | None:
        """The PacketIn for a frame egressing on the CPU port; None if it is shorter than the header (PI drops it)."""
        header = self.packet_in_header
        if header is None:
            return p4r.PacketIn(payload=frame)
        nbytes = self._nbytes(header)
        if len(frame) < nbytes:
            return None
        total_bits = sum(width for _, _, width in header.fields)
        packed = int.from_bytes(frame[:nbytes], "big") >> (nbytes * 8 - total_bits)
        msg = p4r.PacketIn(payload=frame[nbytes:])
        shift = total_bits
        for mid, _, width in header.fields:
            shift -= width
            msg.metadata.add(metadata_id=mid, value=encode((packed >> shift) & ((1 << width) - 1)))
        return msg
