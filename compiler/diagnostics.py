"""Compiler diagnostics: records with a position, collected and printed the way p4c prints them.

A `Diagnostic` is data (location, severity, message, code). A `Diagnostics` object collects them for a whole
compilation; `render()` prints each as

    file:line:col: error: message
    <the source line>
          ^

`CompileError` carries the `Diagnostics` out of the compiler when errors stop it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field

from compiler.ast import SourceLoc

ERROR = "error"
WARNING = "warning"
NOTE = "note"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One message about one source position. `code` is a short machine-readable tag ("syntax", "unsupported", ...)."""

    loc: SourceLoc
    severity: str
    message: str
    code: str = ""

    def header(self) -> str:
        """The first line: `file:line:col: severity: message` (`file: ...` when there is no position)."""
        where = str(self.loc) if self.loc.line > 0 else self.loc.file
        return f"{where}: {self.severity}: {self.message}"

    def format(self, sources: dict[str, str] | None = None) -> str:
        """The full p4c-style text (header, source line, caret); the line comes from `sources` or the file."""
        return Diagnostics(sources=dict(sources or {})).format(self)


@dataclass
class Diagnostics:
    """A collection of diagnostics plus the source texts needed to quote lines (file name → text)."""

    items: list[Diagnostic] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)

    def add(self, loc: SourceLoc, severity: str, message: str, code: str = "") -> Diagnostic:
        """Record a diagnostic and return it."""
        d = Diagnostic(loc, severity, message, code)
        self.items.append(d)
        return d

    def error(self, loc: SourceLoc, message: str, code: str = "error") -> Diagnostic:
        """Record an error."""
        return self.add(loc, ERROR, message, code)

    def warning(self, loc: SourceLoc, message: str, code: str = "warning") -> Diagnostic:
        """Record a warning."""
        return self.add(loc, WARNING, message, code)

    def unsupported(self, loc: SourceLoc, what: str) -> Diagnostic:
        """Record an error for a valid P4 construct outside the supported subset: `unsupported: what`."""
        return self.add(loc, ERROR, f"unsupported: {what}", "unsupported")

    @property
    def errors(self) -> list[Diagnostic]:
        """The errors, in the order recorded."""
        return [d for d in self.items if d.severity == ERROR]

    @property
    def has_errors(self) -> bool:
        """True when at least one error was recorded."""
        return any(d.severity == ERROR for d in self.items)

    def check(self) -> None:
        """Raise `CompileError` if any error was recorded."""
        if self.has_errors:
            raise CompileError(self)

    raise_if_errors = check

    def __iter__(self) -> Iterator[Diagnostic]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> Diagnostic:
        return self.items[i]

    def source_line(self, loc: SourceLoc) -> str | None:
        """The text of `loc`'s line, from `sources` or else from the file on disk; None if unavailable."""
        text = self.sources.get(loc.file)
        if text is None:
            if not os.path.isfile(loc.file):
                return None
            try:
                with open(loc.file, encoding="utf-8", errors="replace") as f:
                    text = f.read()
            except OSError:
                return None
            self.sources[loc.file] = text
        lines = text.splitlines()
        if 1 <= loc.line <= len(lines):
            return lines[loc.line - 1]
        return None

    def format(self, d: Diagnostic) -> str:
        """One diagnostic as text: header, source line and caret (when the line is known)."""
        out = d.header()
        line = self.source_line(d.loc) if d.loc.line > 0 else None
        if line is not None:
            # Keep tabs in the caret line so the caret lines up under the same column.
            prefix = "".join(c if c == "\t" else " " for c in line[: max(d.loc.col - 1, 0)])
            out += f"\n{line}\n{prefix}^"
        return out

    def render(self) -> str:
        """All diagnostics as text, one block per diagnostic, in recorded order."""
        return "\n".join(self.format(d) for d in self.items)


class CompileError(Exception):
    """Compilation stopped because of errors; `diagnostics` holds them (and any warnings)."""

    def __init__(self, diagnostics: Diagnostics) -> None:
        self.diagnostics = diagnostics
        first = diagnostics.errors[0] if diagnostics.errors else None
        super().__init__(first.header() if first else "compilation failed")

    def __str__(self) -> str:
        return self.diagnostics.render()


def fail(loc: SourceLoc, message: str, code: str = "error", diags: Diagnostics | None = None) -> CompileError:
    """Record an error in `diags` (or a fresh collection) and return a `CompileError` to raise."""
    diags = diags if diags is not None else Diagnostics()
    diags.error(loc, message, code)
    return CompileError(diags)
