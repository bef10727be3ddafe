"""A scapy layer class made from a header layout read from the compiled program (`worker.codec.HeaderSpec`): what
every protocol's scapy layer is (`worker.switchml.scapy_layers`, `worker.scapy_layers.bind_program_layer`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scapy.fields import BitField, FieldListField, SignedIntField
from scapy.packet import Packet

from worker.codec import HeaderSpec

__all__ = ["make_layer"]

SUMMARY_FIELDS = ("msg_type", "job_id", "flags", "seq", "agtr", "rank", "pool_index", "packet_id", "exponent")
"""Fields a layer's one-line summary shows, where its header has them."""


def make_layer(spec: HeaderSpec, num_elems: int, name: str,
               summary: Callable[[Packet], str] | None = None) -> type[Packet]:
    """A Packet class: one BitField per header field (JSON order and widths), then `values`, N signed int32."""
    fields_desc: list[Any] = [BitField(f.name, 0, f.width) for f in spec.fields]
    fields_desc.append(FieldListField("values", [0] * num_elems, SignedIntField("value", 0),
                                      count_from=lambda pkt: num_elems))
    shown = [f.name for f in spec.fields if f.name in SUMMARY_FIELDS]

    def mysummary(self: Packet) -> str:
        if summary is not None:
            return summary(self)
        return self.sprintf(f"{name} " + " ".join(f"{n}=%{n}%" for n in shown))

    return type(name, (Packet,), {
        "name": name,
        "fields_desc": fields_desc,
        "mysummary": mysummary,
        "__doc__": f"{spec.name} header ({sum(f.width for f in spec.fields) // 8} bytes) and {num_elems} int32 "
                   "elements.",
    })
