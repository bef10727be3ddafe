"""An optional match key as p4c-bm2-ss writes it: `ternary` in the BMv2 JSON, OPTIONAL in the P4Info. Over P4Runtime
the field takes OPTIONAL matches (a value, or left out for anything), as PI's bmv2 back end maps them onto the JSON's
ternary key; packets then match by them and a read gives the OPTIONAL match back."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from finsy import P4TableAction, P4TableEntry, P4TableMatch

from compiler import compile_file
from controller.client import P4RuntimeClient
from switch.runtime import P4RuntimeServer
from switch.v1model import V1Switch
from tests.paths import ROOT

SOURCE = ROOT / "tests" / "compiler" / "p4" / "optional_key.p4"


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[tuple[V1Switch, P4RuntimeClient, dict]]:
    result = compile_file(str(SOURCE))
    (tmp_path / "p.json").write_text(json.dumps(result.json))
    (tmp_path / "p.p4info.txt").write_text(result.p4info_text)
    sw = V1Switch(device_id=1)
    server = P4RuntimeServer(sw, device_id=1)
    port = server.start("127.0.0.1:0")
    client = P4RuntimeClient(f"127.0.0.1:{port}", device_id=1, election_id=5).connect()
    client.set_pipeline(tmp_path / "p.p4info.txt", tmp_path / "p.json")
    try:
        yield sw, client, result.json
    finally:
        client.close()
        server.stop()


def out_port(sw: V1Switch, a: int, b: int) -> int:
    (port, _), = sw.process(0, bytes([a, b]))
    return port


def test_optional_entries_over_p4runtime_match_as_ternary_in_the_json(rig) -> None:
    sw, client, program = rig
    table = next(t for p in program["pipelines"] for t in p["tables"] if t["name"] == "Ing.s")
    assert [k["match_type"] for k in table["key"]] == ["ternary", "exact"] and table["match_type"] == "ternary"
    fwd = "Ing.fwd"
    client.insert(P4TableEntry("Ing.s", match=P4TableMatch({"hdr.h.a": 3, "hdr.h.b": 8}),
                               action=P4TableAction(fwd, port=4), priority=10),
                  P4TableEntry("Ing.s", match=P4TableMatch({"hdr.h.b": 8}), action=P4TableAction(fwd, port=6),
                               priority=5))
    assert (out_port(sw, 3, 8), out_port(sw, 4, 8), out_port(sw, 4, 9)) == (4, 6, 9)
    read = sorted(client.read(P4TableEntry("Ing.s")), key=lambda e: -e.priority)
    assert [(e.priority, dict(e.match or {})) for e in read] == [(10, {"a": 3, "b": 8}), (5, {"b": 8})]  # by alias
    client.delete(P4TableEntry("Ing.s", match=P4TableMatch({"hdr.h.b": 8}), priority=5))
    assert out_port(sw, 4, 8) == 9
