"""Digests over P4Runtime: DigestEntry configuration, DigestList on the stream, DigestListAck, in the two stages a
digest crosses on simple_switch_grpc.

BMv2's learn engine (bm_sim/learning.cpp) keeps a buffer per learn list (p4c makes one per digest() call site, all
named after the struct) and leaves out a sample already in it; it hands the buffer over when it holds
`max_samples` or when its first sample is `timeout` old. A list starts with 16 samples and 1 s; configuring the
digest (PI's learn config, PI/src/pi_learn_imp.cpp) sets max_list_size (1024 when 0) and max_timeout_ns in whole
milliseconds (none when 0) on ONE list of that name: the one BMv2's name lookup meets first, which with libstdc++'s
unordered_map is the last created (checked on simple_switch 1.15.5: a program with two digest() calls of one struct
sends the first call's samples after 1 s, 16 at a time, whatever the DigestEntry says). Lowering max_samples to
what the buffer holds hands it over at once. PI's digest manager (proto/frontend/src/digest_mgr.cpp) drops what
arrives for an unconfigured digest; with ack_timeout_ns > 0 it leaves out a sample already sent in a list not yet
acknowledged (DigestListAck) nor expired (a sweep every max(ack_timeout_ns, 100 ms) expires a list on its second
visit); it sends a DigestList (list ids from 1) at once when max_timeout_ns is 0 or the list holds max_list_size
cached samples, else a sweep every max(max_timeout_ns, 100 ms) sends a non-empty list on its second visit. A
DigestList goes to the primary controller; a sample is the struct's members as canonical bitstrings.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from finsy.proto import p4d, p4i, p4r

from switch.runtime.codec import encode
from switch.runtime.status import Code, P4RuntimeError, invalid

log = logging.getLogger(__name__)
MIN_SWEEP_NS = 100_000_000
TICK_S = 0.005
Sample = tuple[int, ...]


@dataclass
class _LearnList:
    """One BMv2 learn list."""

    digest: str
    max_samples: int = 16
    timeout_ms: int = 1000
    buffer: list[Sample] = field(default_factory=list)
    started: int = 0


@dataclass
class _Digest:
    """One P4Info digest, in PI's digest manager."""

    id: int
    name: str
    widths: tuple[int, ...] = ()
    config: p4r.DigestEntry | None = None
    cache: set[Sample] = field(default_factory=set)
    lists: dict[int, list[Sample]] = field(default_factory=dict)   # unacked list id → its cached samples
    expiring: set[int] = field(default_factory=set)                # lists the ack sweep has seen once
    data: list[Sample] = field(default_factory=list)               # the DigestList being built
    cached: list[Sample] = field(default_factory=list)             # its samples put in the cache
    list_id: int = 1
    send_bit: bool = False
    next_send_sweep: int | None = None
    next_ack_sweep: int | None = None


class DigestManager:
    """The digests of the current P4Info; `sample(name, values)` is the switch's digest sink."""

    def __init__(self, send: Callable[[p4r.StreamMessageResponse], None] | None = None,
                 clock: Callable[[], int] = time.monotonic_ns) -> None:
        self.send = send
        """Delivers a StreamMessageResponse to the primary controller (set by the P4Runtime server)."""
        self.clock = clock
        self.sent = 0
        self._lock = threading.RLock()
        self._by_name: dict[str, _Digest] = {}
        self._by_id: dict[int, _Digest] = {}
        self._lists: dict[int, _LearnList] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # --- pipeline -----------------------------------------------------------------------------------------------

    def set_p4info(self, p4info: p4i.P4Info, learn_lists: dict[int, str]) -> None:
        """A new pipeline: the digests its P4Info declares and its JSON's learn lists (id → name), unconfigured,
        nothing buffered."""
        with self._lock:
            self._lists = {lid: _LearnList(name) for lid, name in learn_lists.items()}
            self._by_name = {}
            for dg in p4info.digests:
                st = p4info.type_info.structs.get(dg.type_spec.struct.name)
                widths = tuple(m.type_spec.bitstring.bit.bitwidth or m.type_spec.bitstring.int.bitwidth
                               for m in st.members) if st is not None else ()
                self._by_name[dg.preamble.name] = _Digest(dg.preamble.id, dg.preamble.name, widths)
            self._by_id = {d.id: d for d in self._by_name.values()}
        if self._by_name and self._thread is None:
            self._thread = threading.Thread(target=self._run, name="digest-timers", daemon=True)
            self._thread.start()

    def close(self) -> None:
        self._stop.set()

    # --- the switch side (BMv2's learn engine) ------------------------------------------------------------------

    def sample(self, list_id: int, values: Sample) -> None:
        with self._lock:
            ll = self._lists.get(list_id)
            if ll is None or values in ll.buffer:
                return
            ll.buffer.append(values)
            if len(ll.buffer) == 1 and ll.max_samples > 1:
                ll.started = self.clock()
            elif len(ll.buffer) >= ll.max_samples:
                self._hand_over(ll)

    def _hand_over(self, ll: _LearnList) -> None:
        samples, ll.buffer = ll.buffer, []
        d = self._by_name.get(ll.digest)
        if d is None or d.config is None:
            return
        ack_timeout = d.config.config.ack_timeout_ns
        added = False
        for s in samples:
            if ack_timeout > 0:
                if s in d.cache:
                    continue
                d.cache.add(s)
                d.cached.append(s)
            d.data.append(s)
            added = True
        if not added:
            return
        cfg = d.config.config
        if (cfg.max_list_size != 0 and len(d.cached) >= cfg.max_list_size) or cfg.max_timeout_ns == 0:
            self._send(d)

    # --- the PI side ----------------------------------------------------------------------------------------------

    def _send(self, d: _Digest) -> None:
        msg = p4r.DigestList(digest_id=d.id, list_id=d.list_id, timestamp=self.clock())
        for s in d.data:
            widths = d.widths if len(d.widths) == len(s) else (0,) * len(s)
            members = [p4d.P4Data(bitstring=encode(v & ((1 << w) - 1) if w else v)) for v, w in zip(s, widths)]
            msg.data.add().struct.members.extend(members)
        d.send_bit = False
        if d.cached:
            d.lists[d.list_id] = d.cached
        d.cached, d.data = [], []
        d.list_id += 1
        self.sent += 1
        if self.send is not None:
            self.send(p4r.StreamMessageResponse(digest=msg))

    def write(self, update_type: int, de: p4r.DigestEntry) -> None:
        with self._lock:
            d = self._by_id.get(de.digest_id)
            if d is None:
                raise P4RuntimeError(Code.NOT_FOUND, f"{de.digest_id} is not a valid digest id")
            if update_type == p4r.Update.INSERT:
                if d.config is not None:
                    raise P4RuntimeError(Code.ALREADY_EXISTS, f"Digest {d.id} already configured")
            elif update_type in (p4r.Update.MODIFY, p4r.Update.DELETE):
                if d.config is None:
                    raise P4RuntimeError(Code.NOT_FOUND, f"Digest {d.id} not configured")
            else:
                raise invalid("Invalid update type for DigestEntry")
            if update_type == p4r.Update.DELETE:
                d.config = None
                d.cache.clear()
                d.lists.clear()
                d.expiring.clear()
                d.data, d.cached, d.send_bit = [], [], False
                d.next_send_sweep = d.next_ack_sweep = None
                return  # BMv2's learn list keeps its size and timeout (PI passes no config to the target)
            d.config = p4r.DigestEntry()
            d.config.CopyFrom(de)
            cfg = de.config
            named = [lid for lid, ll in self._lists.items() if ll.digest == d.name]
            if named:
                ll = self._lists[max(named)]
                ll.timeout_ms = int(cfg.max_timeout_ns / 1e6)
                ll.max_samples = cfg.max_list_size or 1024
                if ll.buffer and len(ll.buffer) >= ll.max_samples:
                    self._hand_over(ll)
            now = self.clock()
            d.next_send_sweep = now + max(cfg.max_timeout_ns, MIN_SWEEP_NS) if cfg.max_timeout_ns else None
            d.next_ack_sweep = now + max(cfg.ack_timeout_ns, MIN_SWEEP_NS) if cfg.ack_timeout_ns else None

    def read(self, de: p4r.DigestEntry, out: list[p4r.Entity]) -> None:
        if de.digest_id == 0:
            raise P4RuntimeError(Code.UNIMPLEMENTED, "digest_id must be set when reading DigestEntry")
        with self._lock:
            d = self._by_id.get(de.digest_id)
            if d is None:
                raise P4RuntimeError(Code.NOT_FOUND, f"{de.digest_id} is not a valid digest id")
            if d.config is None:
                raise P4RuntimeError(Code.NOT_FOUND, f"Digest {d.id} not configured")
            entry = p4r.DigestEntry()
            entry.CopyFrom(d.config)
            out.append(p4r.Entity(digest_entry=entry))

    def ack(self, ack: p4r.DigestListAck) -> None:
        with self._lock:
            d = self._by_id.get(ack.digest_id)
            if d is not None:
                self._purge(d, ack.list_id)

    def _purge(self, d: _Digest, list_id: int) -> None:
        for s in d.lists.pop(list_id, []):
            d.cache.discard(s)
        d.expiring.discard(list_id)

    # --- timers ---------------------------------------------------------------------------------------------------

    def tick(self) -> None:
        """BMv2's buffer timeouts and PI's two sweeps, as due now."""
        now = self.clock()
        with self._lock:
            for ll in self._lists.values():
                if ll.buffer and ll.timeout_ms > 0 and now >= ll.started + ll.timeout_ms * 1_000_000:
                    self._hand_over(ll)
            for d in self._by_name.values():
                cfg = d.config.config if d.config is not None else None
                if cfg is not None and d.next_send_sweep is not None and now >= d.next_send_sweep:
                    d.next_send_sweep = now + max(cfg.max_timeout_ns, MIN_SWEEP_NS)
                    if d.data:
                        if d.send_bit:
                            self._send(d)
                        else:
                            d.send_bit = True
                if cfg is not None and d.next_ack_sweep is not None and now >= d.next_ack_sweep:
                    d.next_ack_sweep = now + max(cfg.ack_timeout_ns, MIN_SWEEP_NS)
                    for lid in list(d.lists):
                        if lid in d.expiring:
                            self._purge(d, lid)
                        else:
                            d.expiring.add(lid)

    def _run(self) -> None:
        while not self._stop.wait(TICK_S):
            try:
                self.tick()
            except Exception:  # a timer must not die with the switch still running
                log.exception("digest timer failed")
