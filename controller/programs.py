"""The controller of each P4 program, derived from the protocol registry (`worker.protocols`).

    CONTROLLERS["atp"]  ->  AtpController      (program name -> ProgramController subclass)
"""

from __future__ import annotations

from controller.base import ProgramController
from worker.protocols import PROTOCOLS

__all__ = ["CONTROLLERS", "controller_for"]

CONTROLLERS: dict[str, type[ProgramController]] = {p.program: p.controller_class() for p in PROTOCOLS.values()}


def controller_for(program: str) -> type[ProgramController]:
    """The controller class of a P4 program (ValueError naming the programs with one)."""
    try:
        return CONTROLLERS[program]
    except KeyError:
        raise ValueError(f"no controller for program {program!r}; programs: {', '.join(sorted(CONTROLLERS))}") from None
