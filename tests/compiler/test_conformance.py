"""perf.conformance classifies a corpus: a passing program, a refused construct, and a wrong packet (an STF whose
expectation the program cannot meet) each land in their class, and the wrong packet fails the run."""

from __future__ import annotations

import json
from pathlib import Path

from perf.conformance import main

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


def test_bmv2_suite_is_p4cs_bmv2_test_list(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    # a stand-in p4c checkout: *-bmv2.p4 samples including v1model.p4, less CMakeLists' XFAIL_TESTS
    samples = tmp_path / "testdata" / "p4_16_samples"
    samples.mkdir(parents=True)
    prog = (HERE / "p4" / "entry_priority.p4").read_text()
    (samples / "good-bmv2.p4").write_text(prog)
    (samples / "good-bmv2.stf").write_text((HERE / "p4" / "entry_priority.stf").read_text())
    (samples / "xfailed-bmv2.p4").write_text(UNSUPPORTED)
    (samples / "refused-bmv2.p4").write_text(UNSUPPORTED)
    (samples / "other.p4").write_text(prog)                      # not named -bmv2: not in the suite
    (samples / "psa-bmv2.p4").write_text("#include <core.p4>\n")  # not v1model
    (tmp_path / "backends" / "bmv2").mkdir(parents=True)
    (tmp_path / "backends" / "bmv2" / "CMakeLists.txt").write_text(
        "set (XFAIL_TESTS\n  # a comment (with parentheses) naming fake.p4\n  testdata/p4_16_samples/xfailed-bmv2.p4\n)\n")
    assert main(["--bmv2-suite", str(tmp_path), "--json", str(tmp_path / "r.json")]) == 0
    classes = {r["program"]: r["class"] for r in json.loads((tmp_path / "r.json").read_text())}
    assert classes == {"good-bmv2.p4": "pass", "refused-bmv2.p4": "unsupported"}
    assert "accepted (compiled; with an STF, passing it): 1 of 2 (50 %)" in capsys.readouterr().out
