"""A client's side of P4Runtime over TLS: which CA it trusts and which certificate it presents (`ClientTls`), the
command-line flags for them, and the words for a failed handshake.

    --ssl-ca FILE --ssl-cert FILE --ssl-key FILE       (p4runtime-shell's --ssl --cacert --cert --private-key too)

Any of the files implies TLS; `--ssl` alone is TLS trusting grpc's default roots. The certificate and key go
together (client auth, simple_switch_grpc's --grpc-server-with-client-auth).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import grpc

from worker.arguments import existing_file

__all__ = ["ClientTls", "add_arguments", "explain_unavailable", "from_args"]

# what grpc's UNAVAILABLE details say when the handshake, not the network, failed
_HANDSHAKE_WORDS = ("ssl", "tls", "handshake", "certificate", "verification")
# what a plaintext client sees when a TLS server hangs up on its HTTP/2 preface
_HANGUP_WORDS = ("socket closed", "connection reset", "end of tcp stream", "connection closed")


@dataclass(frozen=True)
class ClientTls:
    """TLS settings of a P4Runtime client: the CA the server's certificate must chain to (None: grpc's default
    roots), and the client's own certificate and key for servers that require client auth."""

    ca: Path | None = None
    cert: Path | None = None
    key: Path | None = None

    def __post_init__(self) -> None:
        if (self.cert is None) != (self.key is None):
            raise ValueError("a client certificate and its key go together: give both --ssl-cert and --ssl-key")

    def credentials(self) -> grpc.ChannelCredentials:
        """grpc's channel credentials from the files (ValueError naming a file that cannot be read)."""
        return grpc.ssl_channel_credentials(root_certificates=_read(self.ca, "--ssl-ca"),
                                            private_key=_read(self.key, "--ssl-key"),
                                            certificate_chain=_read(self.cert, "--ssl-cert"))

    def describe(self) -> str:
        trust = f"CA {self.ca}" if self.ca else "grpc's default roots"
        return f"TLS ({trust}{f', client certificate {self.cert}' if self.cert else ''})"


def _read(path: Path | None, flag: str) -> bytes | None:
    if path is None:
        return None
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise ValueError(f"cannot read {flag} file {path}: {e.strerror}") from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The TLS flags, in this project's spelling and p4runtime-shell's."""
    g = parser.add_argument_group("P4Runtime over TLS (any of the files implies TLS)")
    g.add_argument("--ssl", action="store_true",
                   help="connect over TLS (with none of the files: trusting grpc's default roots)")
    g.add_argument("--ssl-ca", "--cacert", dest="ssl_ca", type=existing_file, default=None, metavar="FILE",
                   help="the CA certificate (PEM) the switch's certificate must be signed by")
    g.add_argument("--ssl-cert", "--cert", dest="ssl_cert", type=existing_file, default=None, metavar="FILE",
                   help="this client's certificate (PEM), for a switch that requires client auth")
    g.add_argument("--ssl-key", "--private-key", dest="ssl_key", type=existing_file, default=None, metavar="FILE",
                   help="this client's private key (PEM), with --ssl-cert")


def from_args(args: argparse.Namespace) -> ClientTls | None:
    """The TLS settings the flags ask for, or None (plaintext); ValueError for a certificate without its key."""
    if not (args.ssl or args.ssl_ca or args.ssl_cert or args.ssl_key):
        return None
    return ClientTls(ca=args.ssl_ca, cert=args.ssl_cert, key=args.ssl_key)


def explain_unavailable(details: str, tls: ClientTls | None) -> str | None:
    """Why the server refused the channel, in TLS terms, from grpc's UNAVAILABLE details; None when TLS is not the
    cause (a server that is not up yet, say)."""
    text = details.lower()
    hangup = any(w in text for w in _HANGUP_WORDS)
    if tls is None:
        if hangup:  # a TLS server drops the plaintext HTTP/2 preface without a word
            return ("the server closed the plaintext connection: it probably requires TLS (give --ssl-ca FILE, and "
                    "--ssl-cert/--ssl-key if it requires client certificates)")
        return None
    if "certificate_verify_failed" in text:
        return f"TLS handshake failed: the server's certificate is not signed by the CA trusted ({tls.describe()})"
    if "hostname verification" in text:
        return ("TLS handshake failed: the server's certificate does not name the address dialled (make the "
                "certificates for it: python -m topo.tls DIR --host NAME|IP)")
    if "wrong_version_number" in text:
        return "TLS handshake failed: the server does not speak TLS (connect without the TLS flags)"
    if hangup:  # TLS 1.3: the server checks the client's certificate after the client is done, then hangs up
        refused = f"and refused {tls.cert}" if tls.cert else "(give --ssl-cert and --ssl-key)"
        return ("the server closed the connection after the TLS handshake: it requires a client certificate signed "
                f"by a CA it trusts {refused}")
    if any(w in text for w in _HANDSHAKE_WORDS):
        return f"TLS handshake failed: {details.rpartition('last error: ')[2]}"
    return None
