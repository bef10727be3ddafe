"""V1Switch: simple_switch's v1model architecture around the generated pipeline code.

Packet walk (simple_switch.cpp): receive → parse (+ verify checksums) → ingress → [I2E clone] → [resubmit] →
[multicast | drop at drop port | enqueue on egress_spec] … egress FIFO per port … egress (egress_spec := drop port + 1)
→ [E2E clone] → [drop at drop port] → deparse (+ update checksums) → [recirculate] → transmit.

`receive()` runs ingress (and resubmissions) at once and leaves packets in the egress FIFOs; `drain()` runs egress
(and recirculations) until every queue is empty. `process()` is both.
"""

from __future__ import annotations

import collections
import logging
import random
import threading
import time
from typing import Any, Callable, Sequence

from switch.errors import LoadError
from switch.sim.codegen import Codegen, PacketAbort
from switch.sim.program import (P_CLONE, P_CLONE_FL, P_EXIT, P_ID, P_INLEN, P_LEARN, P_LEN, P_PAYLOAD, P_RECIRC,
                                P_RESUBMIT, P_TRUNC, Program, parse_json)
from switch.sim.tables import ActionInfo, MatchTable
from switch.sim.externs import CounterArray, RegisterArray, ValueSet
from switch.sim.calculations import CustomCrc
from switch.sim.action_profiles import ActionProfile
from switch.sim.meters import MeterArray
from switch.sim.vectors import NotVectorizable, template as vec_template
from switch.v1model.fastpath import build_fast_paths
from switch.v1model.pre import Mirror, Pre
from switch.v1model.primitives import v1model_primitives

# instance_type values (simple_switch.md / v1model)
NORMAL, INGRESS_CLONE, EGRESS_CLONE, COALESCED, RECIRC, REPLICATION, RESUBMIT = 0, 1, 2, 3, 4, 5, 6

QUEUE_CAPACITY = 64       # packets per egress FIFO (simple_switch default)
MAX_LOOP = 1 << 20        # resubmit/recirculate passes after which a packet is dropped as an endless loop
PHV_POOL = 64             # PHVs of ended packets kept for reuse (see V1Switch._phv)

TraceFn = Callable[[str, str], None]
log = logging.getLogger(__name__)

_SM_FIELDS = ("ingress_port", "egress_spec", "egress_port", "instance_type", "packet_length", "enq_timestamp",
              "enq_qdepth", "deq_timedelta", "deq_qdepth", "ingress_global_timestamp", "egress_global_timestamp",
              "mcast_grp", "egress_rid", "checksum_error", "parser_error", "priority")
_ALIAS_PREFIX = {"enq_timestamp": "queueing_metadata", "enq_qdepth": "queueing_metadata",
                 "deq_timedelta": "queueing_metadata", "deq_qdepth": "queueing_metadata",
                 "ingress_global_timestamp": "intrinsic_metadata", "egress_global_timestamp": "intrinsic_metadata",
                 "mcast_grp": "intrinsic_metadata", "egress_rid": "intrinsic_metadata", "priority": "intrinsic_metadata"}
_REQUIRED = ("ingress_port", "packet_length", "instance_type", "egress_spec", "egress_port")


class _Loaded:
    """Everything built from one JSON program; swapped in as a whole by `V1Switch.load`."""

    def __init__(self, j: dict, prog: Program, cg: Codegen, ns: dict[str, Any]) -> None:
        self.json = j
        self.prog = prog
        self.cg = cg
        self.ns = ns
        self.parse = ns["parse"]
        self.deparse = ns["deparse"]
        self.verify = ns["verify_checksums"]
        self.has_verify = any(c.get("verify", True) for c in j.get("checksums", []))
        pipes = ns["_pipelines"]
        if "ingress" not in pipes or "egress" not in pipes:
            raise LoadError(f"v1model needs pipelines 'ingress' and 'egress', found {sorted(pipes)}")
        self.ingress = pipes["ingress"]
        self.egress = pipes["egress"]
        egress_pl = next(pl for pl in j.get("pipelines", []) if pl.get("name") == "egress")
        self.egress_empty = egress_pl.get("init_table") is None  # nothing to run: skip the call
        sm: dict[str, int | None] = {}
        for f in _SM_FIELDS:
            slot = None
            if f in _ALIAS_PREFIX:
                slot = prog.lookup_slot(f"{_ALIAS_PREFIX[f]}.{f}")
            if slot is None:
                slot = prog.lookup_slot(f"standard_metadata.{f}")
            sm[f] = slot
        for f in _REQUIRED:
            if sm[f] is None:
                raise LoadError(f"v1model needs field standard_metadata.{f}")
        self.sm = sm
        for k, v in sm.items():  # also as attributes s_<field>: the per-packet path avoids dict lookups
            setattr(self, f"s_{k}", v)
        self.noerror = prog.errors["NoError"]
        # the clock is read only for timestamp fields the generated code can see (reading it costs per packet)
        used = cg.used_slots()

        def seen(slot: int | None) -> int | None:
            return slot if slot is not None and slot in used else None

        self.ts_ingress = seen(self.s_ingress_global_timestamp)
        self.ts_egress = seen(self.s_egress_global_timestamp)
        self.deq_td = seen(self.s_deq_timedelta) if self.s_enq_timestamp is not None else None
        self.ts_enq = self.s_enq_timestamp if self.deq_td is not None else seen(self.s_enq_timestamp)
        self.egress_clock = self.ts_egress is not None or self.deq_td is not None
        self.m0, self.m1 = prog.meta_start, prog.meta_end
        self.template = vec_template(prog.template, cg.vectors) if cg.vectors else prog.template
        self.head = self.template[:self.m1]      # reserved slots and metadata of a fresh packet
        self.reuse_reset = prog.reuse_reset      # what else a reused PHV resets (header validity, stack indices)
        self.field_lists = prog.field_lists
        # untraced: generated per-packet paths (fastpath.py), set by V1Switch._build
        self.fast_process: Callable[[int, bytes], list[tuple[int, bytes]] | None] | None = None
        self.fast_receive: Callable[[int, bytes], Any] | None = None
        self.fast_egress: Callable[[int, list, int, int], Any] | None = None


class V1Switch:
    """A simple_switch look-alike: load a BMv2 JSON program, then push frames through it (see module docstring)."""

    def __init__(self, drop_port: int = 511, cpu_port: int | None = None, device_id: int = 0,
                 trace: TraceFn | None = None, queue_capacity: int = QUEUE_CAPACITY, max_loop: int = MAX_LOOP,
                 priority_queues: int = 1, seed: int | None = None) -> None:
        self.drop_port = drop_port
        self.cpu_port = cpu_port
        self.device_id = device_id
        self.queue_capacity = queue_capacity
        self.max_loop = max_loop
        self.priority_queues = priority_queues  # simple_switch --priority-queues (one FIFO per port by default)
        self.rng = random.Random(seed)  # the program's random() (e.g. loss injection); a seed makes runs repeatable
        self.lock = threading.RLock()
        self.pre = Pre()
        self.mirror = Mirror()
        self.tables: dict[str, MatchTable] = {}
        self.actions: dict[str, ActionInfo] = {}
        self.registers: dict[str, RegisterArray] = {}
        self.counters: dict[str, CounterArray] = {}
        self.meters: dict[str, MeterArray] = {}  # `set_rates(index, [(CIR, CBS), (PIR, PBS)])`, rates per µs
        self.action_profiles: dict[str, ActionProfile] = {}  # members, groups: sim/action_profiles.py
        self.digest_sink: Callable[[int, tuple[int, ...]], None] | None = None
        """Called with (learn list id, values) for every digest a packet sends (under the switch's lock: it must
        not block); the P4Runtime server's digest manager (switch/runtime/digests.py) when one runs."""
        self.value_sets: dict[str, ValueSet] = {}  # parser value sets by name: `set_members([...])`
        self._stats: collections.Counter[str] = collections.Counter()
        # the per-packet counts are plain int attributes (a Counter item costs ~4x an attribute increment);
        # the `stats` property folds them into the Counter whenever someone looks
        self._n_received = self._n_transmitted = self._n_dropped_ingress = self._n_dropped_egress = 0
        self._n_replicated = self._n_queue_full_waits = 0
        self.last_error: str | None = None
        self._trace = trace
        self._l: _Loaded | None = None
        self.clock_ns: Callable[[], int] = time.monotonic_ns
        """Where the switch's timestamps come from (ns); `set_clock` replaces it (a simulator's virtual time)."""
        self._start_ns = self.clock_ns()
        self._packet_id = 0
        self._hi: collections.deque = collections.deque()          # resubmitted / recirculated packets
        self._queues: dict[int, collections.deque] = {}             # egress FIFOs per port
        self._order: collections.deque = collections.deque()        # ports in enqueue order (global FIFO)
        self._out: list[tuple[int, bytes]] = []
        self._copies: dict[str, int] = {}                           # trace ids: copies made per packet
        self._phvs: list[list] = []                                 # PHVs of ended packets, last ended last
        self.phv_pool = PHV_POOL

    @property
    def stats(self) -> collections.Counter[str]:
        """Packet statistics, a collections.Counter: received, transmitted, dropped (+ dropped_ingress, _egress,
        _loop_limit, _assert, _priority, _no_pipeline), errors, parser_errors, replicated, cloned_i2e, cloned_e2e,
        resubmitted, recirculated, queue_full_waits, multicast_group_empty."""
        with self.lock:  # the packet thread may be counting right now
            return self._fold_stats()

    def _fold_stats(self) -> collections.Counter[str]:
        st = self._stats
        if self._n_received:
            st["received"] += self._n_received
            self._n_received = 0
        if self._n_transmitted:
            st["transmitted"] += self._n_transmitted
            self._n_transmitted = 0
        if self._n_replicated:
            st["replicated"] += self._n_replicated
            self._n_replicated = 0
        if self._n_queue_full_waits:
            st["queue_full_waits"] += self._n_queue_full_waits
            self._n_queue_full_waits = 0
        for key, n in (("dropped_ingress", self._n_dropped_ingress), ("dropped_egress", self._n_dropped_egress)):
            if n:
                st[key] += n
                st["dropped"] += n
        self._n_dropped_ingress = self._n_dropped_egress = 0
        return st

    # --- program -----------------------------------------------------------------------------------------------
    @property
    def loaded(self) -> bool:
        return self._l is not None

    @property
    def program_json(self) -> dict | None:
        return self._l.json if self._l else None

    @property
    def generated_source(self) -> str:
        """The Python source generated for the loaded program (for debugging)."""
        return self._l.cg.source if self._l else ""

    @property
    def trace(self) -> TraceFn | None:
        return self._trace

    @trace.setter
    def trace(self, fn: TraceFn | None) -> None:
        """Switching tracing on/off regenerates the code (same tables, registers and counters)."""
        with self.lock:
            was = self._trace is not None
            self._trace = fn
            if self._l is not None and was != (fn is not None):
                old = self._l
                self._l = self._build(old.json, old.prog, reuse=old.cg)
                self._phvs.clear()  # the traced code lays out no vector slots

    def _emit_trace(self, F: list, msg: str) -> None:
        fn = self._trace
        if fn is not None:
            fn(F[P_ID], msg)

    def _build(self, j: dict, prog: Program, reuse: Codegen | None = None) -> _Loaded:
        def generate(vectors: bool | set[str]) -> tuple[Codegen, dict[str, Any]]:
            cg = Codegen(prog, v1model_primitives(self.drop_port), self._trace is not None, reuse=reuse,
                         extra_ns={"_T": self._emit_trace, "_randbits": self.rng.getrandbits}, vectors=vectors)
            return cg, cg.build()

        skip: set[str] = set()
        while True:  # vector headers (switch/sim/vectors.py) where the generated code allows them
            try:
                cg, ns = generate(skip or True)
                break
            except NotVectorizable as exc:
                if exc.headers is None or exc.headers <= skip:
                    cg, ns = generate(False)
                    break
                skip |= exc.headers
            except Exception:  # noqa: BLE001 - vectors only ever add failures: the scalar build has the last word
                cg, ns = generate(False)
                break
        L = _Loaded(j, prog, cg, ns)
        if self._trace is None:
            fast = build_fast_paths(self, L)
            L.fast_process, L.fast_receive, L.fast_egress = fast["process"], fast["receive"], fast["egress"]
        return L

    def crc_custom(self, calculation: str) -> CustomCrc:
        """The parameters of a crc16_custom / crc32_custom calculation of the loaded program, by its JSON name
        (`configure(polynomial, initial, final_xor, reflect_data, reflect_remainder)`, as simple_switch_CLI's
        set_crc16_parameters / set_crc32_parameters); KeyError naming the candidates otherwise."""
        crcs = self._l.cg.custom_crcs if self._l is not None else {}
        if calculation not in crcs:
            raise KeyError(f"no crc16_custom/crc32_custom calculation {calculation!r} (have: {sorted(crcs)})")
        return crcs[calculation]

    def load(self, source: str | bytes | dict) -> None:
        """Load a BMv2 JSON program (text, bytes or dict). LoadError if refused; the old program then stays."""
        j = parse_json(source)
        try:
            prog = Program(j)
            new = self._build(j, prog)
        except LoadError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise LoadError(f"malformed BMv2 JSON: {type(exc).__name__}: {exc}") from None
        with self.lock:
            self._l = new
            self.tables = new.cg.tables
            self.actions = new.cg.action_infos
            self.registers = new.cg.registers
            self.counters = new.cg.counters
            self.meters = new.cg.meters
            self.action_profiles = new.cg.action_profiles
            self.value_sets = new.cg.value_sets
            self._hi.clear()
            self._queues.clear()
            self._order.clear()
            self._phvs.clear()

    def peek(self, frame: bytes, names: Sequence[str]) -> dict[str, int | None]:
        """What the program's parser puts in the named fields (`header.field`) for `frame`: None for a field of a
        header it leaves invalid, a name the program lacks or a frame it cannot parse. Not a packet: no pipeline,
        no counters (for timelines and tools)."""
        with self.lock:
            L = self._l
            if L is None:
                return dict.fromkeys(names)
            F = L.template[:]
            try:
                L.parse(F, bytes(frame))
            except Exception:  # noqa: BLE001 - a frame the parser chokes on has no values to show
                return dict.fromkeys(names)
            out: dict[str, int | None] = {}
            for name in names:
                slot = L.prog.lookup_slot(name)
                hl = L.prog.headers.get(name.partition(".")[0])
                if slot is None or hl is None or not F[hl.valid_slot]:
                    out[name] = None
                    continue
                vec = next((v for v in L.cg.vectors if v.owns(slot)), None)
                out[name] = int(F[vec.vslot][slot - vec.first]) if vec is not None else int(F[slot])
            return out

    # --- data plane --------------------------------------------------------------------------------------------
    def now_us(self) -> int:
        """Microseconds since the switch started (BMv2's timestamps)."""
        return (self.clock_ns() - self._start_ns) // 1000

    def set_clock(self, clock_ns: Callable[[], int], start_ns: int | None = None) -> None:
        """Take timestamps from `clock_ns` (nanoseconds) from now on; they count from `start_ns` (default: its present
        reading, as BMv2's count from the switch's start)."""
        with self.lock:
            self.clock_ns = clock_ns
            self._start_ns = clock_ns() if start_ns is None else start_ns

    def process(self, port: int, frame: bytes) -> list[tuple[int, bytes]]:
        """Run one frame through the switch until quiescent; return the (port, frame) pairs transmitted."""
        with self.lock:
            L = self._l
            if L is not None and L.fast_process is not None and not (self._order or self._hi or self._out):
                # nothing queued: the packet's egress follows its ingress at once (fastpath.py)
                out = L.fast_process(port, frame)
                if out is not None:
                    return out
            else:
                self._receive(port, frame)
            return self._drain()

    def receive(self, port: int, frame: bytes) -> None:
        """Ingress-process one frame received on `port`; its outputs wait in the egress FIFOs until `drain()`."""
        with self.lock:
            self._receive(port, frame)

    def drain(self) -> list[tuple[int, bytes]]:
        """Run egress for every queued packet (and whatever it recirculates); return the transmitted frames."""
        with self.lock:
            return self._drain()

    def _receive(self, port: int, frame: bytes) -> None:
        L = self._l
        if L is not None and L.fast_receive is not None:
            L.fast_receive(port, frame)
            while self._hi:
                G, depth = self._hi.popleft()
                self._run_ingress(L, G, depth)
            return
        self._n_received += 1
        if L is None:  # like simple_switch without a program: nothing to run, the frame is dropped
            self._stats["dropped"] += 1
            self._stats["dropped_no_pipeline"] += 1
            return
        self._packet_id += 1
        F = self._phv(L)
        frame = bytes(frame)
        n = len(frame)
        F[P_PAYLOAD] = frame
        F[P_LEN] = F[P_INLEN] = n
        F[L.s_ingress_port] = port & 0x1FF
        F[L.s_packet_length] = n
        if L.ts_ingress is not None:
            F[L.ts_ingress] = (self.clock_ns() - self._start_ns) // 1000
        if self._trace is not None:
            F[P_ID] = f"{self._packet_id}.0"
            self._trace(F[P_ID], f"Processing packet received on port {port}")
        try:
            self._ingress(L, F, 0)
        except Exception as exc:  # noqa: BLE001 - one bad packet must never stop the switch
            self._packet_failed(F, exc)
        while self._hi:
            G, depth = self._hi.popleft()
            self._run_ingress(L, G, depth)

    def _drain(self) -> list[tuple[int, bytes]]:
        L = self._l
        if L is not None:
            order, hi, queues, fast = self._order, self._hi, self._queues, L.fast_egress
            while order or hi:
                while hi:
                    G, depth = hi.popleft()
                    self._run_ingress(L, G, depth)
                if order:
                    port = order.popleft()
                    q = queues[port]
                    F, depth = q.popleft()
                    if fast is not None:
                        fast(port, F, len(q), depth)
                        continue
                    try:
                        self._egress(L, port, F, len(q), depth)
                    except Exception as exc:  # noqa: BLE001
                        self._packet_failed(F, exc)
        out, self._out = self._out, []
        return out

    def _run_ingress(self, L: _Loaded, F: list, depth: int) -> None:
        try:
            self._ingress(L, F, depth)
        except Exception as exc:  # noqa: BLE001 - one bad packet must never stop the switch
            self._packet_failed(F, exc)

    def _run_egress(self, L: _Loaded, port: int, F: list, qdepth: int, depth: int) -> None:
        if L.fast_egress is not None:
            L.fast_egress(port, F, qdepth, depth)
            return
        try:
            self._egress(L, port, F, qdepth, depth)
        except Exception as exc:  # noqa: BLE001
            self._packet_failed(F, exc)

    def _packet_failed(self, F: list, exc: Exception) -> None:
        if isinstance(exc, PacketAbort):
            self._stats["dropped_assert"] += 1
        else:
            self._stats["errors"] += 1
        self._stats["dropped"] += 1
        self.last_error = f"{type(exc).__name__}: {exc}"
        if self._trace is not None:
            self._trace(F[P_ID], f"Packet dropped: {self.last_error}")

    def _phv(self, L: _Loaded) -> list:
        """The PHV of a new packet. BMv2 takes it from a pool of the PHVs that ended packets released, last released
        first (bm_sim/phv_source.cpp), and resets only metadata and validity (`PHV::reset`, `reset_metadata`): the
        fields of a header the packet does not carry keep what the packet before left in them, and a program that
        reads them (P4 leaves the value unspecified) sees that. So here: a packet ending (transmitted or dropped)
        releases its PHV, the next packet (received, resubmitted, recirculated, cloned at ingress) takes the last
        one released. With one packet in the switch at a time that is BMv2's reuse exactly; with several, BMv2's
        threads decide the order. Deliberate difference: a multicast replica or an egress clone starts as a copy of
        its original (BMv2 copies only the valid headers into a pooled PHV)."""
        pool = self._phvs
        if not pool:
            return L.template[:]
        F = pool.pop()
        F[:L.m1] = L.head
        for s in L.reuse_reset:
            F[s] = 0
        return F

    def _release(self, F: list) -> None:
        """The packet of PHV `F` has ended: its PHV goes back to the pool (see `_phv`)."""
        if len(self._phvs) < self.phv_pool:
            self._phvs.append(F)

    def _fresh(self, L: _Loaded, F: list, field_list: int, instance_type: int) -> list:
        """A new packet whose metadata is reset except the fields of `field_list` (copied from F)."""
        G = self._phv(L)
        for s in L.field_lists.get(field_list, ()):
            G[s] = F[s]
        G[L.s_instance_type] = instance_type
        G[P_ID] = F[P_ID]
        return G

    def _reenter(self, L: _Loaded, F: list, field_list: int, instance_type: int, frame: bytes, depth: int) -> None:
        """Resubmit (the packet as it entered ingress) or recirculate (the deparsed packet): a fresh packet keeping
        the fields of `field_list` goes back to ingress through the high-priority queue, within the loop bound."""
        what = "resubmit" if instance_type == RESUBMIT else "recirculate"
        if depth + 1 > self.max_loop:
            self._loop_drop(F, what)
            return
        G = self._fresh(L, F, field_list, instance_type)
        n = len(frame)
        G[P_PAYLOAD] = frame
        G[P_LEN] = G[P_INLEN] = n
        G[L.s_packet_length] = n
        if L.ts_ingress is not None:
            G[L.ts_ingress] = self.now_us()
        self._stats["resubmitted" if instance_type == RESUBMIT else "recirculated"] += 1
        if self._trace is not None:
            self._trace(F[P_ID], "Resubmitting packet" if instance_type == RESUBMIT else "Recirculating packet")
        self._hi.append((G, depth + 1))

    def _copy_id(self, F: list, G: list) -> None:
        """Trace id of a copy (clone, replica): "<packet>.<n>", n counting the copies of that packet."""
        if self._trace is not None:
            base = F[P_ID].split(".")[0]
            n = self._copies.get(base, 0) + 1
            if len(self._copies) > 4096:  # only recent packets can still be copied; keep the map small
                self._copies.clear()
            self._copies[base] = n
            G[P_ID] = f"{base}.{n}"

    def _ingress(self, L: _Loaded, F: list, depth: int) -> None:
        T = self._trace
        data = F[P_PAYLOAD]
        err = L.parse(F, data)
        if L.s_parser_error is not None:
            F[L.s_parser_error] = err
        if err != L.noerror:
            self._stats["parser_errors"] += 1
            if T is not None:
                T(F[P_ID], f"Parser error {L.prog.error_names.get(err, err)}")
        if L.has_verify and not L.verify(F) and L.s_checksum_error is not None:
            F[L.s_checksum_error] = 1
        L.ingress(F)
        F[P_EXIT] = 0
        self._ingress_tail(L, F, depth, data)

    def _ingress_tail(self, L: _Loaded, F: list, depth: int, data: bytes) -> None:
        """After the ingress pipeline: clone, resubmit, multicast, drop or enqueue (`data`: the packet as it
        entered)."""
        T = self._trace
        in_len = F[P_INLEN]

        clone = F[P_CLONE]
        if clone:
            F[P_CLONE] = 0
            sess = self.mirror.sessions.get(clone & 0xFFFF)
            if sess is None:
                if T is not None:
                    T(F[P_ID], f"Clone session {clone & 0xFFFF} not configured: no clone")
            else:
                G = self._phv(L)
                G[L.s_ingress_port] = F[L.s_ingress_port]
                L.parse(G, data)
                G[L.m0:L.m1] = L.template[L.m0:L.m1]
                for s in L.field_lists.get(F[P_CLONE_FL], ()):
                    G[s] = F[s]
                G[L.s_instance_type] = INGRESS_CLONE
                G[P_LEN] = in_len
                G[P_INLEN] = in_len
                G[P_ID] = F[P_ID]
                self._copy_id(F, G)
                self._stats["cloned_i2e"] += 1
                if T is not None:
                    T(F[P_ID], f"Cloning packet at ingress to session {clone & 0xFFFF}")
                self._send_clone(L, G, sess, depth)

        lid = F[P_LEARN]
        if lid:  # simple_switch: after the clone, before resubmit; dropped packets send theirs too
            elements = L.prog.learn_lists[lid][1]
            self._stats["digests"] += 1
            if T is not None:
                T(F[P_ID], f"Learning sample for list id {lid}")
            sink = self.digest_sink
            if sink is not None:
                sink(lid, tuple(F[s] for s, _w in elements))

        rs = F[P_RESUBMIT]
        if rs:
            F[P_RESUBMIT] = 0
            self._reenter(L, F, rs, RESUBMIT, data, depth)
            self._release(F)
            return

        mg = L.s_mcast_grp
        if mg is not None and F[mg]:
            F[L.s_instance_type] = REPLICATION
            if T is not None:
                T(F[P_ID], f"Multicast requested for packet (group {F[mg]})")
            self._multicast(L, F, F[mg], depth)
            self._release(F)
            return

        port = F[L.s_egress_spec]
        if port == self.drop_port:
            self._n_dropped_ingress += 1
            if T is not None:
                T(F[P_ID], "Dropping packet at the end of ingress")
            self._release(F)
            return
        F[L.s_instance_type] = NORMAL
        if T is not None:
            T(F[P_ID], f"Egress port is {port}")
        self._enqueue(L, port, F, depth)

    def _send_clone(self, L: _Loaded, G: list, sess: Any, depth: int) -> None:
        if sess.truncate:
            G[P_TRUNC] = sess.truncate
        if sess.mgid is not None:
            self._multicast(L, G, sess.mgid, depth)
        if sess.egress_port is not None:
            self._enqueue(L, sess.egress_port, G, depth)

    def _multicast(self, L: _Loaded, F: list, mgid: int, depth: int) -> None:
        reps = self.pre.groups.get(mgid)
        rid = L.s_egress_rid
        if not reps:
            self._stats["multicast_group_empty"] += 1
            if self._trace is not None:
                self._trace(F[P_ID], f"Multicast group {mgid} has no replicas")
            return
        traced = self._trace is not None
        for port, r in reps:
            G = F[:]
            if rid is not None:
                G[rid] = r
            if traced:
                self._copy_id(F, G)
                self._trace(G[P_ID], f"Replicating packet on port {port} (rid {r})")
            self._enqueue(L, port, G, depth)
        self._n_replicated += len(reps)

    def _enqueue(self, L: _Loaded, port: int, F: list, depth: int) -> None:
        if L.s_priority is not None and F[L.s_priority] >= self.priority_queues:
            # simple_switch: "Priority out of range, dropping packet" (priority selects one of the port's queues)
            self._stats["dropped"] += 1
            self._stats["dropped_priority"] += 1
            if self._trace is not None:
                self._trace(F[P_ID], f"Priority {F[L.s_priority]} out of range, dropping packet")
            self._release(F)
            return
        q = self._queues.get(port)
        if q is None:
            q = self._queues[port] = collections.deque()
        while len(q) >= self.queue_capacity:
            # a full queue: do the egress work that makes room now. simple_switch 1.15 drops the packet instead
            # (simple_switch.h: egress queues are non-blocking), when its egress thread falls behind its ingress
            # thread; here egress runs between batches in the same thread, so a queue fills only with a batch
            # larger than it, and a drop would be an artefact of the batch size, not of the switch's speed
            self._n_queue_full_waits += 1
            self._order.remove(port)
            G, d = q.popleft()
            self._run_egress(L, port, G, len(q), d)
        if L.ts_enq is not None:
            F[L.ts_enq] = ((self.clock_ns() - self._start_ns) // 1000) & 0xFFFFFFFF
        if L.s_enq_qdepth is not None:
            F[L.s_enq_qdepth] = len(q)
        q.append((F, depth))
        self._order.append(port)

    def _egress(self, L: _Loaded, port: int, F: list, qdepth: int, depth: int) -> None:
        T = self._trace
        if L.egress_clock:
            now = (self.clock_ns() - self._start_ns) // 1000
            if L.ts_egress is not None:
                F[L.ts_egress] = now
            if L.deq_td is not None:
                F[L.deq_td] = (now - F[L.ts_enq]) & 0xFFFFFFFF
        if L.s_deq_qdepth is not None:
            F[L.s_deq_qdepth] = qdepth
        F[L.s_egress_port] = port
        F[L.s_egress_spec] = (self.drop_port + 1) & 0x1FF
        F[L.s_packet_length] = F[P_LEN] & 0xFFFFFFFF
        if T is not None:
            T(F[P_ID], "Pipeline 'egress': processing packet on port " + str(port))
        if T is not None or not L.egress_empty:
            L.egress(F)
            F[P_EXIT] = 0
        self._egress_tail(L, port, F, depth)

    def _egress_tail(self, L: _Loaded, port: int, F: list, depth: int) -> None:
        """After the egress pipeline: clone, drop, deparse, recirculate or transmit."""
        T = self._trace
        clone = F[P_CLONE]
        if clone:
            F[P_CLONE] = 0
            sess = self.mirror.sessions.get(clone & 0xFFFF)
            if sess is None:
                if T is not None:
                    T(F[P_ID], f"Clone session {clone & 0xFFFF} not configured: no clone")
            else:
                G = F[:]
                G[L.m0:L.m1] = L.template[L.m0:L.m1]
                for s in L.field_lists.get(F[P_CLONE_FL], ()):
                    G[s] = F[s]
                G[L.s_instance_type] = EGRESS_CLONE
                G[P_RECIRC] = G[P_RESUBMIT] = G[P_TRUNC] = 0
                self._copy_id(F, G)
                self._stats["cloned_e2e"] += 1
                if T is not None:
                    T(F[P_ID], f"Cloning packet at egress to session {clone & 0xFFFF}")
                self._send_clone(L, G, sess, depth)

        if F[L.s_egress_spec] == self.drop_port:
            self._n_dropped_egress += 1
            if T is not None:
                T(F[P_ID], "Dropping packet at the end of egress")
            self._release(F)
            return
        frame = L.deparse(F)
        trunc = F[P_TRUNC]
        if trunc and trunc < len(frame):
            frame = frame[:trunc]

        rc = F[P_RECIRC]
        if rc:
            self._reenter(L, F, rc, RECIRC, frame, depth)
            self._release(F)
            return
        self._n_transmitted += 1
        if T is not None:
            T(F[P_ID], f"Transmitting packet of size {len(frame)} out of port {port}")
        self._out.append((port, frame))
        self._release(F)

    def _loop_drop(self, F: list, what: str) -> None:
        """BMv2 bounds neither resubmission nor recirculation; past `max_loop` passes a packet is taken for an
        endless loop (which would hold the packet thread for ever) and dropped, counted and logged."""
        self._stats["dropped"] += 1
        self._stats["dropped_loop_limit"] += 1
        msg = f"Dropping packet: more than {self.max_loop} resubmit/recirculate passes ({what}): an endless loop?"
        self.last_error = msg
        log.warning(msg)
        if self._trace is not None:
            self._trace(F[P_ID], msg)
