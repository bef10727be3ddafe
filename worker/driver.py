"""The loop that runs a sans-IO window core over a transport until the core is done (every INA protocol's driver).

A core (`worker.switchml.window.Window`, `worker.atp.worker.AtpWindow`) returns the packets to send from `start`, `on_packet` and
`on_timer`; `drive` encodes and sends them, feeds the core what arrives (counting datagrams the codec rejects in
`core.stats.malformed`) and waits at most until the core's next timer; once something arrived it lets the transport
wait `core.rx_settle()` more (never past the timer) so that one wake-up takes what arrives meanwhile. With
`decode_batch` (and a core that has `on_packets`, as `Window`), everything one wake of the transport returned is parsed
and handed over at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from worker.codec import MalformedPacket
from worker.transport import Transport

if TYPE_CHECKING:
    from worker.rto import RtoEstimator

__all__ = ["WindowCore", "WindowOptions", "drive", "timeouts"]


COALESCE_MIN_OUTSTANDING = 4
"""Receive coalescing only while this many packets are outstanding: with fewer (a small window, the end of a run)
there is little to gather and the wait would be plain latency."""


@dataclass(frozen=True, slots=True)
class WindowOptions:
    """Tuning of the window core. All workers of a job must use the same `window`."""

    window: int | None = None
    """W, packets in flight (capped by the job's pool size and by the number of blocks); None: the protocol's default
    (`width`): SwitchML its whole pool up to `worker.switchml.worker.SWITCHML_WINDOW`, ATP `worker.atp.worker.ATP_WINDOW`."""
    timeout: float = 1.0
    """Per-packet timeout in seconds before the first RTT sample (adaptive), or always (adaptive=False).

    RFC 6298's initial RTO: no guess about the switch's speed (real BMv2 answers a window far slower than the embedded
    switch). When the first RTT sample arrives, the packets still waiting on this initial timeout are re-armed from
    the measured RTO, so a loss in the first window is not left waiting for it."""
    backoff: float = 2.0
    """Timeout multiplier after each retransmission of the same packet."""
    max_timeout: float = 1.0
    """Cap of the per-packet timeout (adaptive RTO and backoff) in seconds."""
    max_retries: int = 8
    """Timeout retransmissions of one packet before giving up with SwitchUnreachable."""
    adaptive: bool = True
    """Derive the timeout from measured RTTs (RFC 6298) instead of using `timeout` throughout."""
    min_timeout: float = 0.02
    """Floor of the adaptive timeout's variance term in seconds (RTO = SRTT + max(min_timeout, 4 RTTVAR)).

    Every worker's RTT includes waiting for the slowest worker of the slot, so one worker's loss recovery or a few ms
    without a CPU (2 loaded cores) delays everyone's results. Fast retransmit recovers most losses, the timeout is the
    fallback for the last packets of a run and lost retransmissions. Measured with 4 workers at 1 % loss: a 10 ms
    floor still fired ~130 timeouts per worker, nearly all spurious; 20 ms fires ~5 (the run's tail)."""
    restart_on_progress: bool = True
    """A packet's timer runs from the later of its (re)transmission and the last fresh result, as TCP restarts its
    retransmission timer on every ACK of new data (RFC 6298, 5.3): while results keep arriving, a packet at the back
    of a standing queue (a slow switch such as real BMv2, a rate-limited link) is waiting, not lost. Losses while
    results flow are found by fast retransmit; once results stop, the timer fires one timeout after the last one.
    Measured on real BMv2 (4 workers, 16,384 elements, no loss): 63-407 spurious timeouts per run without it."""
    adapt_window: bool = False
    """Keep at most rate x (min RTT + 5 ms) packets in flight (`worker.cwnd`, every in-network protocol through
    `worker.reliable`), not the whole window: on a slow path the extra packets only queue. The slots used are the
    same either way. Off by default, as SwitchML's published worker (the pool is the window): it yields to traffic
    that does not back off (docs/worker.md has the measurements)."""
    fast_retransmit: int = 3
    """Retransmit a packet early once this many packets sent after it were answered (0: off)."""
    max_fast_retransmits: int = 3
    """Fast retransmissions of one packet at most: a fast retransmission that is lost too is sent again once
    `fast_retransmit` packets sent after it were answered (1: once only). With 4 workers at 1 % loss, ~1 % of the
    fast retransmissions are lost and each used to wait for the timeout (>= 20 ms, the slot's later packets behind it:
    the run took that much longer)."""

    rx_coalesce: float = 0.1
    """Receive coalescing: once a result is ready, the driver waits this fraction of the smoothed RTT (at most
    `max_rx_coalesce`) before reading, so that one wake-up takes the results that arrive meanwhile (0: read at
    once). Like a NIC's interrupt moderation it trades a little latency for fewer wake-ups: with 5 processes on 2
    cores a worker woke for ~3 results and spent ~41 us per packet, against 15 us per packet when it never sleeps (a
    loopback reflector). A worker holds back at most this fraction of an RTT's results, so a switch or link that is
    the bottleneck keeps its queue. Only while at least `COALESCE_MIN_OUTSTANDING` packets are outstanding."""
    max_rx_coalesce: float = 0.001
    """Cap of the coalescing wait in seconds."""

    def __post_init__(self) -> None:
        if self.window is not None and self.window < 1:
            raise ValueError(f"window must be >= 1, got {self.window}")
        if not self.timeout > 0:
            raise ValueError(f"timeout must be > 0 seconds, got {self.timeout}")
        if self.backoff < 1:
            raise ValueError(f"backoff must be >= 1, got {self.backoff}")
        if self.max_timeout < self.timeout:
            raise ValueError(f"max_timeout {self.max_timeout} is below timeout {self.timeout}")
        if not 0 < self.min_timeout <= self.max_timeout:
            raise ValueError(f"min_timeout must be > 0 and <= max_timeout {self.max_timeout}, got {self.min_timeout}")
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries}")
        if self.fast_retransmit < 0:
            raise ValueError(f"fast_retransmit must be >= 0, got {self.fast_retransmit}")
        if self.max_fast_retransmits < 1:
            raise ValueError(f"max_fast_retransmits must be >= 1, got {self.max_fast_retransmits}")
        if not 0 <= self.rx_coalesce <= 0.5:
            raise ValueError(f"rx_coalesce must be in [0, 0.5] (a fraction of the RTT), got {self.rx_coalesce}")
        if self.max_rx_coalesce < 0:
            raise ValueError(f"max_rx_coalesce must be >= 0 seconds, got {self.max_rx_coalesce}")

    def width(self, pool_size: int, default: int | None = None) -> int:
        """W for a job of pool_size slots: `window`, else the protocol's `default`, else the whole pool; never more
        than the pool."""
        return min(self.window or default or pool_size, pool_size)

    def worst_case_wait(self, first: float | None = None) -> float:
        """Sum of one packet's timeouts until SwitchUnreachable when its first timeout is first (default: timeout)."""
        total, t = 0.0, self.timeout if first is None else first
        for _ in range(self.max_retries + 1):
            total += t
            t = min(t * self.backoff, self.max_timeout)
        return total

    def rx_settle(self, rto: RtoEstimator, outstanding: int) -> float:
        """The receive coalescing wait (seconds) for a core with this RTT estimate and packets outstanding."""
        if not self.rx_coalesce or rto.srtt is None or outstanding < COALESCE_MIN_OUTSTANDING:
            return 0.0
        return min(self.max_rx_coalesce, self.rx_coalesce * rto.srtt)

    def give_up_bound(self, width: int = 1) -> float:
        """Longest time any packet of a window of `width` can wait before SwitchUnreachable, whatever the measured
        RTTs. With `restart_on_progress` each fresh result of the up to 2 (width - 1) other packets in flight during
        its wait (the window sends in order, so no later packet passes p + width - 1) restarts its timer at most
        once, by at most one timeout; once results stop, the plain bound runs out."""
        first = self.max_timeout if self.adaptive else self.timeout
        progress = 2 * (width - 1) * self.max_timeout if self.restart_on_progress else 0.0
        return (self.worst_case_wait(first) + (first * self.max_fast_retransmits if self.fast_retransmit else 0.0)
                + progress)


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
"""Datagrams -> (headers, (k, N) payloads, number of malformed datagrams), as `worker.switchml.header.Codec.decode_batch`."""


def timeouts(timeout_ms: float | None, min_timeout_ms: float | None, max_timeout_ms: float | None
             ) -> tuple[float, float, float]:
    """(timeout, min_timeout, max_timeout) in seconds for `WindowOptions` from milliseconds as `python -m worker`
    takes them (None: the default): a given initial timeout raises the cap to it; the default initial timeout and
    variance floor stay within a lower cap."""
    d = WindowOptions()
    cap = d.max_timeout if max_timeout_ms is None else max_timeout_ms / 1000
    if timeout_ms is None:
        timeout = min(d.timeout, cap)
    else:
        timeout = timeout_ms / 1000
        cap = max(cap, timeout)
    floor = min(d.min_timeout, cap) if min_timeout_ms is None else min_timeout_ms / 1000
    return timeout, floor, cap


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
