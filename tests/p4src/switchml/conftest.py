"""Fixtures for packet-level tests of p4src/switchml.p4 on the in-process switch.

`switchml_build(num_elems, pool_size)` compiles the program once per parameter set (embedded compiler) and returns
the BMv2 JSON; `ina` is a fresh `InaSwitch` (N = 16 elements, 8 slots) with the engine loaded; `ina_factory` makes one
for another build. `InaSwitch` installs job entries through the engine API the way the controller does (names from
p4src/README.md), builds DATA frames and the expected RESULT bytes, and reads registers and counters. Tests cannot
import conftest (--import-mode=importlib), so constants and small helpers are attributes of InaSwitch
(`ina.worker(rank)`, `ina.sums(a, b)`, `ina.NO_JOB`).

The entries are written here, not by controller/, on purpose: these tests hold the program to its documented contract
(p4src/README.md) as an oracle independent of the controller, including states the controller never makes (a job
without an epoch entry, a worker without a destination). Everything else installs jobs through controller/.
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import pytest

from tests.paths import ROOT

P4SRC = ROOT / "p4src" / "switchml.p4"

INA_PORT = 48864
MSG_DATA = 1
MSG_RESULT = 2
NO_JOB = 256
SWITCH_MAC = "00:00:0a:00:00:fe"
SWITCH_IP = "10.0.0.254"
INA_HEADER = struct.Struct("!BBHIBBH")

IG = "SwitchMLIngress."
EG = "SwitchMLEgress."


@dataclass(frozen=True)
class Worker:
    """A worker as the controller knows it: rank, switch port and addresses."""

    rank: int
    port: int
    mac: str
    ip: str
    udp_port: int


def make_worker(rank: int, port: int | None = None, host: int | None = None) -> Worker:
    """Worker `rank` on switch port `port` (default rank + 1) with addresses derived from `host` (default port)."""
    port = rank + 1 if port is None else port
    host = port if host is None else host
    return Worker(rank, port, f"00:00:00:00:00:{host:02x}", f"10.0.0.{host}", 40000 + host)


def wrap32(x: int) -> int:
    """`x` reduced to a two's complement int32."""
    return (x + 2**31) % 2**32 - 2**31


def sums(*vectors: Sequence[int]) -> list[int]:
    """Element-wise int32 (wrapping) sum of the vectors."""
    return [wrap32(sum(column)) for column in zip(*vectors, strict=True)]


def _mac(text: str) -> int:
    return int(text.replace(":", ""), 16)


def _ip(text: str) -> int:
    return int.from_bytes(bytes(int(part) for part in text.split(".")), "big")


@functools.cache
def _compiled(num_elems: int, pool_size: int) -> dict[str, Any]:
    import compiler

    defines = {"INA_NUM_ELEMS": str(num_elems), "INA_POOL_SIZE": str(pool_size)}
    program = compiler.compile_file(str(P4SRC), defines=defines).json
    assert isinstance(program, dict), f"unexpected CompileResult.json {type(program)!r}"
    return program


def switchml_build(num_elems: int = 16, pool_size: int = 8) -> dict[str, Any]:
    """BMv2 JSON of switchml.p4 for this build (compiled once per process)."""
    return _compiled(num_elems, pool_size)


class InaSwitch:
    """The engine loaded with switchml.p4, plus job setup, packet builders and state readers."""

    INA_PORT = INA_PORT
    MSG_DATA = MSG_DATA
    MSG_RESULT = MSG_RESULT
    NO_JOB = NO_JOB
    SWITCH_MAC = SWITCH_MAC
    SWITCH_IP = SWITCH_IP
    worker = staticmethod(make_worker)
    wrap32 = staticmethod(wrap32)
    sums = staticmethod(sums)

    def __init__(self, program: dict[str, Any], num_elems: int, pool_size: int) -> None:
        from switch.v1model import V1Switch

        self.sw = V1Switch()
        self.sw.load(program)
        self.program = program
        self.num_elems = num_elems
        self.pool_size = pool_size

    # --- control plane, as the controller does it ---------------------------------------------------------------

    def add_job(self, job_id: int, workers: Sequence[Worker], mgid: int, pool_base: int = 0,
                pool_size: int | None = None) -> None:
        """Job entry, one worker entry + destination entry per worker, multicast group (port, rid = rank)."""
        pool_size = self.pool_size if pool_size is None else pool_size
        self.sw.tables[IG + "ina_jobs"].insert((job_id,), IG + "ina_set_job", [len(workers), mgid, pool_base, pool_size])
        for w in workers:
            self.add_worker(job_id, w)
        self.sw.pre.set_group(mgid, [(w.port, w.rank) for w in workers])

    def add_worker(self, job_id: int, w: Worker, destination: bool = True) -> None:
        self.sw.tables[IG + "ina_workers"].insert((w.port, _ip(w.ip), w.udp_port, job_id), IG + "ina_set_worker",
                                                  [w.rank])
        if destination:
            self.sw.tables[EG + "ina_destinations"].insert(
                (job_id, w.rank), EG + "ina_set_destination",
                [_mac(SWITCH_MAC), _ip(SWITCH_IP), _mac(w.mac), _ip(w.ip), w.udp_port])

    def set_drop_probability(self, port: int, ingress: int | None = None, egress: int | None = None) -> None:
        if ingress is not None:
            self.sw.tables[IG + "drop_sim_ingress"].insert((port,), IG + "set_ingress_drop_prob", [ingress])
        if egress is not None:
            self.sw.tables[EG + "drop_sim_egress"].insert((port,), EG + "set_egress_drop_prob", [egress])

    # --- packets ------------------------------------------------------------------------------------------------

    def ina_bytes(self, job_id: int, slot: int, set_: int, values: Sequence[int], exponent: int = 128,
                  packet_id: int = 0, flags: int = 0, rank: int = 0, msg_type: int = MSG_DATA) -> bytes:
        """INA header + payload (N int32, big endian)."""
        assert len(values) == self.num_elems
        header = INA_HEADER.pack(msg_type, job_id, (set_ << 15) | slot, packet_id, exponent, flags, rank)
        return header + struct.pack(f"!{len(values)}i", *values)

    def data(self, w: Worker, job_id: int, slot: int, set_: int, values: Sequence[int], exponent: int = 128,
             packet_id: int = 0, flags: int = 0, msg_type: int = MSG_DATA, payload: bytes | None = None) -> bytes:
        """A DATA frame from worker `w` to the switch's service address (payload overrides the INA bytes)."""
        from scapy.layers.inet import IP, UDP
        from scapy.layers.l2 import Ether

        if payload is None:
            payload = self.ina_bytes(job_id, slot, set_, values, exponent, packet_id, flags, w.rank, msg_type)
        frame = (Ether(src=w.mac, dst=SWITCH_MAC) / IP(src=w.ip, dst=SWITCH_IP, id=0x4000 + w.rank, flags="DF")
                 / UDP(sport=w.udp_port, dport=INA_PORT) / payload)
        return bytes(frame)

    def expected_result(self, trigger: bytes, dest: Worker, result: Sequence[int], exponent: int) -> bytes:
        """The RESULT frame the switch must send to `dest` for the DATA frame `trigger`: addresses rewritten,
        TTL 64, IPv4 checksum recomputed, UDP checksum 0, msg_type RESULT, `exponent` and `result` in the payload."""
        from scapy.layers.inet import IP, UDP
        from scapy.layers.l2 import Ether
        from scapy.packet import Raw

        pkt = Ether(trigger)
        ina = bytes(pkt[UDP].payload)
        msg_type, job_id, pool_index, packet_id, _exp, flags, rank = INA_HEADER.unpack(ina[:INA_HEADER.size])
        ina = INA_HEADER.pack(MSG_RESULT, job_id, pool_index, packet_id, exponent, flags, rank)
        ina += struct.pack(f"!{len(result)}i", *result)
        ip = pkt[IP]
        out = (Ether(src=SWITCH_MAC, dst=dest.mac, type=0x0800)
               / IP(version=4, ihl=5, tos=ip.tos, len=ip.len, id=ip.id, flags=ip.flags, frag=ip.frag, ttl=64,
                    proto=17, src=SWITCH_IP, dst=dest.ip)
               / UDP(sport=INA_PORT, dport=dest.udp_port, len=pkt[UDP].len, chksum=0) / Raw(ina))
        return bytes(out)

    def send(self, port_or_worker: int | Worker, frame: bytes) -> list[tuple[int, bytes]]:
        """Frames the switch emits for `frame` arriving on a port, sorted by port."""
        port = port_or_worker.port if isinstance(port_or_worker, Worker) else port_or_worker
        return sorted(self.sw.process(port, frame))

    # --- state --------------------------------------------------------------------------------------------------

    def bitmap(self, slot: int, set_: int) -> int:
        return self.sw.registers[IG + "ina_bitmap"].read(2 * slot + set_)

    def countdown(self, slot: int, set_: int) -> int:
        return self.sw.registers[IG + "ina_countdown"].read(2 * slot + set_)

    def exponent(self, slot: int, set_: int) -> int:
        return self.sw.registers[IG + "ina_exponent"].read(2 * slot + set_)

    def values(self, slot: int, set_: int) -> list[int]:
        reg = self.sw.registers[IG + "ina_values"]
        base = (2 * slot + set_) * self.num_elems
        return [wrap32(reg.read(base + i)) for i in range(self.num_elems)]

    def count(self, name: str, job: int) -> int:
        """Packets counted by counter `name` ("SwitchMLIngress.ina_received", or a bare name searched in
        ingress then egress) at index `job`."""
        if name not in self.sw.counters:
            name = IG + name if IG + name in self.sw.counters else EG + name
        return self.sw.counters[name].read(job)[0]

    def counts(self, job: int) -> dict[str, int]:
        """All INA counters at index `job`, by bare name."""
        out = {}
        for full in self.sw.counters:
            if full.startswith((IG + "ina_", EG + "ina_")):
                out[full.split(".", 1)[1]] = self.sw.counters[full].read(job)[0]
        return out

    def assert_ingress_invariant(self, job: int) -> None:
        c = self.counts(job)
        assert c["ina_received"] == (c["ina_aggregated"] + c["ina_retx_answered"] + c["ina_drop_unknown"]
                                     + c["ina_drop_malformed"] + c["ina_drop_retx_incomplete"]), c


@pytest.fixture
def ina_factory() -> Callable[..., InaSwitch]:
    """Builds an InaSwitch for (num_elems, pool_size)."""

    def make(num_elems: int = 16, pool_size: int = 8) -> InaSwitch:
        return InaSwitch(switchml_build(num_elems, pool_size), num_elems, pool_size)

    return make


@pytest.fixture
def ina(ina_factory: Callable[..., InaSwitch]) -> InaSwitch:
    """A fresh switch running switchml.p4 with N = 16 elements and 8 slots, no entries."""
    return ina_factory(16, 8)


@pytest.fixture
def build() -> Callable[..., dict[str, Any]]:
    """switchml_build(num_elems=16, pool_size=8) -> BMv2 JSON dict (cached per parameter set)."""
    return switchml_build


@pytest.fixture
def compile_switchml() -> Callable[..., Any]:
    """Compiles switchml.p4 with the given -D defines (uncached), returning what compile_file returns."""

    def run(**defines: str) -> Any:
        import compiler

        return compiler.compile_file(str(P4SRC), defines=defines)

    return run
