"""controller.schema: finsy's P4Schema loads a P4Info whose table keys share a last name component (p4c's issue561
samples: `hdr.u.short.$valid$` and `hdr.u.byte.$valid$`), entries on them encode and decode by full name, and a
name that is really taken twice is still refused, now naming it."""

from __future__ import annotations

import finsy
import pytest
from finsy.proto import p4i
from google.protobuf import text_format

from controller.schema import P4Schema

P4INFO = """
tables {
  preamble { id: 47159577 name: "ingress.debug_hdr" alias: "debug_hdr" }
  match_fields { id: 1 name: "hdr.base.t" bitwidth: 8 match_type: EXACT }
  match_fields { id: 2 name: "hdr.u.short.$valid$" bitwidth: 1 match_type: EXACT }
  match_fields { id: 3 name: "hdr.u.byte.$valid$" bitwidth: 1 match_type: EXACT }
  action_refs { id: 21257015 }
  size: 1024
}
actions { preamble { id: 21257015 name: "NoAction" alias: "NoAction" } }
"""


def _schema(text: str) -> P4Schema:
    return P4Schema(text_format.Parse(text, p4i.P4Info()))


def test_keys_sharing_a_short_name_load_and_encode_by_full_name() -> None:
    schema = _schema(P4INFO)
    table = schema.tables["ingress.debug_hdr"]
    assert schema.tables["debug_hdr"] is table  # an alias nobody else has still works
    assert [f.name for f in table.match_fields] == ["hdr.base.t", "hdr.u.short.$valid$", "hdr.u.byte.$valid$"]
    entry = finsy.P4TableEntry("ingress.debug_hdr", match=finsy.P4TableMatch(
        {"hdr.base.t": 1, "hdr.u.short.$valid$": 1, "hdr.u.byte.$valid$": 0}), action=finsy.P4TableAction("NoAction"))
    msg = entry.encode(schema)
    assert [(m.field_id, m.exact.value) for m in msg.table_entry.match] == [(1, b"\x01"), (2, b"\x01"), (3, b"\x00")]
    back = finsy.P4TableEntry.decode(msg, schema)
    assert back.match["hdr.u.short.$valid$"] == 1 and back.match["hdr.u.byte.$valid$"] == 0
    with pytest.raises(ValueError):
        table.match_fields["$valid$"]  # ambiguous: indexes neither


def test_a_name_taken_twice_is_refused_by_name() -> None:
    twice = P4INFO.replace('name: "hdr.u.byte.$valid$"', 'name: "hdr.u.short.$valid$"')
    with pytest.raises(ValueError, match=r"name already exists: 'hdr.u.short.\$valid\$'"):
        _schema(twice)
