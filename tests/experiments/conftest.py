"""Fixtures of the experiment tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from worker.protocols import SWITCHML, program_paths


@pytest.fixture(scope="session")
def program(program_dir: Path) -> tuple[Path, Path]:
    """switchml.p4 compiled by the embedded compiler: (JSON, P4Info), as `make build` writes them."""
    return program_paths(program_dir, SWITCHML.program)
