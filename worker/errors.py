"""What a protocol's rank raises, whatever the protocol: the command line (`python -m worker`) maps each kind to its
exit code, so a new protocol's errors need no edit there.

- `Unreachable`: the switch, the parameter server or a peer did not answer within the bounded wait (exit 2); its
  `details` (slot, packet id, sequence number, peer) go into the JSON report.
- `ProtocolError`: something answered what no correct switch or peer would (exit 4).
- `InputError`: the input cannot be sent with this protocol (a value out of its range; exit 3).
"""

from __future__ import annotations

from typing import Any

__all__ = ["InputError", "ProtocolError", "Unreachable"]


class Unreachable(RuntimeError):
    """No answer after every retransmission (or a peer that never connected)."""

    @property
    def details(self) -> dict[str, Any]:
        """What the JSON report names of the packet or peer waited for."""
        return {}


class ProtocolError(RuntimeError):
    """The switch answered something no correct switch would (e.g. an exponent below this worker's own)."""


class InputError(ValueError):
    """The input cannot be carried by the protocol (e.g. a value outside its representable range)."""
