"""Console/file log of the switch in the spirit of BMv2's spdlog lines.

BMv2 prints `[hh:mm:ss.mmm] [bmv2] [D] [thread 1234] [0.0] [cxt 0] Processing packet received on port 1`. The engine
hands us bare messages through `V1Switch(trace=...)`; `Trace` adds the timestamp, logger name, level, thread id and
packet id, and writes the lines to a text stream (stdout for `--log-console`, a file for `--log-file`).
"""

from __future__ import annotations

import threading
import time
from typing import IO

LEVELS = {"trace": "T", "debug": "D", "info": "I", "warn": "W", "error": "E"}


def format_line(message: str, pkt_id: object = None, level: str = "D", now: float | None = None,
                thread_id: int | None = None) -> str:
    """One log line: `[hh:mm:ss.mmm] [bmv2] [D] [thread N] [pkt] [cxt 0] message` (no packet part if pkt_id is None)."""
    if now is None:
        now = time.time()
    lt = time.localtime(now)
    millis = int((now - int(now)) * 1000)
    tid = threading.get_native_id() if thread_id is None else thread_id
    head = f"[{lt.tm_hour:02d}:{lt.tm_min:02d}:{lt.tm_sec:02d}.{millis:03d}] [bmv2] [{level}] [thread {tid}]"
    if pkt_id is None:
        return f"{head} {message}"
    return f"{head} [{pkt_id}] [cxt 0] {message}"


class Trace:
    """A callable log sink: `trace(message)` or `trace(pkt_id, message)` appends one formatted line.

    Thread-safe (gRPC threads log too). Lines are buffered; the packet loop calls `flush()` once per batch.
    `autoflush` writes every line through at once (for `--log-flush` or interactive use).
    """

    def __init__(self, stream: IO[str], autoflush: bool = False, close_stream: bool = False) -> None:
        self._stream = stream
        self._autoflush = autoflush
        self._close_stream = close_stream
        self._lock = threading.Lock()
        self._broken = False
        self._sec = -1
        self._hms = ""

    def __call__(self, *args: object) -> None:
        if len(args) == 1:
            pkt_id, message = None, args[0]
        elif len(args) == 2:
            pkt_id, message = args
        else:
            raise TypeError(f"trace() takes (message) or (pkt_id, message), got {len(args)} arguments")
        self.log(str(message), pkt_id)

    def log(self, message: str, pkt_id: object = None, level: str = "D") -> None:
        """Write one line (a control-plane or port event when pkt_id is None)."""
        if self._broken:
            return
        now = time.time()
        sec = int(now)
        if sec != self._sec:  # localtime() once per second: a traced packet logs dozens of lines
            lt = time.localtime(sec)
            self._sec, self._hms = sec, f"{lt.tm_hour:02d}:{lt.tm_min:02d}:{lt.tm_sec:02d}"
        head = f"[{self._hms}.{int((now - sec) * 1000):03d}] [bmv2] [{level}] [thread {threading.get_native_id()}]"
        line = f"{head} {message}\n" if pkt_id is None else f"{head} [{pkt_id}] [cxt 0] {message}\n"
        with self._lock:
            try:
                self._stream.write(line)
                if self._autoflush:
                    self._stream.flush()
            except (OSError, ValueError):
                self._broken = True  # stdout closed by the parent, disk full: logging must never stop the switch

    def info(self, message: str) -> None:
        """An info-level line without packet id (startup, ports, pipeline loads)."""
        self.log(message, None, "I")

    def flush(self) -> None:
        with self._lock:
            try:
                self._stream.flush()
            except (OSError, ValueError):
                self._broken = True

    def close(self) -> None:
        self.flush()
        if self._close_stream:
            try:
                self._stream.close()
            except OSError:
                pass
