"""Fuzzing with hypothesis: frames into every program of p4src/, P4Runtime requests into the server, malformed P4
source into the compiler and malformed BMv2 JSON into the switch (part of `make soak`).

    python -m experiments.fuzz [--examples 2000] [--seed 1] [--program-dir out]

- **Frames**: each in-network protocol's program (a plug-in's too) is loaded into the engine with two jobs installed
  as its controller installs them, job 2 holding switch state (a partial aggregate: the first packet of job 2's rank
  0, made by the protocol's own rank; job 2 has the top priority and no release timeout, so no policy may take it). Random bytes, and protocol frames with random header fields (the layout from
  the compiled program, values biased to the protocol's `fuzz_values`), lengths, truncations and spoofed senders
  (job 2's id from job 1's ports, job 2's address on another port, unknown hosts) go in on every port. Checked after
  every frame: no exception inside the engine (its `errors` count stays 0) and job 2's state unchanged (every cell of
  the protocol's state registers for the slot its packet named, and with a static partition for all of job 2's slots); after all
  frames: the engine received every frame, and the controller's counter invariant holds (received = the sum of its
  outcomes, for jobs 1 and 2 and "no job").
- **P4Runtime**: random Write batches (valid and invalid ids, wrong byte widths, out-of-range indices, every update
  type, batches up to 40 updates and one of 5000), writes from a backup controller, and streams that hang up
  before or right after their arbitration answer,
  against a server running switchml.p4. Every answer must be OK or one of PI's error codes, and the server must
  still serve a valid Read and Write afterwards.
- **P4 source**: p4src programs with random tokens deleted, duplicated or swapped, and cut short: the compiler must
  either compile or raise CompileError whose message starts with `file:line:col: error:` (never another exception).
- **BMv2 JSON**: compiled programs with random keys dropped, values replaced by other types, lists cut: the switch
  must load them or raise LoadError.
A failure names the input that failed (hypothesis's falsifying example, not shrunk, so a campaign stays bounded in
time) and the seed that reproduces it.
"""

from __future__ import annotations

import copy
import json
import re
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import grpc
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from worker.arguments import Parser, at_least
from worker.protocols import DEFAULT_PROTOCOL, PROTOCOLS, program_paths, programs

__all__ = ["FuzzReport", "fuzz_frames", "fuzz_p4runtime", "fuzz_p4_source", "fuzz_bmv2_json", "fuzz_all", "main"]

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = programs()

NO_JOB = 256
POOL = 8
"""Slots (aggregators) of each of the two jobs."""

PI_CODES = {grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND, grpc.StatusCode.ALREADY_EXISTS,
            grpc.StatusCode.OUT_OF_RANGE, grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNIMPLEMENTED,
            grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNKNOWN}
"""Codes a PI-based server answers bad writes with (UNKNOWN: a batch whose updates failed, details per update)."""


@dataclass
class FuzzReport:
    """Totals of a fuzzing campaign."""

    frames: int = 0
    requests: int = 0
    programs: int = 0
    sources: int = 0
    jsons: int = 0
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def text(self) -> str:
        lines = [f"fuzzed: {self.frames} frames into {self.programs} programs, {self.requests} P4Runtime requests, "
                 f"{self.sources} P4 sources, {self.jsons} BMv2 JSON programs ({self.seconds:.1f} s)",
                 f"fuzz failures: {len(self.failures)}"]
        lines += [f"  FAILED {f}" for f in self.failures[:10]]
        return "\n".join(lines)


def _run(test: Callable[..., None], examples: int, seed_value: int, *strategies: Any) -> str | None:
    """Run a hypothesis property `examples` times from `seed_value`; None, or the failure with its example."""
    # no shrinking: a failure is reported at once with the input that failed (bounded time), and replays by seed
    wrapped = seed(seed_value)(settings(max_examples=examples, database=None, deadline=None, derandomize=False,
                                        suppress_health_check=list(HealthCheck), print_blob=False,
                                        phases=(Phase.explicit, Phase.generate))(
        given(*strategies)(test)))
    try:
        wrapped()
    except Exception as e:  # noqa: BLE001 - a failing property is the finding
        notes = "\n".join(getattr(e, "__notes__", []))
        return f"{type(e).__name__}: {e}\n{notes}".strip()
    return None


# ------------------------------------------------------------------------------------------------ frames


class _Target:
    """A program in the engine with jobs 1 and 2 installed and job 2 holding state."""

    def __init__(self, name: str, program: dict[str, Any], p4info: Any) -> None:
        import numpy as np

        from controller.programs import controller_for
        from topo.inprocess import InProcessNetwork, frame, make_jobs
        from worker.job import PoolRange
        from worker.protocols import protocol_of_program

        self.name = name
        spec, self.header, n = protocol_of_program(program)
        self.spec = spec
        self.jobs = make_jobs(2, 3, n, [PoolRange(0, POOL), PoolRange(POOL, POOL)], ps=spec.needs_ps)
        # the protected job is one no allocation policy may take memory from: the top priority (ESA), no release
        # timeout (release.p4); what the policies take from a job by design is tested where they are
        self.jobs[1] = replace(self.jobs[1], priority=255, release_us=0)
        self.net = net = InProcessNetwork(program, self.jobs, p4info=p4info, protocol=spec, seed=1)
        self.sw = net.sw
        self.ctl = controller_for(name)
        model = spec.faults
        assert model is not None, f"{spec.name} has no fault model: nothing says which registers hold its state"
        sets = model.state[0][1] if model.state else 1  # cells of a slot in its per-slot registers (SwitchML: 2 sets)
        per_slot = [(reg, cells) for reg, cells in model.state] + [(reg, sets * n) for reg in model.cells_per_slot_elems]
        prime = net.ranks[2, 0]
        core = prime.begin(np.full(n, 7, dtype=np.int32), "int32")
        payload = prime.encode(core.start(0.0)[0])
        w = self.jobs[1].workers[0]
        mac, ip, port = prime.destination()
        self.sw.process(w.switch_port, frame(w.mac, mac, w.ip, ip, w.udp_port, port, payload))
        # job 2's state: every state register's cells of the slot its packet names (whatever the values written),
        # and with a static partition every cell of its slots
        field, mask = model.slot_field
        slot = self.header.unpack(payload)[[f.name for f in self.header.fields].index(field)] & mask
        slots = range(self.jobs[1].pool.base, self.jobs[1].pool.base + self.jobs[1].pool.size) \
            if not spec.shared_pool else range(slot, slot + 1)
        self.state: dict[str, list[int]] = {reg: [c for k in slots for c in range(k * per, (k + 1) * per)]
                                            for reg, per in per_slot}
        self.snapshot = self._state()
        if not any(any(v) for v in self.snapshot.values()):
            raise AssertionError(f"{name}: priming job 2 left no state to protect")
        self.udp_port, self.dst = int(spec.udp_port or 0), net.ranks[1, 0].destination()[:2]
        self.header_len = self.header.byte_len
        self.num_elems = n
        self.payload_len = self.header_len + 4 * n
        self.ports = sorted({w.switch_port for j in self.jobs for w in j.workers} | {100, 7})
        self.fed = 0
        self.job2 = {(w.switch_port, w.ip, w.udp_port) for w in self.jobs[1].workers}

    def _state(self) -> dict[str, list[int]]:
        return {name: [self.sw.registers[name].values[i] for i in cells] for name, cells in self.state.items()}

    def feed(self, port: int, data: bytes) -> None:
        self.sw.process(port, data)
        self.fed += 1
        errors = self.sw.stats.get("errors", 0)
        if errors:
            raise AssertionError(f"{self.name}: the engine raised inside the pipeline: {self.sw.last_error}")
        if self._state() != self.snapshot:
            raise AssertionError(f"{self.name}: job 2's switch state changed by a frame on port {port} that is not "
                                 f"job 2's: {data.hex()}")

    def check_counters(self) -> None:
        st_ = self.sw.stats
        if st_["received"] != self.fed + 1:  # + the priming frame
            raise AssertionError(f"{self.name}: engine received {st_['received']} frames, {self.fed + 1} were fed")
        ig = self.ctl.INGRESS
        for idx in (1, 2, NO_JOB):
            got = self.sw.counters[f"{ig}.{self.ctl.RECEIVED}"].packets[idx]
            parts = {o: self.sw.counters[f"{ig}.{o}"].packets[idx] for o in self.ctl.OUTCOMES}
            if got != sum(parts.values()):
                raise AssertionError(f"{self.name}: job index {idx}: received {got} != {parts}")

    def headers(self) -> Any:
        """A strategy of header field values (declaration order): each field drawn from the protocol's
        `fuzz_values`, small numbers or its whole range; job_id from the two jobs, 0, an unknown one and 255."""
        fields = []
        for f in self.header.fields:
            top = (1 << f.width) - 1
            if f.name == "job_id":
                fields.append(st.sampled_from([1, 1, 2, 2, 0, 3, min(255, top)]))
                continue
            choices = [st.integers(0, min(8, top)), st.integers(0, top)]
            values = [v for v in self.spec.fuzz_values.get(f.name, ()) if 0 <= v <= top]
            if values:
                choices.insert(0, st.sampled_from(values))
            fields.append(st.one_of(*choices))
        return st.tuples(*fields)


def fuzz_frames(name: str, program: dict[str, Any], p4info: Any, examples: int,
                seed_value: int) -> tuple[int, str | None]:
    """(frames fed, failure or None) for one program."""
    from topo.inprocess import frame

    t = _Target(name, program, p4info)
    j1, j2 = t.jobs
    senders = ([(w.switch_port, w.mac, w.ip, w.udp_port) for w in j1.workers]
               + [(j1.workers[0].switch_port, w.mac, w.ip, w.udp_port) for w in j2.workers]  # job 2's address, job 1's port
               + [(7, "00:00:00:00:99:01", "10.9.9.1", 50000), (100, "00:00:00:00:99:02", "10.0.2.1", 50000)])
    senders = [s for s in senders if (s[0], s[2], s[3]) not in t.job2]

    def raw(port: int, data: bytes) -> None:
        t.feed(port, data)

    def structured(sender: tuple[int, str, str, int], hdr: tuple[int, ...], values: list[int], extra: int,
                   udp_len: int | None, cut: int | None) -> None:
        port, mac, ip, sport = sender
        payload = t.header.pack(hdr) + b"".join(v.to_bytes(4, "big", signed=True) for v in values)
        payload = payload[:len(payload) + extra] if extra < 0 else payload + bytes(extra)
        data = frame(mac, t.dst[0], ip, t.dst[1], sport, t.udp_port, payload)
        if udp_len is not None:
            data = data[:38] + udp_len.to_bytes(2, "big") + data[40:]
        if cut is not None:
            data = data[:cut]
        t.feed(port, data)

    headers = t.headers()
    count = examples // 2
    fail = _run(raw, count, seed_value, st.sampled_from(t.ports), st.binary(min_size=0, max_size=300))
    if fail is None:
        n = t.num_elems
        fail = _run(structured, examples - count, seed_value + 1, st.sampled_from(senders), headers,
                    st.lists(st.integers(-2**31, 2**31 - 1), min_size=n, max_size=n),
                    st.sampled_from([0, 0, 0, -4, -1, 4, -t.payload_len]),
                    st.one_of(st.none(), st.none(), st.integers(0, 0xFFFF)),
                    st.one_of(st.none(), st.none(), st.integers(0, 400)))
    if fail is None:
        try:
            t.check_counters()
        except AssertionError as e:
            fail = str(e)
    return t.fed, fail


# ------------------------------------------------------------------------------------------------ P4Runtime


def fuzz_p4runtime(program_dir: Path, examples: int, seed_value: int) -> tuple[int, str | None]:
    """(requests sent, failure or None) against a P4Runtime server running switchml.p4."""
    from finsy.proto import p4r, p4r_grpc

    from controller.client import P4RuntimeClient
    from switch.runtime.server import P4RuntimeServer
    from switch.v1model import V1Switch

    sw = V1Switch(seed=1)
    server = P4RuntimeServer(sw)
    port = server.start("127.0.0.1:0")
    addr = f"127.0.0.1:{port}"
    sent = 0
    primary = P4RuntimeClient(addr, election_id=10).connect()
    backup = None
    try:
        json_path, p4info_path = program_paths(program_dir, str(PROTOCOLS[DEFAULT_PROTOCOL].program))
        primary.set_pipeline(p4info_path, json_path)
        p4info = _p4info(p4info_path)
        tables = [(t.preamble.id, [(m.id, m.bitwidth) for m in t.match_fields], [a.id for a in t.action_refs])
                  for t in p4info.tables]
        actions = {a.preamble.id: [(p.id, p.bitwidth) for p in a.params] for a in p4info.actions}
        counters = [(c.preamble.id, c.size) for c in p4info.counters]
        registers = [(r.preamble.id, r.size) for r in p4info.registers]
        stub = p4r_grpc.P4RuntimeStub(grpc.insecure_channel(addr))

        def value(bits: int, wrong: bool, data: int) -> bytes:
            n = (bits + 7) // 8
            if wrong:
                n = max(0, n + (data % 5) - 2)
            return (data % (1 << (8 * n))).to_bytes(n, "big") if n else b""

        table_ids = st.sampled_from([t[0] for t in tables] + [0, 0x02000001, 0x01000000 | 5])

        @st.composite
        def entity(draw: Any) -> Any:
            kind = draw(st.sampled_from(["table", "table", "counter", "register", "mcast", "clone"]))
            if kind == "table":
                tid = draw(table_ids)
                meta = next((t for t in tables if t[0] == tid), (tid, [(1, 9)], [1]))
                e = p4r.TableEntry(table_id=tid, priority=draw(st.integers(0, 3)))
                for fid, bits in meta[1]:
                    if draw(st.booleans()) or not draw(st.booleans()):
                        m = e.match.add(field_id=draw(st.sampled_from([fid, fid + 100])))
                        m.exact.value = value(bits, draw(st.booleans()), draw(st.integers(0, 2**64)))
                if draw(st.booleans()):
                    e.is_default_action = True
                aid = draw(st.sampled_from(meta[2] + [0, 0x01000000 | 99]))
                if aid:
                    e.action.action.action_id = aid
                    for pid, bits in actions.get(aid, [(1, 8)]):
                        e.action.action.params.add(param_id=draw(st.sampled_from([pid, pid + 7])),
                                                   value=value(bits, draw(st.booleans()), draw(st.integers(0, 2**40))))
                return p4r.Entity(table_entry=e)
            if kind == "counter":
                cid, size = draw(st.sampled_from(counters + [(0x12000099, 1)]))
                c = p4r.CounterEntry(counter_id=cid)
                c.index.index = draw(st.sampled_from([0, size - 1, size, size + 1000, -1 % (1 << 63)]))
                c.data.packet_count = draw(st.integers(0, 2**63 - 1))
                return p4r.Entity(counter_entry=c)
            if kind == "register":
                rid, size = draw(st.sampled_from(registers + [(0x13000099, 1)]))
                r = p4r.RegisterEntry(register_id=rid)
                r.index.index = draw(st.sampled_from([0, size - 1, size, 2**40]))
                r.data.bitstring = value(32, draw(st.booleans()), draw(st.integers(0, 2**64)))
                return p4r.Entity(register_entry=r)
            if kind == "mcast":
                g = p4r.MulticastGroupEntry(multicast_group_id=draw(st.integers(0, 70000)))
                for _ in range(draw(st.integers(0, 4))):
                    g.replicas.add(egress_port=draw(st.integers(0, 600)), instance=draw(st.integers(0, 70000)))
                ent = p4r.Entity()
                ent.packet_replication_engine_entry.multicast_group_entry.CopyFrom(g)
                return ent
            s = p4r.CloneSessionEntry(session_id=draw(st.integers(0, 70000)))
            ent = p4r.Entity()
            ent.packet_replication_engine_entry.clone_session_entry.CopyFrom(s)
            return ent

        def write(updates: list[tuple[int, Any]], election: int, device: int) -> None:
            nonlocal sent
            req = p4r.WriteRequest(device_id=device)
            req.election_id.low = election
            for kind, ent in updates:
                req.updates.add(type=kind, entity=ent)
            sent += 1
            try:
                stub.Write(req, timeout=10)
            except grpc.RpcError as err:
                if err.code() not in PI_CODES:
                    raise AssertionError(f"Write answered {err.code()}: {err.details()}") from None

        fail = _run(write, examples, seed_value,
                    st.lists(st.tuples(st.sampled_from([0, 1, 2, 3, 4]), entity()), min_size=0, max_size=40),
                    st.sampled_from([10, 10, 10, 5, 0, 11]), st.sampled_from([0, 0, 0, 1]))
        if fail is None:  # a backup controller and streams that hang up right after arbitration
            backup = P4RuntimeClient(addr, election_id=5).connect(require_primary=False)
            for k in range(20):  # half hang up before the arbitration answer, half right after it
                ch = grpc.insecure_channel(addr)
                req = p4r.StreamMessageRequest()
                req.arbitration.device_id = 0
                req.arbitration.election_id.low = 20 + k
                responses = p4r_grpc.P4RuntimeStub(ch).StreamChannel(iter([req]))
                if k % 2:
                    try:
                        next(responses)
                    except (grpc.RpcError, StopIteration):
                        pass
                else:
                    responses.cancel()
                ch.close()
                sent += 1
            # one oversized batch: 5000 inserts of the same multicast group id range
            big = p4r.WriteRequest(device_id=0)
            big.election_id.low = 10
            for gid in range(5000):
                big.updates.add(type=p4r.Update.INSERT).entity.packet_replication_engine_entry \
                    .multicast_group_entry.multicast_group_id = 10000 + gid % 3000
            sent += 1
            try:
                stub.Write(big, timeout=30)
            except grpc.RpcError as err:
                if err.code() not in PI_CODES:
                    raise AssertionError(f"an oversized batch was answered {err.code()}: {err.details()}") from None
            # the server still serves: a new primary reads a table and writes a valid entry
            primary.close()
            primary = P4RuntimeClient(addr, election_id=100).connect()
            req = p4r.ReadRequest(device_id=0)
            req.entities.add(table_entry=p4r.TableEntry(table_id=tables[0][0]))
            list(stub.Read(req, timeout=10))
            for kind in (p4r.Update.DELETE, p4r.Update.INSERT):  # a fuzzed request may have made group 4242
                group = p4r.WriteRequest(device_id=0)
                group.election_id.low = 100
                ent = group.updates.add(type=kind).entity
                ent.packet_replication_engine_entry.multicast_group_entry.multicast_group_id = 4242
                try:
                    stub.Write(group, timeout=10)
                except grpc.RpcError as err:
                    if kind == p4r.Update.INSERT or err.code() != grpc.StatusCode.UNKNOWN:
                        raise
            sent += 3
    except Exception as e:  # noqa: BLE001
        fail = f"{type(e).__name__}: {e}"
    finally:
        for c in (primary, backup):
            if c is not None:
                c.close()
        server.stop(0)
    return sent, fail


def _p4info(path: Path) -> Any:
    from finsy.proto import p4i
    from google.protobuf import text_format

    return text_format.Parse(path.read_text(), p4i.P4Info())


# ------------------------------------------------------------------------------------------------ P4 and JSON

_TOKEN = re.compile(r"\w+|[^\w\s]")
_LOC = re.compile(r"^[^\n]*:\d+:\d+: (error|unsupported)", re.M)


SOURCE_DIRS = (ROOT / "p4src", ROOT / "tests" / "compiler" / "p4", ROOT / "tests" / "p4")
"""The P4 programs the source fuzzing mutates: the repository's own."""


def fuzz_p4_source(examples: int, seed_value: int, extra_dirs: Sequence[Path] = ()) -> tuple[int, str | None]:
    """(sources compiled, failure or None): mutated programs (p4src's, the compiler's and switch's test programs, and
    those of `extra_dirs`, e.g. p4c's testdata/p4_16_samples) must compile or fail with file:line:col, never with
    another exception."""
    from compiler import compile_source
    from compiler.diagnostics import CompileError

    paths = [p for d in (*SOURCE_DIRS, *extra_dirs) for p in sorted(Path(d).glob("*.p4"))]
    sources = {str(p): p.read_text(errors="replace") for p in paths}
    done = 0

    def compile_mutant(name: str, ops: list[tuple[int, int, int]], cut: float) -> None:
        nonlocal done
        text = sources[name]
        spans = [m.span() for m in _TOKEN.finditer(text)]
        for kind, a, b in ops:
            i, j = spans[a % len(spans)], spans[b % len(spans)]
            if kind == 0:  # delete a token
                text = text[:i[0]] + " " + text[i[1]:]
            elif kind == 1:  # duplicate a token
                text = text[:i[1]] + " " + text[i[0]:i[1]] + text[i[1]:]
            else:  # put another token in its place
                text = text[:i[0]] + sources[name][j[0]:j[1]] + text[i[1]:]
            spans = [m.span() for m in _TOKEN.finditer(text)]
        text = text[:max(1, int(len(text) * cut))]
        done += 1
        try:
            compile_source(text, name=name, include_dirs=[str(Path(name).parent), str(ROOT / "p4src")])
        except CompileError as e:
            if not _LOC.search(str(e)):
                raise AssertionError(f"{name}: a compile error without file:line:col: {str(e)[:300]}") from None
        except Exception as e:  # noqa: BLE001 - what the fuzz looks for: name the program and the mutation
            raise AssertionError(f"{name} mutated {ops} cut {cut}: {type(e).__name__}: {e}") from e

    fail = _run(compile_mutant, examples, seed_value, st.sampled_from(sorted(sources)),
                st.lists(st.tuples(st.integers(0, 2), st.integers(0, 10**6), st.integers(0, 10**6)), min_size=1,
                         max_size=4), st.sampled_from([1.0, 1.0, 1.0, 0.5, 0.9, 0.99]))
    return done, fail


def fuzz_bmv2_json(programs: dict[str, dict[str, Any]], examples: int, seed_value: int) -> tuple[int, str | None]:
    """(programs loaded, failure or None): mutated BMv2 JSON must load or raise LoadError."""
    from switch.errors import LoadError
    from switch.v1model import V1Switch

    done = 0
    sw = V1Switch(seed=1)

    def paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
        out = [prefix]
        if isinstance(obj, dict):
            for k, v in obj.items():
                out += paths(v, prefix + (k,))
        elif isinstance(obj, list):
            for i, v in enumerate(obj[:6]):
                out += paths(v, prefix + (i,))
        return out

    all_paths = {name: paths(p)[1:] for name, p in programs.items()}

    def load_mutant(name: str, edits: list[tuple[int, int, Any]]) -> None:
        nonlocal done
        j = copy.deepcopy(programs[name])
        for pick, kind, replacement in edits:
            path = all_paths[name][pick % len(all_paths[name])]
            parent = j
            try:
                for k in path[:-1]:
                    parent = parent[k]
                last = path[-1]
                if kind == 0 and isinstance(parent, dict):
                    parent.pop(last, None)
                elif kind == 1:
                    parent[last] = replacement
                elif kind == 2 and isinstance(parent[last], list):
                    parent[last] = parent[last][: len(parent[last]) // 2]
            except (KeyError, IndexError, TypeError):
                continue
        done += 1
        try:
            sw.load(j)
        except LoadError:
            pass

    fail = _run(load_mutant, examples, seed_value, st.sampled_from(sorted(programs)),
                st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 2),
                                   st.sampled_from([None, 0, -1, 2**70, "x", "", [], {}, [1], {"a": 1}, True, 1.5])),
                         min_size=1, max_size=3))
    return done, fail


# ------------------------------------------------------------------------------------------------ driver


def fuzz_all(program_dir: Path, examples: int, seed_value: int = 1, requests: int | None = None,
             sources: int | None = None, jsons: int | None = None, source_dirs: Sequence[Path] = ()) -> FuzzReport:
    """Every campaign: `examples` frames per program; P4Runtime requests, P4 sources and BMv2 JSON programs as given,
    else in proportion (examples / 4, / 20, / 10: a volume run sets them apart, JSON loads being ~100x slower);
    `source_dirs`: more P4 programs for the source fuzzing."""
    requests = max(10, examples // 4) if requests is None else requests
    sources = max(10, examples // 20) if sources is None else sources
    jsons = max(10, examples // 10) if jsons is None else jsons
    report = FuzzReport()
    started = time.monotonic()
    programs = {n: json.loads((program_dir / f"{n}.json").read_text()) for n in PROGRAMS}
    campaigns: list[tuple[str, Callable[[], tuple[int, str | None]], str]] = [
        *((f"frames into {n}.p4", lambda n=n: fuzz_frames(n, programs[n], program_dir / f"{n}.p4info.txt", examples,
                                                          seed_value), "frames")
          for n in PROGRAMS),
        ("P4Runtime requests", lambda: fuzz_p4runtime(program_dir, requests, seed_value), "requests"),
        ("P4 sources", lambda: fuzz_p4_source(sources, seed_value, source_dirs), "sources"),
        ("BMv2 JSON programs", lambda: fuzz_bmv2_json(programs, jsons, seed_value), "jsons"),
    ]
    for what, run, total in campaigns:
        try:
            n, fail = run()
        except Exception as e:  # noqa: BLE001 - the harness itself failing is a failure too
            n, fail = 0, f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=3)}"
        setattr(report, total, getattr(report, total) + n)
        if fail is not None:
            report.failures.append(f"{what} (seed {seed_value}): {fail}")
    report.programs = len(PROGRAMS)
    report.seconds = time.monotonic() - started
    return report


def main(argv: Sequence[str] | None = None) -> int:
    p = Parser(prog="python -m experiments.fuzz", description=__doc__.split("\n\n")[0])
    p.add_argument("--examples", type=at_least(1), default=2000, help="frames per program (other campaigns scale with it)")
    p.add_argument("--requests", type=at_least(1), default=None, help="P4Runtime requests (default: examples / 4)")
    p.add_argument("--sources", type=at_least(1), default=None, help="P4 sources (default: examples / 20)")
    p.add_argument("--jsons", type=at_least(1), default=None, help="BMv2 JSON programs (default: examples / 10)")
    p.add_argument("--seed", type=at_least(0), default=1)
    p.add_argument("--program-dir", type=Path, default=ROOT / "out")
    p.add_argument("--p4-sources", type=Path, action="append", default=[], metavar="DIR",
                   help="also mutate the .p4 programs of DIR (repeatable; e.g. p4c's testdata/p4_16_samples)")
    args = p.parse_args(argv)
    report = fuzz_all(args.program_dir, args.examples, args.seed, args.requests, args.sources, args.jsons,
                      args.p4_sources)
    print(report.text())
    return 0 if not report.failures else 1


if __name__ == "__main__":
    sys.exit(main())
