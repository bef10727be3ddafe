"""TLS for the P4Runtime server, as simple_switch_grpc sets it up (PI's `PIGrpcServerRunV2`).

`ServerTls` holds the PEM bytes BMv2 reads from `--grpc-server-cert`, `--grpc-server-key` and `--grpc-server-cacert`;
client auth is grpc's REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY, else DONT_REQUEST_CLIENT_CERTIFICATE (a CA
given without client auth is then unused, as in BMv2).
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass

import grpc

__all__ = ["PemError", "ServerTls", "read_pem"]


class PemError(Exception):
    """A PEM file that cannot be read (the message is BMv2's, bm_grpc/pem.h) or holds no usable certificate or key."""


def read_pem(path: str) -> bytes:
    """The bytes of a PEM file; PemError in BMv2's words when it cannot be opened."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        raise PemError(f"Error when reading pem file '{path}': file cannot be opened") from None


@dataclass(frozen=True)
class ServerTls:
    """The server's certificate chain and key, and the CA that client certificates must chain to."""

    cert_chain: bytes
    private_key: bytes
    root_certs: bytes | None = None
    """PEM of the CA(s) that sign client certificates; needed for client auth."""
    client_auth: bool = False
    """Require a client certificate signed by `root_certs` (mutual TLS)."""

    @classmethod
    def from_files(cls, cert: str, key: str, cacert: str | None = None, client_auth: bool = False) -> ServerTls:
        """Read the PEM files in BMv2's order, CA first (PemError naming the first that cannot be read), and check
        them as grpc will use them (its own error is only "Failed to bind to address")."""
        root_certs = read_pem(cacert) if cacert else None
        tls = cls(read_pem(cert), read_pem(key), root_certs, client_auth)
        _check_files(cert, key, cacert)
        return tls

    def check(self) -> None:
        """ValueError where grpc would refuse the options (Python's grpc cannot require client certificates
        without a CA to verify them against; BMv2 starts, then refuses every client)."""
        if self.client_auth and not self.root_certs:
            raise ValueError("client auth needs the CA that signs client certificates: give --grpc-server-cacert "
                             "with --grpc-server-with-client-auth")

    def credentials(self) -> grpc.ServerCredentials:
        self.check()
        return grpc.ssl_server_credentials([(self.private_key, self.cert_chain)], root_certificates=self.root_certs,
                                           require_client_auth=self.client_auth)

    def describe(self) -> str:
        return "TLS, client certificates required" if self.client_auth else "TLS"


def _check_files(cert: str, key: str, cacert: str | None) -> None:
    """PemError unless `cert` and `key` are a PEM certificate and its unencrypted key, and `cacert` holds a
    certificate."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        ctx.load_cert_chain(cert, key, password=lambda: b"")  # an encrypted key fails here instead of prompting
    except (ssl.SSLError, OSError) as e:
        why = ("the key is not the certificate's" if getattr(e, "reason", None) == "KEY_VALUES_MISMATCH"
               else "not a PEM certificate and an unencrypted PEM private key")
        raise PemError(f"Error when loading --grpc-server-cert '{cert}' with --grpc-server-key '{key}': {why}") \
            from None
    if cacert:
        try:
            ctx.load_verify_locations(cafile=cacert)
        except (ssl.SSLError, OSError):
            raise PemError(f"Error when loading --grpc-server-cacert '{cacert}': no PEM certificate in it") from None
