"""Real p4c/BMv2 are preferred when on PATH (`make build`, topo's TARGET), else the embedded toolchain, with the
same flags and output paths. Fake binaries on PATH stand in for the real ones."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.paths import ROOT
from topo.target import Target


def fake_bin(tmp_path: Path, *names: str) -> str:
    """A PATH with executable stubs named `names` in front of the PATH without the real ones."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    for name in names:
        (bindir / name).write_text("#!/bin/sh\nexit 0\n")
        (bindir / name).chmod(0o755)
    return f"{bindir}:{path_without(*names)}"


def path_without(*names: str) -> str:
    """The normal PATH minus directories holding any of `names` (so the test also holds on a P4 VM)."""
    keep = [d for d in os.environ["PATH"].split(":") if not any((Path(d) / n).exists() for n in names)]
    return ":".join(keep)


def build_commands(tmp_path: Path, path: str) -> list[str]:
    out = tmp_path / "out"
    result = subprocess.run(["make", "-n", "--no-print-directory", "build", f"OUT={out}"], cwd=ROOT, text=True,
                            capture_output=True, timeout=60, env={**os.environ, "PATH": path})
    assert result.returncode == 0, result.stderr
    return [line for line in result.stdout.splitlines() if "p4src/switchml.p4" in line and " -o " in line]


def test_make_build_prefers_p4c_bm2_ss_with_the_same_outputs(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (real,) = build_commands(tmp_path, fake_bin(tmp_path, "p4c-bm2-ss"))
    (embedded,) = build_commands(tmp_path, path_without("p4c-bm2-ss"))
    assert real.startswith("p4c-bm2-ss ")
    assert embedded.split()[:3] == [".venv/bin/python", "-m", "compiler"]
    tail = f"-I p4src -o {out}/switchml.json --p4runtime-files {out}/switchml.p4info.txt p4src/switchml.p4"
    assert " ".join(real.split()[1:]) == tail
    assert " ".join(embedded.split()[3:]) == tail


def test_target_defaults_to_bmv2_only_when_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TARGET", raising=False)
    monkeypatch.setenv("PATH", path_without("simple_switch_grpc", "p4c-bm2-ss"))
    assert Target.choose() is Target.EMBEDDED
    with pytest.raises(ValueError, match="simple_switch_grpc is not on PATH"):
        Target.choose("bmv2")
    monkeypatch.setenv("PATH", fake_bin(tmp_path, "simple_switch_grpc"))
    assert Target.choose() is Target.BMV2
    assert Target.choose("embedded") is Target.EMBEDDED
    assert Target.BMV2.switch_argv0() == ["simple_switch_grpc"]
    monkeypatch.setenv("TARGET", "bmv2")
    assert Target.choose() is Target.BMV2
    with pytest.raises(ValueError, match="unknown TARGET"):
        Target.choose("tofino")


def test_the_choice_is_explained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26 bug 1: make run prints which switch it chose and why (it used to pick BMv2 from PATH silently)."""
    monkeypatch.delenv("TARGET", raising=False)
    monkeypatch.setenv("PATH", path_without("simple_switch_grpc"))
    target, why = Target.explain()
    assert target is Target.EMBEDDED and "not on PATH" in why and "TARGET=bmv2" in why
    monkeypatch.setenv("PATH", fake_bin(tmp_path, "simple_switch_grpc"))
    target, why = Target.explain()
    assert target is Target.BMV2 and "simple_switch_grpc is on PATH" in why and "TARGET=embedded" in why
    assert Target.explain("embedded") == (Target.EMBEDDED, "switch: embedded (python -m switch), as "
                                                           "--target=embedded asks")
