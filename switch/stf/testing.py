"""pytest helpers: run an STF test and fail with the readable diff; find the program an STF file is written for."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Sequence

from .runner import StfResult, run_stf

_PROGRAM_LINE = re.compile(r"^#\s*program:\s*(\S+)", re.M)


def assert_stf(switch_or_program: Any, stf: str | Path, *, ignore_cli_errors: bool = False) -> StfResult:
    """Run `stf` (text or .stf path) on a switch or a BMv2 JSON program; raise AssertionError with the report unless
    it passes. Returns the result so a test can look further (log, counts)."""
    __tracebackhide__ = True
    result = run_stf(switch_or_program, stf, ignore_cli_errors=ignore_cli_errors)
    if not result.passed:
        raise AssertionError(result.report())
    return result


def program_for(stf: Path, search: Sequence[Path]) -> Path:
    """The BMv2 JSON an STF file names in a `# program: NAME` comment: the first NAME.json found in `search`
    (the path in the last directory when none exists, so a caller can report or skip on it)."""
    m = _PROGRAM_LINE.search(stf.read_text())
    if not m:
        raise ValueError(f"{stf}: no '# program: <name>' line says which program this test is for")
    candidates = [Path(d) / f"{m.group(1)}.json" for d in search]
    return next((p for p in candidates if p.exists()), candidates[-1])
