"""Shared pytest configuration: markers for tests that need root and network namespaces."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

# helper modules beside the tests (repo_programs) import by name under --import-mode=importlib
if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))


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
