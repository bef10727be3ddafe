"""Datagram transports for the worker: a UDP socket (`UdpTransport`) and an in-memory one for tests (`FakeTransport`).

A transport sends whole INA payloads to the switch and returns the payloads received within a bounded wait; it
knows nothing about the protocol.
"""

from __future__ import annotations

import errno
import selectors
import socket
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Protocol

from worker.mmsg import MultiSender

__all__ = ["Transport", "TransportError", "UdpTransport", "FakeClock", "FakeTransport"]


class TransportError(OSError):
    """A socket problem the worker cannot recover from (bind failed, network unreachable...)."""


class Transport(Protocol):
    """What the all-reduce driver needs from a transport."""

    def send(self, data: bytes) -> None:
        """Send one datagram to the switch (a full socket buffer may drop it: the window retransmits)."""
        ...

    def send_many(self, datagrams: Sequence[bytes]) -> None:
        """Send datagrams to the switch in order, as `send` each."""
        ...

    def recv(self, timeout: float, settle: float = 0.0) -> list[bytes]:
        """Datagrams from the switch, waiting at most timeout seconds for the first; [] on timeout. Once the first
        is ready, wait `settle` seconds more before reading, so that one call returns what arrives meanwhile
        (receive coalescing, as a NIC's interrupt moderation)."""
        ...

    def close(self) -> None: ...


class UdpTransport:
    """A UDP socket bound to the worker's ip:port, talking to the switch's ip:48864.

    The socket is connected to the switch, so the kernel delivers only the switch's datagrams (others get ICMP port
    unreachable, as from a closed port) and each send skips the route lookup and address parsing of a `sendto`
    (3.5 vs 4.3 us per datagram through a veth pair). With `accept_any_source` (ATP: results come from the switch,
    others from the PS) it stays unconnected and takes datagrams from anyone. Connected, `send_many` hands a batch to
    the kernel in one sendmmsg(2) call (`worker.mmsg`).
    """

    MAX_BATCH = 256
    """Datagrams drained per recv call."""

    def __init__(
        self,
        local: tuple[str, int],
        switch: tuple[str, int],
        *,
        rcvbuf: int = 4 << 20,
        accept_any_source: bool = False,
    ) -> None:
        self.local = local
        self.switch = switch
        self.accept_any_source = accept_any_source
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, rcvbuf)
            self._sock.bind(local)
        except OSError as exc:
            self._sock.close()
            hint = {
                errno.EADDRINUSE: "another process (a worker of the same rank?) already uses this port",
                errno.EADDRNOTAVAIL: "this host has no such address; run the worker where the job places it "
                "(its namespace/host) or override the bind address",
            }.get(exc.errno or 0, "")
            raise TransportError(exc.errno, f"cannot bind UDP {local[0]}:{local[1]}: {exc.strerror}"
                                 + (f" ({hint})" if hint else "")) from None
        if not accept_any_source:
            try:
                self._sock.connect(switch)
            except OSError as exc:
                self._sock.close()
                raise TransportError(exc.errno, f"cannot reach switch {switch[0]}:{switch[1]} from {local[0]}: "
                                     f"{exc.strerror}") from None
        self._sock.setblocking(False)
        self._multi = None if accept_any_source else MultiSender.open(self._sock.fileno())
        self._sel = selectors.DefaultSelector()
        self._sel.register(self._sock, selectors.EVENT_READ)

    def send(self, data: bytes) -> None:
        try:
            if self.accept_any_source:
                self._sock.sendto(data, self.switch)
            else:
                self._sock.send(data)
        except (BlockingIOError, InterruptedError):
            pass  # socket buffer full: treated like a lost packet
        except OSError as exc:
            if exc.errno in (errno.ENOBUFS, errno.ECONNREFUSED):
                return  # transient (or an ICMP error of an earlier datagram); the window retransmits
            raise TransportError(exc.errno, f"cannot send to switch {self.switch[0]}:{self.switch[1]}: "
                                 f"{exc.strerror}") from None

    def send_many(self, datagrams: Sequence[bytes]) -> None:
        multi = self._multi
        if multi is None or len(datagrams) < 2 or any(len(d) > multi.slot_size for d in datagrams):
            for d in datagrams:
                self.send(d)
            return
        i, n = 0, len(datagrams)
        while i < n:
            sent = multi.send(datagrams[i:i + multi.slots])
            if not sent:
                self.send(datagrams[i])  # the datagram the kernel refused, with send's handling of its error
                sent = 1
            i += sent

    def recv(self, timeout: float, settle: float = 0.0) -> list[bytes]:
        out: list[bytes] = []
        if not self._sel.select(max(0.0, timeout)):
            return out
        if settle > 0:
            time.sleep(settle)
        receive = self._sock.recv
        append = out.append
        for _ in range(self.MAX_BATCH):
            try:
                append(receive(65535))
            except (BlockingIOError, InterruptedError):
                break
            except ConnectionRefusedError:
                continue  # ICMP port unreachable for an earlier datagram
        return out

    def close(self) -> None:
        self._sel.close()
        self._sock.close()

    def __enter__(self) -> UdpTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class FakeClock:
    """A manually advanced monotonic clock (seconds)."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, dt: float) -> None:
        self.now += max(0.0, dt)


class FakeTransport:
    """In-memory transport: sent datagrams go to `responder` (e.g. a switch model), whose answers are queued.

    recv() with an empty queue advances the fake clock by the whole timeout, so timeouts cost no real time; with
    packets queued it advances it by the settle (receive coalescing) before returning them.
    """

    def __init__(self, clock: FakeClock, responder: Callable[[bytes], list[bytes]] | None = None) -> None:
        self.clock = clock
        self.responder = responder
        self.sent: list[bytes] = []
        self.inbox: deque[bytes] = deque()

    def send(self, data: bytes) -> None:
        self.sent.append(data)
        if self.responder is not None:
            self.inbox.extend(self.responder(data))

    def send_many(self, datagrams: Sequence[bytes]) -> None:
        for d in datagrams:
            self.send(d)

    def deliver(self, data: bytes) -> None:
        """Queue a datagram as if it came from the switch."""
        self.inbox.append(data)

    def recv(self, timeout: float, settle: float = 0.0) -> list[bytes]:
        if not self.inbox:
            self.clock.advance(timeout)
            return []
        self.clock.advance(settle)
        out = list(self.inbox)
        self.inbox.clear()
        return out

    def close(self) -> None:
        pass

