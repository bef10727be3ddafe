"""The switch's timeline (`python -m switch --trace FILE`): what the pipeline did with each frame, on one track per
value of a header field (a slot, an aggregator) or per ingress port, and the fault plan's actions.

Each frame becomes a span from the start to the end of its processing, named after what left the switch: "to port
2", "to ports 1,2,3,4" (a multicast: an aggregate completed), "no output" (absorbed into a register, or dropped).
Its args carry the ingress port, the egress ports and the values the program's parser gives `fields` in the frame
that came in and in the first frame that went out (`out.<field>`), so a reader sees e.g. the ECN bits a result left
with. The switch knows no protocol: which field makes the tracks comes from the command line (`--trace-track
ina.pool_index&0x7fff`), as the experiment runner passes it from the protocol registry.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

from switch.timeline import Timeline

__all__ = ["PacketTimeline", "parse_track"]

PORT_TRACKS = 1 << 20
"""Tracks of frames without the track field (or without one given): PORT_TRACKS + ingress port."""


def parse_track(spec: str) -> tuple[str, int | None]:
    """`header.field` or `header.field&MASK` -> (field, mask); ValueError for anything else."""
    name, _, mask = spec.partition("&")
    if name.count(".") != 1 or not all(name.split(".")):
        raise ValueError(f"'{spec}' is not header.field[&MASK]")
    try:
        return name, (int(mask, 0) if mask else None)
    except ValueError:
        raise ValueError(f"'{mask}' in '{spec}' is not a number") from None


class PacketTimeline:
    """Records frames through `sw` (a V1Switch, for `peek`) into a `Timeline`."""

    def __init__(self, sw: Any, track: str | None = None, fields: Sequence[str] = (), process: str = "switch",
                 pid: int = 0) -> None:
        self.sw = sw
        self.track_field, self.mask = parse_track(track) if track else (None, None)
        self.fields = list(dict.fromkeys(([self.track_field] if self.track_field else []) + list(fields)))
        self.timeline = Timeline(process, pid)

    def packet(self, port: int, frame: bytes, out: Sequence[tuple[int, bytes]], start: float, end: float) -> None:
        """Frame `frame` arrived on `port` and its processing from `start` to `end` sent `out`."""
        tl = self.timeline
        values = self.sw.peek(frame, self.fields) if self.fields else {}
        key = values.get(self.track_field) if self.track_field else None
        if key is None:
            tid = PORT_TRACKS + port
            tl.track(tid, f"port {port}")
        else:
            if self.mask is not None:
                key &= self.mask
            tid = key + 1  # track 0: the switch's own events
            tl.track(tid, f"{self.track_field} {key}")
        ports = [p for p, _ in out]
        name = ("no output" if not ports else f"to port {ports[0]}" if len(ports) == 1
                else f"to ports {','.join(map(str, ports))}")
        args: dict[str, Any] = {"in_port": port, "out_ports": ports, "bytes": len(frame)}
        args.update({k: v for k, v in values.items() if v is not None})
        if out and self.fields:
            args.update({f"out.{k}": v for k, v in self.sw.peek(out[0][1], self.fields).items() if v is not None})
        tl.span(name, tid, start, end, "packet", **args)

    def fault(self, action: str, direction: str, port: int, now: float) -> None:
        """The fault plan did `action` to a frame going `direction` ("in"/"out") on `port`."""
        tid = PORT_TRACKS + port
        self.timeline.track(tid, f"port {port}")
        self.timeline.instant(f"fault: {action}", tid, now, "fault", direction=direction, port=port)

    def event(self, name: str, now: float, **args: Any) -> None:
        """Something that happened to the whole switch (a fault plan's register reset)."""
        self.timeline.track(0, "switch")
        self.timeline.instant(name, 0, now, "event", **args)

    def write(self, path: str | os.PathLike[str]) -> None:
        self.timeline.write(path)
