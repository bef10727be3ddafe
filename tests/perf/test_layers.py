"""The layers' arrows point down: switch/ imports nothing from the packages above it (the harness lives in perf/)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ABOVE_SWITCH = {"controller", "worker", "topo", "perf", "training"}


def _imported_packages(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out


def test_switch_imports_nothing_from_the_layers_above() -> None:
    bad = {str(p.relative_to(ROOT)): sorted(_imported_packages(p) & ABOVE_SWITCH)
           for p in sorted((ROOT / "switch").rglob("*.py"))}
    assert {k: v for k, v in bad.items() if v} == {}


def test_the_harness_is_not_in_switch() -> None:
    assert not (ROOT / "switch" / "bench.py").exists()
    assert (ROOT / "perf" / "switchbench.py").exists()
