"""Scapy layers for every in-network protocol, generated from a compiled program's `header_types` (the same source as
the codecs), and a pcap reader that decodes a capture with them.

    INA = bind_program_layer("out/atp.json")   # the program says which protocol it speaks (worker.protocols)
    Ether(raw_bytes)                           # ... / UDP / ATP(job_id=..., values=[...])

    python -m worker.scapy_layers out/switchml.json capture.pcap [-n 20]   # one summary line per frame

`make run PCAP=1` writes the switch's pcaps; `python -m experiments.soak --trace run.pcapng` a soak run's frames.
Nothing is bound at import time; `bind_program_layer` is the only global registration (scapy's `bind_layers`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from scapy.fields import BitField, FieldListField, SignedIntField
from scapy.layers.inet import UDP
from scapy.packet import Packet, bind_layers, split_layers

from worker.codec import HeaderSpec

__all__ = ["make_layer", "program_layer", "bind_program_layer", "main"]

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


def program_layer(program: str | Path | Mapping[str, Any]) -> tuple[type[Packet], int]:
    """(the layer of the protocol a compiled program speaks, its UDP port); CodecError when it speaks none."""
    from worker.protocols import protocol_of_program

    protocol, spec, n = protocol_of_program(program)
    return make_layer(spec, n, protocol.name.upper()), protocol.udp_port


def bind_program_layer(program: str | Path | Mapping[str, Any]) -> type[Packet]:
    """The program's layer, bound to UDP packets to (requests) and from (results) its protocol's port, in place of
    any layer bound there before (scapy dissects with the first binding that matches)."""
    layer, port = program_layer(program)
    for fields, bound in list(UDP.payload_guess):
        if fields in ({"dport": port}, {"sport": port}):
            split_layers(UDP, bound, **fields)
    bind_layers(UDP, layer, dport=port)
    bind_layers(UDP, layer, sport=port)
    return layer


def main(argv: Sequence[str] | None = None) -> int:
    from scapy.layers.l2 import Ether
    from scapy.utils import PcapReader

    from worker.arguments import Parser, at_least, existing_file
    from worker.codec import CodecError

    p = Parser(prog="python -m worker.scapy_layers", description=__doc__.split("\n\n")[0])
    p.add_argument("program", type=existing_file, help="the compiled program (out/switchml.json, out/atp.json)")
    p.add_argument("pcap", type=existing_file, help="a capture (pcap or pcapng)")
    p.add_argument("-n", "--count", type=at_least(1), default=None, help="the first N frames only")
    args = p.parse_args(argv)
    try:
        bind_program_layer(args.program)
    except CodecError as err:
        print(f"{p.prog}: error: {err}", file=sys.stderr)
        return 1
    with PcapReader(str(args.pcap)) as reader:
        for i, frame in enumerate(reader):
            if args.count is not None and i >= args.count:
                break
            comment = getattr(frame, "comment", None)
            note = f"  [{comment.decode() if isinstance(comment, bytes) else comment}]" if comment else ""
            print(f"{i + 1:>6} {float(frame.time):.6f} {Ether(bytes(frame)).summary()}{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
