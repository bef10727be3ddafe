"""Fixtures for engine tests: loading p4c-shaped JSON fixtures into a fresh V1Switch."""

from __future__ import annotations

import json
from typing import Callable

import pytest

from switch.v1model import V1Switch
from tests.paths import TESTS

FIXTURES = TESTS / "fixtures"


def fixture_json(name: str) -> dict:
    """The parsed JSON of tests/fixtures/<name>.json."""
    return json.loads((FIXTURES / f"{name}.json").read_text())


P4 = TESTS / "p4"
_compiled: dict[str, dict | str] = {}


def compiled_json(name: str) -> dict:
    """tests/p4/<name>.p4 compiled by the project's compiler (cached); skips the test if it cannot compile it."""
    if name not in _compiled:
        try:
            from compiler import compile_file
            _compiled[name] = compile_file(str(P4 / f"{name}.p4")).json
        except Exception as exc:  # noqa: BLE001 - the compiler's own tests own its failures
            _compiled[name] = f"{type(exc).__name__}: {str(exc)[:500]}"
    got = _compiled[name]
    if isinstance(got, str):
        pytest.skip(f"compiler cannot build tests/p4/{name}.p4: {got}")
    return got


@pytest.fixture(params=["hand", "compiled"])
def load(request):
    """load(name, **switch_kwargs) -> a V1Switch running fixture <name>: the hand-written p4c-shaped
    tests/fixtures/<name>.json, and (second parameter) tests/p4/<name>.p4 compiled by compiler/ — so every
    behaviour test also checks engine and compiler against each other.

    At teardown every such switch must have counted no per-packet internal errors (they are caught and counted,
    so without this check an engine bug could hide behind an empty output list)."""
    made: list[V1Switch] = []

    def _load(name: str, **kw) -> V1Switch:
        sw = V1Switch(**kw)
        if request.param == "hand":
            sw.load((FIXTURES / f"{name}.json").read_text())
        else:
            sw.load(compiled_json(name))
        made.append(sw)
        return sw

    yield _load
    for sw in made:
        assert sw.stats["errors"] == 0, f"engine errors: {sw.last_error}"


@pytest.fixture
def fixture_dict() -> Callable[[str], dict]:
    return fixture_json


@pytest.fixture
def load_compiled():
    """load_compiled(name, **switch_kwargs) -> a V1Switch running tests/p4/<name>.p4 compiled by compiler/ (for
    programs that have no hand-written JSON twin); errors checked at teardown as with `load`."""
    made: list[V1Switch] = []

    def _load(name: str, **kw) -> V1Switch:
        sw = V1Switch(**kw)
        sw.load(compiled_json(name))
        made.append(sw)
        return sw

    yield _load
    for sw in made:
        assert sw.stats["errors"] == 0, f"engine errors: {sw.last_error}"
