"""What the switch benchmark measures and reports share: the switches under test, the settings, the measurements."""

from __future__ import annotations

import dataclasses
import shlex
import sys
from typing import Sequence

from perf.family import SOURCES as FAMILY_SOURCES
from perf.switchml_job import WORKLOAD

__all__ = ["COMPILERS", "PACKET_KEYS", "PROGRAMS", "Measurement", "Settings", "SwitchUnderTest"]

PACKET_KEYS = ("basic_forward", "agg64", *FAMILY_SOURCES)
"""The packet programs: two from tests/p4 and the generated family (perf.family), measured in frames/s."""
PROGRAMS = (*PACKET_KEYS, WORKLOAD)
"""The workloads: the packet programs, and a SwitchML all-reduce on its program (`perf.switchml_job`)."""
COMPILERS = ("ours", "p4c")
"""Who writes the JSON: `python -m compiler`, and p4c-bm2-ss where it is on PATH (perf.workloads)."""


@dataclasses.dataclass(frozen=True)
class SwitchUnderTest:
    """A switch command (simple_switch_grpc's flags follow) and its name in the report.

    Words after a `--` in the command are target options: they go after the harness's own `-- --grpc-server-addr`
    (`python -m switch -- --strict-bmv2`)."""

    name: str
    command: tuple[str, ...]
    origin: tuple[str, str] | None = None
    """(a path in the command, what to show instead): a temporary export of another version, named by its commit."""

    @property
    def shown(self) -> str:
        """The command as the report shows it."""
        text = shlex.join(self.command).replace(sys.executable, "python")
        return text.replace(*self.origin) if self.origin else text

    def argv(self, general: Sequence[str], target: Sequence[str]) -> tuple[list[str], list[str]]:
        """(program, flags): the command before its `--`, then `general`, `--`, `target` and the command's own
        target options."""
        cmd = list(self.command)
        own_target: list[str] = []
        if "--" in cmd:
            cut = cmd.index("--")
            cmd, own_target = cmd[:cut], cmd[cut + 1:]
        return cmd, [*general, "--", *target, *own_target]


@dataclasses.dataclass
class Measurement:
    """One switch's figure for one program in one repetition (value None: it failed; `note` says why)."""

    program: str
    switch: str
    rep: int
    value: float | None
    unit: str
    """frames/s | elements/s"""
    offered_pps: float | None = None
    loss: float | None = None
    switch_cpu: float | None = None
    probes: int = 0
    sender_limited: bool = False
    note: str = ""
    compiler: str = "ours"
    """Who wrote the JSON the switch ran (COMPILERS)."""
    mode: str = "loss-free"
    """loss-free (the highest rate delivered with < 0.1 % loss) | overload (delivered when offered Settings.overload
    times that) | job (the SwitchML all-reduce)"""
    sender_cpu: float | None = None
    receiver_cpu: float | None = None

    @property
    def series(self) -> tuple[str, str, str]:
        """What repetitions of the same measurement share: (program, compiler, mode)."""
        return self.program, self.compiler, self.mode


@dataclasses.dataclass
class Settings:
    """Knobs of one harness run."""

    reps: int = 3
    duration: float = 2.0
    """Seconds per rate probe."""
    programs: tuple[str, ...] = PROGRAMS
    size: int = 262144
    """SwitchML job: elements per worker."""
    engine_seconds: float = 3.0
    """In-process rows: seconds per mode (5 runs)."""
    replay_size: int = 65536
    """In-process rows of switchml.p4 and atp.p4: elements per rank of the replayed job (perf.jobreplay; 0: none)."""
    start_rate: float = 10_000.0
    tolerance: float = 0.05
    max_probes: int = 12
    start_timeout: float = 30.0
    job_timeout: float = 120.0
    compilers: tuple[str, ...] = COMPILERS
    """Compilers to use where available (p4c-bm2-ss only when on PATH)."""
    overload: float = 3.0
    """After each loss-free search, one probe offering this multiple of the rate found (0: none)."""
    warmup: bool = True
    """An unreported round before rep 1 (quarter-length probes, a quarter of the job): the first switch run of a
    program measured low without it, whichever switch it was."""
