"""UdpTransport: bounded waits, batches, source filtering and bind errors that say what to do."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from ina_udpswitch import free_udp_ports
from worker.transport import FakeClock, FakeTransport, TransportError, UdpTransport


@pytest.mark.parametrize("any_source", [False, True])
def test_send_recv_and_source_filter(any_source: bool) -> None:
    """Connected to the switch, the transport gets only the switch's datagrams; with accept_any_source, anyone's."""
    peer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    stranger = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        peer.bind(("127.0.0.1", 0))
        stranger.bind(("127.0.0.1", 0))
        [port] = free_udp_ports(1)
        with UdpTransport(("127.0.0.1", port), peer.getsockname(), accept_any_source=any_source) as tr:
            tr.send(b"hello")
            data, src = peer.recvfrom(100)
            assert data == b"hello" and src == ("127.0.0.1", port)
            for i in range(3):
                peer.sendto(bytes([i]), src)
            stranger.sendto(b"not the switch", src)
            peer.sendto(bytes([3]), src)
            expected = [bytes([i]) for i in range(3)] + [b"not the switch"] * any_source + [bytes([3])]
            got: list[bytes] = []
            deadline = time.monotonic() + 5
            while len(got) < len(expected) and time.monotonic() < deadline:
                got += tr.recv(0.5)
            assert got == expected
            assert tr.recv(0.05) == []
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


def test_settle_takes_what_arrives_meanwhile_in_one_call() -> None:
    """Receive coalescing: with settle, the datagrams that arrive within it after the first come in the same call;
    without, only what was there when the first woke the call."""
    peer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        peer.bind(("127.0.0.1", 0))
        [port] = free_udp_ports(1)
        with UdpTransport(("127.0.0.1", port), peer.getsockname()) as tr:
            for settle, expected in ((0.0, [b"a"]), (0.5, [b"a", b"b"])):
                late = threading.Timer(0.1, peer.sendto, (b"b", ("127.0.0.1", port)))
                peer.sendto(b"a", ("127.0.0.1", port))
                late.start()
                t0 = time.monotonic()
                got = tr.recv(2.0, settle)
                assert got == expected and time.monotonic() - t0 < 1.5
                late.join()
                got += tr.recv(1.0) if settle == 0.0 else []
                assert got == [b"a", b"b"]
    finally:
        peer.close()


def test_bind_in_use_is_explained() -> None:
    holder = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    holder.bind(("127.0.0.1", 0))
    try:
        with pytest.raises(TransportError, match="address in use|Address already in use") as exc:
            UdpTransport(holder.getsockname(), ("127.0.0.1", 9))
        assert "another process (a worker of the same rank?)" in str(exc.value)
    finally:
        holder.close()


def test_fake_transport_advances_clock_when_idle_or_settling() -> None:
    clock = FakeClock()
    tr = FakeTransport(clock, responder=lambda d: [d[::-1]])
    tr.send(b"ab")
    assert tr.recv(1.0) == [b"ba"] and clock.now == 0.0
    assert tr.recv(1.5) == [] and clock.now == 1.5
    tr.send(b"cd")
    assert tr.recv(1.0, 0.25) == [b"dc"] and clock.now == 1.75  # a settle passes, then the packets are taken
