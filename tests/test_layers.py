"""The house's floors: each package imports only from the floors below it, and no two packages import each other.

    compiler, switch  <  worker  <  controller  <  topo  <  perf  <  experiments

compiler/ and switch/ are products of their own (p4c-bm2-ss and simple_switch_grpc stand-ins) and import nothing of
the testbed; a worker never needs the controller; topo/ (networks) programs switches through controller/; perf/
(the switch benchmark) builds on networks; experiments/ (what runs on networks) may use everything.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.paths import ROOT

LAYERS: dict[str, int] = {"compiler": 0, "switch": 0, "worker": 1, "controller": 2, "topo": 3, "perf": 4,
                          "experiments": 5}


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, top-level package) of every absolute import in a module, lazy ones inside functions included."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name.split(".")[0]) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module.split(".")[0]))
    return out


def violations(root: Path, layers: dict[str, int] = LAYERS) -> list[str]:
    """Every import that runs up the floors, or sideways between two packages of one floor."""
    bad = []
    for package, floor in layers.items():
        for path in sorted((root / package).rglob("*.py")):
            for line, imported in imports(path):
                if imported == package or imported not in layers:
                    continue
                if layers[imported] >= floor:
                    bad.append(f"{path.relative_to(root)}:{line}: {package} (floor {floor}) imports {imported} "
                               f"(floor {layers[imported]})")
    return bad


def test_no_import_runs_up_the_floors() -> None:
    assert violations(ROOT) == []


def test_every_package_has_a_floor() -> None:
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert packages == set(LAYERS), "give a new package its floor in LAYERS"


@pytest.mark.parametrize("planted", ["from experiments.run import main\n", "import topo.star\n",
                                     "def f():\n    from controller.client import P4RuntimeClient\n"])
def test_a_planted_upward_import_is_found(tmp_path: Path, planted: str) -> None:
    for package in LAYERS:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "worker" / "codec.py").write_text("import json\n" + planted)
    (found,) = violations(tmp_path)
    assert found.startswith("worker/codec.py:") and "worker (floor 1) imports" in found


def test_a_cycle_between_two_packages_of_one_floor_is_found(tmp_path: Path) -> None:
    for package in ("compiler", "switch"):
        (tmp_path / package).mkdir()
    (tmp_path / "switch" / "loader.py").write_text("from compiler import compile_file\n")
    assert violations(tmp_path, {"compiler": 0, "switch": 0}) == [
        "switch/loader.py:1: switch (floor 0) imports compiler (floor 0)"]
