"""compiler.conformance classifies a corpus: a passing program, a refused construct, and a wrong packet (an STF whose
expectation the program cannot meet) each land in their class, and the wrong packet fails the run."""

from __future__ import annotations

import json
from pathlib import Path

from compiler.conformance import main

HERE = Path(__file__).parent

UNSUPPORTED = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct headers { h_t h; }
struct metadata { bit<32> n; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { meta.n = pkt.length(); transition accept; } }
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
"""


def test_classes_and_exit_status(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    prog = (HERE / "p4" / "entry_priority.p4").read_text()
    stf = (HERE / "p4" / "entry_priority.stf").read_text()
    (tmp_path / "good.p4").write_text(prog)
    (tmp_path / "good.stf").write_text(stf)
    (tmp_path / "wrong.p4").write_text(prog)
    (tmp_path / "wrong.stf").write_text(stf.replace("expect 1 000000000001 000000000002 11AA 03 00",
                                                    "expect 1 000000000001 000000000002 11AA 01 00"))
    (tmp_path / "refused.p4").write_text(UNSUPPORTED)
    (tmp_path / "not_v1model.p4").write_text("#include <core.p4>\n")
    code = main([str(tmp_path), "--json", str(tmp_path / "r.json"), "--jobs", "2"])
    out = capsys.readouterr().out
    classes = {r["program"]: r["class"] for r in json.loads((tmp_path / "r.json").read_text())}
    assert classes == {"good.p4": "pass", "wrong.p4": "wrong-packet", "refused.p4": "unsupported"}
    assert code == 1 and "WRONG-PACKET: wrong.p4" in out and "packet_in.length()" in out
    assert "with an STF test: 2, passing 1" in out
