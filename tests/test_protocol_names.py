"""Protocol names live in the registry: no string constant outside `worker/protocols.py`, the protocols' own
modules and the tests is a protocol's name or its program's file name. Code that needs a protocol asks the registry
(`PROTOCOLS`, `SWITCHML.program`, `spec.needs_ps`, ...), so a new protocol is one registration plus its own folder,
not an edit of every table and branch. Docstrings and messages may name protocols; they are prose."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.paths import ROOT
from worker.protocols import PROTOCOLS

PACKAGES = ("compiler", "switch", "worker", "controller", "topo", "perf", "experiments")
OWN = ("worker/protocols.py", "worker/switchml/", "worker/atp/", "worker/host/", "controller/switchml.py",
       "controller/atp.py", "controller/esa.py", "controller/release.py", "controller/omnireduce.py")
"""The registry and each protocol's own modules."""
ROLE_WORDS = {"ps"}
"""Names that are also a role: "ps" is the parameter server's key in job files and its link's name."""


def _names_pattern() -> re.Pattern[str]:
    names = sorted(set(PROTOCOLS) - ROLE_WORDS)
    programs = sorted({p.program for p in PROTOCOLS.values()})
    return re.compile(rf"^({'|'.join(names)})$|^({'|'.join(programs)})(\.p4|\.json|\.p4info\.txt|-)")


def _prose(tree: ast.AST) -> set[int]:
    """ids of the docstrings and bare string statements (attribute docs) of a module."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            out.add(id(node.value))
    return out


def protocol_literals(root: Path, pattern: re.Pattern[str]) -> list[str]:
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel.startswith(OWN):
                continue
            tree = ast.parse(path.read_text(), rel)
            prose = _prose(tree)
            for node in ast.walk(tree):
                if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose
                        and pattern.search(node.value)):
                    found.append(f"{rel}:{node.lineno}: {node.value!r}")
    return found


def test_no_protocol_name_outside_the_registry_and_the_protocols_own_modules() -> None:
    assert protocol_literals(ROOT, _names_pattern()) == []


def test_a_planted_protocol_name_is_found(tmp_path: Path) -> None:
    for package in PACKAGES:
        (tmp_path / package).mkdir()
    (tmp_path / "experiments" / "study.py").write_text('"""A study of atp."""\nif proto == "atp":\n    f("atp.json")\n')
    (tmp_path / "worker" / "atp").mkdir()
    (tmp_path / "worker" / "atp" / "x.py").write_text('NAME = "atp"\n')
    assert protocol_literals(tmp_path, _names_pattern()) == ["experiments/study.py:2: 'atp'",
                                                              "experiments/study.py:3: 'atp.json'"]


def _spec_names() -> set[str]:
    """The registry's module-level names of protocol specs (SWITCHML, ATP, ...)."""
    import worker.protocols
    from worker.plugin import ProtocolSpec

    return {k for k, v in vars(worker.protocols).items() if isinstance(v, ProtocolSpec)}


def _own_classes(root: Path) -> set[str]:
    """Classes the protocols' own modules define (their controllers, windows, codecs, ...)."""
    out = set()
    for own in OWN:
        paths = sorted((root / own).rglob("*.py")) if own.endswith("/") else [root / own]
        for path in paths:
            out |= {n.name for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.ClassDef)}
    return out


def protocol_branches(root: Path, specs: set[str], classes: set[str]) -> list[str]:
    """Code outside the registry and the protocols' own modules that asks *which* protocol it has instead of asking
    the protocol: a comparison with a spec's name or program, isinstance/issubclass on a protocol's class, or a
    spec imported by name from the registry."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel.startswith(OWN):
                continue
            for node in ast.walk(ast.parse(path.read_text(), rel)):
                if isinstance(node, ast.Compare):
                    for side in [node.left, *node.comparators]:
                        if (isinstance(side, ast.Attribute) and isinstance(side.value, ast.Name)
                                and side.value.id in specs and side.attr in ("name", "program", "header_type")):
                            found.append(f"{rel}:{node.lineno}: compares {side.value.id}.{side.attr}")
                elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                      and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2):
                    kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
                    for kind in kinds:
                        if isinstance(kind, ast.Name) and kind.id in classes:
                            found.append(f"{rel}:{node.lineno}: {node.func.id} on {kind.id}")
                elif isinstance(node, ast.ImportFrom) and node.module == "worker.protocols":
                    for alias in node.names:
                        if alias.name in specs:
                            found.append(f"{rel}:{node.lineno}: imports {alias.name} from the registry")
    return found


def test_no_tool_asks_which_protocol_it_has() -> None:
    assert protocol_branches(ROOT, _spec_names(), _own_classes(ROOT)) == []


def test_a_planted_protocol_branch_is_found(tmp_path: Path) -> None:
    for package in PACKAGES:
        (tmp_path / package).mkdir()
    (tmp_path / "experiments" / "soak.py").write_text(
        "from worker.protocols import ATP, PROTOCOLS\n"
        "def f(protocol, ctl):\n"
        "    if protocol == ATP.name or PROTOCOLS[protocol].needs_ps:\n"
        "        return isinstance(ctl, (int, AtpController))\n")
    (tmp_path / "controller" / "atp.py").write_text("if isinstance(x, AtpController): pass\n")  # its own module
    assert protocol_branches(tmp_path, {"ATP", "SWITCHML"}, {"AtpController"}) == [
        "experiments/soak.py:1: imports ATP from the registry", "experiments/soak.py:3: compares ATP.name",
        "experiments/soak.py:4: isinstance on AtpController"]
