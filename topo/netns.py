"""Network namespaces wired by veth pairs to a switch process, shared by the namespace tests, the benchmarks and
the harness (perf.switchbench).

`hosts(n)` makes namespaces h1..hn, each with one interface whose veth peer stays in the root namespace for switch
port i; `SwitchProcess` runs a switch with simple_switch_grpc's flags (`python -m switch` by default, any command
that takes those flags otherwise) and waits, bounded in time, until it serves; `perf.traffic.NsProcess` runs a `perf.traffic`
helper inside a namespace.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import threading
from collections import deque
from pathlib import Path
from typing import Callable, Iterator, Sequence

from topo.switchproc import SwitchStartError, grpc_address, port_open, wait_serving

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
EMBEDDED_SWITCH: tuple[str, ...] = (sys.executable, "-m", "switch")
"""The embedded switch's command (simple_switch_grpc's flags follow)."""


def sh(*argv: str, timeout: float = 15, check: bool = True) -> subprocess.CompletedProcess:
    """Run a command (no shell); raise with its stderr when it fails."""
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({r.returncode}): {r.stderr.strip()}")
    return r


@dataclasses.dataclass
class Host:
    """A network namespace with one interface `ifname` whose peer `switch_if` stays in the root namespace."""

    ns: str
    ifname: str
    switch_if: str
    mac: str
    ip: str
    port: int

    def cmd(self, *argv: str) -> list[str]:
        """argv that runs inside this host's namespace."""
        return ["ip", "netns", "exec", self.ns, *argv]

    def add_neighbour(self, ip: str, mac: str) -> None:
        """A permanent ARP entry: `ip` is at `mac` (the switch's service address has no one to answer ARP)."""
        sh(*self.cmd("ip", "neigh", "replace", ip, "lladdr", mac, "dev", self.ifname, "nud", "permanent"))


def tutorial_address(i: int) -> tuple[str, str]:
    """Host i's (MAC, IPv4) in p4lang tutorial style: 02:00:00:00:0i:0i, 10.0.i.i."""
    return f"02:00:00:00:{i:02x}:{i:02x}", f"10.0.{i}.{i}"


def quiet_link(ifname: str, ns: str | None = None) -> None:
    """No checksum offload (partial checksums on veth) and no IPv6 (router/neighbour solicitations)."""
    pre = ["ip", "netns", "exec", ns] if ns else []
    sh(*pre, "ethtool", "-K", ifname, "tx", "off", "rx", "off", check=False)
    sh(*pre, "sysctl", "-q", "-w", f"net.ipv6.conf.{ifname}.disable_ipv6=1", check=False)


@contextlib.contextmanager
def hosts(count: int, tag: str | None = None, *, address: Callable[[int], tuple[str, str]] = tutorial_address,
          prefix_len: int = 24) -> Iterator[list[Host]]:
    """`count` namespaces h1..hN, each wired by a veth pair to an interface in the root namespace for switch port i.

    Names are unique per call (`tag`, default random) and everything is deleted on exit, even after errors.
    Host i gets `address(i)` = (MAC, IPv4) on a /`prefix_len` (default: 02:00:00:00:0i:0i and 10.0.i.i/24).
    """
    tag = tag or secrets.token_hex(3)
    made_ns: list[str] = []
    made_links: list[str] = []
    try:
        result = []
        for i in range(1, count + 1):
            ns = f"inasp-{tag}-h{i}"
            sw_if, h_if = f"s{tag}p{i}", f"h{tag}e{i}"
            sh("ip", "netns", "add", ns)
            made_ns.append(ns)
            sh("ip", "link", "add", sw_if, "type", "veth", "peer", "name", h_if)
            made_links.append(sw_if)
            sh("ip", "link", "set", h_if, "netns", ns)
            mac, ip = address(i)
            sh("ip", "netns", "exec", ns, "ip", "link", "set", h_if, "address", mac)
            sh("ip", "netns", "exec", ns, "ip", "addr", "add", f"{ip}/{prefix_len}", "dev", h_if)
            quiet_link(sw_if)
            quiet_link(h_if, ns)
            sh("ip", "link", "set", sw_if, "up")
            sh("ip", "netns", "exec", ns, "ip", "link", "set", h_if, "up")
            sh("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
            result.append(Host(ns, h_if, sw_if, mac, ip, i))
        yield result
    finally:
        for link in made_links:
            sh("ip", "link", "del", link, check=False)
        for ns in made_ns:
            sh("ip", "netns", "del", ns, check=False)


def free_tcp_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SwitchProcess:
    """A switch process: `command` (default `python -m switch`) followed by `args` (simple_switch_grpc's flags).

    Ready once it prints "Server listening on" (both simple_switch_grpc and `python -m switch` do) or its
    --grpc-server-addr accepts TCP connections (then its output up to that line, when it comes within 1 s, is in
    `lines`). If it exits first or is not ready within `ready_timeout` seconds,
    it is stopped and SwitchStartError quotes the command and its last output lines.
    """

    def __init__(self, args: Sequence[str], ready_timeout: float = 30.0,
                 command: Sequence[str] = EMBEDDED_SWITCH) -> None:
        self.args = [*command, *args]
        self.lines: list[str] = []
        self._stderr: deque[str] = deque(maxlen=200)
        self._ready = threading.Event()
        try:
            self.proc = subprocess.Popen(self.args, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         stdin=subprocess.DEVNULL, start_new_session=True,
                                         env={**os.environ, "PYTHONUNBUFFERED": "1"})
        except OSError as err:
            raise SwitchStartError(f"switch command `{shlex.join(command)}` could not be run: {err}") from None
        self._readers = [threading.Thread(target=self._read_stdout, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True)]
        for t in self._readers:
            t.start()
        address = grpc_address(args)

        def serving() -> bool:
            if self._ready.wait(0.05):
                return True
            if address is not None and port_open(address):
                # serving; its "Server listening" line may still be on the way (or block-buffered in a pipe)
                self._ready.wait(1.0)
                return True
            return False

        waiting_for = (f"its P4Runtime address {address} was not open" if address else
                       "it printed no 'Server listening on' line")
        try:
            wait_serving(self.proc, serving, ready_timeout, f"switch `{shlex.join(self.args)}`", waiting_for,
                         self.output_tail, poll=0)
        except SwitchStartError:
            self.stop()
            raise

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            if len(self.lines) < 100000:
                self.lines.append(line)
            if line.startswith("Server listening on"):
                self._ready.set()

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            self._stderr.append(raw.decode(errors="replace"))

    def output_tail(self, lines: int = 20) -> str:
        """The last lines the process wrote (stdout, then stderr), or a note that it wrote nothing."""
        tail = [*self.lines[-lines:], *(s.rstrip("\n") for s in list(self._stderr)[-lines:])]
        return "\n".join(tail) if tail else "(no output)"

    def _signal_group(self, sig: int) -> None:
        """Signal the process and whatever it started (its own session and process group)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    def stop(self, timeout: float = 10.0) -> str:
        """SIGTERM to its process group, wait (SIGKILL after `timeout`), then SIGKILL to anything the command left
        behind; returns stderr."""
        if self.proc.poll() is None:
            self._signal_group(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                self.proc.wait(5)
        self._signal_group(signal.SIGKILL)
        for t in self._readers:
            t.join(5)
        return "".join(self._stderr)
