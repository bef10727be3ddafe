"""Switch packets/s benchmark (`make bench-switch`), plus the namespace/veth helpers it shares with
tests/switch_process (P4Runtime goes through controller.client).

    python -m switch.bench --out bench/switch.md [--duration 5] [--skip-veth]

Four measurements, each of (i) tests/fixtures/basic_forward.json (Ethernet/IPv4 LPM forwarding) and
(ii) tests/fixtures/agg64.json (adds 64 int32 payload elements into registers per packet):

- in-process: a `sw.process(port, frame)` loop over pre-built frames (engine speed, no I/O);
- over veth: `python -m switch` as its own process between two network namespaces; a sender process blasts
  pre-built frames with AF_PACKET for a fixed time, a receiver process counts what comes out. Reported: offered rate,
  delivered rate and loss, at full blast and at a paced offered rate.

Results go to a Markdown table (machine, method, numbers) and a CSV next to it. Internal subcommands `_send` and
`_recv` are what runs inside the namespaces.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import dataclasses
import datetime
import json
import os
import platform
import secrets
import select
import signal
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Iterator, Sequence

import finsy

from controller.client import P4RuntimeClient

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"

# ---------------------------------------------------------------------------------------------------------------
# Frames


def mac_bytes(mac: str) -> bytes:
    return bytes.fromhex(mac.replace(":", ""))


def ip_bytes(ip: str) -> bytes:
    return socket.inet_aton(ip)


def ipv4_checksum(header: bytes) -> int:
    """RFC 1071 checksum of an IPv4 header whose checksum field is zero."""
    if len(header) % 2:
        header += b"\0"
    total = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def udp_frame(dst_mac: str, src_mac: str, src_ip: str, dst_ip: str, sport: int, dport: int, payload: bytes,
              ttl: int = 64, ident: int = 0) -> bytes:
    """An Ethernet/IPv4/UDP frame with a correct IPv4 header checksum and a zero (absent) UDP checksum."""
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), ident, 0, ttl, 17, 0, ip_bytes(src_ip), ip_bytes(dst_ip))
    hdr = hdr[:10] + struct.pack("!H", ipv4_checksum(hdr)) + hdr[12:]
    return mac_bytes(dst_mac) + mac_bytes(src_mac) + b"\x08\x00" + hdr + udp


def forwarded(frame: bytes, new_dst_mac: str) -> bytes:
    """What an IPv4 LPM router (p4lang tutorials' basic.p4 ipv4_forward) makes of `frame`: src MAC := old dst MAC,
    dst MAC := new_dst_mac, TTL - 1, IPv4 checksum recomputed."""
    ip = bytearray(frame[14:34])
    ip[8] -= 1
    ip[10:12] = b"\0\0"
    ip[10:12] = struct.pack("!H", ipv4_checksum(bytes(ip)))
    return mac_bytes(new_dst_mac) + frame[0:6] + frame[12:14] + bytes(ip) + frame[34:]


# ---------------------------------------------------------------------------------------------------------------
# Network namespaces and veth pairs


def sh(*argv: str, timeout: float = 15, check: bool = True) -> subprocess.CompletedProcess:
    """Run a command (no shell); raise with its stderr when it fails."""
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({r.returncode}): {r.stderr.strip()}")
    return r


@dataclasses.dataclass
class Host:
    """A network namespace with one interface `ifname` whose peer `switch_if` stays in the root namespace."""

    ns: str
    ifname: str
    switch_if: str
    mac: str
    ip: str
    port: int

    def cmd(self, *argv: str) -> list[str]:
        """argv that runs inside this host's namespace."""
        return ["ip", "netns", "exec", self.ns, *argv]


def _quiet_link(ifname: str, ns: str | None = None) -> None:
    """No checksum offload (partial checksums on veth) and no IPv6 (router/neighbour solicitations)."""
    pre = ["ip", "netns", "exec", ns] if ns else []
    sh(*pre, "ethtool", "-K", ifname, "tx", "off", "rx", "off", check=False)
    sh(*pre, "sysctl", "-q", "-w", f"net.ipv6.conf.{ifname}.disable_ipv6=1", check=False)


@contextlib.contextmanager
def hosts(count: int, tag: str | None = None) -> Iterator[list[Host]]:
    """`count` namespaces h1..hN, each wired by a veth pair to an interface in the root namespace for switch port i.

    Names are unique per call (`tag`, default random) and everything is deleted on exit, even after errors.
    Host i has MAC 02:00:00:00:0i:0i... and IP 10.0.i.i (p4lang tutorial style).
    """
    tag = tag or secrets.token_hex(3)
    made_ns: list[str] = []
    made_links: list[str] = []
    try:
        result = []
        for i in range(1, count + 1):
            ns = f"inasp-{tag}-h{i}"
            sw_if, h_if = f"s{tag}p{i}", f"h{tag}e{i}"
            sh("ip", "netns", "add", ns)
            made_ns.append(ns)
            sh("ip", "link", "add", sw_if, "type", "veth", "peer", "name", h_if)
            made_links.append(sw_if)
            sh("ip", "link", "set", h_if, "netns", ns)
            mac = f"02:00:00:00:{i:02x}:{i:02x}"
            ip = f"10.0.{i}.{i}"
            sh("ip", "netns", "exec", ns, "ip", "link", "set", h_if, "address", mac)
            sh("ip", "netns", "exec", ns, "ip", "addr", "add", f"{ip}/24", "dev", h_if)
            _quiet_link(sw_if)
            _quiet_link(h_if, ns)
            sh("ip", "link", "set", sw_if, "up")
            sh("ip", "netns", "exec", ns, "ip", "link", "set", h_if, "up")
            sh("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
            result.append(Host(ns, h_if, sw_if, mac, ip, i))
        yield result
    finally:
        for link in made_links:
            sh("ip", "link", "del", link, check=False)
        for ns in made_ns:
            sh("ip", "netns", "del", ns, check=False)


def free_tcp_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SwitchProcess:
    """`python -m switch ...` as a child process; waits for its "Server listening" line."""

    def __init__(self, args: Sequence[str], ready_timeout: float = 30.0) -> None:
        self.args = [sys.executable, "-m", "switch", *args]
        self.proc = subprocess.Popen(self.args, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     start_new_session=True)
        self.lines: list[str] = []
        self._ready = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + ready_timeout
        while not self._ready.wait(0.05):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                err = self.stop()
                raise RuntimeError(f"switch did not start (rc={self.proc.returncode}): {err.strip()[-2000:]}")

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            if len(self.lines) < 100000:
                self.lines.append(line)
            if line.startswith("Server listening on"):
                self._ready.set()

    def stop(self, timeout: float = 10.0) -> str:
        """SIGTERM, wait (SIGKILL after `timeout`); returns stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._reader.join(5)
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode(errors="replace")


def _send_socket(ifname: str, sndbuf: int = 8 << 20) -> socket.socket:
    """An AF_PACKET socket that only transmits on `ifname` (protocol 0: the kernel queues nothing to it)."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    try:
        s.setsockopt(socket.SOL_SOCKET, 32, sndbuf)  # SO_SNDBUFFORCE
    except OSError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
    s.bind((ifname, 0))
    return s


def cmd_send(args: argparse.Namespace) -> int:
    """Send frames (hex, cycled) for `count` frames or `duration` seconds at `rate` pps (0 = as fast as possible);
    print JSON {"sent": n, "seconds": t, "send_errors": e} (frames the kernel refused are not counted as sent)."""
    frames = [bytes.fromhex(h) for h in args.frame]
    s = _send_socket(args.iface)
    send = s.send
    n, nf, errors = 0, len(frames), 0
    limit = args.count if args.count else 1 << 62
    chunk = 64
    t0 = time.perf_counter()
    end = t0 + args.duration if args.duration else float("inf")
    while n < limit:
        now = time.perf_counter()
        if now >= end:
            break
        if args.rate:
            ahead = n / args.rate - (now - t0)
            if ahead > 0:
                time.sleep(ahead)
        for i in range(min(chunk, limit - n)):
            try:
                send(frames[(n + i) % nf])
            except OSError:  # ENOBUFS and friends under overload
                errors += 1
        n += min(chunk, limit - n)
    elapsed = time.perf_counter() - t0
    print(json.dumps({"sent": n - errors, "seconds": elapsed, "send_errors": errors}), flush=True)
    return 0


def cmd_recv(args: argparse.Namespace) -> int:
    """Count (and with --keep, return as hex) frames whose bytes at `offset` equal `match`, for up to `duration`
    seconds or until `count` frames; prints "ready" once listening, then JSON {"received", "seconds", "frames"}."""
    from switch.ports import AfPacketPort  # VLAN tags restored, own transmissions ignored, like the switch

    port = AfPacketPort(0, args.iface)
    match = bytes.fromhex(args.match) if args.match else b""
    off = args.offset
    end_off = off + len(match)
    print("ready", flush=True)
    recv_batch = port.recv_batch
    n, kept = 0, []
    first = last = None
    deadline = time.monotonic() + args.duration
    poll = select.poll()
    poll.register(port.fileno(), select.POLLIN)
    idle_limit = args.idle
    last_rx = time.monotonic()
    while True:
        now = time.monotonic()
        if now >= deadline or (args.count and n >= args.count):
            break
        if idle_limit and n and now - last_rx > idle_limit:
            break
        if not poll.poll(50):
            continue
        while True:
            frames = recv_batch(256)
            if not frames:
                break
            for f in frames:
                if f[off:end_off] == match:
                    n += 1
                    last = time.perf_counter()
                    if first is None:
                        first = last
                    if args.keep and len(kept) < args.keep:
                        kept.append(f.hex())
        last_rx = time.monotonic()
    span = (last - first) if first is not None and last is not None else 0.0
    print(json.dumps({"received": n, "seconds": span, "frames": kept}), flush=True)
    return 0


class NsProcess:
    """A `python -m switch.bench _send/_recv` child in a namespace; `.result()` parses its JSON line."""

    def __init__(self, host: Host, sub: str, *args: str, wait_ready: bool = False) -> None:
        argv = host.cmd(sys.executable, "-m", "switch.bench", sub, "--iface", host.ifname, *args)
        self.proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if wait_ready:
            line = self.proc.stdout.readline()
            if line.strip() != "ready":
                self.proc.kill()
                raise RuntimeError(f"{sub} in {host.ns} failed: {line}{self.proc.stderr.read()}")

    def result(self, timeout: float = 60.0) -> dict:
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            raise RuntimeError(f"namespace helper timed out: {err}")
        if self.proc.returncode != 0:
            raise RuntimeError(f"namespace helper failed ({self.proc.returncode}): {err.strip()}")
        return json.loads(out.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------------------------
# Benchmark


@dataclasses.dataclass
class Result:
    """One benchmark row."""

    program: str
    mode: str  # in-process | loop | veth-blast | veth-paced
    offered_pps: float | None
    delivered_pps: float
    loss: float | None
    packets: int
    seconds: float
    switch_cpu: float | None = None  # switch process CPU time / wall time (1.0 = one core busy)
    note: str = ""


@dataclasses.dataclass
class Workload:
    """A program, how to populate it, the frames host 1 sends, and how the receiver recognises the results.

    `p4info_path` None: the JSON is given on the switch's command line (nothing to program over P4Runtime).
    `reply_to` is the host (0: h1, 1: h2) and switch port the results come out on.
    """

    name: str
    json_path: Path
    p4info_path: Path | None
    frames: list[bytes]
    match_offset: int  # the receiver counts frames with `match` at this offset
    match: bytes
    engine_setup: Callable[..., None]  # (sw, h1, h2)
    p4rt_setup: Callable[..., None]  # (client, h1, h2)
    reply_to: int = 1
    paced_rates: tuple[float, ...] = (50000.0, 100000.0)  # offered pps of the paced veth runs


def _mac_int(mac: str) -> int:
    return int.from_bytes(mac_bytes(mac), "big")


def _ip_int(ip: str) -> int:
    return int.from_bytes(ip_bytes(ip), "big")


LPM_TABLE = "MyIngress.ipv4_lpm"
FORWARD_ACTION = "MyIngress.ipv4_forward"
INA_UDP_PORT = 48864
INA_ELEMS = 64


def _forward_engine_setup(sw, h1: Host, h2: Host) -> None:
    table = sw.tables[LPM_TABLE]
    for h in (h1, h2):
        table.insert(((_ip_int(h.ip), 32),), FORWARD_ACTION, [_mac_int(h.mac), h.port])


def _forward_p4rt_setup(client: P4RuntimeClient, h1: Host, h2: Host) -> None:
    client.insert(*[lpm_route(h.ip, 32, h.mac, h.port) for h in (h1, h2)])


def lpm_route(prefix: str, plen: int, mac: str, port: int) -> finsy.P4TableEntry:
    """basic_forward's route: `prefix/plen` → rewrite the destination MAC to `mac`, send out of `port`."""
    return finsy.P4TableEntry(LPM_TABLE, match=finsy.P4TableMatch({"hdr.ipv4.dstAddr": (_ip_int(prefix), plen)}),
                              action=finsy.P4TableAction(FORWARD_ACTION, dstAddr=_mac_int(mac), port=port))


def forward_workload(h1: Host, h2: Host, payload: int = 64) -> Workload:
    frames = [udp_frame("02:00:00:00:00:fe", h1.mac, h1.ip, h2.ip, 10000 + i, 4321, bytes(payload)) for i in range(16)]
    return Workload("basic_forward (IPv4 LPM)", FIXTURES / "basic_forward.json",
                    FIXTURES / "basic_forward.p4info.txt", frames, 36, (4321).to_bytes(2, "big"),
                    _forward_engine_setup, _forward_p4rt_setup, reply_to=1,
                    paced_rates=(50000.0, 100000.0, 150000.0))


def ina_data(pool_index: int, packet_id: int, elems: Sequence[int], rank: int = 0) -> bytes:
    """The INA DATA header (BRIEF.md layout) and int32 elements."""
    return struct.pack("!BBHIBBH", 1, 0, pool_index, packet_id, 128, 0, rank) + \
        struct.pack(f"!{len(elems)}i", *elems)


def agg_workload(h1: Host, h2: Host) -> Workload:
    frames = [udp_frame("02:00:00:00:00:fe", h1.mac, h1.ip, h2.ip, 20000 + i, INA_UDP_PORT,
                        ina_data(i, i, [(i * 64 + k) % 1000 - 500 for k in range(INA_ELEMS)])) for i in range(16)]
    return Workload("agg64 (64 × int32 into registers)", FIXTURES / "agg64.json", None, frames, 42, b"\x02",
                    lambda sw, a, b: None, lambda c, a, b: None, reply_to=0,
                    paced_rates=(25000.0, 50000.0, 75000.0))


def _fake_hosts() -> tuple[Host, Host]:
    return (Host("-", "-", "-", "02:00:00:00:01:01", "10.0.1.1", 1),
            Host("-", "-", "-", "02:00:00:00:02:02", "10.0.2.2", 2))


def machine_info() -> dict[str, str]:
    cpu = platform.processor() or "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "date (UTC)": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
        "CPU": f"{cpu}, {os.cpu_count()} logical CPUs",
        "kernel": platform.release(),
        "Python": platform.python_version() + f" ({platform.python_implementation()})",
        "load average at start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def _repeated(run: Callable[[float], int], seconds: float, repeats: int) -> tuple[list[float], int, float, float]:
    """Call `run(seconds / repeats)` (returns packets done) `repeats` times: (rates, packets, wall, CPU share)."""
    rates, packets, wall, cpu = [], 0, 0.0, 0.0
    for _ in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        n = run(seconds / repeats)
        dt = time.perf_counter() - t0
        cpu += time.process_time() - c0
        rates.append(n / dt)
        packets += n
        wall += dt
    return rates, packets, wall, cpu / wall


def _in_process_result(w: Workload, mode: str, how: str, runs: tuple[list[float], int, float, float]) -> Result:
    rates, packets, wall, share = runs
    note = (f"{how}; median of {len(rates)} runs (min {min(rates) / 1000:.1f}, max {max(rates) / 1000:.1f} kpps)")
    return Result(w.name, mode, None, statistics.median(rates), None, packets, wall, share, note)


def _loaded_switch(w: Workload):
    from switch.v1model import V1Switch

    sw = V1Switch()
    sw.load(json.loads(w.json_path.read_text()))
    w.engine_setup(sw, *_fake_hosts())
    return sw


def bench_in_process(w: Workload, seconds: float, repeats: int = 5) -> Result:
    """`sw.process` on pre-built frames: `repeats` runs sharing `seconds`; the median rate."""
    sw = _loaded_switch(w)
    frames = w.frames
    process = sw.process
    want_port = w.reply_to + 1
    check = process(1, frames[0])
    if len(check) != 1 or check[0][0] != want_port or check[0][1][w.match_offset:].find(w.match) != 0:
        raise RuntimeError(f"{w.name}: the program did not send the benchmark frame to port {want_port}: "
                           f"{check!r:.200}")
    nf = len(frames)

    def run(duration: float) -> int:
        n = 0
        end = time.perf_counter() + duration
        while True:
            for i in range(256):
                process(1, frames[i % nf])
            n += 256
            if time.perf_counter() >= end:
                return n

    return _in_process_result(w, "in-process", "sw.process() loop, no I/O", _repeated(run, seconds, repeats))


def bench_loop(w: Workload, seconds: float, repeats: int = 5) -> Result:
    """PacketLoop (receive batch → drain) on in-memory ports: engine + loop overhead, no kernel I/O."""
    from switch.ports import MemoryPort, PacketLoop

    sw = _loaded_switch(w)
    p1, p2 = MemoryPort(1), MemoryPort(2)
    loop = PacketLoop(sw, [p1, p2])
    out = (p1, p2)[w.reply_to]
    frames = w.frames

    def run(duration: float) -> int:
        n = 0
        end = time.perf_counter() + duration
        while time.perf_counter() < end:
            for i in range(256):
                p1._rx.append(frames[i % len(frames)])
            p1.feed(frames[0])
            n += 257
            while loop.run_once(0):
                pass
            if len(out.sent) != 257:
                raise RuntimeError(f"{w.name}: loop delivered {len(out.sent)} of 257 frames")
            out.sent.clear()
        return n

    try:
        runs = _repeated(run, seconds, repeats)
    finally:
        loop.close()
    return _in_process_result(w, "loop", "PacketLoop batches of 257 on in-memory ports", runs)


def _proc_cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_veth(make_workload, seconds: float, log) -> list[Result]:
    """The switch as a process between two namespaces: paced runs at the workload's rates, then a full-speed blast."""
    results = []
    with hosts(2) as (h1, h2):
        w = make_workload(h1, h2)
        addr = f"127.0.0.1:{free_tcp_port()}"
        program = ["--no-p4"] if w.p4info_path is not None else [str(w.json_path)]
        sw = SwitchProcess([*program, "-i", f"1@{h1.switch_if}", "-i", f"2@{h2.switch_if}", "--",
                            "--grpc-server-addr", addr])
        try:
            if w.p4info_path is not None:
                client = P4RuntimeClient(addr).connect()
                try:
                    client.set_pipeline(w.p4info_path, w.json_path)
                    w.p4rt_setup(client, h1, h2)
                finally:
                    client.close()
            frame_args = sum((["--frame", f.hex()] for f in w.frames), [])
            runs = [("veth-paced", r) for r in w.paced_rates] + [("veth-blast", 0.0)]
            for mode, rate in runs:
                log(f"  {w.name}: {mode} for {seconds:.0f} s ...")
                recv = NsProcess((h1, h2)[w.reply_to], "_recv", "--match", w.match.hex(),
                                 "--offset", str(w.match_offset),
                                 "--duration", str(seconds + 10), "--idle", "1.5", wait_ready=True)
                rx_file = f"/sys/class/net/{h1.switch_if}/statistics/rx_packets"
                rx0 = int(open(rx_file).read())
                cpu0, wall0 = _proc_cpu_seconds(sw.proc.pid), time.monotonic()
                send = NsProcess(h1, "_send", *frame_args, "--duration", str(seconds), "--rate", str(rate))
                s = send.result(seconds + 30)
                cpu1, wall1 = _proc_cpu_seconds(sw.proc.pid), time.monotonic()
                r = recv.result(seconds + 30)
                arrived = int(open(rx_file).read()) - rx0
                sent = s["sent"]
                note = f"sent {sent}, reached switch port {arrived}, delivered {r['received']}"
                span = r["seconds"] if r["seconds"] > 0.5 * s["seconds"] else s["seconds"]
                results.append(Result(w.name, mode, sent / s["seconds"], r["received"] / span,
                                      1 - r["received"] / sent if sent else None, r["received"], span,
                                      (cpu1 - cpu0) / (wall1 - wall0), note))
        finally:
            err = sw.stop()
            if sw.proc.returncode not in (0, None):
                raise RuntimeError(f"switch exited with {sw.proc.returncode}: {err.strip()[-1000:]}")
    return results


def write_report(results: list[Result], out: Path, info: dict[str, str], seconds: float) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    csv_path = out.with_suffix(".csv")
    with open(csv_path, "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["program", "mode", "offered_pps", "delivered_pps", "loss", "packets", "seconds", "switch_cpu",
                     "note"])
        for r in results:
            wr.writerow([r.program, r.mode, "" if r.offered_pps is None else f"{r.offered_pps:.0f}",
                         f"{r.delivered_pps:.0f}", "" if r.loss is None else f"{r.loss:.4f}", r.packets,
                         f"{r.seconds:.3f}", "" if r.switch_cpu is None else f"{r.switch_cpu:.2f}", r.note])

    def k(x: float | None) -> str:
        return "–" if x is None else f"{x / 1000:.1f}"

    lines = ["# Switch benchmark", "",
             f"Produced by `make bench-switch` (`python -m switch.bench --out {out}`); raw numbers in "
             f"`{csv_path.name}`.", "", "## Machine", ""]
    lines += [f"- {key}: {val}" for key, val in info.items()]
    lines += ["", "## Method", "",
              "- **in-process**: `V1Switch.process(1, frame)` in a loop over 16 pre-built frames, 5 runs sharing "
              f"{seconds:.0f} s, median rate; the pipeline only, no I/O. *switch CPU* here is the benchmark "
              "process's CPU time / wall time: below 1.0 means other processes took the CPU part of the time.",
              "- **loop**: the same through the switch's `PacketLoop` (epoll, receive a batch, one `drain`) over "
              "in-memory ports.",
              "- **veth-paced / veth-blast**: `python -m switch` as a separate process, ports 1 and 2 on veth pairs to "
              "network namespaces h1 and h2. basic_forward gets its pipeline and two /32 routes over P4Runtime and "
              "forwards h1 → h2; agg64 is given on the command line and reflects each result to the sender's port "
              "(h1). A sender process in h1 sends 16 pre-built frames round-robin with an AF_PACKET socket for "
              f"{seconds:.0f} s (paced: at a fixed offered rate; blast: as fast as it can); a receiver process counts "
              "the results. All processes share the machine's CPUs, so under blast the sender competes with the "
              "switch. *delivered* = frames received / time from the first to the last received frame; *loss* = "
              "1 − received / sent (lost anywhere: veth backlog, the switch's 4 MiB receive ring per port, "
              "the receiver); "
              "*switch CPU* = CPU time of the switch process / wall time while sending (1.0 = one core); *kpps per "
              "switch CPU* = delivered / switch CPU, what the switch would forward with a core to itself "
              "(an extrapolation: it assumes the CPU share was the limit).",
              "", "## Results", "",
              "| program | mode | offered kpps | delivered kpps | loss | switch CPU | kpps per switch CPU | packets | "
              "notes |",
              "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        loss = "–" if r.loss is None else f"{100 * r.loss:.1f} %"
        cpu = "–" if r.switch_cpu is None else f"{r.switch_cpu:.2f}"
        per_cpu = k(r.delivered_pps / r.switch_cpu) if r.switch_cpu else "–"
        lines.append(f"| {r.program} | {r.mode} | {k(r.offered_pps)} | **{k(r.delivered_pps)}** | {loss} | {cpu} | "
                     f"{per_cpu} | {r.packets} | {r.note} |")
    lines += ["", "Goals (issue #2): in-process ≥ 100 kpps forwarding and ≥ 25 kpps aggregation; "
              "over veth ≥ 50 kpps "
              "forwarding.", ""]
    out.write_text("\n".join(lines))


def run_benchmark(args: argparse.Namespace) -> int:
    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    info = machine_info()
    workloads = [forward_workload, agg_workload]
    results: list[Result] = []
    for make in workloads:
        w = make(*_fake_hosts())
        log(f"{w.name}: in-process ...")
        results.append(bench_in_process(w, args.duration))
        results.append(bench_loop(w, args.duration))
    if not args.skip_veth:
        if os.geteuid() != 0:
            log("not root: skipping the veth measurements")
        else:
            for make in workloads:
                results.extend(bench_veth(make, args.duration, log))
    info["load average at end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    info["note"] = ("the machine is shared; a load average above the CPU count means other processes took CPU time "
                    "from these measurements")
    write_report(results, Path(args.out), info, args.duration)
    for r in results:
        log(f"{r.program:40s} {r.mode:12s} {r.delivered_pps / 1000:8.1f} kpps"
            + ("" if r.loss is None else f"  loss {100 * r.loss:5.1f} %"))
    log(f"wrote {args.out} and {Path(args.out).with_suffix('.csv')}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m switch.bench", description="Switch packets/s benchmark.")
    p.add_argument("--out", default="bench/switch.md", help="Markdown report (a .csv is written next to it)")
    p.add_argument("--duration", type=float, default=5.0, help="seconds per measurement")
    p.add_argument("--skip-veth", action="store_true", help="in-process measurements only")
    sub = p.add_subparsers(dest="cmd")
    ps = sub.add_parser("_send", help="(internal) AF_PACKET sender")
    ps.add_argument("--iface", required=True)
    ps.add_argument("--frame", action="append", required=True)
    ps.add_argument("--count", type=int, default=0)
    ps.add_argument("--duration", type=float, default=0.0)
    ps.add_argument("--rate", type=float, default=0.0)
    pr = sub.add_parser("_recv", help="(internal) AF_PACKET receiver/counter")
    pr.add_argument("--iface", required=True)
    pr.add_argument("--match", default="")
    pr.add_argument("--offset", type=int, default=0)
    pr.add_argument("--duration", type=float, default=10.0)
    pr.add_argument("--count", type=int, default=0)
    pr.add_argument("--idle", type=float, default=0.0)
    pr.add_argument("--keep", type=int, default=0)
    args = p.parse_args(argv)
    if args.cmd == "_send":
        return cmd_send(args)
    if args.cmd == "_recv":
        return cmd_recv(args)
    return run_benchmark(args)


if __name__ == "__main__":
    sys.exit(main())
