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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scapy.layers.inet import UDP
from scapy.packet import Packet, bind_layers, split_layers

from worker.protocols import protocol_of_program
from worker.scapy_header import make_layer

__all__ = ["make_layer", "program_layer", "bind_program_layer", "main"]

def program_layer(program: str | Path | Mapping[str, Any]) -> tuple[type[Packet], int]:
    """(the layer of the protocol a compiled program speaks, its UDP port); CodecError when it speaks none."""
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
