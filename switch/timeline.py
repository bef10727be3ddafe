"""Timelines in Chrome's trace-event format (the JSON that Perfetto's UI and chrome://tracing open).

One `Timeline` per process (the switch, a worker, the PS): a process track with one thread track per port, slot or
aggregator; `span` is a complete event ("X": something that took time, e.g. a packet from its first transmission to
its result), `instant` an instant event ("i": a timeout, a retransmission, a fault-plan drop), `counter` a counter
track ("C", e.g. a window). Times are `time.monotonic()` seconds: one clock for every process of the machine, so the
files of one run line up when `merge` puts them into one, shifted to start at 0 and each process under its own pid.

Format: https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU (timestamps in us).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable

__all__ = ["MAX_EVENTS", "Timeline", "merge"]

MAX_EVENTS = 2_000_000
"""Events one timeline keeps (~200 MB of JSON); later ones are counted in `dropped_events`, not kept."""


def _us(t: float) -> float:
    return round(t * 1e6, 3)


class Timeline:
    """The trace events of one process: `process` names its track, `pid` orders it in a merged file."""

    def __init__(self, process: str, pid: int = 0, max_events: int = MAX_EVENTS) -> None:
        self.process = process
        self.pid = pid
        self.max_events = max_events
        self.events: list[dict[str, Any]] = []
        self.dropped_events = 0
        self._tracks: dict[int, str] = {}

    def track(self, tid: int, name: str) -> None:
        """Name thread track `tid` (once; a later name for the same track is ignored)."""
        self._tracks.setdefault(tid, name)

    def _add(self, ev: dict[str, Any]) -> None:
        if len(self.events) < self.max_events:
            self.events.append(ev)
        else:
            self.dropped_events += 1

    def span(self, name: str, tid: int, start: float, end: float, cat: str = "", **args: Any) -> None:
        """Something on track `tid` from `start` to `end` (monotonic seconds)."""
        ev: dict[str, Any] = {"name": name, "ph": "X", "ts": _us(start), "dur": _us(max(0.0, end - start)),
                              "pid": self.pid, "tid": tid}
        if cat:
            ev["cat"] = cat
        if args:
            ev["args"] = args
        self._add(ev)

    def instant(self, name: str, tid: int, t: float, cat: str = "", **args: Any) -> None:
        """A moment on track `tid` (thread-scoped instant event)."""
        ev: dict[str, Any] = {"name": name, "ph": "i", "s": "t", "ts": _us(t), "pid": self.pid, "tid": tid}
        if cat:
            ev["cat"] = cat
        if args:
            ev["args"] = args
        self._add(ev)

    def counter(self, name: str, t: float, **values: float) -> None:
        """Values of a counter track of this process at `t`."""
        self._add({"name": name, "ph": "C", "ts": _us(t), "pid": self.pid, "args": values})

    def metadata(self) -> list[dict[str, Any]]:
        """The "M" events naming the process and its tracks (in track order)."""
        out: list[dict[str, Any]] = [
            {"name": "process_name", "ph": "M", "pid": self.pid, "tid": 0, "args": {"name": self.process}},
            {"name": "process_sort_index", "ph": "M", "pid": self.pid, "tid": 0, "args": {"sort_index": self.pid}}]
        for tid in sorted(self._tracks):
            out.append({"name": "thread_name", "ph": "M", "pid": self.pid, "tid": tid,
                        "args": {"name": self._tracks[tid]}})
            out.append({"name": "thread_sort_index", "ph": "M", "pid": self.pid, "tid": tid,
                        "args": {"sort_index": tid}})
        return out

    def to_json(self) -> dict[str, Any]:
        return {"traceEvents": self.metadata() + self.events, "displayTimeUnit": "ms",
                "otherData": {"process": self.process, "clock": "monotonic", "dropped_events": self.dropped_events}}

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the trace file (atomically: a reader never sees half of it)."""
        p = Path(path)
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(json.dumps(self.to_json(), separators=(",", ":")))
        tmp.replace(p)


def merge(paths: Iterable[str | os.PathLike[str]], out: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """One trace of several processes' files: the i-th file's events under pid i (its own pids mapped in order of
    appearance when it has several), every timestamp shifted so the earliest is 0; written to `out` if given.
    Missing or unreadable files are listed in otherData.missing, not fatal (a process that crashed wrote none)."""
    files: list[tuple[str, list[dict[str, Any]]]] = []
    missing: list[str] = []
    for p in paths:
        try:
            data = json.loads(Path(p).read_text())
            events = data["traceEvents"] if isinstance(data, dict) else data
            if not isinstance(events, list):
                raise ValueError("no traceEvents list")
        except (OSError, ValueError, KeyError, TypeError):
            missing.append(str(p))
            continue
        files.append((str(p), events))
    stamps = [e["ts"] for _, evs in files for e in evs if "ts" in e and e.get("ph") != "M"]
    t0 = min(stamps) if stamps else 0.0
    merged: list[dict[str, Any]] = []
    next_pid = 0
    for _, events in files:
        pids: dict[Any, int] = {}
        for e in events:
            e = dict(e)
            if e.get("pid") not in pids:
                pids[e.get("pid")] = next_pid
                next_pid += 1
            e["pid"] = pids[e.get("pid")]
            if "ts" in e and e.get("ph") != "M":
                e["ts"] = round(e["ts"] - t0, 3)
            if e.get("name") == "process_sort_index":
                e["args"] = {"sort_index": e["pid"]}
            merged.append(e)
    doc = {"traceEvents": merged, "displayTimeUnit": "ms",
           "otherData": {"files": [f for f, _ in files], "missing": missing, "t0_monotonic_us": t0}}
    if out is not None:
        Path(out).write_text(json.dumps(doc, separators=(",", ":")))
    return doc
