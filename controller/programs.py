"""The controller of each P4 program: every `ProgramController` subclass registers itself for its program.

    CONTROLLERS["atp"]  ->  AtpController      (program name -> ProgramController subclass)

The built-in protocols' controllers are imported here (one line each); a plug-in protocol's package defines its own
when the protocol registry (`worker.protocols`, imported here too) loads it from $INA_PROTOCOLS.
"""

from __future__ import annotations

import controller.atp  # noqa: F401 (registers AtpController)
import controller.esa  # noqa: F401 (registers EsaController)
import controller.omnireduce  # noqa: F401 (registers OmniReduceController)
import controller.release  # noqa: F401 (registers ReleaseController)
import controller.switchml  # noqa: F401 (registers SwitchMLController)
import worker.protocols  # noqa: F401 (loads the plug-in protocols, and with them their controllers)
from controller.base import CONTROLLERS, ProgramController

__all__ = ["CONTROLLERS", "controller_for"]


def controller_for(program: str) -> type[ProgramController]:
    """The controller class of a P4 program (ValueError naming the programs with one)."""
    try:
        return CONTROLLERS[program]
    except KeyError:
        raise ValueError(f"no controller for program {program!r}; programs: {', '.join(sorted(CONTROLLERS))}") from None
