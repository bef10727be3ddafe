"""BMv2 JSON → Python source: parser, deparser, checksums, calculations, actions and pipelines, compiled once per load.

Everything a packet runs is generated as straight-line Python over the flat PHV list `F` (see program.py): field
reads are `F[slot]`, writes are masked to the field width (BMv2: infinite precision, truncation on write), action
data is the tuple `D`. An architecture adds its own primitives through `arch_primitives` (op → emitter). With
`trace=True` the generated code also calls `_T(F, message)` at every step; without it there is no trace cost.

Untraced code is optimised (semantics unchanged; the traced generator is the plain reference the tests compare it
with): each pipeline is one function of nested if/else (gen_flow.py) with const keyless actions inlined; action
bodies keep PHV slots in locals and check register bounds once per window where they can (optimize.py); headers
whose fields group into byte-aligned chunks are extracted/emitted with one precompiled struct (a deparser whose
headers are all valid packs them with one struct); parse states entered by one transition are nested in place;
csum16 over header fields is computed modulo 0xFFFF without building the bytes (calculations.csum16_folded); a
header of many bit<32> fields that meets a bit<32> register in a register window is kept as one numpy array and the
windows become array operations (vectors.py).
"""

from __future__ import annotations

import random
import re
from typing import Any

from switch.errors import LoadError
from switch.sim.externs import CounterArray, RegisterArray, ValueSet
from switch.sim.calculations import CustomCrc
from switch.sim.action_profiles import ActionProfile
from switch.sim.meters import MeterArray
from switch.sim.gen_actions import ActionGen
from switch.sim.gen_base import Emitter, PacketAbort, ParserError, _fmt, _noop, _sat, _six, _usat
from switch.sim.gen_expr import ExprGen
from switch.sim.gen_flow import FlowGen
from switch.sim.gen_packet import PacketGen
from switch.sim.gen_pipeline import PipelineGen
from switch.sim.optimize import VectorInfo
from switch.sim.program import Program
from switch.sim.tables import ActionInfo, MatchTable
from switch.sim import vectors as vec


class Codegen(ExprGen, ActionGen, PacketGen, PipelineGen, FlowGen):
    """Generates and compiles the Python module of one program; `build()` returns the namespace."""

    def __init__(self, prog: Program, arch_primitives: dict[str, Emitter], trace: bool,
                 reuse: "Codegen | None" = None, extra_ns: dict[str, Any] | None = None,
                 vectors: bool | set[str] = True) -> None:
        self.p = prog
        self.j = prog.json
        self.arch = arch_primitives
        self.trace = trace
        self.ns: dict[str, Any] = {"ParserError": ParserError, "PacketAbort": PacketAbort, "_sat": _sat, "_six": _six,
                                   "_usat": _usat, "_randbits": random.getrandbits, "_noop": _noop, "_fmt": _fmt,
                                   "__builtins__": __builtins__}
        self.out: list[str] = []
        self.uses_exit = False
        self.tmp = 0
        self.action_width: list[int] = []   # widths of the current action's runtime data
        self.actions: dict[int, dict] = {}
        self.action_by_name: dict[str, dict] = {}
        self.registers: dict[str, RegisterArray] = {}
        self.counters: dict[str, CounterArray] = {}
        self.meters: dict[str, MeterArray] = {}
        self.action_profiles: dict[str, ActionProfile] = {}
        self.extra_calcs: list[dict] = []  # selector calculations (a calculation per action_selector)
        self.value_sets: dict[str, ValueSet] = {}
        self.calcs: dict[str, str] = {}      # calculation name → generated function name
        self.custom_crcs: dict[str, CustomCrc] = {}  # crcN_custom calculations by name (their parameters)
        self.tables: dict[str, MatchTable] = {}
        self.action_infos: dict[str, ActionInfo] = {}
        self.slot_names = prog.slot_names()
        self.reuse = reuse  # a previous build of the same program: keep its tables/registers/counters (state)
        self.ns.update(extra_ns or {})
        # vector headers (vectors.py): untraced code only; the traced generator stays the scalar reference
        self.vectors: list[vec.VectorHeader] = []
        if vectors is not False and not trace:  # a set: all candidates but those
            skip = vectors if isinstance(vectors, set) else set()
            for hl in vec.candidates(prog):
                if hl.name not in skip:
                    a = hl.slots[hl.fields[0][0]]
                    self.vectors.append(vec.VectorHeader(hl.name, a, len(hl.fields), prog.nslots + len(self.vectors)))
        self.vector_of = {v.name: v for v in self.vectors}
        self.vec_info: VectorInfo | None = None
        if self.vectors:
            regs = frozenset(f"R{r['id']}" for r in self.j.get("register_arrays", [])
                             if r.get("bitwidth") == 32 and isinstance(r.get("id"), int))
            self.vec_info = VectorInfo(tuple((v.first, v.n, v.vslot) for v in self.vectors), regs)
            self.ns.update(vec.namespace(self.vectors))

    # --- small helpers ---------------------------------------------------------------------------------------
    def name(self, prefix: str) -> str:
        self.tmp += 1
        return f"{prefix}{self.tmp}"

    def const(self, prefix: str, value: Any) -> str:
        n = self.name(prefix)
        self.ns[n] = value
        return n
































    def used_slots(self) -> set[int]:
        """PHV slots the generated code may read or write: every `F[k]`, `F[a:b]` in the source and every slot in
        the constant slot tables (header stacks). A slot outside this set is invisible to the program."""
        used: set[int] = set()
        for m in re.finditer(r"F\[(\d+)(?::(\d+))?\]", self.source):
            a = int(m.group(1))
            used.update(range(a, int(m.group(2))) if m.group(2) else (a,))
        stack: list[Any] = [v for k, v in self.ns.items() if k.startswith("_S") and isinstance(v, tuple)]
        while stack:
            v = stack.pop()
            if isinstance(v, tuple):
                stack.extend(v)
            elif isinstance(v, int):
                used.add(v)
        return used

    def finish_vectors(self, src: str) -> str:
        """Registers used by vector windows become arrays; element accesses and scalar register reads rewritten
        (vectors.finish_module). NotVectorizable when the module cannot be rewritten (then build without vectors)."""
        by_id = {ra.id: ra for ra in self.registers.values()}
        windowed = {int(m) for m in re.findall(r"\bRV(\d+)\[", src)}
        columns = {name: [by_id[int(r[1:])] for r in regs]
                   for regs, name in (self.vec_info.columns.items() if self.vec_info is not None else ())}
        in_columns = [ra.id for regs in columns.values() for ra in regs]
        if len(set(in_columns)) != len(in_columns) or set(in_columns) & windowed:
            raise vec.NotVectorizable("a register in two vector windows of different shapes")
        numpy_regs = {f"R{ra.id}" for ra in self.registers.values()
                      if ra.is_vector or ra.id in windowed or ra.id in in_columns}
        src = vec.finish_module(src, self.vectors, numpy_regs)
        for rid in sorted(windowed):
            ra = by_id[rid]
            ra.vectorize()
            self.ns[f"R{rid}"] = self.ns[f"RV{rid}"] = ra.values
        for name, regs in columns.items():
            self.ns[name] = vec.join_columns(regs)
            for ra in regs:
                self.ns[f"R{ra.id}"] = ra.values
        return src

    # --- driver ----------------------------------------------------------------------------------------------
    def build(self) -> dict[str, Any]:
        """Generate, compile and execute the module; returns its namespace (parse, deparse, pipe_*, tables...)."""
        self.build_externs()
        self.build_meters()
        self.build_action_profiles()
        self.build_calculations()
        self.build_actions()
        self.build_tables()
        self.build_checksums()
        self.build_deparser()
        self.build_parser()
        pipes = self.build_pipelines()
        src = "\n".join(self.out) + "\n"
        src = self.finish_vectors(src)
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
