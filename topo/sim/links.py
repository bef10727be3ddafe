"""Links of the virtual-time network: an output queue and the wire behind it, one per direction.

A `Port` is where frames leave a node (a switch's egress port, a host's NIC): a FIFO drained at the link's rate
(serialisation: wire bytes x 8 / rate) into a wire of fixed propagation delay. The queue holds what waits to start
its transmission; a frame that would take it past `buffer_bytes` is dropped (drop-tail), and one that finds at least
`ecn_bytes` waiting is marked Congestion Experienced if its IPv4 ECN field says ECN-capable (ECT(0)/ECT(1), RFC 3168),
as a switch marks on its instantaneous queue (DCTCP's K); a frame that is not ECN-capable is counted as `congested`
and passes. Nothing here is an event: a port knows at once when a frame it accepts will arrive at the far end (its
queue is a FIFO of fixed rate), so the network schedules one event per arrival, not per queue step.

A link with `burst_bytes` is instead what the emulator's links are: a veth pair behind Linux's htb (Mininet's TCLink,
`htb rate R burst 15k`, whose ceil bucket tc sizes to `cburst 1600b`). htb lets a frame out as soon as its ceil
bucket holds tokens (it may go negative by that frame), charges the frame's bytes, and refills at the rate up to the
bucket's size; the veth then delivers the frame at once. So frames are spaced by their length at the rate, as on a
wire, but arrive with no serialisation delay, and one after an idle spell may follow its predecessor at once (the
bucket's credit). `depart` is that arithmetic, shared with the TCP model's view of its NIC.
"""

from __future__ import annotations

import math
import struct
from collections import deque
from dataclasses import dataclass

__all__ = ["LinkSpec", "Port", "ETHERNET_OVERHEAD", "HTB_CBURST", "depart", "mark_ce"]

ETHERNET_OVERHEAD = 24
"""Bytes a frame occupies on an Ethernet wire beyond what a P4 program sees: preamble and start delimiter (8), FCS
(4), inter-frame gap (12)."""

HTB_CBURST = 1600
"""Bytes of htb's ceil bucket on the emulator's links: what tc sets for Mininet's `htb rate R burst 15k` (ceil = rate,
cburst = the rate over the timer frequency plus an MTU: `tc -d class show` prints `cburst 1600b`)."""


def depart(free_at: float, now: float, seconds: float, burst_s: float | None) -> tuple[float, float]:
    """(when a frame handed over at `now` leaves the queue, the queue's new `free_at`) for a frame of `seconds` at the
    rate. Without a burst, a FIFO in front of a wire: it leaves once the previous frame is transmitted. With an htb
    bucket of `burst_s` (its bytes at the rate), `free_at` is when the bucket's tokens are back to zero: the frame
    leaves then (or now, if later), taking the credit the bucket gathered since, up to its size."""
    start = now if free_at <= now else free_at
    if burst_s is None:
        return start, start + seconds
    credit = start - free_at
    return start, start + seconds - (credit if credit < burst_s else burst_s)


@dataclass(frozen=True)
class LinkSpec:
    """One link's parameters (both directions alike)."""

    rate_bps: float
    """Line rate in bits/s."""
    delay_s: float = 1e-6
    """Propagation delay (a 200 m fibre run is 1 µs)."""
    buffer_bytes: int | None = None
    """Output queue size in bytes at each end (None: unbounded)."""
    ecn_bytes: int | None = None
    """Queue length at or above which an ECN-capable frame is marked (None: no marking)."""
    overhead_bytes: int = ETHERNET_OVERHEAD
    """Wire bytes per frame beyond the frame itself (0 to count frames as Linux's htb does)."""
    burst_bytes: int | None = None
    """None: a wire, each frame serialised at the rate. A number: the emulator's htb shaper with a ceil bucket of that
    many bytes (`HTB_CBURST`) in front of a veth: frames spaced at the rate, delivered with no serialisation delay."""

    def __post_init__(self) -> None:
        if not self.rate_bps > 0:
            raise ValueError(f"link rate must be > 0 bit/s, got {self.rate_bps}")
        if self.delay_s < 0:
            raise ValueError(f"propagation delay must be >= 0 s, got {self.delay_s}")
        if self.buffer_bytes is not None and self.buffer_bytes < 1:
            raise ValueError(f"buffer must be at least 1 byte, got {self.buffer_bytes}")
        if self.burst_bytes is not None and self.burst_bytes < 0:
            raise ValueError(f"htb burst must be >= 0 bytes, got {self.burst_bytes}")

    @property
    def burst_s(self) -> float | None:
        """The htb bucket's size in seconds at the rate (None: a wire)."""
        return None if self.burst_bytes is None else self.burst_bytes * 8 / self.rate_bps

    @property
    def serialises(self) -> bool:
        """Whether a frame arrives only once its last bit is on the wire (a wire, not the emulator's veth)."""
        return self.burst_bytes is None

    def describe(self) -> str:
        buf = "unbounded queues" if self.buffer_bytes is None else f"{self.buffer_bytes} B queues"
        ecn = f", ECN at {self.ecn_bytes} B" if self.ecn_bytes is not None else ""
        htb = f", htb-shaped ({self.burst_bytes} B bucket)" if self.burst_bytes is not None else ""
        return f"{self.rate_bps / 1e9:g} Gbit/s, {self.delay_s * 1e6:g} µs, {buf}{ecn}{htb}"


def mark_ce(frame: bytes) -> bytes | None:
    """`frame` with its IPv4 ECN field set to CE and the header checksum updated (RFC 1624), or None when the frame
    is not an ECN-capable IPv4 packet."""
    if len(frame) < 34 or frame[12:14] != b"\x08\x00" or frame[15] & 3 in (0, 3):
        return None
    old = frame[14] << 8 | frame[15]
    new = old | 3
    (csum,) = struct.unpack_from("!H", frame, 24)
    s = (~csum & 0xFFFF) + (~old & 0xFFFF) + new
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    return frame[:15] + bytes([frame[15] | 3]) + frame[16:24] + struct.pack("!H", ~s & 0xFFFF) + frame[26:]


class Port:
    """One direction of a link: its output queue and wire, and what crossed them."""

    __slots__ = ("name", "spec", "free_at", "_waiting", "_queued", "_per_bit", "_burst_s", "frames", "bytes", "drops",
                 "marks", "congested", "max_queue", "busy_s")

    def __init__(self, name: str, spec: LinkSpec) -> None:
        self.name = name
        self.spec = spec
        self.free_at = -math.inf  # idle since ever: htb's bucket starts full
        """When the wire finishes the last frame accepted (htb: when its bucket is back to zero tokens)."""
        self._waiting: deque[tuple[float, int]] = deque()  # (transmission start, wire bytes) not yet started
        self._queued = 0
        self._per_bit = 8.0 / spec.rate_bps
        self._burst_s = spec.burst_s
        self.frames = 0
        self.bytes = 0
        """Frames and frame bytes (without the wire overhead) sent on the wire."""
        self.drops = 0
        self.marks = 0
        self.congested = 0
        """Frames that found the queue at or above the ECN threshold but were not ECN-capable."""
        self.max_queue = 0
        """The most bytes that waited in the queue."""
        self.busy_s = 0.0
        """Time the wire spent transmitting."""

    def queued(self, now: float) -> int:
        """Bytes waiting at `now` (frames whose transmission has not started)."""
        w = self._waiting
        while w and w[0][0] <= now:
            self._queued -= w.popleft()[1]
        return self._queued

    def send(self, frame: bytes, now: float) -> tuple[float, bytes] | None:
        """Accept `frame` at `now`: (its arrival time at the far end, the frame as it arrives — ECN-marked maybe),
        or None when the queue drops it."""
        spec = self.spec
        size = len(frame) + spec.overhead_bytes
        queued = self.queued(now)
        if spec.buffer_bytes is not None and queued + size > spec.buffer_bytes and self.free_at > now:
            self.drops += 1
            return None
        if spec.ecn_bytes is not None and queued >= spec.ecn_bytes:
            marked = mark_ce(frame)
            if marked is None:
                self.congested += 1
            else:
                frame = marked
                self.marks += 1
        wire = size * self._per_bit
        start, self.free_at = depart(self.free_at, now, wire, self._burst_s)
        self.busy_s += wire
        if start > now:
            self._waiting.append((start, size))
            self._queued = queued + size
            if self._queued > self.max_queue:
                self.max_queue = self._queued
        self.frames += 1
        self.bytes += len(frame)
        return (start + wire if self._burst_s is None else start) + spec.delay_s, frame
