"""The controller CLI and p4runtime-shell over TLS (`make controller-shell TLS=1`, `make p4runtime-shell TLS=1`),
against an in-process switch serving P4Runtime with client auth: both flag spellings work, and a refused handshake
is one line on stderr, at once."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from compiler import compile_file
from switch.runtime import P4RuntimeServer, ServerTls
from switch.v1model import V1Switch
from tests.paths import ROOT
from topo.tls import CertDir

pytestmark = pytest.mark.timeout(120)

SHELL_PYTHON = ROOT / ".venv-shell" / "bin" / "python"
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> CertDir:
    return CertDir(tmp_path_factory.mktemp("tls")).ensure()


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("program")
    result = compile_file(str(ROOT / "p4src" / "switchml.p4"), defines={"INA_NUM_ELEMS": "16", "INA_POOL_SIZE": "16"})
    (out / "p.json").write_text(json.dumps(result.json))
    (out / "p.p4info.txt").write_text(result.p4info_text)
    return out / "p.json", out / "p.p4info.txt"


@pytest.fixture
def addr(certs: CertDir) -> Iterator[str]:
    """An in-process switch requiring client certificates of `certs`' CA."""
    server = P4RuntimeServer(V1Switch())
    tls = ServerTls.from_files(str(certs.server_cert), str(certs.server_key), str(certs.ca), client_auth=True)
    yield f"127.0.0.1:{server.start('127.0.0.1:0', tls=tls)}"
    server.stop(0)


def cli(addr: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "controller", "--grpc-addr", addr, "--target", "embedded", *args],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)


def ours(certs: CertDir) -> list[str]:
    """The flags `make controller-shell TLS=1` passes."""
    return ["--ssl-ca", str(certs.ca), "--ssl-cert", str(certs.client_cert), "--ssl-key", str(certs.client_key)]


def shells(certs: CertDir) -> list[str]:
    """The flags `make p4runtime-shell TLS=1` passes (p4runtime-shell's spelling)."""
    return ["--ssl", "--cacert", str(certs.ca), "--cert", str(certs.client_cert), "--private-key",
            str(certs.client_key)]


@pytest.mark.parametrize("spelling", [ours, shells])
def test_push_over_mutual_tls(addr: str, certs: CertDir, program: tuple[Path, Path], spelling) -> None:
    json_path, p4info = program
    r = cli(addr, *spelling(certs), "push", "--p4info", str(p4info), "--json", str(json_path))
    assert r.returncode == 0, r.stderr
    assert f"pipeline switchml pushed to {addr}" in r.stdout


@pytest.mark.parametrize("flags,why", [
    ([], "the server closed the plaintext connection: it probably requires TLS"),
    (["--ssl-ca", "{ca}"], "it requires a client certificate signed by a CA it trusts (give --ssl-cert and --ssl-key)"),
])
def test_refused_handshake_is_one_line_at_once(addr: str, certs: CertDir, flags: list[str], why: str) -> None:
    started = time.monotonic()
    r = cli(addr, "--timeout", "20", *(f.format(ca=certs.ca) for f in flags), "counters", "1")
    assert time.monotonic() - started < 15  # python's start-up included; the timeout is 20 s
    assert r.returncode == 1
    [line] = r.stderr.splitlines()
    assert line.startswith(f"error: cannot connect to the switch's P4Runtime server at {addr}: ") and why in line


def test_a_certificate_without_its_key_is_refused(certs: CertDir) -> None:
    r = cli("127.0.0.1:1", "--ssl-cert", str(certs.client_cert), "counters", "1")
    assert r.returncode == 1
    assert r.stderr.splitlines() == ["error: a client certificate and its key go together: give both --ssl-cert and "
                                     "--ssl-key"]


SHELL_SCRIPT = r'''
import sys
import p4runtime_sh.shell as sh
from p4runtime_sh.p4runtime import SSLOptions

args = sh.get_arg_parser().parse_args(sys.argv[1:])
sh.setup(args.device_id, args.grpc_addr, args.election_id, config=args.config,
         ssl_options=SSLOptions(not args.ssl, args.cacert, args.cert, args.private_key), verbose=False)
try:
    te = sh.TableEntry("MyIngress.ipv4_lpm")(action="MyIngress.ipv4_forward")
    te.match["hdr.ipv4.dstAddr"] = "10.0.1.0/24"
    te.action["dstAddr"] = "00:00:00:00:01:01"
    te.action["port"] = "3"
    te.insert()
    print("ENTRIES", len(list(sh.TableEntry("MyIngress.ipv4_lpm").read())))
finally:
    sh.teardown()
'''


@pytest.mark.skipif(not SHELL_PYTHON.exists(), reason=".venv-shell missing (make shell-venv)")
def test_p4runtime_shell_over_mutual_tls(addr: str, certs: CertDir, tmp_path: Path) -> None:
    script = tmp_path / "shell_client.py"
    script.write_text(SHELL_SCRIPT)
    config = f"{FIXTURES / 'basic_forward.p4info.txt'},{FIXTURES / 'basic_forward.json'}"
    r = subprocess.run([str(SHELL_PYTHON), str(script), "--grpc-addr", addr, "--device-id", "0", "--election-id",
                        "0,1", "--config", config, *shells(certs)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ENTRIES 1" in r.stdout.splitlines(), r.stdout + r.stderr
