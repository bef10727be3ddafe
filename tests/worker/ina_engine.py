"""p4src/switchml.p4 compiled by the embedded compiler and run by the embedded engine, behind the simulated network.

`EngineSwitch` installs a job through the controller (`controller.switchml`, in process) and offers the reference model's `receive(src, payload)` interface, so the worker's
window cores can run against the real switch program: each DATA payload is wrapped in Ethernet/IPv4/UDP from the
worker to the switch's service address and processed on the worker's switch port; each emitted frame is checked
against the brief's RESULT addressing and unwrapped.
"""

from __future__ import annotations

import functools
import json
import struct
from collections import Counter
from typing import Any

from tests.paths import ROOT
from worker.job import JobConfig
from worker.switchml.header import INA_UDP_PORT

P4SRC = ROOT / "p4src" / "switchml.p4"
IG, EG = "SwitchMLIngress.", "SwitchMLEgress."


def _mac(text: str) -> bytes:
    return bytes.fromhex(text.replace(":", ""))


def _ip(text: str) -> bytes:
    return bytes(int(p) for p in text.split("."))


def _csum16(data: bytes) -> int:
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


@functools.cache
def compiled_switchml(num_elems: int = 16, pool_size: int = 64) -> Any:
    """switchml.p4 compiled by the embedded compiler (compiler.CompileResult: .json, .p4info)."""
    from compiler import compile_file

    return compile_file(str(P4SRC), defines={"INA_NUM_ELEMS": str(num_elems), "INA_POOL_SIZE": str(pool_size)})


def program_dict(num_elems: int = 16, pool_size: int = 64) -> dict[str, Any]:
    return json.loads(json.dumps(compiled_switchml(num_elems, pool_size).json))


def p4info(num_elems: int = 16, pool_size: int = 64) -> Any:
    return compiled_switchml(num_elems, pool_size).p4info


class EngineSwitch:
    """The engine running switchml.p4 with one job installed, seen through UDP payloads."""

    def __init__(self, program: dict[str, Any], job: JobConfig, p4info: Any) -> None:
        from controller.local import LocalClient
        from controller.registers import P4RuntimeRegisters
        from controller.switchml import SwitchMLController
        from switch.v1model import V1Switch

        self.job = job
        self.sw = V1Switch()
        self.sw.load(program)
        self.alive = True
        self.counters: Counter[str] = Counter()
        self.errors: list[str] = []
        client = LocalClient(self.sw, p4info, program)
        SwitchMLController(client, P4RuntimeRegisters(client)).create_job(job)
        self._by_endpoint = {(w.ip, w.udp_port): w for w in job.workers}
        self._by_port = {w.switch_port: w for w in job.workers}

    def frame(self, src: tuple[str, int], payload: bytes) -> bytes:
        """Ethernet/IPv4/UDP DATA frame from worker src to the switch's service address."""
        w = self._by_endpoint[src]
        udp = struct.pack("!HHHH", w.udp_port, INA_UDP_PORT, 8 + len(payload), 0)
        ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28 + len(payload), 0x1000 + w.rank, 0x4000, 64, 17, 0,
                                   _ip(w.ip), _ip(self.job.switch.ip)))
        ip[10:12] = _csum16(bytes(ip)).to_bytes(2, "big")
        eth = _mac(self.job.switch.mac) + _mac(w.mac) + b"\x08\x00"
        return eth + bytes(ip) + udp + payload

    def receive(self, src: tuple[str, int], data: bytes) -> list[tuple[tuple[str, int], bytes]]:
        if not self.alive:
            return []
        w = self._by_endpoint[src]
        out = []
        for port, frame in self.sw.process(w.switch_port, self.frame(src, data)):
            dst = self._by_port.get(port)
            self._check_result(port, dst, frame)
            ip, udp = frame[14:34], frame[34:42]
            out.append(((".".join(str(b) for b in ip[16:20]), struct.unpack("!H", udp[2:4])[0]), frame[42:]))
        return out

    def _check_result(self, port: int, dst: Any, frame: bytes) -> None:
        """Record every deviation from the brief's RESULT addressing."""
        if dst is None:
            self.errors.append(f"result left on port {port}, which has no worker")
            return
        eth, ip, udp = frame[:14], frame[14:34], frame[34:42]
        want = {
            "eth dst": (eth[0:6], _mac(dst.mac)), "eth src": (eth[6:12], _mac(self.job.switch.mac)),
            "ip src": (ip[12:16], _ip(self.job.switch.ip)), "ip dst": (ip[16:20], _ip(dst.ip)),
            "ttl": (ip[8], 64), "ip checksum": (_csum16(bytes(ip)), 0),
            "udp sport": (udp[0:2], INA_UDP_PORT.to_bytes(2, "big")),
            "udp dport": (udp[2:4], dst.udp_port.to_bytes(2, "big")), "udp checksum": (udp[6:8], b"\x00\x00"),
        }
        for what, (got, exp) in want.items():
            if got != exp:
                self.errors.append(f"{what}: got {got!r}, expected {exp!r} (port {port})")
