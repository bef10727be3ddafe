"""A switch model (the reference model, or the engine running switchml.p4) behind a real UDP socket on localhost
(a thread), for driver and CLI tests."""

from __future__ import annotations

import selectors
import socket
import threading
from typing import Any

from tests.worker.ina_fixtures import make_job
from worker.job import JobConfig


class UdpRefSwitch:
    """Serves model.receive(src, payload) on 127.0.0.1:<port>; results leave from the same socket."""

    def __init__(self, model: Any, host: str = "127.0.0.1") -> None:
        self.model = model
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((host, 0))
        self.sock.setblocking(False)
        self.address = self.sock.getsockname()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="udp-refswitch", daemon=True)

    def __enter__(self) -> UdpRefSwitch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sock.close()

    def _serve(self) -> None:
        sel = selectors.DefaultSelector()
        sel.register(self.sock, selectors.EVENT_READ)
        while not self._stop.is_set():
            if not sel.select(0.02):
                continue
            while True:
                try:
                    data, src = self.sock.recvfrom(65535)
                except BlockingIOError:
                    break
                for dst, payload in self.model.receive(src, data):
                    try:
                        self.sock.sendto(payload, dst)
                    except OSError:
                        pass
        sel.close()


def free_udp_ports(k: int) -> list[int]:
    """k currently unused UDP ports on 127.0.0.1."""
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(k)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def local_job(n: int, **kw: Any) -> JobConfig:
    """`make_job(n, **kw)` with the switch and every worker on 127.0.0.1 (distinct free UDP ports)."""
    d = make_job(n, **kw).to_dict()
    d["switch"]["ip"] = "127.0.0.1"
    for w, p in zip(d["workers"], free_udp_ports(n)):
        w["ip"], w["udp_port"] = "127.0.0.1", p
    return JobConfig.from_dict(d)
