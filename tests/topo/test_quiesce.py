"""A previous run's closing TCP connections, as Network.quiesce sees them in a namespace."""

from __future__ import annotations

import os
import socket
import time

from topo.network import _CLOSING, tcp_states


def state_of(port: int) -> set[str]:
    """The states of this namespace's sockets on local port `port` other than the listener's."""
    return {st for p, st in tcp_states(os.getpid()) if p == port and st != "0A"}  # 0A: LISTEN


def test_a_connection_half_closed_by_its_peer_counts_as_closing_until_it_closes() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port))
        conn, _ = server.accept()
        assert "01" in state_of(port)  # ESTABLISHED: not closing
        client.close()  # the peer's FIN: this end is in CLOSE_WAIT until it closes too, and will send its own FIN
        deadline = time.monotonic() + 2
        while "08" not in state_of(port) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert state_of(port) & _CLOSING == {"08"}
        conn.close()  # LAST_ACK, then gone once the peer (in FIN_WAIT2) acknowledges
        deadline = time.monotonic() + 2
        while state_of(port) & _CLOSING and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not state_of(port) & _CLOSING
