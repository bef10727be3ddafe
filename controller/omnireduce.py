"""OmniReduceController: the control plane of p4src/omnireduce.p4, switchml.p4 with sparse streams.

Jobs, epochs, forwarding, resets and counters are SwitchML's (the program keeps switchml.p4's names); the `slots`
view adds each set's smallest next block (register `ina_next`), the block its stream's next round is for.
"""

from __future__ import annotations

import argparse

from controller.base import CliCommand, _first_count
from controller.switchml import INGRESS, SwitchMLController

__all__ = ["OmniReduceController", "NO_BLOCK"]

NO_BLOCK = 0xFFFFFFFF
"""next_block of a stream that has no further non-zero block (worker.switchml.sparse.NO_BLOCK)."""


def _slots(ctl: OmniReduceController, args: argparse.Namespace) -> str:
    width = ctl.max_workers()
    states = ctl.slots(args.first, args.count)
    nexts = ctl.next_blocks(args.first, args.count)
    lines = [f"slot set  {'bitmap':<{width}}  countdown exponent next_block contributors"]
    for s, nxt in zip(states, nexts):
        shown = "none" if nxt == NO_BLOCK else str(nxt)
        lines.append(f"{s.slot:>4} {s.set:>3}  {s.bitmap:0{width}b}  {s.countdown:>9} {s.exponent:>8} {shown:>10} "
                     f"{','.join(map(str, s.contributors())) or '-'}")
    return "\n".join(lines)


class OmniReduceController(SwitchMLController, program="omnireduce"):
    """Programs one switch running omnireduce.p4 for one or more sparse all-reduce jobs."""

    CLI = (CliCommand("slots", "show slot state (bitmap, countdown, exponent, next block) of both sets", _first_count,
                      _slots),)

    def next_blocks(self, first: int, count: int) -> list[int]:
        """Each (slot, set)'s smallest next block so far, slots [first, first+count), both sets."""
        self.slots(first, count)  # validates the range
        return self.registers.read_range(f"{INGRESS}.ina_next", 2 * first, 2 * count)
