"""The embedded switch's engine without kernel I/O: `sw.process()` in a loop, and the PacketLoop on in-memory
ports (embedded-only rows of the switch benchmark)."""

from __future__ import annotations

import dataclasses
import json
import statistics
import time
from pathlib import Path
from typing import Callable

from perf.workloads import PacketProgram, placeholder_hosts


@dataclasses.dataclass(frozen=True)
class EngineResult:
    """Median frames/s of `repeats` runs of one in-process mode."""

    program: str
    mode: str
    """in-process | loop"""
    pps: float
    rates: tuple[float, ...]
    packets: int
    seconds: float
    cpu_share: float
    """This process's CPU time / wall time (below 1.0: other processes took part of the CPU)."""
    how: str
    compiler: str = "ours"
    """Who wrote the JSON (perf.harness.COMPILERS)."""
    shape: str = ""
    """The JSON's tables and conditionals (perf.family.JsonShape)."""

    @property
    def us_per_frame(self) -> float:
        return 1e6 / self.pps if self.pps else float("inf")


def _repeated(run: Callable[[float], int], seconds: float, repeats: int) -> tuple[list[float], int, float, float]:
    """Call `run(seconds / repeats)` (returns packets done) `repeats` times: (rates, packets, wall, CPU share)."""
    rates, packets, wall, cpu = [], 0, 0.0, 0.0
    for _ in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        n = run(seconds / repeats)
        dt = time.perf_counter() - t0
        cpu += time.process_time() - c0
        rates.append(n / dt)
        packets += n
        wall += dt
    return rates, packets, wall, cpu / wall


def _result(prog: PacketProgram, mode: str, how: str, runs: tuple[list[float], int, float, float],
            program_json: Path, compiler: str) -> EngineResult:
    from perf.family import JsonShape

    rates, packets, wall, share = runs
    return EngineResult(prog.key, mode, statistics.median(rates), tuple(rates), packets, wall, share, how, compiler,
                        str(JsonShape.of(json.loads(program_json.read_text()))))


def loaded_engine(prog: PacketProgram, program_json: Path):  # -> switch.v1model.V1Switch
    """A V1Switch with the program and its entries, for h1/h2 at their usual addresses."""
    from switch.v1model import V1Switch

    sw = V1Switch()
    sw.load(json.loads(program_json.read_text()))
    prog.engine_setup(sw, *placeholder_hosts())
    return sw


def bench_in_process(prog: PacketProgram, program_json: Path, seconds: float, repeats: int = 5,
                     compiler: str = "ours") -> EngineResult:
    """`sw.process` on pre-built frames: `repeats` runs sharing `seconds`; the median rate."""
    sw = loaded_engine(prog, program_json)
    frames = prog.frames(*placeholder_hosts())
    process = sw.process
    want_port = prog.reply_to + 1
    check = process(1, frames[0])
    if len(check) != 1 or check[0][0] != want_port or check[0][1][prog.match_offset:].find(prog.match) != 0:
        raise RuntimeError(f"{prog.key}: the program did not send the benchmark frame to port {want_port}: "
                           f"{check!r:.200}")
    nf = len(frames)

    def run(duration: float) -> int:
        n = 0
        end = time.perf_counter() + duration
        while True:
            for i in range(256):
                process(1, frames[i % nf])
            n += 256
            if time.perf_counter() >= end:
                return n

    return _result(prog, "in-process", "sw.process() loop, no I/O", _repeated(run, seconds, repeats), program_json,
                   compiler)


def bench_loop(prog: PacketProgram, program_json: Path, seconds: float, repeats: int = 5,
               compiler: str = "ours") -> EngineResult:
    """PacketLoop (receive batch → drain) on in-memory ports: engine + loop overhead, no kernel I/O."""
    from switch.ports import MemoryPort, PacketLoop

    sw = loaded_engine(prog, program_json)
    p1, p2 = MemoryPort(1), MemoryPort(2)
    loop = PacketLoop(sw, [p1, p2])
    out = (p1, p2)[prog.reply_to]
    frames = prog.frames(*placeholder_hosts())

    def run(duration: float) -> int:
        n = 0
        end = time.perf_counter() + duration
        while time.perf_counter() < end:
            for i in range(256):
                p1._rx.append(frames[i % len(frames)])
            p1.feed(frames[0])
            n += 257
            while loop.run_once(0):
                pass
            if len(out.sent) != 257:
                raise RuntimeError(f"{prog.key}: loop delivered {len(out.sent)} of 257 frames")
            out.sent.clear()
        return n

    try:
        runs = _repeated(run, seconds, repeats)
    finally:
        loop.close()
    return _result(prog, "loop", "PacketLoop batches of 257 on in-memory ports", runs, program_json, compiler)
