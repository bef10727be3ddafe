"""Differential testing of switches (`make difftest`): the same program, entries and frames on two switches, every
output compared.

    python -m perf.difftest PROGRAM.p4 [--runtime s1-runtime.json] [--packets 300] [--seed 1] [--ports 4]
                            [--against bmv2|p4c|self] [--json A.json] [--other-json B.json]
    python -m perf.difftest --tutorials P4LANG_TUTORIALS_CHECKOUT     # their solutions, each with s1-runtime.json
    python -m perf.difftest --p4c-samples P4C_CHECKOUT [--samples-all] # p4c's v1model samples, their STF packets first

The program is compiled once with the toolchain in use (`p4c-bm2-ss` when on PATH, else `python -m compiler`), loaded
into both switches over P4Runtime with the same entries (a P4 tutorials `sN-runtime.json`: table entries, default
actions, multicast groups), and the same frames go through both, one at a time; for each frame the outputs (port and
bytes, as a multiset: replicas may leave in any order) must be equal. The reference side:

- `bmv2` (the default where `simple_switch_grpc` is on PATH): real simple_switch_grpc on veth pairs in a namespace of
  its own, against the embedded switch's engine with the same JSON;
- `p4c` (the default where only `p4c-bm2-ss` is): the embedded engine with p4c's JSON against the embedded engine with
  our compiler's JSON (one switch, two compilers);
- `process`: the embedded switch process (`python -m switch`) on the veth pairs against its own engine in this
  process: the port layer, batching and P4Runtime path against the bare pipeline;
- `self`: the embedded engine against itself (`--other-json` loads another JSON into the second one: a planted
  difference must be found).

Frames are structured-random (`frames`): a walk of the program's parser from its start state, each extracted header
drawn at random, a select's key fields set to one of its cases (or left to the default), fields of table keys drawn
from the values the entries use, then 0-32 random payload bytes; some frames are cut short. A program of p4c's
samples (`--p4c-samples`) first gets the frames of its STF test (`packet` lines), the ones p4c's own BMv2 test sends;
its STF's table entries are not installed (few samples have any). Its switch ports are 0..N-1, where the other
programs' are 1..N: a v1model program that never sets `egress_spec` sends to port 0, as most samples do.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import secrets
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Protocol, Sequence

import finsy

from controller.client import ControllerError
from controller.local import LocalClient
from perf.workloads import Compiled, compile_program
from switch.errors import LoadError
from perf.harness import SwitchUnderTest
from perf.switchbench import running_switch
from topo.frames import ip_int, mac_int
from perf.traffic import NsProcess
from topo.netns import Host, quiet_link, sh

__all__ = ["Report", "Runtime", "frames", "load_runtime", "run_difftest", "main"]

Output = list[tuple[int, bytes]]
MIN_FRAME = 14
"""Shortest frame a veth carries (an Ethernet header; AF_PACKET refuses shorter ones)."""


# --- entries --------------------------------------------------------------------------------------------------
@dataclass
class Runtime:
    """Entries to install: P4Runtime entities as (kind, finsy entity), and the key values the entries name, by field
    (`hdr.ipv4.dstAddr` -> values), for the frame generator."""

    updates: list[tuple[str, Any]] = field(default_factory=list)
    key_values: dict[str, list[Any]] = field(default_factory=dict)


def load_runtime(path: Path | None) -> Runtime:
    """A P4 tutorials runtime file (`table_entries`, `multicast_group_entries`); an empty Runtime for None."""
    rt = Runtime()
    if path is None:
        return rt
    data = json.loads(Path(path).read_text())
    for e in data.get("table_entries", []):
        action = finsy.P4TableAction(e["action_name"], **e.get("action_params", {}))
        if e.get("default_action"):
            rt.updates.append(("MODIFY", finsy.P4TableEntry(e["table"], action=action, is_default_action=True)))
            continue
        # lpm [value, plen] and ternary [value, mask] are pairs; an exact key may be written as a 1-element list
        match = {k: (tuple(v) if len(v) > 1 else v[0]) if isinstance(v, list) else v
                 for k, v in e.get("match", {}).items()}
        rt.updates.append(("INSERT", finsy.P4TableEntry(e["table"], match=finsy.P4TableMatch(match), action=action,
                                                        priority=int(e.get("priority", 0)))))
        for k, v in match.items():
            rt.key_values.setdefault(k, []).append(v[0] if isinstance(v, tuple) else v)
    for g in data.get("multicast_group_entries", []):
        replicas = [(r["egress_port"], r.get("instance", 0)) for r in g.get("replicas", [])]
        rt.updates.append(("INSERT", finsy.P4MulticastGroupEntry(g["multicast_group_id"], replicas=replicas)))
    return rt


def _int(value: Any) -> int | None:
    """A key value of a runtime file as an integer (ints, "10.0.1.1", "08:00:00:00:01:11", "0x..."), else None."""
    if isinstance(value, int):
        return value
    if not isinstance(value, str):
        return None
    try:
        return ip_int(value) if value.count(".") == 3 else mac_int(value) if value.count(":") == 5 else int(value, 0)
    except (ValueError, OSError):  # inet_aton refuses a malformed address with OSError
        return None


# --- frames ---------------------------------------------------------------------------------------------------
def frames(program: dict, rng: random.Random, count: int, key_values: dict[str, list[Any]] | None = None
           ) -> list[bytes]:
    """`count` structured-random frames for `program`'s parser (module docstring)."""
    types = {t["name"]: t for t in program.get("header_types", [])}
    headers = {h["name"]: types[h["header_type"]] for h in program.get("headers", []) if not h.get("metadata")}
    stacks = {s["name"]: [program["headers"][i]["name"] for i in s["header_ids"]]
              for s in program.get("header_stacks", [])}
    parser = next((p for p in program.get("parsers", []) if p.get("name") == "parser"), None)
    if parser is None:
        return [rng.randbytes(rng.randrange(14, 80)) for _ in range(count)]
    states = {s["name"]: s for s in parser.get("parse_states", [])}
    known: dict[tuple[str, str], list[int]] = {}
    for name, values in (key_values or {}).items():
        hdr_field = name.split(".")[-2:]
        ints = [v for v in (_int(x) for x in values) if v is not None]
        if len(hdr_field) == 2 and ints:
            known[(hdr_field[0], hdr_field[1])] = ints
    for pipe in program.get("pipelines", []):  # the program's own (const) entries name key values too
        for t in pipe.get("tables", []):
            targets = [k.get("target") for k in t.get("key", [])]
            for e in t.get("entries", []):
                for tgt, mk in zip(targets, e.get("match_key", [])):
                    if isinstance(tgt, list) and len(tgt) == 2 and isinstance(mk.get("key"), str):
                        with contextlib.suppress(ValueError):
                            known.setdefault((tgt[0], tgt[1]), []).append(int(mk["key"], 16))
    widths = {(h, f[0]): f[1] for h, t in headers.items() for f in t["fields"] if f[1] != "*"}
    return [_one_frame(states, parser.get("init_state"), headers, stacks, known, widths, rng) for _ in range(count)]


def _field_value(hname: str, fname: str, width: int, known: dict[tuple[str, str], list[int]],
                 rng: random.Random) -> int:
    base = hname.split("[")[0]
    pool = known.get((base, fname))
    r = rng.random()
    if pool and r < 0.6:
        return rng.choice(pool) & ((1 << width) - 1)
    if r < 0.75:
        return rng.choice([0, (1 << width) - 1, 1])
    return rng.getrandbits(width)


def _one_frame(states: dict[str, dict], start: str | None, headers: dict[str, dict], stacks: dict[str, list[str]],
               known: dict[tuple[str, str], list[int]], widths: dict[tuple[str, str], int],
               rng: random.Random) -> bytes:
    values: dict[str, dict[str, int]] = {}   # header instance -> field -> value
    order: list[str] = []
    bits = 0                                 # extracted so far
    ahead: list[tuple[int, int, int]] = []   # (bit position, width, value) a lookahead select asked for
    peeks: dict[tuple[str, str], tuple[int, int]] = {}  # metadata set from lookahead bits -> (position, width)
    stack_next: dict[str, int] = {}
    state = start
    for _ in range(32):  # parser loops (stacks) end within this many states
        if state is None or state not in states:
            break
        st = states[state]
        for op in st.get("parser_ops", []):
            if op.get("op") == "set":
                _note_lookahead(op["parameters"], bits, peeks)
                continue
            if op.get("op") != "extract":
                continue
            p = op["parameters"][0]
            if p["type"] == "regular":
                name = p["value"]
            elif p["type"] == "stack":
                i = stack_next.get(p["value"], 0)
                names = stacks.get(p["value"], [])
                if i >= len(names):
                    continue
                name, stack_next[p["value"]] = names[i], i + 1
            else:
                continue
            ht = headers.get(name)
            if ht is None or any(f[1] == "*" for f in ht["fields"]):
                continue  # varbit headers: left to the random payload
            values[name] = {f[0]: _field_value(name, f[0], f[1], known, rng) for f in ht["fields"]}
            order.append(name)
            bits += sum(f[1] for f in ht["fields"])
        state = _next_state(st, values, widths, rng, bits, ahead, peeks)
    out = bytearray()
    for name in order:
        out += _pack(headers[name], values[name])
    out += rng.randbytes(rng.randrange(0, 33))
    for pos, w, v in ahead:  # bits a lookahead select looked at, set in the bytes that follow
        end = (pos + w + 7) // 8
        if len(out) < end:
            out += rng.randbytes(end - len(out))
        n = int.from_bytes(out, "big")
        total = len(out) * 8
        shift = total - pos - w
        n = (n & ~(((1 << w) - 1) << shift)) | (v << shift)
        out = bytearray(n.to_bytes(len(out), "big"))
    if rng.random() < 0.05 and len(out) > MIN_FRAME:
        out = out[:rng.randrange(MIN_FRAME, len(out))]  # cut short: parser errors
    if len(out) < MIN_FRAME:
        out += rng.randbytes(MIN_FRAME - len(out))
    return bytes(out)


def _note_lookahead(params: list[dict], bits: int, peeks: dict[tuple[str, str], tuple[int, int]]) -> None:
    """A parser `set` of metadata from lookahead bits (or a slice of them, `(t >> s) & mask`): where they are."""
    dst, src = params
    if dst.get("type") != "field":
        return
    target = (dst["value"][0], dst["value"][1])
    if src.get("type") == "lookahead":
        peeks[target] = (bits + int(src["value"][0]), int(src["value"][1]))
        return
    e = src.get("value", {})
    e = e.get("value", e) if isinstance(e, dict) else {}
    try:
        inner = e["left"]["value"]
        if e["op"] == "&" and inner["op"] == ">>" and inner["left"]["type"] == "field":
            base = peeks.get((inner["left"]["value"][0], inner["left"]["value"][1]))
            shift, mask = int(inner["right"]["value"], 16), int(e["right"]["value"], 16)
            width = mask.bit_length()
            if base is not None and mask == (1 << width) - 1:
                peeks[target] = (base[0] + base[1] - shift - width, width)
    except (KeyError, TypeError, ValueError):
        pass


def _next_state(st: dict, values: dict[str, dict[str, int]], widths: dict[tuple[str, str], int],
                rng: random.Random, bits: int = 0, ahead: list[tuple[int, int, int]] | None = None,
                peeks: dict[tuple[str, str], tuple[int, int]] | None = None) -> str | None:
    """Choose a transition and set the key so that it is taken: fields of extracted headers, or bits after the
    `bits` extracted so far (a lookahead key, or metadata `peeks` says came from lookahead), noted in `ahead`; a
    default when the key cannot be set."""
    trans = st.get("transitions", [])
    peeks = peeks or {}
    key = [{"type": "lookahead", "value": [p[0] - bits, p[1]]}
           if k.get("type") == "field" and (k["value"][0], k["value"][1]) in peeks
           and (p := peeks[(k["value"][0], k["value"][1])]) else k for k in st.get("transition_key", [])]
    cases = [t for t in trans if t.get("type") == "hexstr" and t.get("value")]
    default = next((t for t in trans if t.get("type") == "default"), None)
    settable = all((k.get("type") == "field" and k["value"][0] in values)
                   or (k.get("type") == "lookahead" and ahead is not None) for k in key)
    if cases and settable and (default is None or rng.random() < 0.85):
        t = rng.choice(cases)
        want = int(t["value"], 16)
        mask = int(t["mask"], 16) if t.get("mask") else None
        ws = [int(k["value"][1]) if k["type"] == "lookahead" else widths.get((k["value"][0], k["value"][1]), 0)
              for k in key]
        shift = sum(ws)
        for k, w in zip(key, ws):
            shift -= w
            part = (want >> shift) & ((1 << w) - 1)
            if k["type"] == "lookahead":
                if mask is None or (mask >> shift) & ((1 << w) - 1):
                    assert ahead is not None
                    ahead.append((bits + int(k["value"][0]), w, part))
                continue
            if mask is not None:
                m = (mask >> shift) & ((1 << w) - 1)
                part = (values[k["value"][0]][k["value"][1]] & ~m) | (part & m)
            values[k["value"][0]][k["value"][1]] = part
        return t.get("next_state")
    return (default or {}).get("next_state") if default else (trans[0].get("next_state") if trans else None)


def _pack(ht: dict, vals: dict[str, int]) -> bytes:
    acc, bits = 0, 0
    for f in ht["fields"]:
        w = f[1]
        acc = (acc << w) | (vals[f[0]] & ((1 << w) - 1))
        bits += w
    return acc.to_bytes(bits // 8, "big")


# --- switches -------------------------------------------------------------------------------------------------
class Switch(Protocol):
    name: str

    def exchange(self, port: int, frame: bytes) -> Output: ...

    def close(self) -> None: ...


class EngineSwitch:
    """The embedded switch's engine in this process, programmed over P4Runtime (controller.local). With `ports`, what
    it sends to a port outside first..first+ports-1, or shorter than an Ethernet header, is not an output (a switch
    process has no interface there, and no interface sends such a frame: it is lost)."""

    def __init__(self, name: str, compiled: Compiled, runtime: Runtime, ports: int | None = None,
                 first: int = 1) -> None:
        from switch.v1model import V1Switch

        self.name = name
        program = json.loads(compiled.json.read_text())
        self.sw = V1Switch()
        self.sw.load(program)
        self.client = LocalClient(self.sw, compiled.p4info, program)
        self.ports = ports
        self.first = first
        if runtime.updates:
            self.client.write(runtime.updates)

    def exchange(self, port: int, frame: bytes) -> Output:
        out = self.sw.process(port, frame)
        if self.ports is None:
            return out
        # a port has an interface only for first..first+ports-1, and no interface sends a frame shorter than an
        # Ethernet header
        lo = self.first
        return [(p, f) for p, f in out if lo <= p < lo + self.ports and len(f) >= MIN_FRAME]

    def close(self) -> None:
        pass


class VethSwitch:
    """A switch process taking simple_switch_grpc's flags on `ports` veth pairs whose other ends sit in a namespace
    of their own, started and programmed as the switch benchmark does (`perf.switchbench.running_switch`); frames go
    in and come out through an exchange helper in that namespace (perf.traffic exchange-server)."""

    def __init__(self, name: str, command: Sequence[str], compiled: Compiled, runtime: Runtime, ports: int,
                 quiet: float = 0.05, first: int = 1) -> None:
        self.name = name
        self.quiet = quiet
        """Seconds without a frame that end one frame's outputs (longer for programs that loop a packet)."""
        self._stack = contextlib.ExitStack()
        try:
            peers = self._stack.enter_context(_veths(ports, first))
            self.proc, client, _ = self._stack.enter_context(
                running_switch(SwitchUnderTest(name, tuple(command)), peers, compiled, start_timeout=30.0))
            if runtime.updates:
                client.write(runtime.updates)
            self.io = NsProcess(peers[0], "exchange-server",
                                *[a for h in peers for a in ("--port", f"{h.port}@{h.ifname}")], wait_ready=True)
            self._stack.callback(self.io.close)
        except BaseException:
            self._stack.close()
            raise

    def exited(self, grace: float = 0.0) -> str | None:
        """None while the switch process runs (waiting up to `grace` seconds for it to end), else its exit code and
        last output line."""
        try:
            self.proc.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            return None
        tail = self.proc.output_tail().strip().splitlines()
        return f"exit code {self.proc.proc.returncode}" + (f", last output: {tail[-1]}" if tail else "")

    def exchange(self, port: int, frame: bytes) -> Output:
        got = self.io.ask({"port": port, "frame": frame.hex(), "quiet": self.quiet,
                           "limit": max(2.0, 20 * self.quiet)}, timeout=60.0 + 20 * self.quiet)
        return [(p, bytes.fromhex(f)) for p, f in got["out"]]

    def close(self) -> None:
        self._stack.close()


@contextlib.contextmanager
def _veths(count: int, first: int = 1) -> Iterator[list[Host]]:
    """Ports first..first+count-1: veth pairs whose switch ends stay in the root namespace and whose far ends (the
    `Host`s, no addresses) share one fresh namespace."""
    tag = secrets.token_hex(3)
    ns = f"inadt-{tag}"
    made: list[str] = []
    sh("ip", "netns", "add", ns)
    try:
        out = []
        for p in range(first, first + count):
            sw_if, h_if = f"dt{tag}s{p}", f"dt{tag}h{p}"
            sh("ip", "link", "add", sw_if, "type", "veth", "peer", "name", h_if)
            made.append(sw_if)
            sh("ip", "link", "set", h_if, "netns", ns)
            quiet_link(sw_if)
            quiet_link(h_if, ns)
            sh("ip", "link", "set", sw_if, "up")
            sh("ip", "netns", "exec", ns, "ip", "link", "set", h_if, "up")
            out.append(Host(ns, h_if, sw_if, "00:00:00:00:00:00", "0.0.0.0", p))
        yield out
    finally:
        for link in made:
            sh("ip", "link", "del", link, check=False)
        sh("ip", "netns", "del", ns, check=False)


# --- comparing ------------------------------------------------------------------------------------------------
@dataclass
class Report:
    """One program's comparison: frames sent, frames whose outputs were alike, frames the first switch sent out,
    and a line per frame that differed."""

    program: str
    a: str
    b: str
    frames: int = 0
    same: int = 0
    outputs: int = 0
    differences: list[str] = field(default_factory=list)
    stopped: str = ""
    """Why the comparison ended early: the second switch's process exited (simple_switch stops on a failed
    assert(), where the embedded switch drops the packet and goes on)."""

    @property
    def ok(self) -> bool:
        return self.frames > 0 and self.same == self.frames and not self.stopped

    def describe(self, show: int = 5) -> str:
        head = (f"{self.program}: {self.a} vs {self.b}: {self.same} of {self.frames} frames alike "
                f"({self.outputs} frames out)" + (f"; then {self.stopped}" if self.stopped else ""))
        return "\n".join([head] + [f"  {d}" for d in self.differences[:show]]
                         + ([f"  ... {len(self.differences) - show} more"] if len(self.differences) > show else []))


def _describe(out: Output) -> str:
    return "[" + ", ".join(f"{p}:{f.hex()}" for p, f in sorted(out)) + "]"


def run_difftest(a: Switch, b: Switch, inputs: Sequence[tuple[int, bytes]], program: str = "") -> Report:
    """Every input through both switches; a report of the frames whose outputs differ."""
    rep = Report(program, a.name, b.name)
    for i, (port, frame) in enumerate(inputs):
        oa, ob = a.exchange(port, frame), b.exchange(port, frame)
        # a frame the reference let out nothing for, where the other did: did the reference die (on this frame or
        # on one before, which then went out of neither)? simple_switch aborts on a failed assert().
        gone = b.exited(grace=0.5) if oa and not ob and hasattr(b, "exited") else None
        if gone:
            rep.stopped = f"{b.name} stopped by frame {i} ({gone})"
            break
        rep.frames += 1
        rep.outputs += len(oa)
        if Counter(oa) == Counter(ob):
            rep.same += 1
        else:
            rep.differences.append(f"frame {i} in on port {port} ({frame.hex()}): {a.name} {_describe(oa)}, "
                                   f"{b.name} {_describe(ob)}")
    return rep


def _compile(source: Path, work: Path, command: list[str] | None) -> Compiled:
    return compile_program(source, work, include=source.parent, command=command)


def tutorial_programs(root: Path) -> list[tuple[Path, Path | None]]:
    """The solutions of a p4lang/tutorials checkout (exercises/X/solution/*.p4) with their switch s1's entries
    (solution/s1-runtime.json, X/s1-runtime.json or X/*-topo/s1-runtime.json)."""
    out = []
    for prog in sorted(root.glob("exercises/*/solution/*.p4")):
        ex = prog.parent.parent
        rt = next((c for c in [prog.parent / "s1-runtime.json", ex / "s1-runtime.json",
                               *sorted(ex.glob("*-topo/s1-runtime.json"))] if c.is_file()), None)
        out.append((prog, rt))
    return out


SAMPLES_DIR = Path("testdata") / "p4_16_samples"
"""Where a p4lang/p4c checkout keeps its P4_16 test programs (each `X.p4` with its STF test `X.stf` when it has one)."""


def sample_programs(root: Path, with_stf_only: bool = True) -> list[tuple[Path, Path | None, Path | None]]:
    """p4c's v1model samples under a p4lang/p4c checkout (or its testdata/p4_16_samples itself): (program, no
    entries, its STF test or None), only those with an STF test unless `with_stf_only` is False (the ones p4c's own
    suite runs on BMv2)."""
    folder = root / SAMPLES_DIR if (root / SAMPLES_DIR).is_dir() else root
    if not folder.is_dir():
        raise ValueError(f"{root}: no {SAMPLES_DIR} (a p4lang/p4c checkout) and not a folder of samples either")
    out: list[tuple[Path, Path | None, Path | None]] = []
    for prog in sorted(folder.glob("*.p4")):
        try:
            text = prog.read_text(errors="replace")
        except OSError:
            continue
        if "v1model.p4" not in text:
            continue
        stf = prog.with_suffix(".stf")
        if stf.is_file() or not with_stf_only:
            out.append((prog, None, stf if stf.is_file() else None))
    return out


def stf_frames(stf: Path, ports: int, first: int = 0) -> list[tuple[int, bytes]]:
    """The frames an STF test sends (`packet <port> <hex>`), in order, each port folded into first..first+ports-1;
    frames shorter than an Ethernet header are left out (a veth does not carry them), and so are lines that do not
    parse."""
    from switch.stf import commands as stf_commands
    from switch.stf.parser import parse_line

    out = []
    for n, line in enumerate(stf.read_text(errors="replace").splitlines(), start=1):
        try:
            cmd = parse_line(line, n)
        except ValueError:
            continue
        if isinstance(cmd, stf_commands.Packet) and len(cmd.data) >= MIN_FRAME:
            out.append(((cmd.port - first) % ports + first, cmd.data))
    return out


def difftest_program(program: Path, runtime_file: Path | None, against: str, args: argparse.Namespace,
                     stf: Path | None = None) -> Report:
    """One program through both switches (module docstring); RuntimeError, OSError, ValueError or ControllerError
    when it cannot be compiled, loaded or programmed. `stf`: its STF test, whose frames go first."""
    work = (args.work_dir or Path("/tmp/ina-difftest")) / program.stem
    runtime = load_runtime(runtime_file)
    ours = _compile(program, work / "ours", [sys.executable, "-m", "compiler"] if against == "p4c" else None)
    prog = json.loads(ours.json.read_text())
    rng = random.Random(args.seed)
    first = 0 if stf is not None else 1  # a sample's ports are 0..N-1 (module docstring)
    inputs = stf_frames(stf, args.ports, first) if stf is not None else []
    inputs += [(rng.randrange(first, first + args.ports), f)
               for f in frames(prog, rng, args.packets, runtime.key_values)]
    a = EngineSwitch("embedded", ours, runtime, args.ports if against in ("bmv2", "process") else None, first)
    b: Switch
    if against == "bmv2":
        b = VethSwitch("bmv2", ["simple_switch_grpc"], ours, runtime, args.ports, args.quiet, first)
    elif against == "process":
        b = VethSwitch("embedded process", [sys.executable, "-m", "switch"], ours, runtime, args.ports, args.quiet,
                       first)
    elif against == "p4c":
        b = EngineSwitch("embedded+p4c-json", _compile(program, work / "p4c", ["p4c-bm2-ss"]), runtime)
        a.name = "embedded+our-json"
    else:
        other = Compiled(args.other_json, ours.p4info) if args.other_json else ours
        b = EngineSwitch("embedded" + ("+other-json" if args.other_json else " (again)"), other, runtime)
    try:
        return run_difftest(a, b, inputs, program.name)
    finally:
        a.close()
        b.close()


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m perf.difftest", description=__doc__.split("\n\n")[0])
    p.add_argument("programs", type=Path, nargs="*", help="P4 programs (.p4)")
    p.add_argument("--runtime", type=Path, default=None, help="entries: a P4 tutorials sN-runtime.json (one program)")
    p.add_argument("--tutorials", type=Path, default=None, metavar="DIR",
                   help="also every solution of a p4lang/tutorials checkout, with its s1-runtime.json")
    p.add_argument("--p4c-samples", type=Path, default=None, metavar="DIR",
                   help="also p4c's v1model samples (a p4lang/p4c checkout, or its testdata/p4_16_samples) that have "
                        "an STF test, its frames sent first")
    p.add_argument("--samples-all", action="store_true",
                   help="with --p4c-samples: every v1model sample, also those without an STF test")
    p.add_argument("--packets", type=int, default=300)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--ports", type=int, default=4,
                   help="switch ports 1..N, 0..N-1 for p4c's samples (frames enter on any of them)")
    p.add_argument("--against", choices=("bmv2", "p4c", "process", "self"), default=None,
                   help="the reference (default: bmv2 if simple_switch_grpc is on PATH, else p4c if p4c-bm2-ss is)")
    p.add_argument("--other-json", type=Path, default=None, help="self: the second engine's JSON instead")
    p.add_argument("--quiet", type=float, default=0.05, metavar="S",
                   help="bmv2/process: a frame's outputs end after S seconds without one (raise it for programs that "
                        "loop a packet many times; default %(default)s)")
    p.add_argument("--work-dir", type=Path, default=None)
    p.add_argument("--show", type=int, default=5, help="differences printed per program")
    args = p.parse_args(argv)
    against = args.against or ("bmv2" if shutil.which("simple_switch_grpc") else
                               "p4c" if shutil.which("p4c-bm2-ss") else None)
    if against is None:
        print("difftest: neither simple_switch_grpc nor p4c-bm2-ss is on PATH: nothing to compare against "
              "(--against self compares the embedded switch with itself, --against process its process over veths)",
              file=sys.stderr)
        return 2
    todo: list[tuple[Path, Path | None, Path | None]] = [(prog, args.runtime, None) for prog in args.programs]
    if args.tutorials is not None:
        todo += [(prog, rt, None) for prog, rt in tutorial_programs(args.tutorials)]
    if args.p4c_samples is not None:
        try:
            todo += sample_programs(args.p4c_samples, with_stf_only=not args.samples_all)
        except ValueError as err:
            p.error(str(err))
    if not todo:
        p.error("give programs, --tutorials DIR or --p4c-samples DIR")
    alike = differ = failed = stopped = 0
    for prog, rt, stf in todo:
        try:
            report = difftest_program(prog, rt, against, args, stf)
        except (OSError, RuntimeError, ValueError, ControllerError, LoadError) as err:
            failed += 1
            lines = str(err).strip().splitlines() or [""]
            why = next((ln for ln in lines if "error" in ln.lower()), lines[-1]).strip()
            failed_at = why.find(" failed (")  # a compiler's command line, then its first message
            if failed_at >= 0:
                who = "p4c-bm2-ss" if "p4c-bm2-ss" in why[:failed_at] else "our compiler"
                why = f"{who}: {why[why.find(': ', failed_at) + 2:]}"
            print(f"{prog}: not compared: {why[:300]}")
            continue
        print(report.describe(args.show), flush=True)
        alike += report.ok
        stopped += bool(report.stopped) and report.same == report.frames
        differ += not report.ok and not (report.stopped and report.same == report.frames)
    if len(todo) > 1:
        print(f"{len(todo)} programs against {against}: {alike} alike on every frame, {differ} with differences, "
              f"{stopped} alike until the reference exited, {failed} not compared")
    return 1 if differ else 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
