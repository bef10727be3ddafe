"""`python -m compiler` with p4c-bm2-ss's flags: outputs, P4Info formats by suffix, -D/-I, errors on stderr."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from finsy.proto import p4i
from google.protobuf import json_format, text_format

from compiler.__main__ import main
from tests.paths import ROOT

BASIC = ROOT / "tests" / "p4" / "basic_forward.p4"

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
#include "defs.p4"
header h_t { bit<WIDTH> f; }
struct headers { h_t h; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action set(bit<WIDTH> v) { hdr.h.f = v; }
    table t { key = { hdr.h.f: exact; } actions = { set; } }
    apply { t.apply(); }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
"""


def test_outputs_json_and_all_p4info_formats(tmp_path: Path) -> None:
    out = tmp_path / "b.json"
    txt, js, binf = tmp_path / "b.p4info.txt", tmp_path / "b.p4info.json", tmp_path / "b.p4info.bin"
    rc = main([str(BASIC), "-o", str(out), "--p4runtime-files", f"{txt},{js},{binf}", "--std", "p4-16",
               "--arch", "v1model", "--target", "bmv2"])
    assert rc == 0
    j = json.loads(out.read_text())
    assert j["__meta__"]["version"] == [2, 23]
    from_text = text_format.Parse(txt.read_text(), p4i.P4Info())
    from_json = json_format.Parse(js.read_text(), p4i.P4Info())
    from_bin = p4i.P4Info.FromString(binf.read_bytes())
    assert from_text == from_json == from_bin
    assert [t.preamble.name for t in from_text.tables] == ["MyIngress.ipv4_lpm"]
    assert (ROOT / "tests" / "fixtures" / "basic_forward.p4info.txt").read_text() == txt.read_text()


def test_deprecated_p4runtime_file_and_format(tmp_path: Path) -> None:
    out = tmp_path / "b.json"
    info = tmp_path / "b.p4info"
    assert main([str(BASIC), "-o", str(out), "--p4runtime-file", str(info), "--p4runtime-format", "text"]) == 0
    assert text_format.Parse(info.read_text(), p4i.P4Info()).tables[0].preamble.name == "MyIngress.ipv4_lpm"


def test_txtpb_suffix_is_text_format(tmp_path: Path) -> None:  # p4c's recommended suffix
    info = tmp_path / "b.p4info.txtpb"
    assert main([str(BASIC), "-o", str(tmp_path / "b.json"), "--p4runtime-files", str(info)]) == 0
    assert text_format.Parse(info.read_text(), p4i.P4Info()).tables[0].preamble.name == "MyIngress.ipv4_lpm"


def test_unknown_p4info_suffix_is_an_error(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main([str(BASIC), "-o", str(tmp_path / "b.json"), "--p4runtime-files", str(tmp_path / "b.p4i")]) == 1
    assert "unknown file kind" in capsys.readouterr().err


def test_defines_and_include_dirs(tmp_path: Path) -> None:
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "defs.p4").write_text("#ifndef WIDTH\n#define WIDTH 8\n#endif\n")
    src = tmp_path / "prog.p4"
    src.write_text(PROGRAM)
    out = tmp_path / "prog.json"
    assert main([str(src), "-I", str(inc), "-D", "WIDTH=24", "-o", str(out)]) == 0
    types = {t["name"]: t["fields"] for t in json.loads(out.read_text())["header_types"]}
    assert types["h_t"] == [["f", 24, False]]
    assert main([str(src), "-I", str(inc), "-o", str(out)]) == 0
    types = {t["name"]: t["fields"] for t in json.loads(out.read_text())["header_types"]}
    assert types["h_t"] == [["f", 8, False]]


def test_error_goes_to_stderr_with_exit_code_1(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "bad.p4"
    src.write_text(BASIC.read_text().replace("hdr.ipv4.ttl = hdr.ipv4.ttl - 1;", "hdr.ipv4.ttl = hdr.ipv4.totalLen;"))
    out = tmp_path / "bad.json"
    assert main([str(src), "-o", str(out)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"{src}:62:24: error: type mismatch: cannot use a value of type bit<16>")
    assert err[1].strip() == "hdr.ipv4.ttl = hdr.ipv4.totalLen;"
    assert err[2].endswith("^")
    assert not out.exists()


def test_missing_source_file(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main([str(tmp_path / "nope.p4")]) == 1
    assert "nope.p4" in capsys.readouterr().err


def test_module_entry_point(tmp_path: Path) -> None:
    out = tmp_path / "b.json"
    p4info = tmp_path / "b.p4info.txt"
    r = subprocess.run([sys.executable, "-m", "compiler", str(BASIC), "-o", str(out), "--p4runtime-files",
                        str(p4info)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["pipelines"][0]["tables"][0]["name"] == "MyIngress.ipv4_lpm"
    assert 'name: "MyIngress.ipv4_lpm"' in p4info.read_text()
