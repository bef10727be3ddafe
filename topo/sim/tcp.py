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
- **receiver**: cumulative ACKs, sent as Linux's delayed-ACK engine decides (tcp_event_data_recv,
  __tcp_ack_snd_check, tcp_send_delayed_ack, tcp_cleanup_rbuf): quick ACKs (one per segment) when data starts or
  restarts after an idle RTO, as many as the advertised window over two MSS, at most 16 — unless the connection is
  interactive (pingpong: it sent data within the delayed-ACK timeout of receiving data; a delayed ACK's timer firing
  ends that); then an ACK once more than one MSS is owed if the window would not shrink (what came before was read:
  the new segment itself is unread), else when the application reads; at once for out-of-order or duplicate data (a
  pure ACK even when data leaves at once); for a short segment when the application has read everything (unless
  interactive, where it takes two); else the delayed-ACK timer: 40 ms, halving toward the gaps between segments,
  doubling when it fires (not past the RTO, nor 200 ms or the srtt), fired early when a segment arrives within a
  quarter of it; data segments carry the ACK (piggybacking); out-of-order segments are kept; timestamps echoed per
  RFC 7323 (TS.Recent from a segment at or before the last ACK sent, Linux's tcp_replace_ts_recent);
- **SACK** (RFC 2018, tcp_sack = 1): a pure ACK sent while out-of-order data is held carries up to 3 SACK blocks
  (40 option bytes less the timestamps' 12: NOP, NOP, kind 5, 2 + 8 per block, so 78, 86 or 94-byte frames), the
  block the latest segment joined first, at most 4 remembered, dropped once `rcv_nxt` covers them (Linux's
  tcp_sack_new_ofo_skb, tcp_sack_remove); data segments carry none (Linux would, and shorten the segment);
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
  only while the window limits the sender (Linux's tcp_is_cwnd_limited over tcp_cwnd_validate's latch: the window
  was full at some send of the last window, or, in slow start, cwnd is below twice the most segments out); a
  scoreboard per segment (SACKed, lost, resent: Linux's TCPCB bits) and pipe = sent - SACKed - lost + resent
  (tcp_packets_in_flight, RFC 6675), which the window bounds; RTT samples from cumulatively ACKed segments sent once
  (Karn: not if a resent one is among them), else from newly SACKed ones, else from the timestamp the ACK echoes
  (tcp_ack_update_rtt: so the ACK of a timeout's resend still measures the path);
- **loss detection, RACK** (RFC 8985, tcp_recovery = 1, Linux's tcp_recovery.c): a segment is lost once a segment
  sent after it was delivered (ACKed or SACKed) and RACK's RTT plus the reordering window has passed since it was
  sent; the window is min RTT / 4 (capped by srtt) until 3 segments are SACKed or in recovery, then 0 (paths here
  are FIFO: no reordering is ever seen, no DSACK widens it); a segment still inside it arms the reordering timer
  (+ 2 ms, Linux's TCP_TIMEOUT_MIN at HZ = 1000); a lost resend is found the same way and sent again. Something
  lost starts **recovery** (tcp_enter_recovery): ssthresh = cwnd / 2 (Reno), lost segments resent first, then new
  data, each ACK letting out what **PRR** allows (RFC 6937, Linux's tcp_cwnd_reduction); it ends when `una`
  passes what was sent when it began, with cwnd = ssthresh;
- **tail loss probe** (RFC 8985, tcp_early_retrans = 3, Linux's tcp_schedule_loss_probe): in the open state the
  timer is armed for 2 srtt + 2 ms after data is sent or ACKed (2 srtt + 200 ms with one segment in flight: a
  delayed ACK), never past the RTO; it sends one new segment if the peer's window allows (not the congestion
  window), else the last segment again unless that is still in the host's queue, then arms the RTO; one probe at
  a time; an ACK past a probe that resent data halves the window (a loss it repaired, Linux's CWR);
- **RTO** as Linux computes it (tcp_rtt_estimator, __tcp_set_rto): srtt plus the highest deviation of the last
  window (4 x RFC 6298's RTTVAR, its gain 1/32 instead of 1/4 when the RTT falls, decaying by 1/4 per window, at
  least 200 ms), rounded up to a jiffy; doubled on each expiry (up to 120 s), recomputed at the next RTT sample; on
  expiry every segment not SACKed is marked lost and resent from the first with a window of 1 (Linux's
  tcp_enter_loss, ssthresh = cwnd / 2 unless already reduced for this loss), and the first ACK after it decides
  (Eifel/F-RTO, Linux's TCPLossUndo): if it echoes a timestamp older than the resend, the original had arrived —
  the timeout was spurious, the window is restored and nothing is lost; else the lost ones are resent in slow
  start; after an idle RTO the window restarts from at most 10 (tcp_slow_start_after_idle);
- **TCP small queues**: given its host's `Nic` (its own output queue, which only the host feeds, so it knows when
  each frame leaves it), a connection lets a data segment into that queue only while its segments waiting there
  cost at most max(2 skbs, pacing rate x 1 ms) (Linux's tcp_small_queue_check; an skb costs its payload plus
  `skb_overhead`; the pacing rate is Linux's 2 x cwnd x mss / srtt in slow start, 1.2 x after); so a connection
  whose srtt is still the handshake's puts its whole first window into the queue, and one that has measured the
  queue keeps about 2 segments there: several connections of one host then take turns;
- **not modelled**: DSACK (and the undo it drives), SACK compression (tcp_comp_sack_nr), undo of a recovery (no
  reordering here), RACK's sparing of recently sent segments at an RTO, F-RTO's new data after an RTO, cwnd
  moderation after idle application-limited periods (tcp_cwnd_application_limited), CUBIC and BBR (the emulator runs the machine's default: BBR on this VM, docs/simulator.md), pacing itself, send
  buffer limits, the receive buffer's truesize accounting and pruning, silly-window avoidance, GSO (a segment is a
  frame, as a link carries it: the emulator's kernel shapes multi-segment skbs whole, docs/simulator.md), the
  handshake and FIN; ECN: frames are not ECN-capable
  (Linux's tcp_ecn = 2 does not ask for it), so a port above its ECN threshold counts them as `congested`.
"""

from __future__ import annotations

import math
import struct
from bisect import bisect_right
from collections import deque
from dataclasses import dataclass

from topo.frames import internet_checksum, ip_bytes, mac_bytes
from topo.sim.links import depart

__all__ = ["HEADER_BYTES", "MSS", "Nic", "TcpAddress", "TcpConnection", "TcpOptions", "TcpStats"]

MSS = 1448
"""Payload bytes of a full segment: a 1500-byte MTU less IPv4 (20) and TCP with timestamps (32)."""
HEADER_BYTES = 66
"""Ethernet (14) + IPv4 (20) + TCP with the timestamps option (32) in front of every segment's payload."""
SACK_BLOCKS = 3
"""SACK blocks an ACK carries at most: 40 option bytes less the timestamps' 12, 4 + 8 per block (RFC 2018)."""
_MASK = 0xFFFFFFFF
_ACK, _PSH = 0x10, 0x08
_LATER, _NOW, _ALWAYS = range(3)  # when a data segment is acknowledged: delayed, at once if owed, a pure ACK anyway
_TS = b"\x01\x01\x08\x0a"  # NOP, NOP, timestamps (kind 8, length 10), as Linux lays them out
_TCP = struct.Struct("!IIBBHHH")  # seq, ack, data offset, flags, window, checksum, urgent (after the ports)
_SACKED, _LOST, _RETRANS = 1, 2, 4  # a segment's scoreboard bits (Linux's TCPCB_SACKED_ACKED, _LOST, _SACKED_RETRANS)
_OPEN, _DISORDER, _RECOVERY, _LOSS = range(4)  # the sender's state (Linux's TCP_CA_*; CWR is only TLP's instant)
_RTO, _TLP, _REO = range(3)  # what the one retransmission timer is armed for (Linux's icsk_pending)


@dataclass(frozen=True)
class TcpOptions:
    """The model's parameters (Linux's defaults)."""

    mss: int = MSS
    initial_window: int = 10
    """Segments (RFC 6928, Linux's TCP_INIT_CWND)."""
    min_rto: float = 0.2
    max_rto: float = 120.0
    delayed_ack: float = 0.04
    """Linux's TCP_ATO_MIN: the delayed-ACK timer's shortest (and first) timeout."""
    max_delayed_ack: float = 0.2
    """TCP_DELACK_MAX: its longest."""
    quickacks: int = 16
    """TCP_MAX_QUICKACKS: at most this many segments acknowledged one by one when data starts, or restarts after an
    idle RTO (tcp_incr_quickack: the last window over two MSS, at least 2)."""
    pingpong_thresh: int = 1
    """tcp_pingpong_thresh (1 since Linux 6.5): data sent within the delayed-ACK timeout of data received this many
    times makes the connection interactive, which ends quick ACKs until a delayed ACK's timer fires."""
    reordering: int = 3
    """SACKed segments that make RACK's reordering window 0 (tcp_reordering, the classic DupThresh)."""
    timer_slack: float = 0.002
    """Linux's TCP_TIMEOUT_MIN (2 jiffies at HZ = 1000): added to the probe and reordering timers."""
    loss_probes: bool = True
    """Tail loss probes (tcp_early_retrans = 3)."""
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
    """Recoveries entered (SACK/RACK loss detection: Linux's TCPFastRetrans counts their resends)."""
    loss_probes: int = 0
    """Tail loss probes sent (TCPLossProbes)."""
    bytes_written: int = 0
    """Application bytes handed to `send`."""


class Nic:
    """A host's output queue as the host sees it: a FIFO at the link's rate that only it feeds (the same arithmetic as
    `topo.sim.links.Port`, an htb bucket included), so it knows when each frame it hands over leaves the queue."""

    def __init__(self, rate_bps: float, overhead_bytes: int = 0, burst_bytes: int | None = None) -> None:
        self._per_byte = 8.0 / rate_bps
        self.overhead = overhead_bytes
        self._burst_s = None if burst_bytes is None else burst_bytes * self._per_byte
        self.free_at = -math.inf  # idle since ever: htb's bucket starts full

    def enqueue(self, size: int, now: float) -> float:
        """A frame of `size` bytes handed over at `now`: when its transmission starts (it leaves the queue)."""
        start, self.free_at = depart(self.free_at, now, (size + self.overhead) * self._per_byte, self._burst_s)
        return start


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
        self._leaves: list[float] = []  # per segment: when its latest transmission leaves the NIC's queue
        # sender: the written stream from offset `_base`, cut into segments (start, end, ends a write)
        self._data = bytearray()
        self._base = 0
        self._segs: list[tuple[int, int, bool]] = []
        self._starts: list[int] = []
        self._sent_at: list[float] = []
        self._resent: list[bool] = []
        self._sb = bytearray()  # scoreboard bits per segment
        self.sacked_out = self.lost_out = self.retrans_out = 0
        self.written = 0
        self.una = self.nxt = 0
        """Segment indexes: the first unacknowledged, one past the highest sent (snd_nxt: it never moves back)."""
        self.cwnd = o.initial_window
        self._cwnd_cnt = 0
        self.ssthresh = 1 << 30
        self.state = _OPEN
        self.recover = 0
        """Recovery or a timeout's loss state ends when `una` reaches it (Linux's high_seq, in segments)."""
        self._prior_cwnd = self._prr_delivered = self._prr_out = 0
        self._cwnd_limited = False  # tcp_cwnd_validate's latch: the window was full at some send of this window
        self._max_packets_out = 0
        self._cwnd_usage_seq = 0
        self._undo: tuple[int, int, int] | None = None  # after a timeout: cwnd, ssthresh, resend's TSval
        self.srtt: float | None = None
        self.mdev = 0.0
        """Linux's mdev_us: the smoothed deviation, 4x RFC 6298's RTTVAR (seconds)."""
        self.rttvar = 0.0
        """Linux's rttvar_us: the RTO's variance term, the highest `mdev` of the last window, at least `min_rto`."""
        self._mdev_max = 0.0
        self._rtt_seq = 0  # the window `_mdev_max` covers ends when `una` passes this (Linux's rtt_seq)
        self.min_rtt = float("inf")
        self.rto = o.min_rto
        if srtt is not None:
            self._sample_rtt(srtt)
        self.rto_at: float | None = None
        """When the retransmission timer fires, armed for `_timer`: an RTO, a loss probe or RACK's reordering wait."""
        self._timer = _RTO
        self._rack = (-1.0, -1)  # RACK: send time and index of the most recently sent segment delivered
        self._rack_rtt = 0.0
        self._rack_advanced = False
        self._tlp_high: int | None = None  # a loss probe is outstanding until `una` passes it
        self._tlp_retrans = False
        self.probe_at: float | None = None
        self._probe_backoff = 1
        self._last_data = now
        self._peer_edge = o.initial_window * o.mss  # the peer's window's right edge (stream offset)
        # receiver
        self.rcv_nxt = 0
        self._ooo: dict[int, bytes] = {}
        self._sacks: list[list[int]] = []  # SACK blocks [start, end) of out-of-order data, the latest first
        self._acked = 0
        self._quick = 0  # quick ACKs left (icsk_ack.quick): set when the first data arrives
        self._ato = 0.0  # the delayed-ACK timeout (icsk_ack.ato): 0 until the first data arrives
        self._pingpong = 0  # data sent soon after data received (icsk_ack.pingpong)
        self._pushed = 0  # short segments received since the last ACK, at most 2 (ICSK_ACK_PUSHED, _PUSHED2)
        self._rcv_mss = 536  # the peer's MSS as measured (icsk_ack.rcv_mss, from TCP_MSS_DEFAULT)
        self._rcv_wnd = o.initial_window * o.mss  # the window last advertised (rcv_wnd)
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
            self._starts.append(start + off)
            self._sent_at.append(0.0)
            self._leaves.append(0.0)
            self._resent.append(False)
            self._sb.append(0)
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
        tsval, tsecr, sacks = _options(frame, t + 20, t + doff)
        payload = bytes(frame[t + doff:14 + total])
        out: list[bytes] = []
        if flags & _ACK:
            acked = (ack - self.isn - 1) & _MASK
            self._peer_edge = max(self._peer_edge, acked + (window << self.options.window_scale))
            blocks = [((s - self.isn - 1) & _MASK, (e - self.isn - 1) & _MASK) for s, e in sacks]
            out = self._on_ack(acked, bool(payload), tsecr, blocks, now)
        delivered, when = b"", _LATER
        start = (seq - self.peer_isn - 1) & _MASK
        if tsval is not None and start <= self._acked and not _before(tsval, self._ts_recent):
            self._ts_recent = tsval  # RFC 7323 (tcp_replace_ts_recent): from a segment at or before the last ACK
        if payload:
            delivered, when = self._on_data(start, payload, now)
            self.unread += len(delivered)
        elif (self.rcv_nxt - start) & _MASK == 1:
            when = _ALWAYS  # a window probe
        out += self._push(now)  # data leaving now carries the ACK
        owed = self.rcv_nxt > self._acked
        if when == _ALWAYS or (owed and (when == _NOW or self._quickack_mode())):
            out.append(self._frame(b"", now))
        elif owed and self._delay_ack(now):
            out.append(self._frame(b"", now))
        return out, delivered

    def set_unread(self, unread: int, now: float) -> list[bytes]:
        """The application has read its socket down to `unread` bytes: a window update when the window doubles."""
        read, self.unread = self.unread - unread, unread
        if read <= 0:
            return []
        self._autotune(read, now)
        if self.rcv_nxt > self._acked and (  # an ACK is owed (tcp_cleanup_rbuf)
                self.rcv_nxt - self._acked > self._rcv_mss  # the every-second-segment ACK was held back
                or (unread == 0 and (self._pushed >= 2 or (self._pushed and not self._interactive())))):
            return [self._frame(b"", now)]
        offered = self._edge - self.rcv_nxt
        if 2 * offered <= self._limit and self._room() >= 2 * offered:
            return [self._frame(b"", now)]
        return []

    def on_timer(self, now: float) -> list[bytes]:
        """The retransmission (RTO, loss probe, RACK), persist, small-queue or delayed-ACK timer, when due."""
        out: list[bytes] = []
        if self.probe_at is not None and now >= self.probe_at:
            self.probe_at = None
            if self.una == self.nxt < len(self._segs):
                self.stats.window_probes += 1
                out.append(self._frame(b"", now, self._segs[self.una][0] - 1))
                self._probe_backoff = min(self._probe_backoff * 2, 64)
                self.probe_at = now + min(self.rto * self._probe_backoff, self.options.max_rto)
        if self.rto_at is not None and now >= self.rto_at:
            self.rto_at = None
            if self._timer == _TLP:
                out += self._loss_probe(now)
            elif self._timer == _REO:
                out += self._reo_timeout(now)
            else:
                out += self._timeout(now)
        elif self._throttled and now >= self._in_nic[0][0]:
            out += self._push(now)
        if self.ack_at is not None and now >= self.ack_at:  # tcp_delack_timer_handler
            if self._interactive():
                self._pingpong, self._ato = 0, self.options.delayed_ack
            else:
                self._ato = min(2 * self._ato, self.rto)
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

    @property
    def pipe(self) -> int:
        """Segments in flight (Linux's tcp_packets_in_flight, RFC 6675's pipe): sent, not SACKed, not marked lost,
        plus the retransmissions of lost ones."""
        return self.nxt - self.una - self.sacked_out - self.lost_out + self.retrans_out

    def _push(self, now: float, restart: bool = True, unlimited: bool = False) -> list[bytes]:
        """Resend the segments marked lost, then send new data, as far as the window (and the small queue, unless
        `unlimited`) allows (Linux's tcp_xmit_retransmit_queue, then tcp_write_xmit)."""
        out = []
        if restart and self.nxt == self.una < len(self._segs):
            self._restart_after_idle(now)
        self._throttled = closed = False
        if self.retrans_out < self.lost_out:
            sb = self._sb
            for i in range(self.una, self.nxt):
                if self.retrans_out >= self.lost_out or self.pipe >= self.cwnd:
                    break
                if sb[i] & (_SACKED | _RETRANS) or not sb[i] & _LOST:
                    continue
                if not unlimited and not self._small_queue_room(now, 2):
                    self._throttled = True
                    break
                if self._in_host_queue(i, now):
                    break  # tcp_xmit_retransmit_queue stops at the first resend refused
                out.append(self._send_segment(i, now))
                sb[i] |= _RETRANS
                self.retrans_out += 1
                if i == self.una and self._timer != _REO:
                    self._arm(_RTO, now + self.rto)
        sent = len(out)
        prior = self.nxt - self.una
        while not self._throttled and self.nxt < len(self._segs) and self.pipe < self.cwnd:
            if self._segs[self.nxt][1] > self._peer_edge:
                closed = True
                break
            if not unlimited and not self._small_queue_room(now):
                self._throttled = True
                break
            out.append(self._send_segment(self.nxt, now))
            self.nxt += 1
        if self.state == _RECOVERY:
            self._prr_out += len(out)
        limited = self.pipe >= self.cwnd  # tcp_write_xmit's is_cwnd_limited
        if len(out) > sent or limited:
            self._validate_cwnd(limited)
        if len(out) > sent:  # new data (tcp_event_new_data_sent, then tcp_schedule_loss_probe)
            if not prior or self.rto_at is None or self._timer == _TLP:
                self._rearm_rto(now)
            self._schedule_loss_probe(now, advancing_rto=False)
        elif out and self.rto_at is None:
            self._arm(_RTO, now + self.rto)
        if closed and self.una == self.nxt:  # nothing in flight to bring a window update: probe
            if self.probe_at is None:
                self.probe_at, self._probe_backoff = now + self.rto, 1
        else:
            self.probe_at = None
        return out

    def _small_queue_room(self, now: float, factor: int = 1) -> bool:
        """Whether TCP small queues let another data segment into the NIC's queue (Linux's tcp_small_queue_check;
        a retransmission may fill twice as much)."""
        q = self._in_nic
        while q and q[0][0] <= now:
            self._queued -= q.popleft()[1]
        o = self.options
        if self.nic is None or not o.small_queues or self.srtt is None or self.nxt - self.una <= 1:
            return True
        ratio = 2.0 if self.cwnd < self.ssthresh // 2 else 1.2
        pacing = ratio * max(self.cwnd, self.nxt - self.una) * o.mss / max(self.srtt, 1e-6)  # bytes/s
        return self._queued < factor * max(2 * (o.mss + o.skb_overhead), pacing / 1024)

    def _restart_after_idle(self, now: float) -> None:
        """Linux's tcp_cwnd_restart: halve the window per RTO idle, not below the initial window."""
        idle = now - self._last_data
        floor = min(self.cwnd, self.options.initial_window)
        while idle > self.rto and self.cwnd > floor:
            self.cwnd = max(self.cwnd // 2, floor)
            idle -= self.rto

    def _send_segment(self, i: int, now: float) -> bytes:
        start, end, last = self._segs[i]
        if i < self.nxt:
            self.stats.retransmissions += 1
            self._resent[i] = True
        self._sent_at[i] = now
        self._last_data = now
        self.stats.data_segments += 1
        frame = self._frame(bytes(self._data[start - self._base:end - self._base]), now, start, last)
        self._leaves[i] = self._in_nic[-1][0] if self.nic is not None else now
        return frame

    def _in_host_queue(self, i: int, now: float) -> bool:
        """Linux's skb_still_in_host_queue: segment i's last transmission has not left the host, so it is not
        sent again (a retransmission, a probe)."""
        return self._leaves[i] > now

    # --- timers: one retransmission timer, armed for an RTO, a loss probe or RACK's reordering window

    def _arm(self, kind: int, at: float) -> None:
        self._timer, self.rto_at = kind, at

    def _rearm_rto(self, now: float) -> None:
        """Linux's tcp_rearm_rto: an RTO from now, or, replacing a probe or reordering timer, from when the first
        unacknowledged segment was sent."""
        if self.una == self.nxt:
            self.rto_at = None
        elif self.rto_at is not None and self._timer != _RTO:
            self._arm(_RTO, max(self._sent_at[self.una] + self.rto, now))
        else:
            self._arm(_RTO, now + self.rto)

    def _schedule_loss_probe(self, now: float, advancing_rto: bool) -> bool:
        """Linux's tcp_schedule_loss_probe (RFC 8985's PTO): 2 srtt plus the timer slack, plus the minimum RTO
        instead when one segment is in flight (the peer may delay its ACK), never later than the RTO."""
        if not self.options.loss_probes or self.una == self.nxt or self.state != _OPEN or self.srtt is None:
            return False
        pto = 2 * self.srtt + (self.options.min_rto if self.nxt - self.una == 1 else self.options.timer_slack)
        rto_delta = self.rto if advancing_rto else self._sent_at[self.una] + self.rto - now
        if rto_delta > 0:
            pto = min(pto, rto_delta)
        self._arm(_TLP, now + pto)
        return True

    def _loss_probe(self, now: float) -> list[bytes]:
        """Linux's tcp_send_loss_probe: one new segment if the peer's window allows (the congestion window does
        not count), else the last segment sent again unless it is still in the host's queue; then an RTO."""
        out: list[bytes] = []
        if self._tlp_high is None and self.una < self.nxt:
            if self.nxt < len(self._segs) and self._segs[self.nxt][1] <= self._peer_edge:
                if self._small_queue_room(now):
                    out.append(self._send_segment(self.nxt, now))
                    self.nxt += 1
                    self._tlp_retrans = False
            else:
                last = self.nxt - 1
                if not self._in_host_queue(last, now):
                    out.append(self._send_segment(last, now))
                    self._tlp_retrans = True
        if out:
            self.stats.loss_probes += 1
            self._tlp_high = self.nxt
            self._arm(_RTO, now + self.rto)
        else:
            self._timer = _TLP
            self.rto_at = now  # _rearm_rto replaces the probe's timer
            self._rearm_rto(now)
        return out

    def _timeout(self, now: float) -> list[bytes]:
        """The RTO: every segment not SACKed is marked lost and resent from the first with a window of 1 (Linux's
        tcp_enter_loss); the first ACK after it may undo it."""
        if self.una == self.nxt:
            return []
        self.stats.timeouts += 1
        if self._undo is None:  # a repeated timeout keeps the first one's state and resend time (Linux's)
            self._undo = (self.cwnd, self.ssthresh, _tsval(now))
        if self.state in (_OPEN, _DISORDER) or self.una >= self.recover:
            self.ssthresh = max(self.cwnd // 2, 2)
        sb = self._sb
        for i in range(self.una, self.nxt):
            if not sb[i] & _SACKED:
                self._mark_lost(i)
        self.cwnd, self._cwnd_cnt = 1, 0
        self.state, self.recover, self._tlp_high = _LOSS, self.nxt, None
        self.rto = min(self.rto * 2, self.options.max_rto)
        out = self._push(now, restart=False, unlimited=True)
        if self.rto_at is None:  # the first segment is still in the host's queue: nothing resent, the timer rearmed
            self._arm(_RTO, now + self.rto)
        return out

    def _reo_timeout(self, now: float) -> list[bytes]:
        """RACK's reordering window has passed (Linux's tcp_rack_reo_timeout): mark what it shows lost and recover."""
        prior = self.pipe
        newly_lost = self._rack_detect_loss(now)[0]
        out: list[bytes] = []
        if self.pipe != prior:
            if self.state != _RECOVERY:
                self._enter_recovery()
                self._prr(1, newly_lost, False)
            out = self._push(now)
        if self.rto_at is None or self._timer != _RTO:
            self._timer, self.rto_at = _REO, now
            self._rearm_rto(now)
        return out

    # --- ACKs

    def _on_ack(self, acked: int, has_data: bool, tsecr: int | None, blocks: list[tuple[int, int]],
                now: float) -> list[bytes]:
        """An ACK (Linux's tcp_ack): SACK blocks on the scoreboard, the cumulative ACK, RACK's loss detection, the
        state (recovery, loss), the window (PRR in recovery, else slow start/Reno), the timers."""
        una_at = self._segs[self.una][0] if self.una < len(self._segs) else self.written
        if acked < una_at:
            return []  # an old ACK
        prior_una = self.una
        newly_sacked, sack_rtt = self._sacktag(blocks, acked, now)
        newly = 0
        if acked > una_at:
            newly = self._clean(acked, tsecr, now, sack_rtt)
        elif sack_rtt is not None:
            self._sample_rtt(*sack_rtt)
        advanced = self.una > prior_una
        if self._tlp_high is not None:
            self._tlp_ack(advanced, has_data or newly_sacked > 0)
        delivered = newly + newly_sacked
        newly_lost = 0
        set_timer = advanced
        if not (advanced or has_data) or newly_sacked or self.state != _OPEN:  # tcp_ack_is_dubious
            newly_lost, reo = self._fastretrans_alert(now)
            set_timer = set_timer and not reo
        if self.state == _RECOVERY:
            self._prr(delivered, newly_lost, advanced)
        elif advanced:
            self._grow(delivered)
        if set_timer and not self._schedule_loss_probe(now, advancing_rto=True):
            self._rearm_rto(now)
        if self.una == self.nxt:
            self.rto_at = None
        return []

    def _sacktag(self, blocks: list[tuple[int, int]], acked: int, now: float
                 ) -> tuple[int, tuple[float, float] | None]:
        """Mark the segments the SACK blocks cover (Linux's tcp_sacktag_write_queue): (how many newly, the RTT
        sample of the first never-resent one and the min-RTT sample of the last)."""
        newly, first, last = 0, None, None
        sb, segs = self._sb, self._segs
        for start, end in blocks:
            if end <= acked or end - start > 1 << 30:
                continue  # below the cumulative ACK (a DSACK) or nonsense
            i = max(bisect_right(self._starts, start) - 1, self.una)
            while i < self.nxt and segs[i][1] <= end:
                if segs[i][0] >= start and not sb[i] & _SACKED:
                    if sb[i] & _LOST:
                        self.lost_out -= 1
                    if sb[i] & _RETRANS:
                        self.retrans_out -= 1
                    sb[i] = _SACKED
                    self.sacked_out += 1
                    newly += 1
                    if not self._resent[i]:
                        first = self._sent_at[i] if first is None else min(first, self._sent_at[i])
                        last = self._sent_at[i] if last is None else max(last, self._sent_at[i])
                    self._rack_advance(i, now)
                i += 1
        return newly, (None if first is None or last is None else (now - first, now - last))

    def _clean(self, acked: int, tsecr: int | None, now: float, sack_rtt: tuple[float, float] | None) -> int:
        """Advance `una` past the segments the cumulative ACK covers (Linux's tcp_clean_rtx_queue): how many were
        not SACKed before. Takes the RTT sample (Karn: none if a resent segment is among them; else the SACK's)."""
        newly, first, last, resent = 0, None, None, False
        sb = self._sb
        while self.una < len(self._segs) and self._segs[self.una][1] <= acked:
            i = self.una
            bits = sb[i]
            if self._resent[i]:
                resent = True
            elif not bits & _SACKED:
                first = self._sent_at[i] if first is None else first
                last = self._sent_at[i]
            if bits & _SACKED:
                self.sacked_out -= 1
            else:
                newly += 1
                if not (self._resent[i] and tsecr is not None and _before(tsecr, _tsval(self._sent_at[i]))):
                    self._rack_advance(i, now)
            if bits & _LOST:
                self.lost_out -= 1
            if bits & _RETRANS:
                self.retrans_out -= 1
            sb[i] = 0
            self.una += 1
        if self._undo is not None:
            self._after_timeout(tsecr)
        self._trim()
        if first is not None and last is not None and not resent:
            self._sample_rtt(now - first, now - last)
        elif sack_rtt is not None:
            self._sample_rtt(*sack_rtt)
        elif tsecr:  # Linux's tcp_rtt_tsopt_us: the timestamp's echo, in its clock's milliseconds (at least 1)
            self._sample_rtt(max((_tsval(now) - tsecr) & _MASK, 1) / 1000)
        return newly

    def _fastretrans_alert(self, now: float) -> tuple[int, bool]:
        """Linux's tcp_fastretrans_alert with RACK: end recovery or the loss state once `una` reaches `recover`,
        mark what RACK shows lost, enter recovery when something is. Returns (segments newly marked lost, whether
        RACK armed its reordering timer)."""
        if self.state in (_RECOVERY, _LOSS) and self.una >= self.recover:
            if self.state == _RECOVERY:
                self.cwnd = self.ssthresh  # tcp_end_cwnd_reduction
            self.state = _OPEN
        newly_lost, reo = self._rack_mark_lost(now)
        if self.state in (_OPEN, _DISORDER):
            if self.lost_out:
                self._enter_recovery()
            else:
                self.state = _DISORDER if self.sacked_out or self.retrans_out else _OPEN
        return newly_lost, reo

    def _enter_recovery(self) -> None:
        """Linux's tcp_enter_recovery and tcp_init_cwnd_reduction (Reno's ssthresh: half the window)."""
        self.stats.fast_retransmits += 1
        self._prior_cwnd = self.cwnd
        self.ssthresh = max(self.cwnd // 2, 2)
        self._prr_delivered = self._prr_out = 0
        self._cwnd_cnt = 0
        self.recover, self.state, self._tlp_high = self.nxt, _RECOVERY, None

    def _prr(self, delivered: int, newly_lost: int, advanced: bool) -> None:
        """Proportional rate reduction (RFC 6937, Linux's tcp_cwnd_reduction): the window lets out about ssthresh /
        prior window segments per segment delivered while more than ssthresh are in flight, then up to ssthresh."""
        if delivered <= 0 or not self._prior_cwnd:
            return
        self._prr_delivered += delivered
        pipe = self.pipe
        delta = self.ssthresh - pipe
        if delta < 0:
            sndcnt = -(-self.ssthresh * self._prr_delivered // self._prior_cwnd) - self._prr_out
        else:
            sndcnt = max(self._prr_delivered - self._prr_out, delivered) + (1 if advanced and not newly_lost else 0)
            sndcnt = min(delta, sndcnt)
        sndcnt = max(sndcnt, 0 if self._prr_out else 1)  # the fast retransmit goes out at once
        self.cwnd = pipe + sndcnt

    def _tlp_ack(self, advanced: bool, new_info: bool) -> None:
        """Linux's tcp_process_tlp_ack: an ACK past a probe that resent data means a loss it repaired (halve the
        window); a pure duplicate ACK means the original and the probe both arrived."""
        assert self._tlp_high is not None
        acked = self.una
        if acked >= self._tlp_high and not self._tlp_retrans:
            self._tlp_high = None
        elif acked > self._tlp_high:
            self.ssthresh = max(self.cwnd // 2, 2)  # CWR: tcp_init_cwnd_reduction + tcp_end_cwnd_reduction
            self.cwnd, self._cwnd_cnt, self._tlp_high = self.ssthresh, 0, None
        elif acked >= self._tlp_high and not (advanced or new_info):
            self._tlp_high = None

    def _after_timeout(self, tsecr: int | None) -> None:
        """The first new ACK after a timeout's resend: undo a spurious timeout (Eifel, RFC 3522)."""
        assert self._undo is not None
        cwnd, ssthresh, resent_at = self._undo
        self._undo = None
        if tsecr is not None and 0 < (resent_at - tsecr) & _MASK < 1 << 31:  # echoes a time before the resend
            self.stats.spurious_timeouts += 1
            self.cwnd, self.ssthresh, self.recover, self.state = cwnd, ssthresh, self.una, _OPEN
            sb = self._sb
            for i in range(self.una, self.nxt):  # the originals are in flight: nothing is lost (no go-back-N)
                sb[i] &= ~_LOST
            self.lost_out = 0

    # --- RACK (RFC 8985, Linux's tcp_recovery.c)

    def _mark_lost(self, i: int) -> bool:
        """Linux's tcp_mark_skb_lost: whether segment i is newly lost (a lost resend is to be sent again)."""
        sb = self._sb
        if sb[i] & _SACKED:
            return False
        if sb[i] & _LOST:
            if sb[i] & _RETRANS:
                sb[i] &= ~_RETRANS
                self.retrans_out -= 1
            return False
        sb[i] |= _LOST
        self.lost_out += 1
        return True

    def _rack_advance(self, i: int, now: float) -> None:
        """A segment delivered: RACK's RTT and its most recently sent delivered segment (tcp_rack_advance); a resend
        delivered sooner than the minimum RTT may be its original's delivery and is skipped."""
        rtt = now - self._sent_at[i]
        if self._resent[i] and rtt < self.min_rtt:
            return
        self._rack_advanced = True
        self._rack_rtt = rtt
        if (self._sent_at[i], i) > self._rack:
            self._rack = (self._sent_at[i], i)

    def _reo_wnd(self) -> float:
        """RACK's reordering window (tcp_rack_reo_wnd, no reordering seen: FIFO paths): 0 in recovery or once
        `reordering` segments are SACKed, else min RTT / 4."""
        if self.state >= _RECOVERY or self.sacked_out >= self.options.reordering:
            return 0.0
        return min(self.min_rtt / 4, self.srtt or 0.0)

    def _rack_detect_loss(self, now: float) -> tuple[int, float]:
        """Mark lost each segment sent before the most recently sent delivered one whose RTT plus the reordering
        window has passed (tcp_rack_detect_loss): (how many newly lost, the longest wait left for the others)."""
        reo_wnd, wait, newly = self._reo_wnd(), 0.0, 0
        sb, sent = self._sb, self._sent_at
        for i in range(self.una, self.nxt):
            bits = sb[i]
            if bits & _SACKED or (bits & _LOST and not bits & _RETRANS):
                continue
            if (sent[i], i) >= self._rack:
                continue
            left = self._rack_rtt + reo_wnd - (now - sent[i])
            if left <= 0:
                newly += self._mark_lost(i)
            else:
                wait = max(wait, left)
        return newly, wait

    def _rack_mark_lost(self, now: float) -> tuple[int, bool]:
        """tcp_rack_mark_lost: detect after a delivery; arm the reordering timer for those still in their window."""
        if not self._rack_advanced:
            return 0, False
        self._rack_advanced = False
        newly, wait = self._rack_detect_loss(now)
        if wait > 0:
            self._arm(_REO, now + min(wait + self.options.timer_slack, self.rto))
        return newly, wait > 0

    # --- window and RTT

    def _validate_cwnd(self, limited: bool) -> None:
        """Linux's tcp_cwnd_validate: remember, for the window in flight, whether the window was full at some send,
        else the most segments that were out."""
        out = self.nxt - self.una
        if self.una >= self._cwnd_usage_seq or limited or (not self._cwnd_limited and out > self._max_packets_out):
            self._cwnd_limited = limited
            self._max_packets_out = out
            self._cwnd_usage_seq = self.nxt

    def _grow(self, newly: int) -> None:
        """Slow start or Reno's additive increase, while the window is what limits the sender (Linux's
        tcp_is_cwnd_limited: full at some send of the last window, or in slow start below twice the most segments
        that were out)."""
        slow = self.cwnd < self.ssthresh
        if not (self._cwnd_limited or (slow and self.cwnd < 2 * self._max_packets_out)):
            return
        if slow:
            step = min(newly, self.ssthresh - self.cwnd)
            self.cwnd += step
            newly -= step
        if newly and self.cwnd >= self.ssthresh:
            self._cwnd_cnt += newly
            if self._cwnd_cnt >= self.cwnd:
                self.cwnd, self._cwnd_cnt = self.cwnd + self._cwnd_cnt // self.cwnd, self._cwnd_cnt % self.cwnd

    def _sample_rtt(self, rtt: float, ca_rtt: float | None = None) -> None:
        """An RTT sample into Linux's estimator (tcp_rtt_estimator), then the RTO (tcp_set_rto): srtt gains 1/8;
        the deviation gains 1/4, but only 1/32 when the RTT falls by more than it (Linux's Eifel-like damping); the
        RTO's variance term holds the highest deviation of the last window, decaying toward the window's highest by
        1/4 per window, never below the minimum RTO. A valid sample also resets the timer's backoff."""
        o = self.options
        self.min_rtt = min(self.min_rtt, rtt if ca_rtt is None else ca_rtt)
        if self.srtt is None:
            self.srtt, self.mdev = rtt, 2 * rtt  # an RTO of 3 RTTs
            self.rttvar = self._mdev_max = max(self.mdev, o.min_rto)
            self._rtt_seq = self.nxt
        else:
            err = rtt - self.srtt
            self.srtt += err / 8
            if err < 0:
                err = -err - self.mdev / 4
                if err > 0:
                    err /= 8
            else:
                err -= self.mdev / 4
            self.mdev += err
            if self.mdev > self._mdev_max:
                self._mdev_max = self.mdev
                self.rttvar = max(self.rttvar, self._mdev_max)
            if self.una > self._rtt_seq:
                if self._mdev_max < self.rttvar:
                    self.rttvar -= (self.rttvar - self._mdev_max) / 4
                self._rtt_seq, self._mdev_max = self.nxt, o.min_rto
        self.rto = min(o.max_rto, _jiffies(self.srtt + self.rttvar))

    def _trim(self) -> None:
        """Forget acknowledged bytes (in large steps: a bytearray's head is moved on deletion)."""
        done = (self._segs[self.una][0] if self.una < len(self._segs) else self.written) - self._base
        if done >= 1 << 16 or done == len(self._data):
            del self._data[:done]
            self._base += done

    # ------------------------------------------------------------------------------------------------ receiver

    def _on_data(self, start: int, payload: bytes, now: float) -> tuple[bytes, int]:
        """Take a data segment: (bytes now in order, when to ACK: _ALWAYS, _NOW if still owed, _LATER)."""
        end = start + len(payload)
        if end <= self.rcv_nxt:  # a duplicate: Linux's tcp_enter_quickack_mode, then an ACK
            self._incr_quickack()
            self._pingpong, self._ato = 0, self.options.delayed_ack
            return b"", _ALWAYS
        if start > self.rcv_nxt:
            self._ooo.setdefault(start, payload)
            self._sack_ofo(start, end)
            return b"", _ALWAYS
        self._data_recv(len(payload), now)
        parts = [payload[self.rcv_nxt - start:]]
        self.rcv_nxt = end
        self._rcv_ssthresh = min(self._rcv_ssthresh + 2 * self.options.mss, self._limit)
        filled = bool(self._ooo)
        while self.rcv_nxt in self._ooo:
            part = self._ooo.pop(self.rcv_nxt)
            parts.append(part)
            self.rcv_nxt += len(part)
        if filled:
            self._sacks = [b for b in self._sacks if b[0] > self.rcv_nxt] if self._ooo else []  # tcp_sack_remove
        data = b"".join(parts)
        # __tcp_ack_snd_check: more than one full segment owed and the window would not shrink (the application has
        # read what came before: the segment itself is unread), or the hole filled
        prompt = filled or (self.rcv_nxt - self._acked > self._rcv_mss and self._room(len(data)) >= self._rcv_wnd)
        return data, _NOW if prompt else _LATER

    def _data_recv(self, size: int, now: float) -> None:
        """Linux's tcp_event_data_recv for in-order data: the peer's MSS measured (tcp_measure_rcv_mss: a short
        segment marks the ACK as pushed), the delayed-ACK timeout adapted to the gaps between segments, quick ACKs
        when data starts or restarts after an idle RTO."""
        o = self.options
        if size >= self._rcv_mss:
            self._rcv_mss = min(size, o.mss)
        else:
            self._pushed = min(self._pushed + 1, 2)
        gap = now - self._last_recv
        if not self._ato:
            self._incr_quickack()
            self._ato = o.delayed_ack
        elif gap <= o.delayed_ack / 2:
            self._ato = self._ato / 2 + o.delayed_ack / 2
        elif gap < self._ato:
            self._ato = min(self._ato / 2 + gap, self.rto)
        elif gap > self.rto:
            self._incr_quickack()
        self._last_recv = now

    def _incr_quickack(self) -> None:
        """Linux's tcp_incr_quickack: quick ACKs for the last window advertised, two segments per ACK."""
        self._quick = max(self._quick, min(self._rcv_wnd // (2 * self._rcv_mss) or 2, self.options.quickacks))

    def _interactive(self) -> bool:
        """inet_csk_in_pingpong_mode."""
        return self._pingpong >= self.options.pingpong_thresh

    def _quickack_mode(self) -> bool:
        return self._quick > 0 and not self._interactive()

    def _delay_ack(self, now: float) -> bool:
        """Linux's tcp_send_delayed_ack: arm the delayed-ACK timer (the timeout, bounded by the RTT and 200 ms when
        interactive or pushed, never later than a timer already armed); True to ACK now instead, when the armed
        timer is within a quarter of the timeout."""
        o = self.options
        ato = self._ato or o.delayed_ack
        if ato > o.delayed_ack:
            cap = o.max_delayed_ack if self._interactive() or self._pushed else 0.5
            if self.srtt is not None:
                cap = min(cap, max(_jiffies(self.srtt), o.delayed_ack))
            ato = min(ato, cap)
        ato = min(ato, o.max_delayed_ack)
        if self.ack_at is not None:
            if self.ack_at <= now + ato / 4:
                return True
            ato = min(ato, self.ack_at - now)
        self.ack_at = now + ato
        return False

    def _sack_ofo(self, start: int, end: int) -> None:
        """An out-of-order segment in the SACK blocks (Linux's tcp_sack_new_ofo_skb): the block it extends, or a new
        one, goes first (RFC 2018); blocks it joins merge; at most 4 are kept (the oldest is forgotten)."""
        blocks = self._sacks
        for k, b in enumerate(blocks):
            if start <= b[1] and b[0] <= end:  # tcp_sack_extend
                b[0], b[1] = min(b[0], start), max(b[1], end)
                blocks.insert(0, blocks.pop(k))
                first = blocks[0]
                for other in blocks[1:]:  # tcp_sack_maybe_coalesce
                    if first[0] <= other[1] and other[0] <= first[1]:
                        first[0], first[1] = min(first[0], other[0]), max(first[1], other[1])
                        blocks.remove(other)
                return
        del blocks[3:]
        blocks.insert(0, [start, end])

    def _room(self, pending: int = 0) -> int:
        """The window the buffer allows now, `pending` more bytes unread (in window-scale units, rounded down)."""
        room = max(0, min(self._rcv_ssthresh, self._limit) - self.unread - pending)
        ws = self.options.window_scale
        return room >> ws << ws

    def _window(self) -> int:
        """The window field to send: the room offered, never moving the right edge left."""
        self._edge = max(self._edge, self.rcv_nxt + self._room())
        self._rcv_wnd = self._edge - self.rcv_nxt
        return min(0xFFFF, self._rcv_wnd >> self.options.window_scale)

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
        """A segment (data from stream offset `start`, or a pure ACK), carrying the current ACK: the ACK owed is sent
        (tcp_event_ack_sent: a quick ACK used, the delayed-ACK timer off); data sent within the delayed-ACK timeout
        of data received counts toward interactive mode (tcp_event_data_sent)."""
        if self.rcv_nxt > self._acked and self._quick:  # tcp_dec_quickack_mode
            self._quick -= 1
            if not self._quick:
                self._ato = self.options.delayed_ack
        if payload and now - self._last_recv < self._ato:
            self._pingpong = min(self._pingpong + 1, 255)
        self._acked, self.ack_at, self._pushed = self.rcv_nxt, None, 0
        st = self.stats
        st.segments += 1
        if not payload:
            st.acks += 1
        if start is None:
            start = self._segs[self.nxt][0] if self.nxt < len(self._segs) else self.written
        seq = (self.isn + 1 + start) & _MASK
        ack = (self.peer_isn + 1 + self.rcv_nxt) & _MASK
        flags = _ACK | (_PSH if push else 0)
        options = _TS + struct.pack("!II", _tsval(now), self._ts_recent)
        if not payload and self._sacks:  # SACK blocks ride on pure ACKs (RFC 2018, laid out as Linux does)
            blocks = self._sacks[:SACK_BLOCKS]
            options += bytes((1, 1, 5, 2 + 8 * len(blocks))) + b"".join(
                struct.pack("!II", (self.peer_isn + 1 + s) & _MASK, (self.peer_isn + 1 + e) & _MASK) for s, e in blocks)
        tcp = bytearray(self._ports + _TCP.pack(seq, ack, (5 + len(options) // 4) << 4, flags, self._window(), 0, 0)
                        + options)
        size = len(tcp) + len(payload)
        tcp[16:18] = struct.pack("!H", internet_checksum(self._ips + struct.pack("!HH", 6, size) + tcp + payload))
        ip = bytearray(struct.pack("!BBHHHBBH", 0x45, 0, 20 + size, self._ip_id, 0x4000, 64, 6, 0) + self._ips)
        ip[10:12] = struct.pack("!H", internet_checksum(bytes(ip)))
        self._ip_id = (self._ip_id + 1) & 0xFFFF
        frame = self._eth + bytes(ip) + bytes(tcp) + payload
        if self.nic is not None:
            leaves = self.nic.enqueue(len(frame), now)
            if payload:
                cost = len(payload) + self.options.skb_overhead
                self._in_nic.append((leaves, cost))
                self._queued += cost
        return frame


def _jiffies(t: float) -> float:
    """t rounded up to Linux's timer tick (HZ = 1000), as usecs_to_jiffies rounds."""
    return math.ceil(t * 1000 - 1e-6) / 1000


def _tsval(now: float) -> int:
    """The timestamp clock: milliseconds, as Linux's."""
    return int(now * 1000) & _MASK


def _before(a: int, b: int) -> bool:
    """Whether 32-bit timestamp a is before b (modular)."""
    return 0 < (b - a) & _MASK < 1 << 31


def _options(frame: bytes, i: int, end: int) -> tuple[int | None, int | None, list[tuple[int, int]]]:
    """(TSval, TSecr, SACK blocks) of a TCP header's options between i and end ((None, None, []) if absent)."""
    tsval = tsecr = None
    sacks: list[tuple[int, int]] = []
    while i < end:
        kind = frame[i]
        if kind == 0:
            break
        if kind == 1:
            i += 1
            continue
        if kind == 8 and i + 10 <= end:
            tsval, tsecr = int.from_bytes(frame[i + 2:i + 6], "big"), int.from_bytes(frame[i + 6:i + 10], "big")
        elif kind == 5:
            for k in range(i + 2, min(i + frame[i + 1], end) - 7, 8):
                sacks.append((int.from_bytes(frame[k:k + 4], "big"), int.from_bytes(frame[k + 4:k + 8], "big")))
        i += max(2, frame[i + 1])
    return tsval, tsecr, sacks
