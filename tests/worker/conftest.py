"""Fixtures of the worker tests.

Helpers live in modules next to the tests (`ina_fixtures`, `ina_refswitch`, `ina_netsim`, `ina_engine`,
`ina_udpswitch`); this directory is put on sys.path so they import by name under --import-mode=importlib.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from ina_fixtures import LAYOUT_JSON  # noqa: E402
from worker.switchml.header import Codec  # noqa: E402


@pytest.fixture
def codec() -> Codec:
    """Codec of the hand-written layout (8 elements per packet)."""
    return Codec.from_program_json(LAYOUT_JSON)
