"""Shared pytest configuration: markers for tests that need root and network namespaces; the project's programs
compiled once per session."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.paths import ROOT


def _netns_missing() -> str | None:
    """Why namespace tests cannot run here, or None when they can."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, veth, AF_PACKET)"
    if shutil.which("ip") is None:
        return "needs iproute2 (`ip`)"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = _netns_missing()
    if reason is None or os.environ.get("CI"):
        return  # CI is root: there a namespace test that cannot run must fail, not be skipped
    for item in items:
        if "netns" in item.keywords or "mininet" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def program_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """p4src's programs compiled by the embedded compiler: <name>.json and <name>.p4info.txt, as `make build` writes
    them to out/."""
    import json

    from compiler import compile_file

    out = tmp_path_factory.mktemp("programs")
    for name in sorted(p.stem for p in (ROOT / "p4src").glob("*.p4")):
        result = compile_file(str(ROOT / "p4src" / f"{name}.p4"))
        (out / f"{name}.json").write_text(json.dumps(result.json))
        (out / f"{name}.p4info.txt").write_text(result.p4info_text)
    return out
