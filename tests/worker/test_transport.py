"""UdpTransport: bounded waits, batches, source filtering and bind errors that say what to do."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from tests.worker.ina_udpswitch import free_udp_ports
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


def test_send_many_delivers_every_datagram_in_order_through_sendmmsg_and_its_fallbacks() -> None:
    """Connected, send_many batches through sendmmsg (worker.mmsg); datagrams bigger than a slot and batches larger
    than the slots go out too, in order, byte for byte."""
    peer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        peer.bind(("127.0.0.1", 0))
        peer.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        [port] = free_udp_ports(1)
        with UdpTransport(("127.0.0.1", port), peer.getsockname()) as tr:
            assert tr._multi is not None  # Linux: libc has sendmmsg
            batches = [[bytes([b, i]) * (1 + i * 7) for i in range(150)] for b in range(2)]  # 150 > 64 slots
            batches.append([b"small", bytes(3000), b"after the big one"])  # 3000 > a 2048-byte slot
            for batch in batches:
                tr.send_many(batch)
            expected = [d for batch in batches for d in batch]
            got = []
            peer.settimeout(5)
            for _ in expected:
                got.append(peer.recv(65536))
            assert got == expected
    finally:
        peer.close()


def test_send_many_to_a_closed_port_drops_quietly_like_send() -> None:
    [port, closed] = free_udp_ports(2)
    with UdpTransport(("127.0.0.1", port), ("127.0.0.1", closed)) as tr:
        for _ in range(5):  # ICMP port unreachable makes later calls fail with ECONNREFUSED: not an error here
            tr.send_many([b"x" * 10] * 20)
            time.sleep(0.01)
        assert tr.recv(0.05) == []


def test_multisender_refuses_a_datagram_bigger_than_its_slots() -> None:
    from worker.mmsg import MultiSender

    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("127.0.0.1", 9))
        sender = MultiSender.open(s.fileno(), slots=4, slot_size=16)
        assert sender is not None
        with pytest.raises(ValueError, match="17 bytes does not fit a 16-byte slot"):
            sender.send([b"a", bytes(17)])
    finally:
        s.close()
