"""What a protocol's packets and switch state look like to a fault plan: each in-network protocol declares its
`ProtocolFaults` in its own folder (`worker.switchml.faults`, `worker.atp.faults`); `worker.faults` compiles plans
with it, the in-process fuzzing reads which registers hold a job's state from it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from worker.codec import HeaderSpec

__all__ = ["HEADER_OFFSET", "UDP_PORT_OFFSETS", "ProtocolFaults", "field_match"]

HEADER_OFFSET = 14 + 20 + 8
"""Bytes before the protocol header in a frame: Ethernet, IPv4 (no options), UDP."""
UDP_PORT_OFFSETS = {"sport": 14 + 20, "dport": 14 + 20 + 2}


def field_match(spec: HeaderSpec, name: str, value: int, mask: int | None = None,
                base: int = HEADER_OFFSET) -> dict[str, Any]:
    """A switch.faults byte match for `field & mask == value & mask` of header `spec` starting at byte `base`."""
    f = spec.field(name)
    mask = (1 << f.width) - 1 if mask is None else mask & ((1 << f.width) - 1)
    first, last = f.offset // 8, (f.offset + f.width - 1) // 8
    span = (last - first + 1) * 8
    shift = span - (f.offset - first * 8) - f.width
    n = last - first + 1
    return {"offset": base + first, "value": ((value & mask) << shift).to_bytes(n, "big").hex(),
            "mask": (mask << shift).to_bytes(n, "big").hex()}


@dataclass(frozen=True)
class ProtocolFaults:
    """What a protocol's packets look like to a fault plan (its name, header type and UDP port are its
    `worker.plugin.ProtocolSpec`'s)."""

    kinds: Mapping[str, tuple[str, str, Sequence[tuple[str, int, int]]]]
    """kind -> (direction, the UDP port ("sport"/"dport") that is udp_port, [(field, value, mask)])."""
    slot_field: tuple[str, int]
    """(field, mask) naming the slot or aggregator."""
    state: Sequence[tuple[str, int]]
    """(register, cells per slot) holding a job's state, indexed from the job's pool base."""
    cells_per_slot_elems: Sequence[str] = ()
    """Registers with one cell per element of a slot (cells per slot = N)."""
