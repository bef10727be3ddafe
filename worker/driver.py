"""The loop that runs a sans-IO window core over a transport until the core is done (every INA protocol's driver).

A core (`worker.window.Window`, `worker.atp.AtpWindow`) returns the packets to send from `start`, `on_packet` and
`on_timer`; `drive` encodes and sends them, feeds the core what arrives (counting datagrams the codec rejects in
`core.stats.malformed`) and waits at most until the core's next timer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from worker.header import MalformedPacket
from worker.transport import Transport

__all__ = ["WindowCore", "drive"]


class WindowCore(Protocol):
    """What `drive` needs from a protocol's window core."""

    stats: Any
    """Has `malformed` and `elapsed`."""

    @property
    def done(self) -> bool: ...

    def start(self, now: float) -> Sequence[Any]: ...

    def on_packet(self, header: Any, values: np.ndarray, now: float) -> Sequence[Any]: ...

    def on_timer(self, now: float) -> Sequence[Any]: ...

    def next_deadline(self) -> float | None: ...


def drive(core: WindowCore, transport: Transport, encode: Callable[[Any], bytes],
          decode: Callable[[bytes], tuple[Any, np.ndarray]], clock: Callable[[], float]) -> None:
    """Run core to completion over transport; `encode` turns one of the core's outgoing packets into bytes."""
    send = transport.send
    start = clock()
    for out in core.start(start):
        send(encode(out))
    while not core.done:
        deadline = core.next_deadline()
        wait = 0.0 if deadline is None else max(0.0, deadline - clock())
        for data in transport.recv(wait):
            try:
                hdr, values = decode(data)
            except MalformedPacket:
                core.stats.malformed += 1
                continue
            for out in core.on_packet(hdr, values, clock()):
                send(encode(out))
        if core.done:
            break
        for out in core.on_timer(clock()):
            send(encode(out))
    if core.stats.elapsed == 0.0:
        core.stats.elapsed = clock() - start
