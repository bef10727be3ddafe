"""topo.tls: the throwaway CA of `make run TLS=1` — what it issues, and that it is made once."""

from __future__ import annotations

import ipaddress
import stat
import subprocess
import sys
from pathlib import Path

from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from tests.paths import ROOT
from topo.tls import CertDir


def _cert(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def test_ca_issues_a_server_and_a_client_certificate(tmp_path: Path) -> None:
    certs = CertDir(tmp_path / "tls").make(["switch.example", "10.0.0.254"])
    ca, server, client = _cert(certs.ca), _cert(certs.server_cert), _cert(certs.client_cert)
    server.verify_directly_issued_by(ca)
    client.verify_directly_issued_by(ca)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    san = server.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["localhost", "switch.example"]
    assert san.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address(a) for a in ("127.0.0.1", "::1",
                                                                                         "10.0.0.254")]
    usage = {c: c.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value for c in (server, client)}
    assert list(usage[server]) == [ExtendedKeyUsageOID.SERVER_AUTH]
    assert list(usage[client]) == [ExtendedKeyUsageOID.CLIENT_AUTH]
    for key in (certs.server_key, certs.client_key):
        assert stat.S_IMODE(key.stat().st_mode) == 0o600


def test_ensure_keeps_current_files_and_remakes_for_a_new_host(tmp_path: Path) -> None:
    certs = CertDir(tmp_path).ensure()
    first = certs.ca.read_bytes()
    assert certs.ensure().ca.read_bytes() == first  # idempotent
    assert certs.ensure(["127.0.0.1"]).ca.read_bytes() == first  # a default host: still current
    assert certs.ensure(["10.1.2.3"]).ca.read_bytes() != first  # a host the certificate does not name: a new CA
    certs.client_key.unlink()
    assert not certs.current() and certs.ensure().current()


def test_command_line_is_idempotent(tmp_path: Path) -> None:
    def run() -> str:
        r = subprocess.run([sys.executable, "-m", "topo.tls", str(tmp_path / "tls")], capture_output=True, text=True,
                           timeout=60, cwd=ROOT)
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    assert run() == f"TLS: new CA, server and client certificates in {tmp_path / 'tls'}"
    assert run() == f"TLS: certificates in {tmp_path / 'tls'} are current"


def test_switch_args_and_client_settings(tmp_path: Path) -> None:
    certs = CertDir(tmp_path)
    assert certs.switch_args() == ["--grpc-server-ssl", "--grpc-server-cert", str(tmp_path / "server.pem"),
                                   "--grpc-server-key", str(tmp_path / "server.key"), "--grpc-server-cacert",
                                   str(tmp_path / "ca.pem"), "--grpc-server-with-client-auth"]
    assert "--grpc-server-with-client-auth" not in certs.switch_args(client_auth=False)
    tls = certs.client()
    assert (tls.ca, tls.cert, tls.key) == (tmp_path / "ca.pem", tmp_path / "client.pem", tmp_path / "client.key")

