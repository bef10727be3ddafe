"""The house's floors: each package imports only from the floors below it, and no two packages import each other.

    compiler, switch  <  worker  <  controller  <  topo  <  perf  <  experiments

compiler/ and switch/ are products of their own (p4c-bm2-ss and simple_switch_grpc stand-ins) and import nothing of
the testbed; a worker never needs the controller; topo/ (networks) programs switches through controller/; perf/
(the switch benchmark) builds on networks; experiments/ (what runs on networks) may use everything.
"""

from __future__ import annotations

import ast
import re
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


@pytest.mark.parametrize("planted", ["from experiments.session import run_experiment\n", "import topo.star\n",
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


# --- strings that name a module of a higher floor (importlib, "module:attr", python -m) -------------------------

MODULE_PATH = re.compile(r"^([a-z_]+)(\.[A-Za-z_]\w*)+(:[A-Za-z_]\w*)?$")


def _docstrings(tree: ast.AST) -> set[int]:
    return {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}


def module_strings(root: Path, layers: dict[str, int] = LAYERS) -> list[str]:
    """Every string constant (docstrings aside) that names a module (or "module:attr") of a higher floor, or of
    another package of the same floor: an import the import graph cannot see (importlib, `python -m`)."""
    bad = []
    for package, floor in layers.items():
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            prose = _docstrings(tree)
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or id(node) in prose:
                    continue
                m = MODULE_PATH.match(node.value)
                if m and m.group(1) in layers and m.group(1) != package and layers[m.group(1)] >= floor:
                    bad.append(f"{path.relative_to(root)}:{node.lineno}: {package} (floor {floor}) names "
                               f"{node.value!r} (floor {layers[m.group(1)]})")
    return bad


def test_no_string_names_a_module_up_the_floors() -> None:
    assert module_strings(ROOT) == []


@pytest.mark.parametrize("planted", ['CONTROLLER = "controller.switchml:SwitchMLController"\n',
                                     'def f():\n    return importlib.import_module("topo.inprocess")\n',
                                     'ARGV = ["-m", "experiments.run"]\n'])
def test_a_planted_module_string_is_found(tmp_path: Path, planted: str) -> None:
    for package in LAYERS:
        (tmp_path / package).mkdir()
    (tmp_path / "worker" / "codec.py").write_text('"""Names controller.switchml in prose: fine."""\nimport importlib\n'
                                                  'OK = "worker.atp.ps"\n' + planted)
    (found,) = module_strings(tmp_path)
    assert found.startswith("worker/codec.py:") and "worker (floor 1) names" in found


# --- no import loop inside a package ---------------------------------------------------------------------------


def module_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports (lazy imports inside functions included)."""
    modules = {}
    for path in (root / package).rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps = set()
        tree = ast.parse(path.read_text(), str(path))
        typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If) and _type_checking(block.test)
                       for stmt in block.body for n in ast.walk(stmt)}
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue  # `if TYPE_CHECKING:` imports are for annotations, never run
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [f"{node.module}.{a.name}" for a in node.names] + [node.module]
            for t in targets:
                while t and t not in modules:
                    t = t.rpartition(".")[0]
                if t and t != name and t.split(".")[0] == package and t != package:
                    deps.add(t)
                    break
        graph[name] = deps
    return graph


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def import_loops(root: Path, layers: dict[str, int] = LAYERS) -> list[str]:
    """Every set of modules of one package that import each other in a circle (Tarjan's strongly connected
    components), each named with its members."""
    loops = []
    for package in layers:
        graph = module_graph(root, package)
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on: set[str] = set()

        def visit(v: str) -> None:
            index[v] = low[v] = len(index)
            stack.append(v)
            on.add(v)
            for w in sorted(graph[v]):
                if w not in index:
                    visit(w)
                    low[v] = min(low[v], low[w])
                elif w in on:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                scc = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    scc.append(w)
                    if w == v:
                        break
                if len(scc) > 1:
                    loops.append(f"{package}: {len(scc)} modules import each other: {', '.join(sorted(scc))}")

        for v in sorted(graph):
            if v not in index:
                visit(v)
    return loops


def test_no_import_loop_inside_a_package() -> None:
    assert import_loops(ROOT) == []


def test_a_planted_import_loop_is_found(tmp_path: Path) -> None:
    (tmp_path / "worker" / "atp").mkdir(parents=True)
    (tmp_path / "worker" / "codec.py").write_text("def f():\n    from worker.protocols import PROTOCOLS\n")
    (tmp_path / "worker" / "protocols.py").write_text("from worker.atp.header import AtpCodec\n")
    (tmp_path / "worker" / "atp" / "header.py").write_text("from worker.codec import f\n")
    (tmp_path / "worker" / "job.py").write_text("from worker.codec import f\n")  # not in the loop
    (tmp_path / "worker" / "stats.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                                  "    from worker.blocks import B\n")  # annotations only: no loop
    (tmp_path / "worker" / "errors.py").write_text("from worker.stats import S\n")
    (tmp_path / "worker" / "blocks.py").write_text("from worker.errors import E\n")
    assert import_loops(tmp_path, {"worker": 1}) == [
        "worker: 3 modules import each other: worker.atp.header, worker.codec, worker.protocols"]


# --- worker/'s root below its protocols --------------------------------------------------------------------------


def protocol_folders() -> set[str]:
    """worker's subpackages that hold a registered protocol (where its spec's factories are defined)."""
    from worker.protocols import PROTOCOLS

    out = set()
    for spec in PROTOCOLS.values():
        for obj in (spec.codec, spec.open, spec.rank):
            module = getattr(obj, "__module__", "") or ""
            if module.startswith("worker.") and module.count(".") >= 2:
                out.add(".".join(module.split(".")[:2]))
    return out


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for w in graph.get(todo.pop(), ()):
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return seen


def test_each_protocol_stands_on_the_root_alone() -> None:
    """A protocol's folder imports worker's root only: never another protocol's folder, nor the registry (the root
    it stands on imports no protocol either)."""
    folders = protocol_folders()
    assert {"worker.switchml", "worker.atp", "worker.host"} <= folders
    graph = module_graph(ROOT, "worker")
    bad = []
    for folder in sorted(folders):
        for module in sorted(m for m in graph if m == folder or m.startswith(folder + ".")):
            for dep in sorted(reachable(graph, module)):
                other = any(dep == f or dep.startswith(f + ".") for f in folders - {folder})
                if other or dep == "worker.protocols":
                    bad.append(f"{module} reaches {dep}")
    assert bad == []
