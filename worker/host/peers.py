"""Reliable byte links between the workers of a job, for the host-based baselines (ring, parameter server).

`PeerLinks` holds one connected stream socket per peer rank and moves exact byte counts: `send(rank, buffer)`,
`recv_into(rank, buffer)`, and `exchange` (send to some peers while receiving from others, so that two ranks
sending to each other never deadlock on full socket buffers). Over the network the links are TCP connections
(`connect_mesh`): each rank listens on its job entry's ip and `udp_port` (the same number, as a TCP port) and connects
to the peers it needs, retrying until a deadline, then says which rank is unreachable. In tests, `socketpair_mesh`
builds the same links in memory (AF_UNIX socket pairs), so the algorithms run unchanged without a network.

`HostStats` counts what a baseline run moved: bytes and messages sent, and the kernel's TCP retransmissions.
"""

from __future__ import annotations

import errno
import selectors
import socket
import struct
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass

from worker.errors import ProtocolError, Unreachable
from worker.stats import RunTiming

__all__ = ["HostStats", "PeerLinks", "PeerUnreachable", "PeerProtocolError", "connect_mesh", "socketpair_mesh"]

_HELLO = struct.Struct("!4sHH")  # magic, job id, rank of the connecting side
_MAGIC = b"INAh"
_TCP_INFO_TOTAL_RETRANS = 100  # offset of tcpi_total_retrans in Linux's struct tcp_info


class PeerUnreachable(Unreachable):
    """A peer rank could not be connected to (or did not connect) within the deadline, or its link broke."""

    def __init__(self, rank: int | None, message: str) -> None:
        super().__init__(message)
        self.rank = rank

    @property
    def details(self) -> dict[str, object]:
        return {"peer": self.rank}


class PeerProtocolError(ProtocolError):
    """A peer sent something this rank did not expect (another job, or a different tensor size or dtype)."""


@dataclass(slots=True)
class HostStats(RunTiming):
    """Counters of one host-based all-reduce run (names shared with the INA workers' `Stats` where they mean the
    same thing)."""

    packets_sent: int = 0
    """Messages handed to the sockets (a message is one chunk, whatever the number of TCP segments)."""
    bytes_sent: int = 0
    retransmissions: int = 0
    """TCP segments the kernel retransmitted on this rank's links during the run (0 for in-memory links)."""

    def as_dict(self) -> dict[str, float | int]:
        return {
            "packets_sent": self.packets_sent,
            "bytes_sent": self.bytes_sent,
            "retransmissions": self.retransmissions,
            "elements": self.elements,
            "elapsed_s": round(self.elapsed, 6),
            "goodput_elems_per_s": round(self.goodput, 1),
        }


class PeerLinks:
    """One connected stream socket per peer rank; exact-size sends and receives with a per-operation timeout."""

    def __init__(self, rank: int, socks: dict[int, socket.socket], *, timeout: float = 30.0) -> None:
        self.rank = rank
        self.socks = socks
        self.timeout = timeout
        self.stats = HostStats()
        for s in socks.values():
            s.settimeout(timeout)

    def peers(self) -> list[int]:
        return sorted(self.socks)

    def send(self, rank: int, data: memoryview | bytes) -> None:
        """Send all of data to rank (blocks while the peer's receive buffer is full)."""
        try:
            self.socks[rank].sendall(data)
        except (TimeoutError, socket.timeout):
            raise PeerUnreachable(rank, f"rank {self.rank}: sending to rank {rank} stalled for {self.timeout:g} s "
                                        f"(is rank {rank} still running?)") from None
        except OSError as exc:
            raise PeerUnreachable(rank, f"rank {self.rank}: link to rank {rank} broke while sending: "
                                        f"{exc.strerror or exc}") from None
        self.stats.packets_sent += 1
        self.stats.bytes_sent += memoryview(data).nbytes

    def recv_into(self, rank: int, buf: memoryview) -> None:
        """Fill buf (a writable byte view) with exactly len(buf) bytes from rank."""
        sock, view, got = self.socks[rank], buf.cast("B") if buf.format != "B" else buf, 0
        while got < len(view):
            try:
                n = sock.recv_into(view[got:])
            except (TimeoutError, socket.timeout):
                raise PeerUnreachable(rank, f"rank {self.rank}: nothing from rank {rank} for {self.timeout:g} s "
                                            f"({got} of {len(view)} bytes received; is rank {rank} still "
                                            "running?)") from None
            except OSError as exc:
                raise PeerUnreachable(rank, f"rank {self.rank}: link to rank {rank} broke: "
                                            f"{exc.strerror or exc}") from None
            if n == 0:
                raise PeerUnreachable(rank, f"rank {self.rank}: rank {rank} closed its link after {got} of "
                                            f"{len(view)} bytes (did it fail?)")
            got += n

    def exchange(self, sends: Iterable[tuple[int, memoryview | bytes]],
                 recvs: Iterable[tuple[int, memoryview]]) -> None:
        """Send and receive at the same time: the sends run on threads (the GIL is released inside the socket
        calls), the receives on this thread, in the order given; the first error of either side is raised."""
        errors: list[BaseException] = []

        def run(rank: int, data: memoryview | bytes) -> None:
            try:
                self.send(rank, data)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller below
                errors.append(exc)

        threads = [threading.Thread(target=run, args=item, daemon=True) for item in sends]
        for t in threads:
            t.start()
        try:
            for rank, buf in recvs:
                self.recv_into(rank, buf)
        finally:
            for t in threads:
                t.join()
        if errors:
            raise errors[0]

    def tcp_retransmissions(self) -> int:
        """The kernel's total retransmitted segments over all TCP links (0 for other kinds of socket)."""
        total = 0
        for s in self.socks.values():
            if s.family not in (socket.AF_INET, socket.AF_INET6):
                continue
            try:
                info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _TCP_INFO_TOTAL_RETRANS + 4)
            except OSError:
                continue
            if len(info) >= _TCP_INFO_TOTAL_RETRANS + 4:
                total += struct.unpack_from("I", info, _TCP_INFO_TOTAL_RETRANS)[0]
        return total

    def close(self) -> None:
        for s in self.socks.values():
            try:
                s.close()
            except OSError:
                pass
        self.socks = {}

    def __enter__(self) -> PeerLinks:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def socketpair_mesh(n: int, *, timeout: float = 30.0) -> list[PeerLinks]:
    """In-memory links between n ranks (every pair connected), one PeerLinks per rank."""
    socks: list[dict[int, socket.socket]] = [{} for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            a, b = socket.socketpair()
            for s in (a, b):
                s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
            socks[i][j], socks[j][i] = a, b
    return [PeerLinks(r, socks[r], timeout=timeout) for r in range(n)]


def connect_mesh(rank: int, endpoints: list[tuple[str, int]], peers: Iterable[int], *, job_id: int = 0,
                 bind_ip: str | None = None, timeout: float = 30.0, io_timeout: float = 30.0) -> PeerLinks:
    """TCP links from rank to each of `peers` (ranks indexing endpoints[rank] = (ip, port)).

    Of each pair the lower rank connects and the higher one accepts; every rank first listens, so the order in
    which processes start does not matter. Fails with PeerUnreachable naming the rank after `timeout` seconds.
    """
    want = sorted(set(peers) - {rank})
    ip, port = endpoints[rank]
    deadline = time.monotonic() + timeout
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    socks: dict[int, socket.socket] = {}
    try:
        try:
            listener.bind((bind_ip or ip, port))
        except OSError as exc:
            raise PeerUnreachable(rank, f"rank {rank}: cannot listen on {bind_ip or ip}:{port}/tcp: "
                                        f"{exc.strerror or exc}") from None
        listener.listen(len(want) + 1)
        for peer in (p for p in want if p > rank):
            socks[peer] = _connect(rank, peer, endpoints[peer], job_id, deadline)
        expected = {p for p in want if p < rank}
        sel = selectors.DefaultSelector()
        sel.register(listener, selectors.EVENT_READ)
        try:
            while expected:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    missing = ", ".join(f"rank {p} ({endpoints[p][0]})" for p in sorted(expected))
                    raise PeerUnreachable(min(expected), f"rank {rank}: {missing} did not connect within "
                                                         f"{timeout:g} s (not started, or failed?)")
                conn, _ = listener.accept()
                peer = _read_hello(conn, job_id, deadline)
                if peer in expected:
                    expected.discard(peer)
                    socks[peer] = conn
                else:
                    conn.close()
        finally:
            sel.close()
    except BaseException:
        for s in socks.values():
            s.close()
        raise
    finally:
        listener.close()
    for s in socks.values():
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return PeerLinks(rank, socks, timeout=io_timeout)


def _connect(rank: int, peer: int, addr: tuple[str, int], job_id: int, deadline: float) -> socket.socket:
    last = "no attempt"
    while True:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(max(0.05, min(1.0, deadline - time.monotonic())))
        try:
            s.connect(addr)
            s.sendall(_HELLO.pack(_MAGIC, job_id, rank))
            return s
        except OSError as exc:
            s.close()
            last = exc.strerror or str(exc) if exc.errno != errno.ECONNREFUSED else "connection refused"
        if time.monotonic() >= deadline:
            raise PeerUnreachable(peer, f"rank {rank}: cannot reach rank {peer} at {addr[0]}:{addr[1]}/tcp ({last})")
        time.sleep(0.05)


def _read_hello(conn: socket.socket, job_id: int, deadline: float) -> int:
    conn.settimeout(max(0.05, deadline - time.monotonic()))
    data = b""
    try:
        while len(data) < _HELLO.size:
            chunk = conn.recv(_HELLO.size - len(data))
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    if len(data) != _HELLO.size:
        conn.close()
        return -1
    magic, job, peer = _HELLO.unpack(data)
    if magic != _MAGIC or job != job_id:
        conn.close()
        return -1
    return peer
