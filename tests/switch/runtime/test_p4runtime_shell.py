"""p4runtime-shell (protobuf 3.20, its own venv: .venv-shell) as a client of our server, in a subprocess.

Set up the venv with:
    python3 -m venv .venv-shell && .venv-shell/bin/pip install -r tests/switch/runtime/requirements-shell.txt
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from switch.runtime import P4RuntimeServer
from switch.v1model import V1Switch
from tests.paths import ROOT

SHELL_PYTHON = ROOT / ".venv-shell" / "bin" / "python"
FIXTURES = ROOT / "tests" / "fixtures"

SCRIPT = r'''
import sys
import p4runtime_sh.shell as sh

addr, p4info, config = sys.argv[1:4]
sh.setup(device_id=0, grpc_addr=addr, election_id=(0, 1), config=sh.FwdPipeConfig(p4info, config), verbose=False)
try:
    te = sh.TableEntry("MyIngress.ipv4_lpm")(action="MyIngress.ipv4_forward")
    te.match["hdr.ipv4.dstAddr"] = "10.0.1.0/24"
    te.action["dstAddr"] = "00:00:00:00:01:01"
    te.action["port"] = "3"
    te.insert()
    for entry in sh.TableEntry("MyIngress.ipv4_lpm").read():
        m = entry.match["hdr.ipv4.dstAddr"]
        print("ENTRY", m.lpm.value.hex(), m.lpm.prefix_len, entry.action.action_name,
              entry.action["dstAddr"].value.hex(), entry.action["port"].value.hex())
    try:
        bad = sh.TableEntry("MyIngress.ipv4_lpm")(action="MyIngress.drop")
        bad.match["hdr.ipv4.dstAddr"] = "10.0.1.0/24"
        bad.insert()
    except Exception as exc:  # P4RuntimeWriteException lists the per-update errors
        print("DUPLICATE", type(exc).__name__, "ALREADY_EXISTS" in str(exc))
finally:
    sh.teardown()
'''


def ipv4_frame(dst: bytes) -> bytes:
    ip = bytes.fromhex("45000014000000004011") + b"\x00\x00" + bytes([10, 0, 0, 1]) + dst
    return bytes.fromhex("0000000000aa0000000000bb0800") + ip


@pytest.mark.skipif(not SHELL_PYTHON.exists(),
                    reason=".venv-shell missing: python3 -m venv .venv-shell && "
                           ".venv-shell/bin/pip install -r tests/switch/runtime/requirements-shell.txt")
def test_p4runtime_shell_client(tmp_path: Path) -> None:
    sw = V1Switch(drop_port=511)
    server = P4RuntimeServer(sw)
    port = server.start("127.0.0.1:0")
    script = tmp_path / "shell_client.py"
    script.write_text(SCRIPT)
    try:
        proc = subprocess.run(
            [str(SHELL_PYTHON), str(script), f"127.0.0.1:{port}", str(FIXTURES / "basic_forward.p4info.txt"),
             str(FIXTURES / "basic_forward.json")],
            capture_output=True, text=True, timeout=120)
    finally:
        server.stop(0)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert "ENTRY 0a000100 24 MyIngress.ipv4_forward 0101 03" in lines, proc.stdout + proc.stderr
    assert "DUPLICATE P4RuntimeWriteException True" in lines, proc.stdout + proc.stderr
    [(out_port, out)] = sw.process(1, ipv4_frame(bytes([10, 0, 1, 7])))
    assert out_port == 3 and out[:6] == bytes.fromhex("000000000101")
