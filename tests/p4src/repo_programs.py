"""The P4 programs of the repository and the STF tests written for each (shared by the toolchain tests).

A program is a `.p4` file that instantiates the `V1Switch` package. Its STF tests are `<name>.stf` beside it and any
`tests/switch/stf/*.stf` whose first line says `# program: <name>`.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.paths import ROOT

SKIP_DIRS = {".venv", ".venv-shell", ".venv-docs", ".git", "include", "data", "site"}
"""Not programs of their own: virtual environments, git, include folders, data, and `make docs`'s copy of docs/."""
PROGRAM_LINE = re.compile(r"#\s*program:\s*(\S+)")


INCLUDE_LINE = re.compile(r'#\s*include\s*"([^"]+)"')


def _instantiates(path: Path) -> bool:
    """The file instantiates V1Switch, itself or through a program it includes from its folder (esa.p4: atp.p4)."""
    text = path.read_text()
    if re.search(r"\bV1Switch\s*\(", text):
        return True
    return any(_instantiates(path.parent / name) for name in INCLUDE_LINE.findall(text)
               if "/" not in name and (path.parent / name).is_file())


def programs() -> list[Path]:
    found = []
    for path in sorted(ROOT.rglob("*.p4")):
        if SKIP_DIRS.intersection(path.relative_to(ROOT).parts):
            continue
        if _instantiates(path):
            found.append(path)
    return found


def stf_files(program: Path) -> list[Path]:
    files = [program.with_suffix(".stf")] if program.with_suffix(".stf").exists() else []
    for stf in sorted((ROOT / "tests" / "switch" / "stf").glob("*.stf")):
        match = PROGRAM_LINE.match(stf.read_text().lstrip())
        if match and match.group(1) == program.stem:
            files.append(stf)
    return files
