"""What every switch launcher shares: the start-up error, the P4Runtime port probe, and the wait until a switch
process serves (or exits, or runs out of time), for `topo.p4switch.P4Switch` (a Mininet node) and
`topo.netns.SwitchProcess` (a process beside network namespaces) alike."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable, Sequence

__all__ = ["SwitchStartError", "grpc_address", "port_open", "wait_serving"]


class SwitchStartError(RuntimeError):
    """A switch process exited or did not serve P4Runtime in time; the message quotes its last output or log lines."""


def grpc_address(args: Sequence[str]) -> str | None:
    """The value of --grpc-server-addr in a switch command line, if any."""
    for i, a in enumerate(args):
        if a == "--grpc-server-addr" and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("--grpc-server-addr="):
            return a.split("=", 1)[1]
    return None


def port_open(address: str) -> bool:
    """Whether something accepts TCP connections at address ("host:port", an empty host: 127.0.0.1)."""
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=0.2):
            return True
    except (OSError, ValueError):
        return False


def wait_serving(proc: subprocess.Popen, serving: Callable[[], bool], timeout: float, who: str,
                 waiting_for: str, tail: Callable[[], str], poll: float = 0.05) -> None:
    """Return once `serving()` holds; SwitchStartError naming `who` and quoting `tail()` when the process exits
    first ("exited with code N during startup") or `timeout` seconds pass ("did not start: <waiting_for> after
    T s"). The caller stops the process."""
    deadline = time.monotonic() + timeout
    while not serving():
        if proc.poll() is not None:
            raise SwitchStartError(f"{who} exited with code {proc.returncode} during startup:\n{tail()}")
        if time.monotonic() > deadline:
            raise SwitchStartError(f"{who} did not start: {waiting_for} after {timeout:g} s:\n{tail()}")
        time.sleep(poll)
