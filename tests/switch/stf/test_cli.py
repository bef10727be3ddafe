"""`python -m switch.stf`: exit codes and output (0 pass + one line, 1 mismatch + diff, 2 bad input)."""

from __future__ import annotations

from pathlib import Path

import pytest

import switch.stf.__main__ as cli
from tests.switch.stf.fakeswitch import FakeSwitch

PKT = "000000000002 000000000001 1234 cafe"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "make_switch", lambda program: FakeSwitch())


def _stf(tmp_path: Path, text: str) -> str:
    path = tmp_path / "t.stf"
    path.write_text(text)
    return str(path)


def test_pass_prints_one_line(fake: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stf = _stf(tmp_path, f"add dmac dstAddr:0x000000000002 forward(port:2)\npacket 1 {PKT}\nexpect 2 {PKT}\n")
    assert cli.main(["prog.json", stf]) == 0
    out, err = capsys.readouterr()
    assert out == f"PASS {stf}: 1 packet sent, 1 received on 2 checked port(s)\n" and err == ""


def test_mismatch_exits_1_with_diff(fake: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stf = _stf(tmp_path, f"add dmac dstAddr:0x000000000002 forward(port:2)\npacket 1 {PKT}\nexpect 2 {PKT[:-1]}0\n")
    assert cli.main(["prog.json", stf]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"FAIL {stf}:")
    assert f"#1 DIFFERS (expect at {stf}:3, sent by packet at line 2)" in err
    assert "received 00 00 00 00 00 02 00 00 00 00 00 01 12 34 CA FE" in err


def test_verbose_prints_the_control_plane_log(fake: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stf = _stf(tmp_path, "register_write seen 2 7\nregister_read seen 2\n")
    assert cli.main(["-v", "prog.json", stf]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == [f"{stf}:1: MyIngress.seen[2] := 7", f"{stf}:2: MyIngress.seen: [2]=7"]


def test_bad_input_exits_2(fake: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["prog.json", str(tmp_path / "missing.stf")]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert cli.main(["prog.json", _stf(tmp_path, "packet 1 0\nbogus\n")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 't.stf'}:1: packet data has an odd number" in err and ":2: unknown STF command 'bogus'" in err
    assert cli.main(["prog.json", _stf(tmp_path, "add nosuch k:1 a()\n")]) == 2
    assert "ERROR" in capsys.readouterr().err


def test_unloadable_program_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stf = _stf(tmp_path, "wait\n")
    assert cli.main([str(tmp_path / "nope.json"), stf]) == 2
    assert "cannot read" in capsys.readouterr().err
