"""One end of a TCP connection for the packet simulator: the host baselines' transport, carrying their real bytes in
real Ethernet/IPv4/TCP frames through the switch's P4 program (docs/simulator.md, "Host baselines: the TCP model").

`TcpConnection` is sans-IO: `send(data, now)` (an application write), `on_frame(frame, now)` (a frame from the
peer: the frames to send and the bytes now delivered in order), `on_timer(now)` at `next_deadline()`. The model,
Linux's behaviour where it has one:

- **established at the start**: the emulator's workers connect before their start barrier and time their
  all-reduce from it, so there is no handshake in the run, only its RTT sample (`srtt`: the path's idle round trip);
  the first window is 10 segments (RFC 6928), ssthresh unbounded;
- **segments**: at most `mss` = 1448 payload bytes under 66 header bytes (Ethernet 14, IPv4 20 with DF, TCP 32 with
  the timestamps option, as Linux sends: a full segment is a 1514-byte frame), correct checksums; each write is cut
  into segments of its own, its last one short (TCP_NODELAY, which `connect_mesh` sets: no Nagle), and a segment
  keeps its bytes when resent;
- **receiver**: cumulative ACKs; a quick ACK for each of the first 16 segments and again after an RTO without data
  (Linux's quickack mode), then an ACK as soon as more than one MSS is unacknowledged (every second full segment),
  at once for a short segment (Linux acks it when the application reads it) and for out-of-order or duplicate
  data (a pure ACK even when data leaves at once: it stands for the SACK Linux would send), else after the
  40 ms delayed-ACK timer; data segments carry the ACK (piggybacking); out-of-order segments are kept; timestamps
  echo the last in-order segment's;
- **receive window**: what the application has not read (`set_unread`: a blocking rank reads one socket at a time)
  fills the socket's buffer; the window offered is min(rcv_ssthresh, buffer limit) less the unread bytes, where
  rcv_ssthresh starts at 10 MSS and grows by 2 MSS per segment received (tcp_grow_window), the limit is tcp_rmem[1]
  (`receive_buffer`, 87380 bytes on this VM) times payload over truesize of a received segment (1448/2048, Linux's
  scaling_ratio): 61.8 KB, where an unread socket in the emulator stalls its sender at 63.0 KB; it grows to twice
  what the application reads per RTT while it reads (autotuning, tcp_rcv_space_adjust); its right edge never moves
  left (Linux never shrinks a
  window), a read that doubles it sends an update at once (tcp_cleanup_rbuf), and a sender facing a closed
  window probes it every RTO (the persist timer); window scale 9 (16 MiB tcp_rmem[2]);
- **sender**: slow start (+1 segment per segment acknowledged), Reno congestion avoidance (+1 per window), growth
  only while the window limits the sender (Linux's tcp_is_cwnd_limited); fast retransmit on the third duplicate ACK
  and NewReno recovery (RFC 6582: partial ACKs resend the next hole); RTO as Linux computes it, srtt + max(4 rttvar,
  200 ms), from samples of segments sent once (Karn), doubled on each expiry (up to 120 s), reset by new ACKs; on
  expiry the first unacknowledged segment is resent with a window of 1, and the first ACK after it decides
  (Eifel/F-RTO, Linux's TCPLossUndo): if it echoes a timestamp older than the resend, the original had arrived —
  the timeout was spurious, the window is restored and sending goes on where it was; else ssthresh = flight/2 and
  go-back-N in slow start; after an idle RTO the window restarts from at most 10 (tcp_slow_start_after_idle);
- **TCP small queues**: given its host's `Nic` (its own output queue, which only the host feeds, so it knows when
  each frame leaves it), a connection lets a data segment into that queue only while its segments waiting there
  cost at most max(2 skbs, pacing rate x 1 ms) (Linux's tcp_small_queue_check; an skb costs its payload plus
  `skb_overhead`; the pacing rate is Linux's 2 x cwnd x mss / srtt in slow start, 1.2 x after); so a connection
  whose srtt is still the handshake's puts its whole first window into the queue, and one that has measured the
  queue keeps about 2 segments there: several connections of one host then take turns;
- **not modelled**: SACK (out-of-order and duplicate data get a pure ACK instead), RACK and tail loss probes, PRR,
  CUBIC and BBR (the emulator runs the machine's default: BBR on this VM, docs/simulator.md), pacing itself, send
  buffer limits, the receive buffer's truesize accounting and pruning, silly-window avoidance, GSO (a segment is a
  frame, as a link carries it: the emulator's kernel shapes multi-segment skbs whole, docs/simulator.md), the
  handshake and FIN; ECN: frames are not ECN-capable
  (Linux's tcp_ecn = 2 does not ask for it), so a port above its ECN threshold counts them as `congested`.
"""

from __future__ import annotations

import struct
from collections import deque
from dataclasses import dataclass

from topo.frames import ip_bytes, mac_bytes

__all__ = ["HEADER_BYTES", "MSS", "Nic", "TcpAddress", "TcpConnection", "TcpOptions", "TcpStats", "checksum"]

MSS = 1448
"""Payload bytes of a full segment: a 1500-byte MTU less IPv4 (20) and TCP with timestamps (32)."""
HEADER_BYTES = 66
"""Ethernet (14) + IPv4 (20) + TCP with the timestamps option (32) in front of every segment's payload."""
_MASK = 0xFFFFFFFF
_ACK, _PSH = 0x10, 0x08
_LATER, _NOW, _ALWAYS = range(3)  # when a data segment is acknowledged: delayed, at once if owed, a pure ACK anyway
_TS = b"\x01\x01\x08\x0a"  # NOP, NOP, timestamps (kind 8, length 10), as Linux lays them out
_TCP = struct.Struct("!IIBBHHH")  # seq, ack, data offset, flags, window, checksum, urgent (after the ports)


@dataclass(frozen=True)
class TcpOptions:
    """The model's parameters (Linux's defaults)."""

    mss: int = MSS
    initial_window: int = 10
    """Segments (RFC 6928, Linux's TCP_INIT_CWND)."""
    min_rto: float = 0.2
    max_rto: float = 120.0
    delayed_ack: float = 0.04
    """Linux's TCP_ATO_MIN: the delayed-ACK timer."""
    quickacks: int = 16
    """Segments acknowledged one by one at a connection's start and after an idle RTO (TCP_MAX_QUICKACKS)."""
    dupthresh: int = 3
    small_queues: bool = True
    """TCP small queues (needs the host's `Nic`)."""
    skb_overhead: int = 1280
    """Bytes an outgoing segment costs its socket beyond its payload (an skb's truesize on x86-64 Linux)."""
    receive_buffer: int = 87380
    """A socket's first receive buffer (tcp_rmem[1]: 87380 on this VM, 131072 Linux's default)."""
    receive_truesize: int = 2048
    """What a received full segment costs the receive buffer: the window is the buffer x mss / this."""
    max_receive_buffer: int = 16 << 20
    """tcp_rmem[2]: what autotuning grows a buffer to at most."""
    window_scale: int = 9


@dataclass(frozen=True)
class TcpAddress:
    """One end's Ethernet, IPv4 and TCP port."""

    mac: str
    ip: str
    port: int


@dataclass
class TcpStats:
    """What one end sent."""

    segments: int = 0
    """Every segment: data, resent data and pure ACKs (Linux's OutSegs counts the same)."""
    data_segments: int = 0
    """Segments carrying data, resends included."""
    retransmissions: int = 0
    """Data segments sent again."""
    acks: int = 0
    """Pure ACKs (no data)."""
    timeouts: int = 0
    window_probes: int = 0
    spurious_timeouts: int = 0
    """Timeouts undone: the first ACK after the resend echoed the original's timestamp (Linux's TCPLossUndo)."""
    fast_retransmits: int = 0
    bytes_written: int = 0
    """Application bytes handed to `send`."""


class Nic:
    """A host's output queue as the host sees it: a FIFO at the link's rate that only it feeds (the same arithmetic as
    `topo.sim.links.Port`), so it knows when each frame it hands over leaves the queue."""

    def __init__(self, rate_bps: float, overhead_bytes: int = 0) -> None:
        self._per_byte = 8.0 / rate_bps
        self.overhead = overhead_bytes
        self.free_at = 0.0

    def enqueue(self, size: int, now: float) -> float:
        """A frame of `size` bytes handed over at `now`: when its transmission starts (it leaves the queue)."""
        start = now if self.free_at <= now else self.free_at
        self.free_at = start + (size + self.overhead) * self._per_byte
        return start


def checksum(data: bytes) -> int:
    """RFC 1071 Internet checksum (ones' complement of the ones' complement sum of 16-bit words)."""
    if len(data) % 2:
        data += b"\0"
    s = int.from_bytes(data, "big") % 0xFFFF  # 2**16 = 1 (mod 0xFFFF): the end-around carry sum, 0xFFFF as 0
    if s == 0 and any(data):
        s = 0xFFFF
    return ~s & 0xFFFF


class TcpConnection:
    """One end of an established connection (see the module). `srtt`: the handshake's RTT sample (None: no sample,
    the RTO starts at its minimum and the small queues are unlimited, as Linux without an srtt)."""

    def __init__(self, local: TcpAddress, remote: TcpAddress, options: TcpOptions = TcpOptions(), *, isn: int = 0,
                 peer_isn: int = 0, now: float = 0.0, nic: Nic | None = None, srtt: float | None = None) -> None:
        o = self.options = options
        self._eth = mac_bytes(remote.mac) + mac_bytes(local.mac) + b"\x08\x00"
        self._ips = ip_bytes(local.ip) + ip_bytes(remote.ip)
        self._ports = struct.pack("!HH", local.port, remote.port)
        self.isn, self.peer_isn = isn & _MASK, peer_isn & _MASK
        self._ip_id = isn & 0xFFFF
        self.stats = TcpStats()
        self.nic = nic
        self._in_nic: deque[tuple[float, int]] = deque()  # (when it leaves the NIC's queue, truesize) per segment
        self._queued = 0  # their truesize
        self._throttled = False
        # sender: the written stream from offset `_base`, cut into segments (start, end, ends a write)
        self._data = bytearray()
        self._base = 0
        self._segs: list[tuple[int, int, bool]] = []
        self._sent_at: list[float] = []
        self._resent: list[bool] = []
        self.written = 0
        self.una = self.nxt = self.high = 0
        """Segment indexes: the first unacknowledged, the next to send, one past the highest ever sent."""
        self.cwnd = o.initial_window
        self._cwnd_cnt = 0
        self.ssthresh = 1 << 30
        self.dupacks = 0
        self.recover = 0
        """Fast retransmit waits until `una` reaches it (RFC 6582's recover, in segments)."""
        self.in_recovery = False
        self._limited = False
        self._undo: tuple[int, int, int, int] | None = None  # after a timeout: cwnd, ssthresh, nxt, resend's TSval
        self.srtt = srtt
        self.rttvar = (srtt or 0.0) / 2
        self.rto = o.min_rto
        if srtt is not None:
            self._set_rto()
        self.rto_at: float | None = None
        self.probe_at: float | None = None
        self._probe_backoff = 1
        self._last_data = now
        self._peer_edge = o.initial_window * o.mss  # the peer's window's right edge (stream offset)
        # receiver
        self.rcv_nxt = 0
        self._ooo: dict[int, bytes] = {}
        self._acked = 0
        self._quick = o.quickacks
        self.ack_at: float | None = None
        self._last_recv = now
        self._ts_recent = 0
        self.unread = 0
        """Bytes delivered that the application has not read (`set_unread`)."""
        self._rcv_ssthresh = o.initial_window * o.mss
        self._limit = o.receive_buffer * o.mss // o.receive_truesize
        self._edge = 0  # the right edge offered
        self._read_at, self._read = now, 0  # autotuning's measurement: since when, bytes read

    # ------------------------------------------------------------------------------------------------ interface

    def send(self, data: bytes, now: float) -> list[bytes]:
        """Queue an application write; the frames the window lets out now."""
        if not data:
            return []
        mss, start, n = self.options.mss, self.written, len(data)
        for off in range(0, n, mss):
            end = min(off + mss, n)
            self._segs.append((start + off, start + end, end == n))
            self._sent_at.append(0.0)
            self._resent.append(False)
        self._data += data
        self.written += n
        self.stats.bytes_written += n
        return self._push(now)

    def on_frame(self, frame: bytes, now: float) -> tuple[list[bytes], bytes]:
        """A frame from the peer: (frames to send, bytes delivered in order to the application)."""
        ihl = (frame[14] & 0x0F) * 4
        total = frame[16] << 8 | frame[17]
        t = 14 + ihl
        seq, ack, off, flags, window, _, _ = _TCP.unpack_from(frame, t + 4)
        doff = (off >> 4) * 4
        tsval, tsecr = _timestamps(frame, t + 20, t + doff)
        payload = bytes(frame[t + doff:14 + total])
        out: list[bytes] = []
        if flags & _ACK:
            acked = (ack - self.isn - 1) & _MASK
            self._peer_edge = max(self._peer_edge, acked + (window << self.options.window_scale))
            out = self._on_ack(acked, bool(payload), tsecr, now)
        delivered, when = b"", _LATER
        start = (seq - self.peer_isn - 1) & _MASK
        if payload:
            delivered, when = self._on_data(start, payload, now)
            self.unread += len(delivered)
        elif (self.rcv_nxt - start) & _MASK == 1:
            when = _ALWAYS  # a window probe
        if start == self.rcv_nxt - len(delivered) and tsval is not None:
            self._ts_recent = tsval  # an in-order segment (or an ACK at the edge): its timestamp is echoed
        out += self._push(now)  # data leaving now carries the ACK
        owed = self.rcv_nxt > self._acked
        if when == _ALWAYS or (owed and (when == _NOW or self._quick > 0)):
            out.append(self._frame(b"", now))
        elif owed and self.ack_at is None:
            self.ack_at = now + self.options.delayed_ack
        return out, delivered

    def set_unread(self, unread: int, now: float) -> list[bytes]:
        """The application has read its socket down to `unread` bytes: a window update when the window doubles."""
        read, self.unread = self.unread - unread, unread
        if read <= 0:
            return []
        self._autotune(read, now)
        offered = self._edge - self.rcv_nxt
        if 2 * offered <= self._limit and self._room() >= 2 * offered:
            return [self._frame(b"", now)]
        return []

    def on_timer(self, now: float) -> list[bytes]:
        """The retransmission, persist, small-queue or delayed-ACK timer, when due."""
        out: list[bytes] = []
        if self.probe_at is not None and now >= self.probe_at:
            self.probe_at = None
            if self.una == self.nxt < len(self._segs):
                self.stats.window_probes += 1
                out.append(self._frame(b"", now, self._segs[self.una][0] - 1))
                self._probe_backoff = min(self._probe_backoff * 2, 64)
                self.probe_at = now + min(self.rto * self._probe_backoff, self.options.max_rto)
        if self.rto_at is not None and now >= self.rto_at:
            self.stats.timeouts += 1
            if self._undo is None:  # a repeated timeout keeps the first one's state and resend time (Linux's)
                self._undo = (self.cwnd, self.ssthresh, self.nxt, _tsval(now))
            self.ssthresh = max((self.nxt - self.una) // 2, 2)
            self.cwnd, self._cwnd_cnt = 1, 0
            self.recover, self.in_recovery, self.dupacks = self.high, False, 0
            self.nxt = self.una  # go-back-N unless the first ACK shows the timeout was spurious
            self.rto = min(self.rto * 2, self.options.max_rto)
            self.rto_at = None
            out += self._push(now, restart=False, unlimited=True)
        elif self._throttled and now >= self._in_nic[0][0]:
            out += self._push(now)
        if self.ack_at is not None and now >= self.ack_at:
            out.append(self._frame(b"", now))
        return out

    def next_deadline(self) -> float | None:
        times = [t for t in (self.rto_at, self.ack_at, self.probe_at, self._in_nic[0][0] if self._throttled else None)
                 if t is not None]
        return min(times) if times else None

    @property
    def idle(self) -> bool:
        """Every byte written is acknowledged and no ACK is owed."""
        return self.una == len(self._segs) and self.ack_at is None

    # ------------------------------------------------------------------------------------------------ sender

    def _push(self, now: float, restart: bool = True, unlimited: bool = False) -> list[bytes]:
        """Send what the window (and the small queue, unless `unlimited`) allows."""
        out = []
        if restart and self.nxt == self.una < len(self._segs):
            self._restart_after_idle(now)
        self._throttled = closed = False
        while self.nxt < len(self._segs) and self.nxt - self.una < self.cwnd:
            if self._segs[self.nxt][1] > self._peer_edge:
                closed = True
                break
            if not unlimited and not self._small_queue_room(now):
                self._throttled = True
                break
            out.append(self._send_segment(self.nxt, now))
            self.nxt += 1
        if self.nxt < len(self._segs) and not (self._throttled or closed):
            self._limited = True
        if out and self.rto_at is None:
            self.rto_at = now + self.rto
        if closed and self.una == self.nxt:  # nothing in flight to bring a window update: probe
            if self.probe_at is None:
                self.probe_at, self._probe_backoff = now + self.rto, 1
        else:
            self.probe_at = None
        return out

    def _small_queue_room(self, now: float) -> bool:
        """Whether TCP small queues let another data segment into the NIC's queue (Linux's tcp_small_queue_check)."""
        q = self._in_nic
        while q and q[0][0] <= now:
            self._queued -= q.popleft()[1]
        o = self.options
        if self.nic is None or not o.small_queues or self.srtt is None or self.nxt - self.una <= 1:
            return True
        ratio = 2.0 if self.cwnd < self.ssthresh // 2 else 1.2
        pacing = ratio * max(self.cwnd, self.nxt - self.una) * o.mss / max(self.srtt, 1e-6)  # bytes/s
        return self._queued < max(2 * (o.mss + o.skb_overhead), pacing / 1024)

    def _restart_after_idle(self, now: float) -> None:
        """Linux's tcp_cwnd_restart: halve the window per RTO idle, not below the initial window."""
        idle = now - self._last_data
        floor = min(self.cwnd, self.options.initial_window)
        while idle > self.rto and self.cwnd > floor:
            self.cwnd = max(self.cwnd // 2, floor)
            idle -= self.rto

    def _send_segment(self, i: int, now: float) -> bytes:
        start, end, last = self._segs[i]
        if i < self.high:
            self.stats.retransmissions += 1
            self._resent[i] = True
        else:
            self.high = i + 1
        self._sent_at[i] = now
        self._last_data = now
        self.stats.data_segments += 1
        return self._frame(bytes(self._data[start - self._base:end - self._base]), now, start, last)

    def _on_ack(self, acked: int, has_data: bool, tsecr: int | None, now: float) -> list[bytes]:
        una_at = self._segs[self.una][0] if self.una < len(self._segs) else self.written
        if acked > una_at:
            flight, newly, sample = self.nxt - self.una, 0, None
            while self.una < len(self._segs) and self._segs[self.una][1] <= acked:
                if newly == 0 and not self._resent[self.una]:
                    sample = now - self._sent_at[self.una]
                self.una += 1
                newly += 1
            if self._undo is not None:
                self._after_timeout(tsecr)
            self.nxt = max(self.nxt, self.una)
            self._trim()
            if sample is not None:
                self._sample_rtt(sample)
            elif self.srtt is not None:
                self._set_rto()
            self.dupacks = 0
            out = []
            if self.in_recovery and self.una >= self.recover:
                self.in_recovery, self.cwnd = False, self.ssthresh
            elif self.in_recovery:  # a partial ACK: the next hole is lost too
                out.append(self._send_segment(self.una, now))
                self.cwnd = max(self.cwnd - newly + 1, 1)
            else:
                self._grow(newly, flight)
            self._limited = False
            self.rto_at = now + self.rto if self.una < self.nxt else None
            return out
        if acked == una_at and not has_data and self.una < self.nxt:
            self.dupacks += 1
            if self.in_recovery:
                self.cwnd += 1
            elif self.dupacks == self.options.dupthresh and self.una >= self.recover:
                self.ssthresh = max((self.nxt - self.una) // 2, 2)
                self.recover, self.in_recovery = self.high, True
                self.cwnd = self.ssthresh + 3
                self.stats.fast_retransmits += 1
                self.rto_at = now + self.rto
                return [self._send_segment(self.una, now)]
        return []

    def _after_timeout(self, tsecr: int | None) -> None:
        """The first new ACK after a timeout's resend: undo a spurious timeout (Eifel, RFC 3522)."""
        assert self._undo is not None
        cwnd, ssthresh, nxt, resent_at = self._undo
        self._undo = None
        if tsecr is not None and 0 < (resent_at - tsecr) & _MASK < 1 << 31:  # echoes a time before the resend
            self.stats.spurious_timeouts += 1
            self.cwnd, self.ssthresh, self.recover = cwnd, ssthresh, self.una
            self.nxt = max(self.nxt, nxt)  # the originals are in flight: no go-back-N

    def _grow(self, newly: int, flight: int) -> None:
        """Slow start or Reno's additive increase, while the window is what limits the sender."""
        if self.cwnd < self.ssthresh:
            if self.cwnd >= 2 * flight:
                return
            step = min(newly, self.ssthresh - self.cwnd)
            self.cwnd += step
            newly -= step
        if newly and self.cwnd >= self.ssthresh and self._limited:
            self._cwnd_cnt += newly
            if self._cwnd_cnt >= self.cwnd:
                self.cwnd, self._cwnd_cnt = self.cwnd + self._cwnd_cnt // self.cwnd, self._cwnd_cnt % self.cwnd

    def _sample_rtt(self, rtt: float) -> None:
        if self.srtt is None:
            self.srtt, self.rttvar = rtt, rtt / 2
        else:
            self.rttvar = 0.75 * self.rttvar + 0.25 * abs(self.srtt - rtt)
            self.srtt = 0.875 * self.srtt + 0.125 * rtt
        self._set_rto()

    def _set_rto(self) -> None:
        assert self.srtt is not None
        o = self.options
        self.rto = min(o.max_rto, self.srtt + max(4 * self.rttvar, o.min_rto))

    def _trim(self) -> None:
        """Forget acknowledged bytes (in large steps: a bytearray's head is moved on deletion)."""
        done = (self._segs[self.una][0] if self.una < len(self._segs) else self.written) - self._base
        if done >= 1 << 16 or done == len(self._data):
            del self._data[:done]
            self._base += done

    # ------------------------------------------------------------------------------------------------ receiver

    def _on_data(self, start: int, payload: bytes, now: float) -> tuple[bytes, int]:
        """Take a data segment: (bytes now in order, when to ACK: _ALWAYS, _NOW if still owed, _LATER)."""
        if now - self._last_recv > self.rto:
            self._quick = self.options.quickacks
        self._last_recv = now
        end = start + len(payload)
        if end <= self.rcv_nxt:
            return b"", _ALWAYS  # a duplicate
        if start > self.rcv_nxt:
            self._ooo.setdefault(start, payload)
            return b"", _ALWAYS
        parts = [payload[self.rcv_nxt - start:]]
        self.rcv_nxt = end
        self._rcv_ssthresh = min(self._rcv_ssthresh + 2 * self.options.mss, self._limit)
        filled = bool(self._ooo)
        while self.rcv_nxt in self._ooo:
            part = self._ooo.pop(self.rcv_nxt)
            parts.append(part)
            self.rcv_nxt += len(part)
        mss = self.options.mss
        prompt = filled or self.rcv_nxt - self._acked > mss or len(payload) < mss
        return b"".join(parts), _NOW if prompt else _LATER

    def _room(self) -> int:
        """The window the buffer allows now (in window-scale units, rounded down)."""
        room = max(0, min(self._rcv_ssthresh, self._limit) - self.unread)
        ws = self.options.window_scale
        return room >> ws << ws

    def _window(self) -> int:
        """The window field to send: the room offered, never moving the right edge left."""
        self._edge = max(self._edge, self.rcv_nxt + self._room())
        return min(0xFFFF, (self._edge - self.rcv_nxt) >> self.options.window_scale)

    def _autotune(self, read: int, now: float) -> None:
        """Linux's receive-buffer autotuning: a socket read at R bytes per RTT may hold 2R."""
        self._read += read
        if now - self._read_at < (self.srtt or 1e-3):
            return
        o = self.options
        self._limit = min(o.max_receive_buffer // 2, max(self._limit, 2 * self._read))
        self._rcv_ssthresh = max(self._rcv_ssthresh, min(self._limit, 2 * self._read))
        self._read_at, self._read = now, 0

    # ------------------------------------------------------------------------------------------------ frames

    def _frame(self, payload: bytes, now: float, start: int | None = None, push: bool = False) -> bytes:
        """A segment (data from stream offset `start`, or a pure ACK), carrying the current ACK."""
        if self.rcv_nxt > self._acked:
            self._quick = max(0, self._quick - 1)
        self._acked, self.ack_at = self.rcv_nxt, None
        st = self.stats
        st.segments += 1
        if not payload:
            st.acks += 1
        if start is None:
            start = self._segs[self.nxt][0] if self.nxt < len(self._segs) else self.written
        seq = (self.isn + 1 + start) & _MASK
        ack = (self.peer_isn + 1 + self.rcv_nxt) & _MASK
        flags = _ACK | (_PSH if push else 0)
        tcp = bytearray(self._ports + _TCP.pack(seq, ack, 8 << 4, flags, self._window(), 0, 0) + _TS
                        + struct.pack("!II", _tsval(now), self._ts_recent))
        size = len(tcp) + len(payload)
        tcp[16:18] = struct.pack("!H", checksum(self._ips + struct.pack("!HH", 6, size) + tcp + payload))
        ip = bytearray(struct.pack("!BBHHHBBH", 0x45, 0, 20 + size, self._ip_id, 0x4000, 64, 6, 0) + self._ips)
        ip[10:12] = struct.pack("!H", checksum(bytes(ip)))
        self._ip_id = (self._ip_id + 1) & 0xFFFF
        frame = self._eth + bytes(ip) + bytes(tcp) + payload
        if self.nic is not None:
            leaves = self.nic.enqueue(len(frame), now)
            if payload:
                cost = len(payload) + self.options.skb_overhead
                self._in_nic.append((leaves, cost))
                self._queued += cost
        return frame


def _tsval(now: float) -> int:
    """The timestamp clock: milliseconds, as Linux's."""
    return int(now * 1000) & _MASK


def _timestamps(frame: bytes, i: int, end: int) -> tuple[int | None, int | None]:
    """(TSval, TSecr) of a TCP header's options between i and end, or (None, None)."""
    while i < end:
        kind = frame[i]
        if kind == 0:
            break
        if kind == 1:
            i += 1
            continue
        if kind == 8 and i + 10 <= end:
            return int.from_bytes(frame[i + 2:i + 6], "big"), int.from_bytes(frame[i + 6:i + 10], "big")
        i += max(2, frame[i + 1])
    return None, None
