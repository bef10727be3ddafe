"""Fixtures of the controller tests: a program on the embedded switch behind a real P4Runtime server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from controller.client import P4RuntimeClient
from switch.runtime import P4RuntimeServer
from switch.v1model import V1Switch

Serve = Callable[[tuple[Path, Path]], tuple[V1Switch, P4RuntimeClient]]


@pytest.fixture
def serve() -> Iterator[Serve]:
    """serve((p4info, json)) -> (switch, connected client with the pipeline set); closed after the test."""
    opened: list[tuple[P4RuntimeServer, P4RuntimeClient]] = []

    def start(program: tuple[Path, Path]) -> tuple[V1Switch, P4RuntimeClient]:
        sw = V1Switch(device_id=1)
        server = P4RuntimeServer(sw, device_id=1)
        port = server.start("127.0.0.1:0")
        client = P4RuntimeClient(f"127.0.0.1:{port}", device_id=1, election_id=5).connect()
        opened.append((server, client))
        client.set_pipeline(*program)
        return sw, client

    yield start
    for server, client in opened:
        client.close()
        server.stop()
