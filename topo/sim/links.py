"""Links of the virtual-time network: an output queue and the wire behind it, one per direction.

A `Port` is where frames leave a node (a switch's egress port, a host's NIC): a FIFO drained at the link's rate
(serialisation: wire bytes x 8 / rate) into a wire of fixed propagation delay. The queue holds what waits to start
its transmission; a frame that would take it past `buffer_bytes` is dropped (drop-tail), and one that finds at least
`ecn_bytes` waiting is marked Congestion Experienced if its IPv4 ECN field says ECN-capable (ECT(0)/ECT(1), RFC 3168),
as a switch marks on its instantaneous queue (DCTCP's K); a frame that is not ECN-capable is counted as `congested`
and passes. Nothing here is an event: a port knows at once when a frame it accepts will arrive at the far end (its
queue is a FIFO of fixed rate), so the network schedules one event per arrival, not per queue step.
"""

from __future__ import annotations

import struct
from collections import deque
from dataclasses import dataclass

__all__ = ["LinkSpec", "Port", "ETHERNET_OVERHEAD", "mark_ce"]

ETHERNET_OVERHEAD = 24
"""Bytes a frame occupies on an Ethernet wire beyond what a P4 program sees: preamble and start delimiter (8), FCS
(4), inter-frame gap (12)."""


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

    def __post_init__(self) -> None:
        if not self.rate_bps > 0:
            raise ValueError(f"link rate must be > 0 bit/s, got {self.rate_bps}")
        if self.delay_s < 0:
            raise ValueError(f"propagation delay must be >= 0 s, got {self.delay_s}")
        if self.buffer_bytes is not None and self.buffer_bytes < 1:
            raise ValueError(f"buffer must be at least 1 byte, got {self.buffer_bytes}")

    def describe(self) -> str:
        buf = "unbounded queues" if self.buffer_bytes is None else f"{self.buffer_bytes} B queues"
        ecn = f", ECN at {self.ecn_bytes} B" if self.ecn_bytes is not None else ""
        return f"{self.rate_bps / 1e9:g} Gbit/s, {self.delay_s * 1e6:g} µs, {buf}{ecn}"


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

    __slots__ = ("name", "spec", "free_at", "_waiting", "_queued", "_per_bit", "frames", "bytes", "drops",
                 "marks", "congested", "max_queue", "busy_s")

    def __init__(self, name: str, spec: LinkSpec) -> None:
        self.name = name
        self.spec = spec
        self.free_at = 0.0
        """When the wire finishes the last frame accepted."""
        self._waiting: deque[tuple[float, int]] = deque()  # (transmission start, wire bytes) not yet started
        self._queued = 0
        self._per_bit = 8.0 / spec.rate_bps
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
        start = now if self.free_at <= now else self.free_at
        wire = size * self._per_bit
        self.free_at = start + wire
        self.busy_s += wire
        if start > now:
            self._waiting.append((start, size))
            self._queued = queued + size
            if self._queued > self.max_queue:
                self.max_queue = self._queued
        self.frames += 1
        self.bytes += len(frame)
        return self.free_at + spec.delay_s, frame
