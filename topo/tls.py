"""A throwaway certificate authority for P4Runtime over TLS: a CA, a server certificate for the switches and a client
certificate for the controllers, as PEM files in one directory (`make run TLS=1` keeps them in out/tls/).

    certs = CertDir(Path("out/tls")).ensure()     # made once, kept while valid and naming every host asked for
    certs.switch_args()                           # simple_switch_grpc's TLS flags (after `--`), client auth on
    certs.client()                                # controller.tls.ClientTls: the CA and the client certificate

    python -m topo.tls out/tls [--host NAME|IP ...] [--force]

Files: ca.pem, server.pem and server.key (subject alternative names localhost, 127.0.0.1, ::1 and the given hosts),
client.pem and client.key; keys are written mode 0600. The CA's key is not kept: other hosts mean a new CA, and
every file anew.
"""

from __future__ import annotations

import argparse
import datetime
import ipaddress
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from controller.tls import ClientTls

__all__ = ["DEFAULT_HOSTS", "CertDir"]

DEFAULT_HOSTS = ("localhost", "127.0.0.1", "::1")
VALID_DAYS = 365
RENEW_BEFORE = datetime.timedelta(days=1)
"""ensure() makes new files when the server certificate expires within this."""


@dataclass(frozen=True)
class CertDir:
    """The PEM files of one throwaway CA in `root`."""

    root: Path

    @property
    def ca(self) -> Path:
        return self.root / "ca.pem"

    @property
    def server_cert(self) -> Path:
        return self.root / "server.pem"

    @property
    def server_key(self) -> Path:
        return self.root / "server.key"

    @property
    def client_cert(self) -> Path:
        return self.root / "client.pem"

    @property
    def client_key(self) -> Path:
        return self.root / "client.key"

    def switch_args(self, client_auth: bool = True) -> list[str]:
        """The switch's target options (simple_switch_grpc's and `python -m switch`'s) for TLS with these files."""
        return ["--grpc-server-ssl", "--grpc-server-cert", str(self.server_cert), "--grpc-server-key",
                str(self.server_key), "--grpc-server-cacert", str(self.ca),
                *(["--grpc-server-with-client-auth"] if client_auth else [])]

    def client(self) -> ClientTls:
        """A controller's TLS settings: trust this CA, present the client certificate."""
        return ClientTls(ca=self.ca, cert=self.client_cert, key=self.client_key)

    def current(self, hosts: Iterable[str] = ()) -> bool:
        """Whether every file is there and the server certificate is valid for a while yet and names every host."""
        if not all(p.is_file() for p in (self.ca, self.server_cert, self.server_key, self.client_cert,
                                          self.client_key)):
            return False
        try:
            cert = x509.load_pem_x509_certificate(self.server_cert.read_bytes())
            san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        except (ValueError, x509.ExtensionNotFound):
            return False
        if cert.not_valid_after_utc - RENEW_BEFORE < datetime.datetime.now(datetime.timezone.utc):
            return False
        return set(_alt_names([*DEFAULT_HOSTS, *hosts])) <= set(san)

    def ensure(self, hosts: Iterable[str] = ()) -> CertDir:
        """The files, made unless current(hosts) (idempotent)."""
        hosts = list(hosts)
        return self if self.current(hosts) else self.make(hosts)

    def make(self, hosts: Iterable[str] = ()) -> CertDir:
        """A new CA, server and client certificate (replacing any there)."""
        self.root.mkdir(parents=True, exist_ok=True)
        ca_key = _new_key()
        ca_name = _name("ina-testbed throwaway CA")
        ca = _issue(ca_name, ca_key.public_key(), ca_name, ca_key, ca=True)
        server_key, client_key = _new_key(), _new_key()
        server = _issue(_name("ina-testbed switch"), server_key.public_key(), ca_name, ca_key,
                        usage=ExtendedKeyUsageOID.SERVER_AUTH,
                        alt_names=x509.SubjectAlternativeName(_alt_names([*DEFAULT_HOSTS, *hosts])))
        client = _issue(_name("ina-testbed controller"), client_key.public_key(), ca_name, ca_key,
                        usage=ExtendedKeyUsageOID.CLIENT_AUTH)
        _write(self.server_key, _key_pem(server_key), private=True)
        _write(self.client_key, _key_pem(client_key), private=True)
        _write(self.server_cert, _cert_pem(server))
        _write(self.client_cert, _cert_pem(client))
        _write(self.ca, _cert_pem(ca))
        return self


def _new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "ina-testbed"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _alt_names(hosts: Iterable[str]) -> list[x509.GeneralName]:
    """An IPAddress entry for each address, a DNSName for each name (in order, without repeats)."""
    out: list[x509.GeneralName] = []
    for host in hosts:
        entry: x509.GeneralName
        try:
            entry = x509.IPAddress(ipaddress.ip_address(host.strip("[]")))
        except ValueError:
            entry = x509.DNSName(host)
        if entry not in out:
            out.append(entry)
    return out


def _issue(subject: x509.Name, public_key: ec.EllipticCurvePublicKey, issuer: x509.Name,
           issuer_key: ec.EllipticCurvePrivateKey, *, ca: bool = False, usage: x509.ObjectIdentifier | None = None,
           alt_names: x509.SubjectAlternativeName | None = None) -> x509.Certificate:
    """A certificate for `public_key`, signed by `issuer_key`: a CA's, or a leaf's for one extended key usage."""
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(public_key)
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(hours=1))  # a clock a little behind still accepts it
               .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=0 if ca else None), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=not ca, key_cert_sign=ca, crl_sign=ca,
                                            content_commitment=False, key_encipherment=False, data_encipherment=False,
                                            key_agreement=False, encipher_only=False, decipher_only=False),
                              critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False))
    if usage is not None:
        builder = builder.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()),
                                        critical=False)
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if alt_names is not None:
        builder = builder.add_extension(alt_names, critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _cert_pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _write(path: Path, data: bytes, private: bool = False) -> None:
    """Replace `path` with `data` in one rename (a reader never sees half a file); keys 0600 from the start."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
    os.fchmod(fd, 0o600 if private else 0o644)  # a leftover .tmp keeps its mode through O_CREAT
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m topo.tls", description=__doc__.split("\n\n")[0])
    p.add_argument("dir", type=Path, help="where the PEM files go (made if missing)")
    p.add_argument("--host", action="append", default=[], metavar="NAME|IP",
                   help="another name or address the switches are reached at (repeatable)")
    p.add_argument("--force", action="store_true", help="make new files even if the ones there are current")
    args = p.parse_args(argv)
    certs = CertDir(args.dir)
    try:
        if args.force or not certs.current(args.host):
            certs.make(args.host)
            print(f"TLS: new CA, server and client certificates in {args.dir}")
        else:
            print(f"TLS: certificates in {args.dir} are current")
    except OSError as e:
        print(f"error: cannot write certificates to {args.dir}: {e.strerror or e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
