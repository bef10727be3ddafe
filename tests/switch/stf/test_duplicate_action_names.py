"""p4c's JSON can hold two actions of one name (a table's `fwd(port)` and the parameterless copy a direct call
`fwd(4)` specialises): `add t ... Ing.fwd(port:2)` must bind to the table's action (by the table's action ids, as
BMv2's runtime does), in whichever order the two actions are listed."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from compiler import compile_file
from switch.stf.testing import assert_stf

HERE = Path(__file__).parent
STF = """add Ing.t dst:0x000000000001 Ing.fwd(port:2)
packet 0 000000000001 000000000002 0800
expect 2 000000000001 000000000002 0002
packet 0 000000000001 000000000002 FFFF
expect 4 000000000001 000000000002 0004
"""


def _swap_ids(j: dict, a: int, b: int) -> dict:
    j = copy.deepcopy(j)
    sw = {a: b, b: a}
    for act in j["actions"]:
        act["id"] = sw.get(act["id"], act["id"])
    j["actions"].sort(key=lambda x: x["id"])
    for t in j["pipelines"][0]["tables"]:
        t["action_ids"] = [sw.get(i, i) for i in t["action_ids"]]
        t["default_entry"]["action_id"] = sw.get(t["default_entry"]["action_id"], t["default_entry"]["action_id"])
    return j


@pytest.mark.parametrize("table_action_first", [False, True])
def test_control_plane_binds_the_tables_action(tmp_path: Path, table_action_first: bool) -> None:
    j = compile_file(HERE / "programs" / "duplicate_action_names.p4").json
    fwds = [a for a in j["actions"] if a["name"] == "Ing.fwd"]
    assert len(fwds) == 2 and {len(a["runtime_data"]) for a in fwds} == {0, 1}
    if table_action_first:
        j = _swap_ids(j, fwds[0]["id"], fwds[1]["id"])
        assert [len(a["runtime_data"]) for a in j["actions"] if a["name"] == "Ing.fwd"] == [1, 0]
    (tmp_path / "t.stf").write_text(STF)
    assert_stf(j, tmp_path / "t.stf")
