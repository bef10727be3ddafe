"""What runs inside the namespaces: an AF_PACKET sender and a receiver that counts matching frames.

    python -m perf.traffic send --iface IF --frame HEX [--frame HEX ...] [--count N] [--duration S] [--rate PPS]
    python -m perf.traffic recv --iface IF [--match HEX --offset N] [--duration S] [--count N] [--idle S] [--keep N]
    python -m perf.traffic send-server --iface IF --frame HEX ...     # requests {"rate": PPS, "duration": S}
    python -m perf.traffic recv-server --iface IF [--match HEX --offset N]   # requests {} → the count so far

One-shot commands print one JSON line when done. Servers print "ready", then answer each JSON request line on stdin
with one JSON line, until stdin closes: the rate search sends many probes without starting a process per probe.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
from typing import Any, Sequence

from switch.ports import AfPacketPort  # VLAN tags restored, own transmissions ignored, like the switch
from topo.netns import REPO, Host


def send_socket(ifname: str, sndbuf: int = 8 << 20) -> socket.socket:
    """An AF_PACKET socket that only transmits on `ifname` (protocol 0: the kernel queues nothing to it)."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    try:
        s.setsockopt(socket.SOL_SOCKET, 32, sndbuf)  # SO_SNDBUFFORCE
    except OSError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
    s.bind((ifname, 0))
    return s


BURST_S = 200e-6
"""A paced sender sends what falls due in this long at once (at least one frame): at 10 kpps 2 frames every 200 us,
at 150 kpps 30. Real simple_switch drops from a 64-packet egress queue that a burst fills faster than its egress
thread empties it (simple_switch.h: "non-blocking and we drop the packet if the queue is full"): the 64-frame bursts
this sender used to send at every rate cost it half of every burst even at 0.5 kpps, a loss of the sender's making."""


def send_frames(sock: socket.socket, frames: Sequence[bytes], *, rate: float = 0.0, duration: float = 0.0,
                count: int = 0, burst_s: float = BURST_S) -> dict[str, Any]:
    """Send `frames` (cycled) for `count` frames or `duration` seconds at `rate` frames/s (0: as fast as possible, in
    chunks of 64), paced against the clock in bursts of what falls due in `burst_s`. Returns {"sent", "seconds",
    "send_errors", "end", "cpu_s"}: frames the kernel refused are counted in send_errors, not in sent; `end` is
    time.monotonic() when sending stopped (CLOCK_MONOTONIC: comparable across the namespaces' processes); `cpu_s`
    the sender's CPU seconds meanwhile."""
    send = sock.send
    n, nf, errors = 0, len(frames), 0
    limit = count if count else 1 << 62
    chunk = max(1, min(64, int(rate * burst_s))) if rate else 64
    c0, t0 = time.process_time(), time.perf_counter()
    end = t0 + duration if duration else float("inf")
    while n < limit:
        now = time.perf_counter()
        if now >= end:
            break
        if rate:
            ahead = n / rate - (now - t0)
            if ahead > 0:
                time.sleep(ahead)
        k = min(chunk, limit - n)
        for i in range(k):
            try:
                send(frames[(n + i) % nf])
            except OSError:  # ENOBUFS and friends under overload
                errors += 1
        n += k
    return {"sent": n - errors, "seconds": time.perf_counter() - t0, "send_errors": errors,
            "end": time.monotonic(), "cpu_s": time.process_time() - c0}


class MatchCounter:
    """Counts frames received on an interface whose bytes at `offset` equal `match` (keeps up to `keep` of them)."""

    def __init__(self, iface: str, match: bytes = b"", offset: int = 0, keep: int = 0) -> None:
        self.port = AfPacketPort(0, iface)
        self.match, self.offset, self.keep = match, offset, keep
        self.received = 0
        self.kept: list[str] = []
        self.first: float | None = None
        self.last: float | None = None

    def fileno(self) -> int:
        return self.port.fileno()

    def drain(self) -> None:
        """Count everything the socket holds now."""
        off, end_off, match = self.offset, self.offset + len(self.match), self.match
        while True:
            frames = self.port.recv_batch(256)
            if not frames:
                return
            for f in frames:
                if f[off:end_off] == match:
                    self.received += 1
                    self.last = time.monotonic()
                    if self.first is None:
                        self.first = self.last
                    if len(self.kept) < self.keep:
                        self.kept.append(f.hex())


def cmd_send(args: argparse.Namespace) -> int:
    """One-shot sender; prints {"sent", "seconds", "send_errors"}."""
    frames = [bytes.fromhex(h) for h in args.frame]
    result = send_frames(send_socket(args.iface), frames, rate=args.rate, duration=args.duration, count=args.count)
    print(json.dumps(result), flush=True)
    return 0


def cmd_recv(args: argparse.Namespace) -> int:
    """Count (and with --keep, return as hex) matching frames for up to `duration` seconds, until `count` frames or
    `idle` seconds without one; prints "ready" once listening, then {"received", "seconds", "frames"}."""
    counter = MatchCounter(args.iface, bytes.fromhex(args.match), args.offset, args.keep)
    print("ready", flush=True)
    deadline = time.monotonic() + args.duration
    poll = select.poll()
    poll.register(counter.fileno(), select.POLLIN)
    last_rx = time.monotonic()
    while True:
        now = time.monotonic()
        if now >= deadline or (args.count and counter.received >= args.count):
            break
        if args.idle and counter.received and now - last_rx > args.idle:
            break
        if not poll.poll(50):
            continue
        counter.drain()
        last_rx = time.monotonic()
    span = (counter.last - counter.first) if counter.first is not None and counter.last is not None else 0.0
    print(json.dumps({"received": counter.received, "seconds": span, "frames": counter.kept}), flush=True)
    return 0


def cmd_send_server(args: argparse.Namespace) -> int:
    """Serve {"rate", "duration"} requests with send_frames() on one socket."""
    frames = [bytes.fromhex(h) for h in args.frame]
    sock = send_socket(args.iface)
    print("ready", flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        result = send_frames(sock, frames, rate=float(req.get("rate", 0)), duration=float(req.get("duration", 0)),
                             count=int(req.get("count", 0)))
        print(json.dumps(result), flush=True)
    return 0


def cmd_recv_server(args: argparse.Namespace) -> int:
    """Count matching frames all the time; answer each request line with {"received", "last_rx", "last_rx_age",
    "cpu_s"}: the count so far, time.monotonic() of the last matching frame and seconds since (null before the
    first), and the receiver's CPU seconds so far."""
    counter = MatchCounter(args.iface, bytes.fromhex(args.match), args.offset)
    poll = select.poll()
    poll.register(counter.fileno(), select.POLLIN)
    poll.register(sys.stdin.fileno(), select.POLLIN)
    print("ready", flush=True)
    stdin_fd = sys.stdin.fileno()
    pending = b""
    while True:
        for fd, _ in poll.poll(1000):
            if fd != stdin_fd:
                counter.drain()
                continue
            counter.drain()
            chunk = os.read(stdin_fd, 65536)
            if not chunk:
                return 0
            pending += chunk
            while b"\n" in pending:
                _, pending = pending.split(b"\n", 1)
                age = None if counter.last is None else time.monotonic() - counter.last
                print(json.dumps({"received": counter.received, "last_rx": counter.last, "last_rx_age": age,
                                  "cpu_s": time.process_time()}), flush=True)


def cmd_exchange_server(args: argparse.Namespace) -> int:
    """The far ends of a switch's ports (perf.difftest): each request {"port", "frame"} sends the frame into that
    port and answers {"out": [[port, hex], ...]}, every frame the switch sent on any port until `quiet` seconds pass
    without one (at most `limit` seconds). Frames left over from earlier requests are discarded first."""
    ports = {}
    for spec in args.port:
        num, _, iface = spec.partition("@")
        ports[int(num)] = AfPacketPort(int(num), iface)
    poll = select.poll()
    by_fd = {p.fileno(): n for n, p in ports.items()}
    for fd in by_fd:
        poll.register(fd, select.POLLIN)
    print("ready", flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        quiet, limit = float(req.get("quiet", args.quiet)), float(req.get("limit", args.limit))
        for p in ports.values():  # stale frames
            while p.recv_batch(256):
                pass
        try:
            ports[int(req["port"])].send(bytes.fromhex(req["frame"]))
        except OSError as exc:
            print(json.dumps({"out": [], "error": f"cannot send: {exc.strerror}"}), flush=True)
            continue
        out: list[list[Any]] = []
        end = time.monotonic() + limit
        last = time.monotonic()
        while time.monotonic() < end:
            wait = min(end, last + quiet) - time.monotonic()
            if wait <= 0:
                break
            events = poll.poll(wait * 1000)
            for fd, _ in events:
                for f in ports[by_fd[fd]].recv_batch(256):
                    out.append([by_fd[fd], f.hex()])
                    last = time.monotonic()
        print(json.dumps({"out": out}), flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m perf.traffic", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("send", "send-server"):
        ps = sub.add_parser(name, help="AF_PACKET sender" + (" (serving requests)" if "server" in name else ""))
        ps.add_argument("--iface", required=True)
        ps.add_argument("--frame", action="append", required=True, help="a frame in hex (repeat; sent in turn)")
        if name == "send":
            ps.add_argument("--count", type=int, default=0)
            ps.add_argument("--duration", type=float, default=0.0)
            ps.add_argument("--rate", type=float, default=0.0, help="frames/s (0: as fast as possible)")
    for name in ("recv", "recv-server"):
        pr = sub.add_parser(name, help="AF_PACKET receiver/counter" + (" (serving requests)" if "server" in name
                                                                       else ""))
        pr.add_argument("--iface", required=True)
        pr.add_argument("--match", default="", help="count frames with these bytes (hex) ...")
        pr.add_argument("--offset", type=int, default=0, help="... at this offset")
        if name == "recv":
            pr.add_argument("--duration", type=float, default=10.0)
            pr.add_argument("--count", type=int, default=0)
            pr.add_argument("--idle", type=float, default=0.0)
            pr.add_argument("--keep", type=int, default=0)
    px = sub.add_parser("exchange-server", help="the far ends of a switch's ports: a frame in, what came out")
    px.add_argument("--iface", help="ignored (the helpers' common flag)")
    px.add_argument("--port", action="append", required=True, metavar="N@IFACE", help="switch port N's far end")
    px.add_argument("--quiet", type=float, default=0.05, help="seconds without a frame that end a collection")
    px.add_argument("--limit", type=float, default=2.0, help="longest collection, seconds")
    args = p.parse_args(argv)
    return {"send": cmd_send, "recv": cmd_recv, "send-server": cmd_send_server,
            "recv-server": cmd_recv_server, "exchange-server": cmd_exchange_server}[args.cmd](args)



class NsProcess:
    """A `python -m perf.traffic SUB --iface IF ...` helper inside a host's namespace.

    One-shot helpers (`send`, `recv`) print one JSON line at the end: `.result()` parses it. Serving helpers
    (`send-server`, `recv-server`) print "ready", then answer each JSON request line with a JSON line: `.ask()`.
    """

    def __init__(self, host: Host, sub: str, *args: str, wait_ready: bool = False) -> None:
        argv = host.cmd(sys.executable, "-m", "perf.traffic", sub, "--iface", host.ifname, *args)
        self.where = f"{sub} in {host.ns}"
        self.proc = subprocess.Popen(argv, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        if wait_ready:
            line = self._readline(30.0)
            if line.strip() != "ready":
                self.proc.kill()
                raise RuntimeError(f"{self.where} failed: {line}{self.proc.stderr.read()}")

    def _readline(self, timeout: float) -> str:
        """One stdout line, or RuntimeError after `timeout` seconds."""
        assert self.proc.stdout is not None
        box: list[str] = []
        reader = threading.Thread(target=lambda: box.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout)
        if not box:
            self.proc.kill()
            raise RuntimeError(f"{self.where}: no answer within {timeout:g} s")
        return box[0]

    def ask(self, request: dict[str, Any], timeout: float = 60.0) -> dict[str, Any]:
        """Send one request to a serving helper; its JSON answer."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise RuntimeError(f"{self.where} exited: {self.proc.stderr.read().strip()}") from None
        line = self._readline(timeout)
        if not line:
            raise RuntimeError(f"{self.where} exited: {self.proc.stderr.read().strip()}")
        return json.loads(line)

    def result(self, timeout: float = 60.0) -> dict[str, Any]:
        """Wait for a one-shot helper to finish; its JSON line."""
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            raise RuntimeError(f"namespace helper timed out: {err}")
        if self.proc.returncode != 0:
            raise RuntimeError(f"namespace helper failed ({self.proc.returncode}): {err.strip()}")
        return json.loads(out.strip().splitlines()[-1])

    def close(self, timeout: float = 5.0) -> None:
        """End a serving helper (EOF on its stdin; killed after `timeout`)."""
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


if __name__ == "__main__":
    sys.exit(main())
