"""UdpTransport: bounded waits, batches, source filtering and bind errors that say what to do."""

from __future__ import annotations

import socket
import time

import pytest

from ina_udpswitch import free_udp_ports
from worker.transport import FakeClock, FakeTransport, TransportError, UdpTransport


def test_send_recv_and_source_filter() -> None:
    peer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    stranger = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        peer.bind(("127.0.0.1", 0))
        stranger.bind(("127.0.0.1", 0))
        [port] = free_udp_ports(1)
        with UdpTransport(("127.0.0.1", port), peer.getsockname()) as tr:
            tr.send(b"hello")
            data, src = peer.recvfrom(100)
            assert data == b"hello" and src == ("127.0.0.1", port)
            for i in range(5):
                peer.sendto(bytes([i]), src)
            stranger.sendto(b"not the switch", src)
            got: list[bytes] = []
            deadline = time.monotonic() + 5
            while len(got) < 5 and time.monotonic() < deadline:
                got += tr.recv(0.5)
            assert got == [bytes([i]) for i in range(5)]
            assert tr.recv(0.05) == [] and tr.ignored == 1
    finally:
        peer.close()
        stranger.close()


def test_recv_waits_at_most_the_timeout() -> None:
    [port, other] = free_udp_ports(2)
    with UdpTransport(("127.0.0.1", port), ("127.0.0.1", other)) as tr:
        t0 = time.monotonic()
        assert tr.recv(0.1) == []
        assert 0.09 <= time.monotonic() - t0 < 2.0
        tr.send(b"x")  # nobody listens: ICMP unreachable must not raise
        assert tr.recv(0.05) == []


def test_bind_in_use_is_explained() -> None:
    holder = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    holder.bind(("127.0.0.1", 0))
    try:
        with pytest.raises(TransportError, match="address in use|Address already in use") as exc:
            UdpTransport(holder.getsockname(), ("127.0.0.1", 9))
        assert "another process (a worker of the same rank?)" in str(exc.value)
    finally:
        holder.close()


def test_fake_transport_advances_clock_only_when_idle() -> None:
    clock = FakeClock()
    tr = FakeTransport(clock, responder=lambda d: [d[::-1]])
    tr.send(b"ab")
    assert tr.recv(1.0) == [b"ba"] and clock.now == 0.0
    assert tr.recv(1.5) == [] and clock.now == 1.5
