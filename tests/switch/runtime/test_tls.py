"""P4Runtime over TLS, as simple_switch_grpc does it: `python -m switch` with --grpc-server-ssl and its files serves
only clients that complete the handshake (and, with --grpc-server-with-client-auth, present a certificate of the CA
given), and the controller's client says in one line, at once, why a handshake failed. The same refusals run against real
simple_switch_grpc (marked bmv2: when it is on PATH), and the switch's startup warnings and errors are BMv2's words.

    PATH=/path/to/bmv2/bin:$PATH TARGET=bmv2 python -m pytest -q -m bmv2 tests/switch/runtime/test_tls.py
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import finsy
import grpc
import pytest
from finsy.proto import p4r, p4r_grpc

from controller.client import ControllerError, P4RuntimeClient
from controller.tls import ClientTls
from switch.__main__ import parse_args
from switch.runtime import P4RuntimeServer, ServerTls
from switch.v1model import V1Switch
from tests.paths import ROOT
from topo.netns import free_tcp_port
from topo.switchproc import port_open, wait_serving
from topo.tls import CertDir

pytestmark = pytest.mark.timeout(120)

FIXTURES = ROOT / "tests" / "fixtures"
CONNECT_TIMEOUT = 10.0
"""The client's bound; a refused handshake must end far sooner (FAST)."""
FAST = 3.0


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> CertDir:
    return CertDir(tmp_path_factory.mktemp("tls")).ensure()


@pytest.fixture(scope="module")
def other(tmp_path_factory: pytest.TempPathFactory) -> CertDir:
    """Another throwaway CA with its own server and client certificates."""
    return CertDir(tmp_path_factory.mktemp("other-tls")).ensure()


def _argv0(target: str) -> list[str]:
    if target == "bmv2":
        exe = shutil.which("simple_switch_grpc")
        if exe is None:
            if os.environ.get("TARGET", "").lower() == "bmv2":
                pytest.fail("TARGET=bmv2 but simple_switch_grpc is not on PATH")
            pytest.skip("simple_switch_grpc is not on PATH")
        return [exe, "--thrift-port", str(free_tcp_port())]
    return [sys.executable, "-m", "switch"]


@contextlib.contextmanager
def switch_process(target: str, target_args: list[str], log: Path) -> Iterator[str]:
    """A switch process (`python -m switch` or simple_switch_grpc) with these target options; its address."""
    addr = f"127.0.0.1:{free_tcp_port()}"
    argv = [*_argv0(target), "--no-p4", "--", "--grpc-server-addr", addr, *target_args]
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)
    try:
        wait_serving(proc, lambda: port_open(addr), 30, target, f"{addr} not open", log.read_text)
        yield addr
    finally:
        proc.terminate()
        proc.wait(10)


TARGETS = ["embedded", pytest.param("bmv2", marks=pytest.mark.bmv2)]


@pytest.fixture(scope="module", params=TARGETS)
def target(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(scope="module")
def mutual(target: str, certs: CertDir, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A switch serving TLS with client auth (--grpc-server-with-client-auth): its address."""
    with switch_process(target, certs.switch_args(client_auth=True), tmp_path_factory.mktemp("log") / "sw.log") as a:
        yield a


@pytest.fixture(scope="module")
def server_only(target: str, certs: CertDir, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A switch serving TLS without client auth (a CA given but unused, as BMv2 does): its address."""
    with switch_process(target, certs.switch_args(client_auth=False), tmp_path_factory.mktemp("log") / "sw.log") as a:
        yield a


def refused(addr: str, tls: ClientTls | None) -> str:
    """The client's error, checked to come at once rather than at the connect timeout."""
    started = time.monotonic()
    with pytest.raises(ControllerError) as err:
        P4RuntimeClient(addr, timeout=CONNECT_TIMEOUT, tls=tls).connect()
    assert time.monotonic() - started < FAST, str(err.value)
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"cannot connect to the switch's P4Runtime server at {addr}: ")
    return message


# --- refusals, the same on both targets ----------------------------------------------------------------------------


def test_plaintext_client_is_refused(mutual: str, server_only: str) -> None:
    for addr in (mutual, server_only):
        assert "the server closed the plaintext connection: it probably requires TLS" in refused(addr, None)


def test_plaintext_grpc_channel_gets_no_answer(mutual: str) -> None:
    stub = p4r_grpc.P4RuntimeStub(grpc.insecure_channel(mutual))
    with pytest.raises(grpc.RpcError) as err:
        stub.Capabilities(p4r.CapabilitiesRequest(), timeout=5)
    assert err.value.code() is grpc.StatusCode.UNAVAILABLE


def test_client_trusting_another_ca_is_refused(server_only: str, mutual: str, certs: CertDir,
                                               other: CertDir) -> None:
    for addr, tls in ((server_only, ClientTls(ca=other.ca)),
                      (mutual, ClientTls(ca=other.ca, cert=certs.client_cert, key=certs.client_key))):
        assert "the server's certificate is not signed by the CA trusted" in refused(addr, tls)


def test_client_auth_refuses_a_client_without_certificate(mutual: str, certs: CertDir) -> None:
    message = refused(mutual, ClientTls(ca=certs.ca))
    assert "requires a client certificate signed by a CA it trusts (give --ssl-cert and --ssl-key)" in message


def test_client_auth_refuses_a_certificate_of_another_ca(mutual: str, certs: CertDir, other: CertDir) -> None:
    message = refused(mutual, ClientTls(ca=certs.ca, cert=other.client_cert, key=other.client_key))
    assert f"requires a client certificate signed by a CA it trusts and refused {other.client_cert}" in message


def test_without_client_auth_no_certificate_is_asked_for(server_only: str, certs: CertDir, other: CertDir) -> None:
    # PI's DONT_REQUEST_CLIENT_CERTIFICATE: the CA given to the switch is not used, any client certificate passes
    for tls in (ClientTls(ca=certs.ca), ClientTls(ca=certs.ca, cert=other.client_cert, key=other.client_key)):
        with P4RuntimeClient(server_only, tls=tls, timeout=CONNECT_TIMEOUT) as client:
            assert client.is_primary


def test_right_certificates_set_pipeline_write_and_read(mutual: str, certs: CertDir) -> None:
    with P4RuntimeClient(mutual, tls=certs.client(), timeout=CONNECT_TIMEOUT) as client:
        assert client.is_primary
        client.set_pipeline(FIXTURES / "basic_forward.p4info.txt", FIXTURES / "basic_forward.json")
        entry = finsy.P4TableEntry("MyIngress.ipv4_lpm",
                                   match=finsy.P4TableMatch({"hdr.ipv4.dstAddr": "10.0.1.0/24"}),
                                   action=finsy.P4TableAction("MyIngress.ipv4_forward", dstAddr=0x0101, port=3))
        client.insert(entry)
        [got] = client.read(finsy.P4TableEntry("MyIngress.ipv4_lpm"))
        assert (got.action.name, got.action.args) == ("ipv4_forward", {"dstAddr": 0x0101, "port": 3})
        assert "MyIngress.ipv4_lpm" in {t.name for t in client.fetch_pipeline().tables}


def test_tls_client_of_a_plaintext_switch_is_told_so(certs: CertDir) -> None:
    server = P4RuntimeServer(V1Switch())
    addr = f"127.0.0.1:{server.start('127.0.0.1:0')}"
    try:
        assert "the server does not speak TLS" in refused(addr, ClientTls(ca=certs.ca))
    finally:
        server.stop(0)


def test_unreachable_switch_still_waits_for_the_timeout(certs: CertDir) -> None:
    # a switch still starting up is not a TLS failure: the client keeps trying until its timeout
    client = P4RuntimeClient(f"127.0.0.1:{free_tcp_port()}", timeout=0.5, tls=certs.client())
    with pytest.raises(ControllerError, match=r"cannot reach the switch's P4Runtime server at .* within 0\.5s"):
        client.connect()


# --- the server's TLS options (in process) -------------------------------------------------------------------------


def test_server_refuses_client_auth_without_a_ca(certs: CertDir) -> None:
    tls = ServerTls(certs.server_cert.read_bytes(), certs.server_key.read_bytes(), client_auth=True)
    server = P4RuntimeServer(V1Switch())
    with pytest.raises(ValueError, match="client auth needs the CA that signs client certificates"):
        server.start("127.0.0.1:0", tls=tls)


def test_in_process_server_over_mutual_tls(certs: CertDir, other: CertDir) -> None:
    tls = ServerTls.from_files(str(certs.server_cert), str(certs.server_key), str(certs.ca), client_auth=True)
    server = P4RuntimeServer(V1Switch())
    addr = f"127.0.0.1:{server.start('127.0.0.1:0', tls=tls)}"
    try:
        refused(addr, ClientTls(ca=certs.ca, cert=other.client_cert, key=other.client_key))
        with P4RuntimeClient(addr, tls=certs.client(), timeout=CONNECT_TIMEOUT) as client:
            assert client.is_primary
    finally:
        server.stop(0)


def test_client_certificate_without_key_is_refused_up_front(certs: CertDir) -> None:
    with pytest.raises(ValueError, match="give both --ssl-cert and --ssl-key"):
        ClientTls(ca=certs.ca, cert=certs.client_cert)


# --- the command line: simple_switch_grpc's words -----------------------------------------------------------------

def _error_cases(certs: CertDir) -> list[tuple[list[str], str]]:
    """Target options simple_switch_grpc refuses (exit 1), and the line it prints."""
    cert, key = str(certs.server_cert), str(certs.server_key)
    return [
        (["--grpc-server-ssl"], "When enabling SSL/TLS for gRPC server, --grpc-server-cert is required"),
        (["--grpc-server-ssl", "--grpc-server-cert", cert],
         "When enabling SSL/TLS for gRPC server, --grpc-server-key is required"),
        (["--grpc-server-ssl", "--grpc-server-cert", "/nonexistent/server.pem", "--grpc-server-key", key],
         "Error when reading pem file '/nonexistent/server.pem': file cannot be opened"),
        (["--grpc-server-ssl", "--grpc-server-cert", cert, "--grpc-server-key", key, "--grpc-server-cacert",
          "/nonexistent/ca.pem"], "Error when reading pem file '/nonexistent/ca.pem': file cannot be opened"),
    ]


WARNINGS = ["SSL/TLS is disabled for gRPC server, so provided .pem files will be ignored",
            "SSL/TLS is disabled for gRPC server, so cannot request client auth"]


def test_parse_tls_options(certs: CertDir) -> None:
    o = parse_args(["--no-p4", "--", *certs.switch_args(client_auth=True)])
    assert (o.grpc_ssl, o.grpc_client_auth) == (True, True)
    assert (o.grpc_cert, o.grpc_key, o.grpc_cacert) == (str(certs.server_cert), str(certs.server_key), str(certs.ca))
    assert o.stderr_warnings == []
    plain = parse_args(["--no-p4", "--", "--grpc-server-cert", "c.pem", "--grpc-server-with-client-auth"])
    assert not plain.grpc_ssl and plain.stderr_warnings == WARNINGS


def test_client_auth_without_ca_is_a_usage_error(certs: CertDir, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        parse_args(["--no-p4", "--", "--grpc-server-ssl", "--grpc-server-cert", str(certs.server_cert),
                    "--grpc-server-key", str(certs.server_key), "--grpc-server-with-client-auth"])
    assert exit_.value.code == 1
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("switch: error: --grpc-server-with-client-auth needs --grpc-server-cacert")


def _run(target: str, target_args: list[str]) -> subprocess.CompletedProcess[str]:
    argv = [*_argv0(target), "--no-p4", "--", "--grpc-server-addr", f"127.0.0.1:{free_tcp_port()}", *target_args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, cwd=ROOT)


@pytest.mark.parametrize("case", range(4))
def test_startup_errors_are_bmv2s_in_one_line(target: str, certs: CertDir, case: int) -> None:
    args, message = _error_cases(certs)[case]
    r = _run(target, args)
    assert r.returncode == 1, (r.stdout, r.stderr)
    lines = r.stderr.splitlines()
    if target == "bmv2":
        assert lines == [message]
    else:
        assert len(lines) == 1 and lines[0].startswith(f"switch: error: {message}"), r.stderr


@pytest.mark.parametrize("bad", ["cert", "key", "cacert"])
def test_unusable_pem_files_are_named_at_startup(certs: CertDir, other: CertDir, tmp_path: Path, bad: str) -> None:
    # grpc would say only "Failed to bind to address" (and BMv2 prints "Server listening" and serves nothing)
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    files = {"cert": str(certs.server_cert), "key": str(certs.server_key), "cacert": str(certs.ca)}
    files[bad] = str(other.server_key) if bad == "key" else str(junk)
    r = _run("embedded", ["--grpc-server-ssl", *(a for k, v in files.items() for a in (f"--grpc-server-{k}", v))])
    assert r.returncode == 1
    [line] = r.stderr.splitlines()
    expected = {"cert": "not a PEM certificate and an unencrypted PEM private key",
                "key": "the key is not the certificate's", "cacert": "no PEM certificate in it"}[bad]
    assert line.startswith("switch: error: Error when loading --grpc-server-") and line.endswith(expected), line


def test_pem_files_without_ssl_are_ignored_with_bmv2s_warnings(target: str, certs: CertDir, tmp_path: Path) -> None:
    log = tmp_path / "sw.log"
    with switch_process(target, ["--grpc-server-cert", str(certs.server_cert), "--grpc-server-with-client-auth"],
                        log) as addr:
        with P4RuntimeClient(addr, timeout=CONNECT_TIMEOUT) as client:  # plaintext, as the warning says
            assert client.is_primary
    lines = log.read_text().splitlines()
    assert [w for w in WARNINGS if w in lines] == WARNINGS, lines
