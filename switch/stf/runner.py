"""Runs a parsed STF script against a switch and judges the result the way bmv2stf.py does.

Semantics (p4c backends/bmv2/bmv2stf.py, `execute_stf_command` + `checkOutputs`):
- commands run in file order; each `packet` is processed to quiescence before the next line (bmv2stf sleeps after
  every CLI command for the same effect);
- `expect` lines only record expectations; they are matched at the end, per port, in order, whatever their position
  relative to the `packet` lines;
- the ports checked are those named by any `packet`/`expect` line (bmv2stf opens exactly those as interfaces; BMv2
  drops frames for other ports): on each, the number of frames must equal the number of `expect` lines with data and
  each frame must match its expectation (`*` nibbles, `$` = exact length, else a longer frame is fine); a port whose
  last `expect` line has no data accepts any number of frames; frames for other ports are reported as dropped;
- `wait` and `no_packet` change nothing (the switch is synchronous; bmv2stf ignores `no_packet`).
Beyond bmv2stf (which ignores them): `check_counter` and `register_read ... <op> <v>` are checked when they run, and
a control-plane command the switch refuses is an error with its line number (bmv2stf ignores CLI errors; pass
`ignore_cli_errors=True` for that behaviour).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import commands as c
from .control import ControlError, ControlPlane
from .packets import ExpectedPacket, render_diff, render_hex
from .parser import load_stf
from .values import BadValue

try:
    from switch.errors import MatchError
except ImportError:  # pragma: no cover - errors.py is part of the package
    MatchError = Exception  # type: ignore[misc,assignment]


@dataclass(frozen=True)
class Received:
    """A frame the switch sent: its port, its bytes and the line of the `packet` command that caused it."""

    port: int
    data: bytes
    cause_line: int


@dataclass
class StfResult:
    """Outcome of one STF run; `report()` is the readable diff, `summary()` one line."""

    source: str
    errors: list[str] = field(default_factory=list)  # bad commands (file:line: message); the run stopped there
    failures: list[str] = field(default_factory=list)  # rendered mismatch blocks
    warnings: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)  # what each control-plane command did, line by line
    sent: int = 0
    received: list[Received] = field(default_factory=list)
    dropped: list[Received] = field(default_factory=list)  # frames for ports the STF never names
    checked_ports: list[int] = field(default_factory=list)
    checks: int = 0  # counter/register checks evaluated

    @property
    def passed(self) -> bool:
        return not self.errors and not self.failures

    def summary(self) -> str:
        status = "PASS" if self.passed else ("ERROR" if self.errors else "FAIL")
        parts = [
            f"{self.sent} packet{'s' * (self.sent != 1)} sent",
            f"{len(self.received) - len(self.dropped)} received on {len(self.checked_ports)} checked port(s)",
        ]
        if self.checks:
            parts.append(f"{self.checks} counter/register check(s)")
        if self.dropped:
            parts.append(f"{len(self.dropped)} to unnamed ports dropped")
        problems = len(self.errors) + len(self.failures)
        tail = f"; {problems} problem(s)" if problems else ""
        return f"{status} {self.source}: " + ", ".join(parts) + tail

    def report(self) -> str:
        lines = [self.summary()]
        for e in self.errors:
            lines.append(f"error: {e}")
        lines.extend(self.failures)
        for w in self.warnings:
            lines.append(f"warning: {w}")
        if self.dropped and not self.passed:
            by_port: dict[int, int] = {}
            for r in self.dropped:
                by_port[r.port] = by_port.get(r.port, 0) + 1
            ports = ", ".join(f"port {p} x{n}" for p, n in sorted(by_port.items()))
            lines.append(f"note: frames to ports no packet/expect line names were dropped (as BMv2 does): {ports}")
        return "\n".join(lines)


def _lock(sw: Any) -> Any:
    lock = getattr(sw, "lock", None)
    return lock if lock is not None else contextlib.nullcontext()


class StfRunner:
    """Executes one script on one switch; create, then `run()` once."""

    def __init__(self, sw: Any, script: c.StfScript, *, ignore_cli_errors: bool = False) -> None:
        self.sw = sw
        self.script = script
        self.ignore_cli_errors = ignore_cli_errors
        self.control = ControlPlane(sw)
        self.result = StfResult(script.source)
        self.expected: dict[int, list[c.Expect]] = {}
        self.any_port: dict[int, bool] = {}  # port -> its last `expect` line had no data

    def _where(self, cmd: c.Command) -> str:
        return f"{self.script.source}:{cmd.line}"

    def _control(self, cmd: c.Command) -> str:
        ctl = self.control
        if isinstance(cmd, c.Add):
            return ctl.add(cmd)
        if isinstance(cmd, c.SetDefault):
            return ctl.set_default(cmd)
        if isinstance(cmd, c.Remove):
            return ctl.remove(cmd)
        if isinstance(cmd, c.Mirroring):
            return ctl.mirroring(cmd)
        if isinstance(cmd, c.Multicast):
            return ctl.multicast(cmd)
        if isinstance(cmd, c.CounterOp):
            return ctl.counter_op(cmd)
        if isinstance(cmd, c.MeterOp):
            return ctl.meter_op(cmd)
        if isinstance(cmd, c.RegisterOp):
            rname, msg, cells = ctl.register_op(cmd)
            if cmd.check is not None:
                for index, value in cells:
                    self._judge(cmd, f"register {rname}[{index}]", value, cmd.check)
            return msg
        if isinstance(cmd, c.CheckCounter):
            name, packets, nbytes = ctl.counter_values(cmd.counter, cmd.index)
            cell = f"{name}({cmd.index if isinstance(cmd.index, int) else '$' + cmd.index})"
            kinds = [cmd.check.kind] if cmd.check.kind else ["packets", "bytes"]
            for kind in kinds:
                self._judge(cmd, f"{cell} {kind}", packets if kind == "packets" else nbytes, cmd.check)
            return f"{cell}: packets={packets} bytes={nbytes}"
        raise AssertionError(f"unhandled command {cmd!r}")

    def _judge(self, cmd: c.Command, what: str, actual: int, check: c.Check) -> None:
        self.result.checks += 1
        if not check.holds(actual):
            self.result.failures.append(
                f"{self._where(cmd)}: {what} is {actual}, expected {check.op} {check.value}"
            )

    def _engine_errors(self) -> int:
        stats = getattr(self.sw, "stats", None)
        return stats.get("errors", 0) if isinstance(stats, dict) else 0

    def _packet(self, cmd: c.Packet) -> bool:
        before = self._engine_errors()
        try:
            with _lock(self.sw):
                outputs = self.sw.process(cmd.port, cmd.data)
        except Exception as e:  # an engine failure: report it at its line instead of a traceback
            self.result.errors.append(f"{self._where(cmd)}: the switch failed on this packet: {type(e).__name__}: {e}")
            return False
        if self._engine_errors() > before:
            # the engine caught an exception of its own while processing (it counts them in stats["errors"])
            detail = getattr(self.sw, "last_error", None) or "see the switch's stats"
            self.result.errors.append(f"{self._where(cmd)}: the switch failed on this packet: {detail}")
        self.result.sent += 1
        for port, frame in outputs:
            self.result.received.append(Received(port, bytes(frame), cmd.line))
        return True

    def run(self) -> StfResult:
        for cmd in self.script.commands:
            if isinstance(cmd, c.Packet):
                if not self._packet(cmd):
                    return self.result
            elif isinstance(cmd, c.Expect):
                self.any_port[cmd.port] = cmd.pattern is None
                if cmd.pattern is not None:
                    self.expected.setdefault(cmd.port, []).append(cmd)
            elif isinstance(cmd, (c.Wait, c.NoPacket)):
                continue
            else:
                try:
                    with _lock(self.sw):
                        msg = self._control(cmd)
                    self.result.log.append(f"{self._where(cmd)}: {msg}")
                except (ControlError, MatchError, BadValue, KeyError, ValueError) as e:
                    text = f"{self._where(cmd)}: {e}"
                    if not self.ignore_cli_errors:
                        self.result.errors.append(text)
                        return self.result  # later results would not mean anything
                    self.result.warnings.append(f"ignored (as bmv2stf would): {text}")
        self._check_outputs()
        return self.result

    def _check_outputs(self) -> None:
        ports = self.script.ports
        res = self.result
        res.checked_ports = sorted(ports)
        res.dropped = [r for r in res.received if r.port not in ports]
        for port in res.checked_ports:
            got = [r for r in res.received if r.port == port]
            exps = self.expected.get(port, [])
            if self.any_port.get(port):
                if exps:
                    res.warnings.append(
                        f"port {port} has expectations with data and a data-less 'expect {port}' after them: "
                        "any frames are accepted there (bmv2stf semantics)"
                    )
                continue
            block = self._compare_port(port, exps, got)
            if block:
                res.failures.append("\n".join(block))

    def _compare_port(self, port: int, exps: list[c.Expect], got: list[Received]) -> list[str]:
        src = self.script.source
        bad = [i for i in range(min(len(exps), len(got))) if not _pattern(exps[i]).matches(got[i].data)]
        if not bad and len(exps) == len(got):
            return []
        block = [f"port {port}: expected {len(exps)} packet(s), received {len(got)}"
                 + (f"; {len(bad)} differ" if bad else "")]
        for i in range(max(len(exps), len(got))):
            n = i + 1
            if i < len(exps) and i < len(got):
                exp, rcv = exps[i], got[i]
                where = f"expect at {src}:{exp.line}, sent by packet at line {rcv.cause_line}"
                if i in bad:
                    block.append(f"  #{n} DIFFERS ({where}):")
                    block.extend(render_diff(_pattern(exp), rcv.data))
                else:
                    block.append(f"  #{n} ok ({where})")
            elif i < len(exps):
                block.append(f"  #{n} MISSING (expect at {src}:{exps[i].line}):")
                block.extend(render_hex(str(_pattern(exps[i]))))
            else:
                block.append(f"  #{n} UNEXPECTED (sent by packet at {src}:{got[i].cause_line}):")
                block.extend(render_hex(got[i].data))
        return block


def _pattern(cmd: c.Expect) -> ExpectedPacket:
    assert cmd.pattern is not None
    return cmd.pattern


def make_switch(program: Any) -> Any:
    """A V1Switch loaded with `program`: a dict, JSON text, or a path to a BMv2 JSON file."""
    if isinstance(program, bytes):
        program = program.decode()
    elif isinstance(program, Path) or (isinstance(program, str) and not program.lstrip().startswith("{")):
        program = Path(program).read_text()
    from switch.v1model import V1Switch  # imported late: parsing STF does not need the engine

    sw = V1Switch()
    sw.load(program)
    return sw


def run_stf(
    switch_or_program: Any, stf: str | Path | c.StfScript, *, ignore_cli_errors: bool = False
) -> StfResult:
    """Run STF (text, a .stf path, or a parsed script) on a switch object, or on a fresh switch loaded with a BMv2
    JSON program (dict, text or path). Syntax errors raise `parser.StfSyntaxError`; everything else is in the result."""
    script = stf if isinstance(stf, c.StfScript) else load_stf(stf)
    sw = switch_or_program if hasattr(switch_or_program, "process") else make_switch(switch_or_program)
    return StfRunner(sw, script, ignore_cli_errors=ignore_cli_errors).run()
