"""BMv2 JSON → Python source: parser, deparser, checksums, calculations, actions and pipelines, compiled once per load.

Everything a packet runs is generated as straight-line Python over the flat PHV list `F` (see program.py): field
reads are `F[slot]`, writes are masked to the field width (BMv2: infinite precision, truncation on write), action
data is the tuple `D`. An architecture adds its own primitives through `arch_primitives` (op → emitter). With
`trace=True` the generated code also calls `_T(F, message)` at every step; without it there is no trace cost.
"""

from __future__ import annotations

import random
from typing import Any

from switch.errors import LoadError
from switch.sim.externs import CounterArray, RegisterArray
from switch.sim.gen_actions import ActionGen
from switch.sim.gen_base import Emitter, PacketAbort, ParserError, _fmt, _noop, _sat, _usat
from switch.sim.gen_expr import ExprGen
from switch.sim.gen_flow import FlowGen
from switch.sim.gen_packet import PacketGen
from switch.sim.gen_pipeline import PipelineGen
from switch.sim.program import Program
from switch.sim.tables import ActionInfo, MatchTable


class Codegen(ExprGen, ActionGen, PacketGen, PipelineGen, FlowGen):
    """Generates and compiles the Python module of one program; `build()` returns the namespace."""

    def __init__(self, prog: Program, arch_primitives: dict[str, Emitter], trace: bool,
                 reuse: "Codegen | None" = None, extra_ns: dict[str, Any] | None = None) -> None:
        self.p = prog
        self.j = prog.json
        self.arch = arch_primitives
        self.trace = trace
        self.ns: dict[str, Any] = {"ParserError": ParserError, "PacketAbort": PacketAbort, "_sat": _sat,
                                   "_usat": _usat, "_random": random.randint, "_noop": _noop, "_fmt": _fmt,
                                   "__builtins__": __builtins__}
        self.out: list[str] = []
        self.uses_exit = False
        self.tmp = 0
        self.action_width: list[int] = []   # widths of the current action's runtime data
        self.actions: dict[int, dict] = {}
        self.action_by_name: dict[str, dict] = {}
        self.registers: dict[str, RegisterArray] = {}
        self.counters: dict[str, CounterArray] = {}
        self.calcs: dict[str, str] = {}      # calculation name → generated function name
        self.tables: dict[str, MatchTable] = {}
        self.action_infos: dict[str, ActionInfo] = {}
        self.slot_names = prog.slot_names()
        self.reuse = reuse  # a previous build of the same program: keep its tables/registers/counters (state)
        self.ns.update(extra_ns or {})

    # --- small helpers ---------------------------------------------------------------------------------------
    def name(self, prefix: str) -> str:
        self.tmp += 1
        return f"{prefix}{self.tmp}"

    def const(self, prefix: str, value: Any) -> str:
        n = self.name(prefix)
        self.ns[n] = value
        return n
































    # --- driver ----------------------------------------------------------------------------------------------
    def build(self) -> dict[str, Any]:
        """Generate, compile and execute the module; returns its namespace (parse, deparse, pipe_*, tables...)."""
        self.build_externs()
        self.build_calculations()
        self.build_actions()
        self.build_tables()
        self.build_checksums()
        self.build_deparser()
        self.build_parser()
        pipes = self.build_pipelines()
        src = "\n".join(self.out) + "\n"
        self.source = src
        try:
            code = compile(src, f"<bmv2 {self.j.get('program', 'program')}{' traced' if self.trace else ''}>", "exec")
        except SyntaxError as exc:  # a generator bug, never a user error; still refuse cleanly
            raise LoadError(f"internal code generation error: {exc}") from None
        exec(code, self.ns)  # noqa: S102 - our own generated code
        self.finish_tables()
        self.ns["_pipelines"] = {k: self.ns[v] for k, v in pipes.items()}
        return self.ns


__all__ = ["Codegen", "PacketAbort", "ParserError"]
