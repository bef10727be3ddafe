"""The benchmark's programs: compiled once (p4c-bm2-ss when on PATH, else `python -m compiler`) and installed over
P4Runtime, identically for every switch; the frames a sender offers and how the receiver recognises the results.

- basic_forward (tests/p4/basic_forward.p4): IPv4 LPM forwarding, two /32 routes; h1 → h2.
- agg64 (tests/p4/agg64.p4): 64 int32 elements added into registers per packet, the sums reflected to the sender.
- the family (perf.family, generated): the same aggregation written in other styles (`agg_*`, every 4th frame
  restarting its slot), and an L2/L3/ACL forwarding pipeline (`l2l3_acl`, h1 → h2).
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import finsy

from controller.client import P4RuntimeClient
from topo.frames import ip_int, mac_int, udp_frame
from topo.netns import FIXTURES, REPO, Host, tutorial_address
from worker.switchml.header import EXPONENT_BIAS, INA_UDP_PORT, Codec, InaHeader

SWITCH_MAC = "02:00:00:00:00:fe"
"""Destination MAC of the frames the senders offer (the routers' own address; nothing checks it)."""
LPM_TABLE = "MyIngress.ipv4_lpm"
FORWARD_ACTION = "MyIngress.ipv4_forward"
INA_ELEMS = 64


def compiler_command() -> list[str]:
    """p4c-bm2-ss when it is on PATH, else the embedded compiler (the same flags)."""
    return ["p4c-bm2-ss"] if shutil.which("p4c-bm2-ss") else [sys.executable, "-m", "compiler"]


def compiler_argv(name: str) -> list[str]:
    """The command of compiler `name`: ours (`python -m compiler`) or p4c (`p4c-bm2-ss`)."""
    return {"ours": [sys.executable, "-m", "compiler"], "p4c": ["p4c-bm2-ss"]}[name]


def available_compilers(wanted: tuple[str, ...] = ("ours", "p4c")) -> list[str]:
    """The wanted compilers that can run here: ours always, p4c when p4c-bm2-ss is on PATH."""
    return [c for c in wanted if c != "p4c" or shutil.which("p4c-bm2-ss")]


@dataclasses.dataclass(frozen=True)
class Compiled:
    """A compiled program: BMv2 JSON and P4Info text."""

    json: Path
    p4info: Path


def compile_program(source: Path, out_dir: Path, *, include: Path | None = None, timeout: float = 300.0,
                    command: list[str] | None = None) -> Compiled:
    """Compile `source` into out_dir/<stem>.json and .p4info.txt with `command` (default: `compiler_command()`);
    RuntimeError with the compiler's message."""
    out_dir.mkdir(parents=True, exist_ok=True)
    out = Compiled(out_dir / f"{source.stem}.json", out_dir / f"{source.stem}.p4info.txt")
    argv = [*(command or compiler_command()), *(["-I", str(include)] if include else []), "-o", str(out.json),
            "--p4runtime-files", str(out.p4info), str(source)]
    r = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0 or not out.json.exists():
        raise RuntimeError(f"{' '.join(argv)} failed ({r.returncode}): {(r.stderr or r.stdout).strip()[-2000:]}")
    return out


def lpm_route(prefix: str, plen: int, mac: str, port: int) -> finsy.P4TableEntry:
    """basic_forward's route: `prefix/plen` → rewrite the destination MAC to `mac`, send out of `port`."""
    return finsy.P4TableEntry(LPM_TABLE, match=finsy.P4TableMatch({"hdr.ipv4.dstAddr": (ip_int(prefix), plen)}),
                              action=finsy.P4TableAction(FORWARD_ACTION, dstAddr=mac_int(mac), port=port))


@dataclasses.dataclass(frozen=True)
class PacketProgram:
    """A program measured in frames/s: what h1 sends, where the results come out and how they are recognised."""

    key: str
    title: str
    source: Path
    """The P4 source (for a generated program: where `text` is written, under the bench's work directory)."""
    frames: Callable[[Host, Host], list[bytes]]
    """The frames h1 sends (in turn)."""
    match_offset: int
    match: bytes
    """The receiver counts frames with `match` at `match_offset`."""
    reply_to: int
    """Where the results come out: 0 = h1 (switch port 1), 1 = h2 (port 2)."""
    p4rt_setup: Callable[[P4RuntimeClient, Host, Host], None]
    """Table entries over P4Runtime (after the pipeline)."""
    engine_setup: Callable[[Any, Host, Host], None]
    """The same entries on an in-process engine (switch.v1model.V1Switch)."""
    text: Callable[[], str] | None = None
    """A generated program's source (perf.family); None for a file in the repository."""

    def source_in(self, work_dir: Path) -> Path:
        """The source to compile: the repository's file, or the generated text written to work_dir/<key>.p4."""
        if self.text is None:
            return self.source
        work_dir.mkdir(parents=True, exist_ok=True)
        path = work_dir / f"{self.key}.p4"
        path.write_text(self.text())
        return path


def _forward_frames(h1: Host, h2: Host) -> list[bytes]:
    return [udp_frame(SWITCH_MAC, h1.mac, h1.ip, h2.ip, 10000 + i, 4321, bytes(64)) for i in range(16)]


def _forward_p4rt(client: P4RuntimeClient, h1: Host, h2: Host) -> None:
    client.insert(*[lpm_route(h.ip, 32, h.mac, h.port) for h in (h1, h2)])


def forward_engine_setup(sw: Any, h1: Host, h2: Host) -> None:
    """basic_forward's two /32 routes, inserted into an engine's table directly."""
    table = sw.tables[LPM_TABLE]
    for h in (h1, h2):
        table.insert(((ip_int(h.ip), 32),), FORWARD_ACTION, [mac_int(h.mac), h.port])


def agg_frame(h1: Host, h2: Host, slot: int, elements: list[int], first: bool = False, sport: int = 20000) -> bytes:
    """One DATA packet of agg64's INA header (its compiled fixture's codec) for `slot`; `first` sets flags bit 0
    (the family's programs restart the slot)."""
    codec = Codec.from_program_json(FIXTURES / "agg64.json")
    return udp_frame(SWITCH_MAC, h1.mac, h1.ip, h2.ip, sport, INA_UDP_PORT,
                     codec.encode(InaHeader(pool_index=slot, packet_id=slot, exponent=EXPONENT_BIAS,
                                            flags=int(first)), elements))


def _agg_frames(h1: Host, h2: Host) -> list[bytes]:
    """DATA packets of slots 0..15."""
    return [agg_frame(h1, h2, i, [(i * 64 + k) % 1000 - 500 for k in range(INA_ELEMS)], sport=20000 + i)
            for i in range(16)]


def _family_agg_frames(h1: Host, h2: Host) -> list[bytes]:
    """agg64's frames, every 4th one starting its slot over."""
    return [agg_frame(h1, h2, i, [(i * 64 + k) % 1000 - 500 for k in range(INA_ELEMS)], i % 4 == 0, 20000 + i)
            for i in range(16)]


def _nothing(*_: Any) -> None:
    """No table entries: the program needs none."""


BASIC_FORWARD = PacketProgram("basic_forward", "basic_forward (IPv4 LPM)", REPO / "tests" / "p4" / "basic_forward.p4",
                              _forward_frames, 36, (4321).to_bytes(2, "big"), 1, _forward_p4rt, forward_engine_setup)
AGG64 = PacketProgram("agg64", "agg64 (64 × int32 into registers)", REPO / "tests" / "p4" / "agg64.p4", _agg_frames,
                      42, b"\x02", 0, _nothing, _nothing)
PACKET_PROGRAMS = {p.key: p for p in (BASIC_FORWARD, AGG64)}


def l2l3_entries(h1: Host, h2: Host) -> list[tuple[str, dict[str, Any], str, dict[str, int], int]]:
    """l2l3_acl's entries as (table, {key field: value}, action, {param: value}, priority): both ports in VLAN 10,
    a /32 route and a next hop per host, an ACL entry denying UDP port 23, the egress source MACs."""
    out: list[tuple[str, dict[str, Any], str, dict[str, int], int]] = []
    for n, h in enumerate((h1, h2), start=1):
        out += [("MyIngress.port_vlan", {"standard_metadata.ingress_port": h.port}, "MyIngress.set_vlan",
                 {"vlan": 10}, 0),
                ("MyIngress.ipv4_lpm", {"meta.vlan": 10, "hdr.ipv4.dstAddr": (ip_int(h.ip), 32)},
                 "MyIngress.set_nhop", {"nhop": n}, 0),
                ("MyIngress.nexthop", {"meta.nhop": n}, "MyIngress.set_port", {"dmac": mac_int(h.mac), "port": h.port},
                 0),
                ("MyEgress.smac", {"standard_metadata.egress_port": h.port}, "MyEgress.set_smac",
                 {"smac": mac_int(SWITCH_MAC)}, 0)]
    out.append(("MyIngress.acl", {"hdr.udp.dstPort": (23, 0xFFFF)}, "MyIngress.deny", {}, 10))
    return out


def _l2l3_p4rt(client: P4RuntimeClient, h1: Host, h2: Host) -> None:
    client.insert(*[finsy.P4TableEntry(t, match=finsy.P4TableMatch(m), action=finsy.P4TableAction(a, **d),
                                       priority=prio)
                    for t, m, a, d, prio in l2l3_entries(h1, h2)])


def l2l3_engine_setup(sw: Any, h1: Host, h2: Host) -> None:
    """l2l3_acl's entries inserted into an engine's tables directly (key fields in the table's order)."""
    for t, m, a, d, prio in l2l3_entries(h1, h2):
        table = sw.tables[t]
        full = {k.name: m.get(k.name, (0, 0) if k.match_type == "ternary" else None) for k in table.key}
        table.insert(tuple(full.values()), a, list(d.values()), prio)


def _family() -> dict[str, PacketProgram]:
    from perf import family

    out = {}
    for key, text in family.SOURCES.items():
        if key.startswith("agg_"):
            out[key] = PacketProgram(key, family.TITLES[key], Path(f"{key}.p4"), _family_agg_frames, 42, b"\x02", 0,
                                     _nothing, _nothing, text)
        else:
            out[key] = PacketProgram(key, family.TITLES[key], Path(f"{key}.p4"), _forward_frames, 36,
                                     (4321).to_bytes(2, "big"), 1, _l2l3_p4rt, l2l3_engine_setup, text)
    return out


FAMILY = _family()
"""The generated programs (perf.family), by key."""
PACKET_PROGRAMS.update(FAMILY)


def placeholder_hosts() -> tuple[Host, Host]:
    """h1 and h2's addresses without namespaces (for in-process runs)."""
    return tuple(Host("-", "-", "-", *tutorial_address(i), i) for i in (1, 2))  # type: ignore[return-value]
