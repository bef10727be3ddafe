"""Switch ports and the packet event loop.

- `AfPacketPort`: a Linux interface opened with an AF_PACKET raw socket (what BMv2's BMI does with libpcap), with
  PACKET_IGNORE_OUTGOING so the switch never reads back what it (or the host) transmits, VLAN tags restored, and a
  non-blocking receive drained until empty: from a TPACKET_V2 ring mapped into memory (no system call per frame) on
  x86, else with recvmsg and a large socket buffer.
- `MemoryPort`: an in-process port for tests: `feed()` frames in, read `sent` out.
- `PcapWriter`: libpcap files; with `--pcap DIR` every interface gets `DIR/<iface>_in.pcap` (frames received) and
  `DIR/<iface>_out.pcap` (frames transmitted), BMv2's naming.
- `PacketLoop`: one epoll loop over all ports. Per wake-up it receives a batch from every ready port, runs
  `sw.receive()` for each frame and one `sw.drain()` under `sw.lock`, then transmits. Frames egressing on the CPU
  port go to the `packet_in` callback (P4Runtime PacketIn); `inject()` queues frames from other threads (P4Runtime
  PacketOut) and wakes the loop through an eventfd, so the pipeline only ever runs on the loop thread.
"""

from __future__ import annotations

import collections
import errno
import mmap
import os
import platform
import select
import socket
import struct
import sys
import threading
import time
from typing import BinaryIO, Callable, Iterable, Protocol

from switch.faults import FaultPlan
from switch.packet_timeline import PacketTimeline

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_IGNORE_OUTGOING = 23
PACKET_OUTGOING = 4
PACKET_AUXDATA = 8
TP_STATUS_VLAN_VALID = 0x10
TP_STATUS_VLAN_TPID_VALID = 0x40
AUXDATA = struct.Struct("=IIIHHHH")  # struct tpacket_auxdata: status, len, snaplen, mac, net, vlan_tci, vlan_tpid
AUX_SPACE = socket.CMSG_SPACE(AUXDATA.size)
PACKET_RX_RING = 5
PACKET_COPY_THRESH = 7
PACKET_VERSION = 10
TPACKET_V2 = 1
TP_STATUS_KERNEL = 0
TP_STATUS_USER = 1
TP_STATUS_COPY = 2
TPACKET2_HDR = struct.Struct("=IIIHHIIHH4x")  # status, len, snaplen, mac, net, sec, nsec, vlan_tci, vlan_tpid
TP_STATUS = struct.Struct("=I")
SLL_PKTTYPE_OFFSET = 32 + 10  # sockaddr_ll follows the aligned tpacket2_hdr; sll_pkttype is its 11th byte
RING_BYTES = 4 << 20  # per port: 2048 slots of 2 KiB at MTU 1500, ~20 ms at 100 kpps
# The ring is read from Python without memory barriers, which is sound only with x86's store/load ordering.
RING_MACHINES = {"x86_64", "amd64", "i386", "i686"}
SO_RCVBUFFORCE = 33
SO_SNDBUFFORCE = 32
SOCKET_BUFFER = 8 << 20
MAX_FRAME = 65536
BATCH = 256  # frames per port per wake-up; bounds the latency a busy port can add to the others


class PortError(Exception):
    """A port that cannot be opened; the message is one line naming the interface."""


class Port(Protocol):
    """What the loop needs from a port."""

    number: int
    name: str

    def fileno(self) -> int: ...
    def recv_batch(self, limit: int) -> list[bytes]: ...
    def send(self, frame: bytes) -> bool: ...
    def close(self) -> None: ...


class AfPacketPort:
    """An interface opened with an AF_PACKET raw socket (all ethertypes, incoming frames only).

    `ring` None picks the memory-mapped receive ring where it is sound (x86), falling back to recvmsg if the kernel
    refuses it; `mode` tells which one is in use ("rx-ring" or "recvmsg").
    """

    def __init__(self, number: int, ifname: str, bufsize: int = SOCKET_BUFFER, ring: bool | None = None) -> None:
        self.number = number
        self.name = ifname
        self.rx_dropped_outgoing = 0
        self.link_down_events = 0
        try:
            socket.if_nametoindex(ifname)
        except OSError:
            raise PortError(f"interface '{ifname}' (port {number}) does not exist") from None
        if ring is None:
            ring = platform.machine().lower() in RING_MACHINES
        self._mm: mmap.mmap | None = None
        if ring:
            try:
                self._sock = self._open(bufsize, with_ring=True)
            except _RingUnavailable:
                ring = False
        if not ring:
            self._sock = self._open(bufsize, with_ring=False)
        self.mode = "rx-ring" if ring else "recvmsg"
        self._recvmsg = self._sock.recvmsg
        self._send = self._sock.send

    def _open(self, bufsize: int, with_ring: bool) -> socket.socket:
        number, ifname = self.number, self.name
        try:
            sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)  # protocol 0: receives nothing until bound
        except PermissionError:
            raise PortError(f"opening interface '{ifname}' needs root or CAP_NET_RAW (AF_PACKET socket refused)") \
                from None
        try:
            _set_buffer(sock, socket.SO_RCVBUF, SO_RCVBUFFORCE, bufsize)
            _set_buffer(sock, socket.SO_SNDBUF, SO_SNDBUFFORCE, bufsize)
            try:
                sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
                self._filter_outgoing = False
            except OSError:  # kernels before 4.20: filter on the packet type of each frame instead
                self._filter_outgoing = True
            # the kernel strips 802.1Q tags on receive into packet metadata; AUXDATA (or the ring's frame header)
            # hands them back so the pipeline parses the frame as it was on the wire (libpcap, hence BMv2, does too)
            sock.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
            if with_ring:
                try:
                    self._map_ring(sock, ifname)
                except (OSError, ValueError) as e:
                    sock.close()
                    raise _RingUnavailable(str(e)) from None
            sock.bind((ifname, ETH_P_ALL))
            sock.setblocking(False)
        except OSError as e:
            if self._mm is not None:
                self._mm.close()
                self._mm = None
            sock.close()
            raise PortError(f"cannot open interface '{ifname}' (port {number}): {e.strerror or e}") from None
        return sock

    def _map_ring(self, sock: socket.socket, ifname: str) -> None:
        """Set up a TPACKET_V2 receive ring sized for the interface's MTU (jumbo frames get bigger slots)."""
        with open(f"/sys/class/net/{ifname}/mtu") as f:
            mtu = int(f.read())
        frame_size = 2048
        while frame_size < 96 + mtu + 18:  # frame header + sockaddr_ll + alignment, Ethernet + one inner tag
            frame_size *= 2
        block_size = max(1 << 16, frame_size)
        block_nr = max(2, RING_BYTES // block_size)
        frame_nr = block_size // frame_size * block_nr
        sock.setsockopt(SOL_PACKET, PACKET_VERSION, TPACKET_V2)
        sock.setsockopt(SOL_PACKET, PACKET_RX_RING, struct.pack("=IIII", block_size, block_nr, frame_size, frame_nr))
        # a frame too big for its slot (MTU raised later, GRO) is also queued whole on the socket: read it from there
        sock.setsockopt(SOL_PACKET, PACKET_COPY_THRESH, 1)
        self._mm = mmap.mmap(sock.fileno(), block_size * block_nr, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        self._frame_size = frame_size
        self._frame_nr = frame_nr
        self._head = 0

    def fileno(self) -> int:
        return self._sock.fileno()

    def recv_batch(self, limit: int = BATCH) -> list[bytes]:
        """Frames waiting in the socket, at most `limit`, without blocking."""
        if self._mm is not None:
            return self._recv_ring(limit)
        frames: list[bytes] = []
        append = frames.append
        recvmsg = self._recvmsg
        filter_outgoing = self._filter_outgoing
        status_byte = _STATUS_BYTE
        try:
            for _ in range(limit):
                frame, anc, _, addr = recvmsg(MAX_FRAME, AUX_SPACE)
                if filter_outgoing and addr[2] == PACKET_OUTGOING:
                    self.rx_dropped_outgoing += 1
                    continue
                # the only control message enabled is PACKET_AUXDATA
                if anc and anc[0][2][status_byte] & TP_STATUS_VLAN_VALID:
                    frame = _retag(frame, anc[0][2])
                append(frame)
        except (BlockingIOError, InterruptedError):
            pass
        except OSError as e:
            self._link_error(e)
        return frames

    def _recv_ring(self, limit: int) -> list[bytes]:
        frames: list[bytes] = []
        append = frames.append
        mm = self._mm
        size, count, head = self._frame_size, self._frame_nr, self._head
        header = TPACKET2_HDR.unpack_from
        release = TP_STATUS.pack_into
        for _ in range(limit):
            off = head * size
            if not mm[off] & TP_STATUS_USER:  # low byte of tp_status (the ring is only used on little-endian x86)
                break
            status, _, snaplen, mac, _, _, _, tci, tpid = header(mm, off)
            if self._filter_outgoing and mm[off + SLL_PKTTYPE_OFFSET] == PACKET_OUTGOING:
                frame = None
                self.rx_dropped_outgoing += 1
            elif status & TP_STATUS_COPY:
                frame = self._copied_frame(mm[off + mac:off + mac + snaplen])
            else:
                frame = mm[off + mac:off + mac + snaplen]
            release(mm, off, TP_STATUS_KERNEL)
            head = head + 1 if head + 1 < count else 0
            if frame is None:
                continue
            if status & TP_STATUS_VLAN_VALID:
                if not status & TP_STATUS_VLAN_TPID_VALID:
                    tpid = 0x8100
                frame = frame[:12] + struct.pack("!HH", tpid, tci) + frame[12:]
            append(frame)
        self._head = head
        if not frames:
            # woken with an empty ring: most likely a socket error (link down), which nothing else would consume
            # and which would keep the level-triggered epoll firing
            self.clear_error()
        return frames

    def _copied_frame(self, truncated: bytes) -> bytes:
        """The whole frame the kernel queued on the socket because it did not fit its ring slot."""
        try:
            frame = self._sock.recv(MAX_FRAME)
        except (BlockingIOError, InterruptedError):
            return truncated  # the socket buffer was full: only the ring's truncated copy exists
        except OSError as e:
            self._link_error(e)
            return truncated
        return frame if frame.startswith(truncated[:12]) else truncated

    def clear_error(self) -> None:
        """Consume a pending socket error (a link that went down); with a ring nothing else would read it."""
        err = self._sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err:
            self._link_error(OSError(err, os.strerror(err)))

    def _link_error(self, e: OSError) -> None:
        # the kernel reports a link going down (or the interface being deleted) once as ENETDOWN on the socket;
        # BMv2 keeps running and so do we: the port resumes when the link comes back
        if e.errno not in (errno.ENETDOWN, errno.ENXIO, errno.ENODEV):
            raise e
        self.link_down_events += 1

    def send(self, frame: bytes) -> bool:
        """Transmit one frame; False when the kernel refused it (buffer full, link down)."""
        try:
            self._send(frame)
            return True
        except (BlockingIOError, InterruptedError):
            return False
        except OSError as e:
            if e.errno in (errno.ENOBUFS, errno.ENETDOWN, errno.ENXIO, errno.EMSGSIZE):
                return False
            raise

    def close(self) -> None:
        if self._mm is not None:
            self._mm.close()
            self._mm = None
        self._sock.close()


class _RingUnavailable(Exception):
    """The kernel refused a receive ring: use recvmsg."""


_STATUS_BYTE = 0 if sys.byteorder == "little" else 3  # the byte of tp_status holding TP_STATUS_VLAN_VALID (0x10)


def _retag(frame: bytes, auxdata: bytes) -> bytes:
    """Put back the 802.1Q/802.1ad tag the kernel moved into packet metadata."""
    status, _, _, _, _, tci, tpid = AUXDATA.unpack_from(auxdata)
    if not status & TP_STATUS_VLAN_TPID_VALID:
        tpid = 0x8100
    return frame[:12] + struct.pack("!HH", tpid, tci) + frame[12:]


def _set_buffer(sock: socket.socket, opt: int, force_opt: int, size: int) -> None:
    """Set a socket buffer size, beyond net.core.[rw]mem_max when privileged."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, force_opt, size)
    except OSError:
        sock.setsockopt(socket.SOL_SOCKET, opt, size)


class MemoryPort:
    """An in-process port: `feed(frame)` makes a frame arrive, `sent` collects what the switch transmitted."""

    def __init__(self, number: int, name: str | None = None) -> None:
        self.number = number
        self.name = name if name is not None else f"mem{number}"
        self.sent: list[bytes] = []
        self._rx: collections.deque[bytes] = collections.deque()
        self._fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)

    def feed(self, frame: bytes) -> None:
        """Queue a received frame (thread-safe) and wake the loop."""
        self._rx.append(bytes(frame))
        os.eventfd_write(self._fd, 1)

    def fileno(self) -> int:
        return self._fd

    def recv_batch(self, limit: int = BATCH) -> list[bytes]:
        try:
            os.eventfd_read(self._fd)
        except BlockingIOError:
            pass
        frames = []
        while self._rx and len(frames) < limit:
            frames.append(self._rx.popleft())
        if self._rx:
            os.eventfd_write(self._fd, 1)  # more than one batch waiting: stay readable
        return frames

    def send(self, frame: bytes) -> bool:
        self.sent.append(frame)
        return True

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


PCAP_MAGIC = 0xA1B2C3D4  # microsecond timestamps, as libpcap's pcap_dump_open writes
LINKTYPE_ETHERNET = 1
PCAP_SNAPLEN = 65535


class PcapWriter:
    """A libpcap savefile (Ethernet link type, microsecond timestamps)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._f: BinaryIO = open(path, "wb")
        self._f.write(struct.pack("<IHHiIII", PCAP_MAGIC, 2, 4, 0, 0, PCAP_SNAPLEN, LINKTYPE_ETHERNET))
        self._f.flush()
        self._header = struct.Struct("<IIII").pack

    def write(self, frame: bytes, ts: float | None = None) -> None:
        if ts is None:
            ts = time.time()
        sec = int(ts)
        n = len(frame)
        cap = min(n, PCAP_SNAPLEN)
        self._f.write(self._header(sec, int((ts - sec) * 1e6), cap, n))
        self._f.write(frame[:cap])

    def flush(self) -> None:
        self._f.flush()

    def close(self) -> None:
        self._f.close()


def read_pcap(path: str) -> list[bytes]:
    """The frames of a pcap file written by `PcapWriter` (or any little/big-endian microsecond pcap)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError(f"{path}: not a pcap file (too short)")
    magic = struct.unpack_from("<I", data)[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        endian = "<"
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        endian = ">"
    else:
        raise ValueError(f"{path}: not a pcap file (magic {magic:#x})")
    rec = struct.Struct(endian + "IIII")
    frames, off = [], 24
    while off + rec.size <= len(data):
        _, _, cap, _ = rec.unpack_from(data, off)
        off += rec.size
        frames.append(data[off:off + cap])
        off += cap
    return frames


class PacketLoop:
    """The switch's packet event loop: ports → `sw.receive` → `sw.drain` → ports / CPU.

    `sw` follows the engine contract (`receive`, `drain`, `lock`; `process` as fallback). `packet_in(frame)` receives
    frames the program sends to `cpu_port`. `pcap_dir` enables BMv2-style per-interface pcap files. `trace` (a
    `switch.trace.Trace`) is flushed once per batch. With `timeline` (a `switch.packet_timeline.PacketTimeline`)
    frames go through the pipeline one by one (`process`), each recorded with what it sent, and so do the fault plan's
    actions.
    """

    def __init__(self, sw: object, ports: Iterable[Port], cpu_port: int | None = None,
                 packet_in: Callable[[bytes], None] | None = None, pcap_dir: str | None = None,
                 trace: object | None = None, batch: int = BATCH, faults: FaultPlan | None = None,
                 timeline: PacketTimeline | None = None) -> None:
        self.sw = sw
        self.faults = faults
        self.timeline = timeline
        if faults is not None and timeline is not None:
            faults.on_fault = lambda action, direction, port: timeline.fault(action, direction, port, time.monotonic())
        self.ports: dict[int, Port] = {}
        for p in ports:
            if p.number in self.ports:
                raise PortError(f"port {p.number} given twice ({self.ports[p.number].name} and {p.name})")
            if cpu_port is not None and p.number == cpu_port:
                raise PortError(f"port {p.number} ({p.name}) is the CPU port; do not attach an interface to it")
            self.ports[p.number] = p
        self.cpu_port = cpu_port
        self.packet_in = packet_in
        self.trace = trace
        self.batch = batch
        self.stats = collections.Counter()
        self._pcap_in: dict[int, PcapWriter] = {}
        self._pcap_out: dict[int, PcapWriter] = {}
        if pcap_dir is not None:
            for p in self.ports.values():
                self._pcap_in[p.number] = PcapWriter(os.path.join(pcap_dir, f"{p.name}_in.pcap"))
                self._pcap_out[p.number] = PcapWriter(os.path.join(pcap_dir, f"{p.name}_out.pcap"))
        self._injected: collections.deque[tuple[int, bytes]] = collections.deque()
        self._wakeup = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        self._stopping = False
        self._epoll = select.epoll()
        self._by_fd: dict[int, Port] = {}
        for p in self.ports.values():
            self._by_fd[p.fileno()] = p
            self._epoll.register(p.fileno(), select.EPOLLIN)
        self._epoll.register(self._wakeup, select.EPOLLIN)
        self._error_reported = False
        self.thread_id: int | None = None

    # -- other threads -----------------------------------------------------------------------------------------

    def inject(self, port: int, frame: bytes) -> None:
        """Make `frame` arrive on `port` (e.g. a PacketOut on the CPU port). Thread-safe, never blocks."""
        self._injected.append((port, bytes(frame)))
        os.eventfd_write(self._wakeup, 1)

    def stop(self) -> None:
        """Ask `run()` to return (thread- and signal-safe)."""
        self._stopping = True
        try:
            os.eventfd_write(self._wakeup, 1)
        except OSError:
            pass

    # -- loop thread -------------------------------------------------------------------------------------------

    def run(self) -> None:
        """Serve packets until `stop()`."""
        self.thread_id = threading.get_native_id()
        while not self._stopping:
            self.run_once(self._hold_timeout())

    def _hold_timeout(self) -> float | None:
        """Poll timeout: forever, unless the fault plan holds a delayed frame that must go by then."""
        due = self.faults.next_release() if self.faults is not None else None
        return None if due is None else max(0.0, due - time.monotonic())

    def run_once(self, timeout: float | None = 0.0) -> int:
        """Wait up to `timeout` seconds (None: forever) for frames, process one batch; returns frames received."""
        try:
            events = self._epoll.poll(-1 if timeout is None else timeout)
        except InterruptedError:
            return 0
        batch: list[tuple[int, bytes]] = []
        by_fd = self._by_fd
        for fd, _ in events:
            port = by_fd.get(fd)
            if port is None:
                self._take_injected(batch)
                continue
            frames = port.recv_batch(self.batch)
            if not frames:
                continue
            number = port.number
            pcap = self._pcap_in.get(number)
            if pcap is not None:
                now = time.time()
                for f in frames:
                    pcap.write(f, now)
            batch.extend([(number, f) for f in frames])
        received = len(batch)
        if self.faults is not None:
            now = time.monotonic()
            arriving, leaving = self.faults.release_expired(now)
            if leaving:
                self.transmit(leaving)
            batch = arriving + self.faults.ingress(batch, now, self._reset_register)
        if batch:
            self.process_batch(batch)
        return received

    def _reset_register(self, name: str, first: int, count: int | None) -> None:
        """A fault plan's event: zero cells [first, first+count) of a register, as a control-plane write would."""
        with self.sw.lock:
            reg = getattr(self.sw, "registers", {}).get(name)
            if reg is None:
                self.stats["fault_reset_unknown_register"] += 1
                return
            if self.timeline is not None:
                self.timeline.event("fault: reset register", time.monotonic(), register=name, first=first,
                                    count=count)
            end = reg.size if count is None else min(reg.size, first + count)
            for i in range(first, end):
                reg.values[i] = 0

    def _take_injected(self, batch: list[tuple[int, bytes]]) -> None:
        try:
            os.eventfd_read(self._wakeup)
        except BlockingIOError:
            pass
        q = self._injected
        n = 0
        while q:
            batch.append(q.popleft())
            n += 1
        self.stats["injected"] += n

    def process_batch(self, batch: list[tuple[int, bytes]]) -> None:
        """Run a batch of received frames through the pipeline and transmit the results."""
        sw = self.sw
        stats = self.stats
        stats["rx"] += len(batch)
        out: list[tuple[int, bytes]] = []
        with sw.lock:
            if not getattr(sw, "loaded", True):
                stats["dropped_no_pipeline"] += len(batch)
            elif self.timeline is not None:
                record = self.timeline.packet
                for port, frame in batch:
                    start = time.monotonic()
                    try:
                        sent = sw.process(port, frame)
                    except Exception as e:
                        self._engine_error(e)
                        continue
                    record(port, frame, sent, start, time.monotonic())
                    out.extend(sent)
            elif hasattr(sw, "drain"):
                receive = sw.receive
                for port, frame in batch:
                    try:
                        receive(port, frame)
                    except Exception as e:  # an engine bug must cost one packet, not the switch
                        self._engine_error(e)
                try:
                    out = sw.drain()
                except Exception as e:
                    self._engine_error(e)
            else:
                for port, frame in batch:
                    try:
                        out.extend(sw.process(port, frame))
                    except Exception as e:
                        self._engine_error(e)
        if out and self.faults is not None:
            out = self.faults.egress(out, time.monotonic())
        if out:
            self.transmit(out)
        if self.trace is not None:
            self.trace.flush()
        for w in self._pcap_in.values():
            w.flush()
        for w in self._pcap_out.values():
            w.flush()

    def transmit(self, out: list[tuple[int, bytes]]) -> None:
        """Send pipeline output: to interfaces, to the CPU (PacketIn), or count as dropped."""
        ports = self.ports
        stats = self.stats
        cpu = self.cpu_port
        pcap_out = self._pcap_out
        now = time.time() if pcap_out else 0.0
        tx = tx_dropped = 0  # counted locally: a Counter item update per frame costs more than the send itself
        try:
            for number, frame in out:
                port = ports.get(number)
                if port is not None:
                    if port.send(frame):
                        tx += 1
                        if pcap_out:
                            w = pcap_out.get(number)
                            if w is not None:
                                w.write(frame, now)
                    else:
                        tx_dropped += 1
                elif number == cpu and cpu is not None:
                    stats["to_cpu"] += 1
                    if self.packet_in is not None:
                        try:
                            self.packet_in(frame)
                        except Exception as e:
                            self._engine_error(e, "packet-in")
                else:
                    stats["tx_no_port"] += 1
        finally:
            if tx:
                stats["tx"] += tx
            if tx_dropped:
                stats["tx_dropped"] += tx_dropped

    def _engine_error(self, e: Exception, where: str = "pipeline") -> None:
        self.stats["errors"] += 1
        if not self._error_reported:  # once: a broken program must not flood stderr at line rate
            self._error_reported = True
            print(f"switch: {where} error, packet dropped: {type(e).__name__}: {e} "
                  f"(further errors are only counted)", file=sys.stderr, flush=True)

    def close(self) -> None:
        """Close ports, pcap files and the loop's file descriptors."""
        for p in self.ports.values():
            try:
                self._epoll.unregister(p.fileno())
            except (OSError, ValueError):
                pass
            p.close()
        for w in list(self._pcap_in.values()) + list(self._pcap_out.values()):
            w.close()
        self._epoll.close()
        os.close(self._wakeup)
