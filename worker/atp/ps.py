"""ATP's parameter server: the second host role of an ATP job (one process serves one or more jobs).

`PsCore` is sans-IO: `on_packet(header, values)` merges what reaches the PS and returns the ACKs to send. Per sequence
it keeps the bitmap of contributions merged so far and their sum; a packet is merged only if none of its
contributions is in yet (a full switch aggregate, a first-level partial flushed by a RESEND, a packet that collided,
a single retransmission: all alike), so nothing is counted twice; a packet whose bitmap is already covered is a
duplicate, one that overlaps partly is ignored (its missing contributions come again in later retransmissions, which
reach the PS alone once their aggregator was flushed). Which contributions a packet carries is `worker.atp.bitmap`'s
reading of its bitmaps (ranks in a job of up to 32 workers, places in racks beyond). When every worker's
contribution is in, the PS sends the parameter packet (ACK) through the switch, which frees the aggregator and
multicasts it to the workers; any later packet of a completed sequence is answered with the same ACK (a worker missed
it). If the sequence collided with another job, the ACK sets COLLISION and names a fresh aggregator for that window
position (`agtr_next`).

Overflow: fixed-point sums are added with int32 saturation like the switch; a sum at INT32_MAX/INT32_MIN or an
aggregate flagged OVERFLOW (or any RAW packet) moves the sequence to the raw phase: the PS sends ACK|OVERFLOW (the
switch frees the aggregator, the workers resend the raw values) and sums the raw values exactly once by bitmap
(float32 in float64, int32 modulo 2^32); the final ACK carries RAW (and FLOAT).

With no switch aggregation at all (no atp_jobs entry, or every packet colliding) the PS is the classic parameter
server over the same packets. `python -m worker.atp.ps --job J [--job J2 ...]` runs it over UDP.
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import sys
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Sequence

import numpy as np

from switch.timeline import Timeline
from worker.atp.bitmap import Contributions
from worker.atp.header import (ACK, ATP_UDP_PORT, COLLISION, ECN, FLOAT, OVERFLOW, RAW, AtpCodec, AtpHeader,
                               codec_of_program)
from worker.codec import CodecError, MalformedPacket
from worker.job import JobConfig, JobConfigError
from worker.schedstat import sched_times

__all__ = ["PsStats", "PsCore", "ParameterServer", "main"]

SAT_MAX, SAT_MIN = 2**31 - 1, -(2**31)


@dataclass(slots=True)
class PsStats:
    """What one job's PS saw."""

    packets: int = 0
    merged: int = 0
    """Packets whose contributions were added."""
    contributions_in_switch: int = 0
    """Worker contributions that reached the PS already aggregated by a switch (packets carrying >= 2)."""
    contributions_at_ps: int = 0
    """Worker contributions the PS added itself (collisions, flushed singles, raw resends)."""
    duplicates: int = 0
    overlaps_ignored: int = 0
    ambiguous: int = 0
    """Packets whose bitmaps cannot name their contributions (a wide job's flushed multi-rack aggregate,
    `worker.atp.bitmap`): left to the retransmissions."""
    collisions: int = 0
    """Packets that reached the PS flagged COLLISION."""
    completed: int = 0
    raw_sequences: int = 0
    """Sequences completed from raw values (overflow)."""
    acks_sent: int = 0
    foreign: int = 0
    malformed: int = 0

    @property
    def switch_fraction(self) -> float:
        total = self.contributions_in_switch + self.contributions_at_ps
        return self.contributions_in_switch / total if total else 0.0


@dataclass(slots=True)
class _Seq:
    agtr: int
    acc: np.ndarray
    merged: int = 0
    overflow: bool = False
    collision: bool = False
    ecn: bool = False
    raw: bool = False
    raw_merged: int = 0
    raw_acc: np.ndarray | None = None
    raw_float: bool = False
    ack: tuple[AtpHeader, np.ndarray] | None = None
    """The ACK last sent for this sequence (raw request or final), repeated to late packets."""
    done: bool = False


@dataclass
class PsCore:
    """The PS of one job: feed it packets, send what it returns (header, int32 values) to the switch."""

    job: JobConfig
    num_elems: int
    keep: int = 1 << 16
    """Completed sequences remembered (to answer late retransmissions)."""
    stats: PsStats = field(default_factory=PsStats)

    def __post_init__(self) -> None:
        self.all = (1 << self.job.num_workers) - 1
        self._contributions = Contributions(self.job)
        self._seqs: dict[int, _Seq] = {}
        self._done: deque[int] = deque()
        self._stride = ((2 * self.job.job_id + 1) * 40503) % self.job.pool.size or 1

    def next_aggregator(self, agtr: int) -> int:
        """A fresh aggregator for a window position whose sequence collided: a job-specific stride in its range."""
        base, size = self.job.pool.base, self.job.pool.size
        return base + (agtr - base + self._stride) % size

    def on_packet(self, hdr: AtpHeader, values: np.ndarray) -> list[tuple[AtpHeader, np.ndarray]]:
        self.stats.packets += 1
        if hdr.flags & ACK or hdr.job_id != self.job.job_id:
            self.stats.foreign += 1
            return []
        st = self._seqs.get(hdr.seq)
        if st is None:
            st = self._seqs[hdr.seq] = _Seq(hdr.agtr, np.zeros(self.num_elems, dtype=np.int64))
        if st.done:
            self.stats.duplicates += 1
            return [self._resend(st)]
        st.ecn |= bool(hdr.flags & ECN)
        if hdr.flags & COLLISION:
            st.collision = True
            self.stats.collisions += 1
        bits = self._contributions.ranks(hdr.bitmap0, hdr.bitmap1, hdr.flags)
        if bits is None:
            self.stats.ambiguous += 1
            return []
        if hdr.flags & RAW:
            if not st.raw:
                st.raw = True
                out = [self._raw_request(hdr, st)]
            else:
                out = []
            return out + self._merge_raw(hdr, st, bits, values)
        if st.raw:
            return [self._resend(st)]  # the sender has not seen the raw request yet
        if bits and not bits & st.merged:
            st.acc += values
            # saturating as the switch adds: a sum that reached a bound at any step is wrong from then on, even if
            # later contributions move it back inside (so check every step, not only the final sum)
            st.overflow |= (bool(hdr.flags & OVERFLOW) or bool(np.any((values == SAT_MAX) | (values == SAT_MIN)))
                            or bool(np.any((st.acc >= SAT_MAX) | (st.acc <= SAT_MIN))))
            np.clip(st.acc, SAT_MIN, SAT_MAX, out=st.acc)
            st.merged |= bits
            self._count(bits)
        elif bits and not bits & ~st.merged:
            self.stats.duplicates += 1
            return []
        else:
            self.stats.overlaps_ignored += 1
            return []
        if st.merged != self.all:
            return []
        if st.overflow or bool(np.any((st.acc >= SAT_MAX) | (st.acc <= SAT_MIN))):
            st.raw = True
            return [self._raw_request(hdr, st)]
        return [self._complete(hdr, st, st.acc.astype(np.int32), 0)]

    def _count(self, bits: int) -> None:
        k = bin(bits).count("1")
        self.stats.merged += 1
        if k >= 2:
            self.stats.contributions_in_switch += k
        else:
            self.stats.contributions_at_ps += k

    def _raw_request(self, hdr: AtpHeader, st: _Seq) -> tuple[AtpHeader, np.ndarray]:
        st.ack = (AtpHeader(bitmap0=self.all, flags=ACK | OVERFLOW, job_id=self.job.job_id, seq=hdr.seq,
                            agtr=st.agtr, agtr_next=st.agtr), np.zeros(self.num_elems, dtype=np.int32))
        return self._resend(st)

    def _merge_raw(self, hdr: AtpHeader, st: _Seq, bits: int, values: np.ndarray) -> list[tuple[AtpHeader, np.ndarray]]:
        if not bits or bits & st.raw_merged:
            self.stats.duplicates += 1
            return []
        st.raw_float = bool(hdr.flags & FLOAT)
        v = values.view(np.float32).astype(np.float64) if st.raw_float else values.astype(np.int64)
        st.raw_acc = v if st.raw_acc is None else st.raw_acc + v
        st.raw_merged |= bits
        self.stats.merged += 1
        self.stats.contributions_at_ps += bin(bits).count("1")
        if st.raw_merged != self.all:
            return []
        assert st.raw_acc is not None
        if st.raw_float:
            result = st.raw_acc.astype(np.float32).view(np.int32)
        else:
            result = st.raw_acc.astype(np.uint32).view(np.int32)
        self.stats.raw_sequences += 1
        return [self._complete(hdr, st, result, RAW | (FLOAT if st.raw_float else 0))]

    def _complete(self, hdr: AtpHeader, st: _Seq, result: np.ndarray, flags: int) -> tuple[AtpHeader, np.ndarray]:
        nxt = self.next_aggregator(st.agtr) if st.collision else st.agtr
        flags |= ACK | (COLLISION if st.collision else 0) | (ECN if st.ecn else 0)
        st.ack = (AtpHeader(bitmap0=self.all, flags=flags, job_id=self.job.job_id, seq=hdr.seq, agtr=st.agtr,
                            agtr_next=nxt), result)
        st.done = True
        st.acc = st.acc[:0]  # the ACK keeps the result; the accumulators are not needed any more
        st.raw_acc = None
        self.stats.completed += 1
        self._done.append(hdr.seq)
        while len(self._done) > self.keep:
            self._seqs.pop(self._done.popleft(), None)
        return self._resend(st)

    def missing_ranks(self) -> list[int]:
        """Ranks absent from every unfinished sequence that has some contribution (after a worker died: that
        worker), in order; [] when nothing is unfinished."""
        missing = self.all
        seen = False
        for st in self._seqs.values():
            if not st.done and (st.merged or st.raw_merged):
                seen = True
                missing &= ~(st.raw_merged if st.raw else st.merged)
        return [r for r in range(self.job.num_workers) if seen and missing >> r & 1]

    def _resend(self, st: _Seq) -> tuple[AtpHeader, np.ndarray]:
        assert st.ack is not None
        self.stats.acks_sent += 1
        return st.ack


class ParameterServer:
    """One UDP socket on the PS's address (port 48865) serving the PsCore of each job; ACKs go to the switch."""

    def __init__(self, jobs: Sequence[JobConfig], codec: AtpCodec, *, bind_ip: str | None = None,
                 timeline: Timeline | None = None) -> None:
        if not jobs:
            raise JobConfigError("the parameter server needs at least one job")
        ips = {j.ps.ip if j.ps else None for j in jobs}
        if None in ips or len(ips) != 1:
            raise JobConfigError("every job of one parameter server needs the same \"ps\" address")
        self.codec = codec
        self.cores = {j.job_id: PsCore(j, codec.num_elems) for j in jobs}
        if len(self.cores) != len(jobs):
            raise JobConfigError("two jobs with the same job_id")
        self.switch = {j.job_id: (j.switch.ip, ATP_UDP_PORT) for j in jobs}
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.sock.bind((bind_ip or ips.pop() or "", ATP_UDP_PORT))
        self.malformed = 0
        self._stop = False
        self.timeline = timeline
        """Where to record each packet (`switch.timeline`): a span per packet on its aggregator's track."""

    def stop(self, *_: object) -> None:
        self._stop = True

    def serve(self, idle_exit: float | None = None) -> None:
        """Answer packets until stop() (or `idle_exit` seconds without a packet)."""
        self.sock.settimeout(0.2)
        last = time.monotonic()
        while not self._stop:
            try:
                data = self.sock.recv(65535)
            except socket.timeout:
                if idle_exit is not None and time.monotonic() - last > idle_exit:
                    return
                continue
            except InterruptedError:
                continue
            last = time.monotonic()
            try:
                hdr, values = self.codec.decode(data)
            except MalformedPacket:
                self.malformed += 1
                continue
            core = self.cores.get(hdr.job_id)
            if core is None:
                self.malformed += 1
                continue
            replies = core.on_packet(hdr, values)
            if self.timeline is not None:
                self._record(hdr, replies, last)
            for h, v in replies:
                try:
                    self.sock.sendto(self.codec.encode(h, v), self.switch[hdr.job_id])
                except OSError:
                    pass  # a full buffer is a lost ACK: the workers' retransmissions ask again

    def _record(self, hdr: AtpHeader, replies: list[tuple[AtpHeader, np.ndarray]], start: float) -> None:
        tl = self.timeline
        assert tl is not None
        tl.track(hdr.agtr + 1, f"aggregator {hdr.agtr}")
        what = ("complete" if any(h.flags & ACK for h, _ in replies) else "merged" if not replies else "reply")
        if hdr.flags & COLLISION:
            what = "collision, " + what
        tl.span(f"seq {hdr.seq}: {what}", hdr.agtr + 1, start, time.monotonic(), "ps", job=hdr.job_id, seq=hdr.seq,
                contributions=hdr.bitmap0, flags=hdr.flags, replies=len(replies))

    def report(self) -> dict[str, object]:
        return {"jobs": {str(j): {**asdict(c.stats), "switch_fraction": round(c.stats.switch_fraction, 4),
                                  "missing_ranks": c.missing_ranks()}
                         for j, c in self.cores.items()}, "malformed": self.malformed}

    def close(self) -> None:
        self.sock.close()


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m worker.atp.ps", description="ATP parameter server for one or more "
                                "jobs; prints its statistics as one JSON line when stopped (SIGTERM/SIGINT)")
    p.add_argument("--job", action="append", required=True, help="job file (repeat for several jobs)")
    p.add_argument("--program-json", help="compiled atp.p4 or esa.p4 (default: $INA_ATP_JSON, out/atp.json)")
    p.add_argument("--bind", metavar="IP", help="address to bind instead of the jobs' ps.ip")
    p.add_argument("--idle-exit", type=float, default=None, metavar="S", help="stop after S seconds without packets")
    p.add_argument("--stats", metavar="FILE", help="also write the statistics to FILE")
    p.add_argument("--trace", metavar="FILE", help="write a timeline to FILE when stopped (Chrome trace-event JSON, "
                   "opens in Perfetto): a span per packet on its aggregator's track")
    args = p.parse_args(argv)
    from worker.atp.worker import find_atp_json

    try:
        jobs = [JobConfig.load(j) for j in args.job]
        codec = codec_of_program(args.program_json or find_atp_json())
        timeline = Timeline("parameter server", pid=100) if args.trace else None
        ps = ParameterServer(jobs, codec, bind_ip=args.bind, timeline=timeline)
    except (JobConfigError, CodecError) as exc:
        print(f"atp_ps: error: {exc}", file=sys.stderr)
        return 3
    except OSError as exc:
        print(f"atp_ps: error: cannot bind UDP port {ATP_UDP_PORT}: {exc.strerror}", file=sys.stderr)
        return 5
    signal.signal(signal.SIGTERM, ps.stop)
    signal.signal(signal.SIGINT, ps.stop)
    print(f"atp_ps: serving job(s) {', '.join(str(j.job_id) for j in jobs)} on UDP {ATP_UDP_PORT}", flush=True)
    cpu0, sched0 = time.process_time(), sched_times()
    try:
        ps.serve(args.idle_exit)
    finally:
        report = json.dumps({**ps.report(), "cpu_s": round(time.process_time() - cpu0, 4),
                             "wait_s": round((sched_times() - sched0).wait_s, 4)})
        print(report, flush=True)
        if args.stats:
            with open(args.stats, "w") as f:
                f.write(report + "\n")
        if timeline is not None:
            timeline.write(args.trace)
        ps.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
