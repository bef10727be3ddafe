"""Fixtures of the worker tests.

Helpers live in modules next to the tests (`tests.worker.ina_fixtures`, `ina_refswitch`, `ina_netsim`, `ina_engine`,
`ina_udpswitch`).
"""

from __future__ import annotations

import pytest

from tests.worker.ina_fixtures import LAYOUT_JSON
from worker.switchml.header import Codec


@pytest.fixture
def codec() -> Codec:
    """Codec of the hand-written layout (8 elements per packet)."""
    return Codec.from_program_json(LAYOUT_JSON)
