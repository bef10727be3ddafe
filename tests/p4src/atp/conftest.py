"""Fixtures for packet-level tests of p4src/atp.p4 (and esa.p4 and release.p4, atp.p4 with ESA's allocation and a
release timeout) on the in-process switch.

`atp` is a fresh `AtpSwitch` (N = 16 elements, 64 aggregators) with the engine loaded. `AtpSwitch` installs a job the
way the controller does (names from p4src/README.md), builds ATP frames with its own struct packing (independent of
the worker's codec) and reads registers and counters. Switch ports: workers on 1..8, the PS on port 9, an uplink on
port 10. Tests cannot import conftest (--import-mode=importlib), so helpers are attributes of AtpSwitch.

The entries are written here, not by controller/, on purpose: these tests hold the program to its documented contract
as an oracle independent of the controller. Everything else installs jobs through controller/.
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import pytest

from tests.paths import ROOT

P4SRC = ROOT / "p4src"

ATP_PORT = 48865
HEADER = struct.Struct("!IIBBBBIHHBBH")
ACK, ECN, RESEND, COLLISION, OVERFLOW, RAW, FLOAT = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40
SWITCH_MAC, SWITCH_IP = "00:00:0a:00:00:fe", "10.0.0.254"
PS_PORT, UPLINK = 9, 10
NO_JOB = 256
IG, EG = "AtpIngress.", "AtpEgress."
INT32_MAX, INT32_MIN = 2**31 - 1, -(2**31)


@dataclass(frozen=True)
class Host:
    """A worker or PS as the controller knows it: rank, switch port, addresses."""

    rank: int
    port: int
    mac: str
    ip: str
    udp_port: int


def make_host(rank: int, port: int | None = None) -> Host:
    port = rank + 1 if port is None else port
    return Host(rank, port, f"00:00:00:00:00:{port:02x}", f"10.0.0.{port}", 40000 + port)


PS = make_host(0, PS_PORT)


def _mac(text: str) -> int:
    return int(text.replace(":", ""), 16)


def _ip(text: str) -> int:
    return int.from_bytes(bytes(int(p) for p in text.split(".")), "big")


def sat_sums(*vectors: Sequence[int]) -> list[int]:
    """Element-wise sum, added left to right with int32 saturation (the switch's |+|)."""
    out = list(vectors[0])
    for v in vectors[1:]:
        out = [max(INT32_MIN, min(INT32_MAX, a + b)) for a, b in zip(out, v, strict=True)]
    return out


@functools.cache
def _compiled(num_elems: int, num_agtr: int, program: str = "atp") -> dict[str, Any]:
    import compiler

    return compiler.compile_file(str(P4SRC / f"{program}.p4"), defines={
        "ATP_NUM_ELEMS": str(num_elems), "ATP_NUM_AGTR": str(num_agtr)}).json


@dataclass(frozen=True)
class Atp:
    """A decoded ATP packet."""

    bitmap0: int
    bitmap1: int
    fan_in0: int
    fan_in1: int
    flags: int
    job_id: int
    seq: int
    agtr: int
    agtr_next: int
    rank: int
    values: list[int]


class AtpSwitch:
    """The engine loaded with atp.p4, plus job setup, frame builders and state readers."""

    host = staticmethod(make_host)
    sat_sums = staticmethod(sat_sums)
    PS = PS
    ACK, ECN, RESEND, COLLISION, OVERFLOW, RAW, FLOAT = ACK, ECN, RESEND, COLLISION, OVERFLOW, RAW, FLOAT
    INT32_MAX, INT32_MIN, NO_JOB, UPLINK = INT32_MAX, INT32_MIN, NO_JOB, UPLINK

    def __init__(self, num_elems: int = 16, num_agtr: int = 64, ps_port: int = PS_PORT, program: str = "atp") -> None:
        from switch.v1model import V1Switch

        self.sw = V1Switch()
        self.now_ns = 0
        """The switch's clock (ns; its timestamps count from 0): tests move it."""
        self.sw.set_clock(lambda: self.now_ns)
        self.sw.load(_compiled(num_elems, num_agtr, program))
        self.esa = program in ("esa", "release")
        self.release = program == "release"
        self.num_elems = num_elems
        self.num_agtr = num_agtr
        self.l2(PS.mac, ps_port)

    # --- control plane -------------------------------------------------------------------------------------

    def l2(self, mac: str, port: int) -> None:
        self.sw.tables[IG + "l2_forward"].insert((_mac(mac),), IG + "l2_set_port", [port])

    def add_job(self, job_id: int, workers: Sequence[Host], mgid: int, *, level: int = 0, rack: int = 0,
                ack_port: int = PS_PORT, replicas: Sequence[tuple[int, int]] | None = None, priority: int = 0,
                ps: Host | None = None, timeout_us: int = 0) -> None:
        """This switch's role for the job, its workers (level 0), where ACKs come from, and the multicast group;
        esa.p4: the job's priority and its PS (`ps`, default the PS on port 9) as esa_servers names it; release.p4:
        its timeout too."""
        params = [level, mgid, rack] + ([priority] if self.esa else []) + ([timeout_us] if self.release else [])
        self.sw.tables[IG + "atp_jobs"].insert((job_id,), IG + "atp_set_job", params)
        if self.esa:
            server = ps or PS
            self.sw.tables[IG + "esa_servers"].insert((job_id,), IG + "esa_set_server",
                                                      [_mac(server.mac), _ip(server.ip)])
        self.sw.tables[IG + "atp_ack_ports"].insert((job_id, ack_port), IG + "atp_allow_ack", [])
        for w in workers:
            self.l2(w.mac, w.port)
            if level == 0:
                self.sw.tables[IG + "atp_workers"].insert((w.port, _ip(w.ip), w.udp_port, job_id),
                                                          IG + "atp_set_worker", [w.rank])
                self.sw.tables[EG + "atp_destinations"].insert(
                    (job_id, w.rank), EG + "atp_set_destination",
                    [_mac(SWITCH_MAC), _ip(SWITCH_IP), _mac(w.mac), _ip(w.ip), w.udp_port])
        self.sw.pre.set_group(mgid, list(replicas) if replicas is not None else [(w.port, w.rank) for w in workers])

    def set_ecn_threshold(self, threshold: int) -> None:
        self.sw.tables[EG + "atp_ecn"].set_default(EG + "atp_set_ecn_threshold", [threshold])

    # --- frames --------------------------------------------------------------------------------------------

    def atp_bytes(self, job_id: int, seq: int, agtr: int, values: Sequence[int], *, bitmap0: int = 0,
                  bitmap1: int = 0, fan_in0: int = 0, fan_in1: int = 0, flags: int = 0, agtr_next: int = 0,
                  rank: int = 0) -> bytes:
        assert len(values) == self.num_elems
        return (HEADER.pack(bitmap0, bitmap1, fan_in0, fan_in1, flags, job_id, seq, agtr, agtr_next, rank, 0, 0)
                + struct.pack(f"!{self.num_elems}i", *values))

    def frame(self, src: Host, dst_mac: str, dst_ip: str, payload: bytes, udp_len: int | None = None) -> bytes:
        from scapy.layers.inet import IP, UDP
        from scapy.layers.l2 import Ether

        udp = UDP(sport=src.udp_port, dport=ATP_PORT)
        if udp_len is not None:
            udp.len = udp_len
        return bytes(Ether(src=src.mac, dst=dst_mac) / IP(src=src.ip, dst=dst_ip, flags="DF") / udp / payload)

    def data(self, w: Host, job_id: int, seq: int, agtr: int, values: Sequence[int], *, fan_in0: int,
             fan_in1: int = 0, flags: int = 0, bitmap0: int | None = None, ps: Host = PS) -> bytes:
        """A worker's packet to its PS (bitmap0 defaults to the worker's own bit, as the worker sends it)."""
        payload = self.atp_bytes(job_id, seq, agtr, values, bitmap0=1 << w.rank if bitmap0 is None else bitmap0,
                                 fan_in0=fan_in0, fan_in1=fan_in1, flags=flags, rank=w.rank)
        return self.frame(w, ps.mac, ps.ip, payload)

    def ack(self, job_id: int, seq: int, agtr: int, values: Sequence[int], *, bitmap0: int, agtr_next: int | None = None,
            flags: int = 0) -> bytes:
        """The PS's parameter packet to the switch's service address."""
        payload = self.atp_bytes(job_id, seq, agtr, values, bitmap0=bitmap0, flags=ACK | flags,
                                 agtr_next=agtr if agtr_next is None else agtr_next)
        return self.frame(PS, SWITCH_MAC, SWITCH_IP, payload)

    def send(self, port: int | Host, frame: bytes) -> list[tuple[int, bytes]]:
        """Frames the switch emits for `frame` arriving on a port, sorted by port."""
        p = port.port if isinstance(port, Host) else port
        return sorted(self.sw.process(p, frame))

    @staticmethod
    def parse(frame: bytes) -> tuple[Any, Atp]:
        """(scapy Ether, decoded ATP packet) of an emitted frame."""
        from scapy.layers.inet import UDP
        from scapy.layers.l2 import Ether

        pkt = Ether(frame)
        raw = bytes(pkt[UDP].payload)
        f = HEADER.unpack(raw[: HEADER.size])
        n = (len(raw) - HEADER.size) // 4
        values = list(struct.unpack(f"!{n}i", raw[HEADER.size:]))
        return pkt, Atp(*f[:10], values=values)

    # --- state ---------------------------------------------------------------------------------------------

    def reg(self, name: str, index: int) -> int:
        return self.sw.registers[IG + "atp_" + name].read(index)

    def owner(self, agtr: int) -> tuple[int, int]:
        """(job, seq) owning the aggregator; (0, 0) when free."""
        v = self.reg("owner", agtr)
        return v >> 32, v & 0xFFFFFFFF

    def values(self, agtr: int) -> list[int]:
        reg = self.sw.registers[IG + "atp_values"]
        return [(reg.read(agtr * self.num_elems + i) + 2**31) % 2**32 - 2**31 for i in range(self.num_elems)]

    def counts(self, job: int) -> dict[str, int]:
        """Every ATP counter at index `job`, by bare name."""
        return {full.split(".", 1)[1]: c.read(job)[0] for full, c in self.sw.counters.items()
                if full.startswith((IG + "atp_", EG + "atp_"))}

    def assert_ingress_invariant(self, job: int) -> None:
        c = self.counts(job)
        assert c["atp_received"] == sum(c[k] for k in (
            "atp_aggregated", "atp_duplicates", "atp_collisions", "atp_resend_to_ps", "atp_raw_to_ps", "atp_acks",
            "atp_transit", "atp_drop_unknown", "atp_drop_malformed")), c


@pytest.fixture
def atp() -> AtpSwitch:
    """A fresh switch running atp.p4 with N = 16 elements and 64 aggregators, the PS reachable on port 9."""
    return AtpSwitch(16, 64)


@pytest.fixture
def atp_factory() -> Callable[..., AtpSwitch]:
    return AtpSwitch


@pytest.fixture
def esa() -> AtpSwitch:
    """A fresh switch running esa.p4 with N = 16 elements and 64 aggregators, the PS reachable on port 9."""
    return AtpSwitch(16, 64, program="esa")


@pytest.fixture
def release() -> AtpSwitch:
    """A fresh switch running release.p4 with N = 16 elements and 64 aggregators, the PS reachable on port 9; its
    clock stands still until a test moves `now_ns`."""
    return AtpSwitch(16, 64, program="release")
