"""Scapy layers for INA packets, generated from the same compiled `header_types` as the codec.

    codec = Codec.from_program_json("out/switchml.json")
    INA = make_ina_layer(codec)
    bind_ina_layer(INA)          # explicit: UDP dport 48864 (DATA) and sport 48864 (RESULT) dissect as INA
    pkt = Ether(raw_bytes)       # ... / UDP / INA(msg_type=..., values=[...])

Nothing is bound at import time; `bind_ina_layer` is the only global registration (scapy's `bind_layers`).
"""

from __future__ import annotations

from scapy.layers.inet import UDP
from scapy.packet import Packet, bind_layers

from worker.scapy_header import make_layer
from worker.switchml.header import INA_UDP_PORT, MSG_DATA, MSG_RESULT, Codec

__all__ = ["make_ina_layer", "bind_ina_layer", "MSG_TYPES"]

MSG_TYPES = {MSG_DATA: "DATA", MSG_RESULT: "RESULT"}


def make_ina_layer(codec: Codec, name: str = "INA") -> type[Packet]:
    """A Packet class: one BitField per `ina_h` field (JSON order and widths), then `values`, N signed int32
    (worker.scapy_layers.make_layer, with SwitchML's own summary)."""

    def summary(pkt: Packet) -> str:
        kind = MSG_TYPES.get(pkt.msg_type, str(pkt.msg_type))
        slot, set_ = pkt.pool_index & 0x7FFF, pkt.pool_index >> 15
        return pkt.sprintf(f"INA {kind} job=%job_id% slot={slot} set={set_} id=%packet_id% exp=%exponent%")

    return make_layer(codec.ina, codec.num_elems, name, summary)


def bind_ina_layer(layer: type[Packet], port: int = INA_UDP_PORT) -> None:
    """Dissect UDP with destination port (DATA) or source port (RESULT) `port` as `layer`."""
    bind_layers(UDP, layer, dport=port)
    bind_layers(UDP, layer, sport=port)
