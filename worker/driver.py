"""The loop that runs a sans-IO window core over a transport until the core is done (every INA protocol's driver).

A core (`worker.window.Window`, `worker.atp.AtpWindow`) returns the packets to send from `start`, `on_packet` and
`on_timer`; `drive` encodes and sends them, feeds the core what arrives (counting datagrams the codec rejects in
`core.stats.malformed`) and waits at most until the core's next timer; once something arrived it lets the transport
wait `core.rx_settle()` more (never past the timer) so that one wake-up takes what arrives meanwhile. With
`decode_batch` (and a core that has `on_packets`, as `Window`), everything one wake of the transport returned is parsed
and handed over at once.
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

    def rx_settle(self) -> float:
        """Seconds to let packets accumulate once one is ready (receive coalescing; 0: read at once)."""
        ...


DecodeBatch = Callable[[Sequence[bytes]], tuple[Sequence[Any], np.ndarray, int]]
"""Datagrams -> (headers, (k, N) payloads, number of malformed datagrams), as `worker.header.Codec.decode_batch`."""


def drive(core: WindowCore, transport: Transport, encode: Callable[[Any], bytes],
          decode: Callable[[bytes], tuple[Any, np.ndarray]], clock: Callable[[], float],
          decode_batch: DecodeBatch | None = None) -> None:
    """Run core to completion over transport; `encode` turns one of the core's outgoing packets into bytes."""
    send, send_many = transport.send, transport.send_many
    start = clock()
    for out in core.start(start):
        send(encode(out))
    on_packets = getattr(core, "on_packets", None) if decode_batch is not None else None
    while not core.done:
        deadline = core.next_deadline()
        wait = 0.0 if deadline is None else max(0.0, deadline - clock())
        received = transport.recv(wait, min(core.rx_settle(), wait))
        if on_packets is not None and decode_batch is not None:
            if received:
                headers, values, malformed = decode_batch(received)
                core.stats.malformed += malformed
                if headers:
                    send_many([encode(o) for o in on_packets(headers, values, clock())])
            received = []
        for data in received:
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
