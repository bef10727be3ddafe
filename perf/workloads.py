"""The benchmark's programs: compiled once (p4c-bm2-ss when on PATH, else `python -m compiler`) and installed over
P4Runtime, identically for every switch; the frames a sender offers and how the receiver recognises the results.

- basic_forward (tests/p4/basic_forward.p4): IPv4 LPM forwarding, two /32 routes; h1 → h2.
- agg64 (tests/p4/agg64.p4): 64 int32 elements added into registers per packet, the sums reflected to the sender.
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


def _forward_frames(h1: Host, h2: Host) -> list[bytes]:
    return [udp_frame(SWITCH_MAC, h1.mac, h1.ip, h2.ip, 10000 + i, 4321, bytes(64)) for i in range(16)]


def _forward_p4rt(client: P4RuntimeClient, h1: Host, h2: Host) -> None:
    client.insert(*[lpm_route(h.ip, 32, h.mac, h.port) for h in (h1, h2)])


def forward_engine_setup(sw: Any, h1: Host, h2: Host) -> None:
    """basic_forward's two /32 routes, inserted into an engine's table directly."""
    table = sw.tables[LPM_TABLE]
    for h in (h1, h2):
        table.insert(((ip_int(h.ip), 32),), FORWARD_ACTION, [mac_int(h.mac), h.port])


def _agg_frames(h1: Host, h2: Host) -> list[bytes]:
    """DATA packets of slots 0..15, encoded by the codec of agg64's own INA header (its compiled fixture)."""
    codec = Codec.from_program_json(FIXTURES / "agg64.json")
    return [udp_frame(SWITCH_MAC, h1.mac, h1.ip, h2.ip, 20000 + i, INA_UDP_PORT,
                      codec.encode(InaHeader(pool_index=i, packet_id=i, exponent=EXPONENT_BIAS),
                                   [(i * 64 + k) % 1000 - 500 for k in range(INA_ELEMS)])) for i in range(16)]


def _nothing(*_: Any) -> None:
    """No table entries: the program needs none."""


BASIC_FORWARD = PacketProgram("basic_forward", "basic_forward (IPv4 LPM)", REPO / "tests" / "p4" / "basic_forward.p4",
                              _forward_frames, 36, (4321).to_bytes(2, "big"), 1, _forward_p4rt, forward_engine_setup)
AGG64 = PacketProgram("agg64", "agg64 (64 × int32 into registers)", REPO / "tests" / "p4" / "agg64.p4", _agg_frames,
                      42, b"\x02", 0, _nothing, _nothing)
PACKET_PROGRAMS = {p.key: p for p in (BASIC_FORWARD, AGG64)}


def placeholder_hosts() -> tuple[Host, Host]:
    """h1 and h2's addresses without namespaces (for in-process runs)."""
    return tuple(Host("-", "-", "-", *tutorial_address(i), i) for i in (1, 2))  # type: ignore[return-value]
