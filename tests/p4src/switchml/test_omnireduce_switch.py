"""omnireduce.p4 on the in-process switch: header-only DATA packets count as zeros and leave as whole RESULTs, the
smallest next_block with the largest exponent among the packets naming it, retransmissions answered with both, and
malformed lengths dropped and counted. Entries are written the way p4src/README.md documents them (an oracle
independent of controller/), frames are built with scapy and struct, not with the worker's codec."""

from __future__ import annotations

import functools
import struct
from typing import Any, Sequence

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from tests.paths import ROOT

N, POOL = 16, 8
PORT = 48864
HEADER = struct.Struct("!BBHIBBHI")
"""msg_type, job_id, pool_index, packet_id, exponent, flags, worker_rank, next_block"""
DATA, RESULT = 1, 2
NO_BLOCK = 0xFFFFFFFF
SWITCH_MAC, SWITCH_IP = "00:00:0a:00:00:fe", "10.0.0.254"
IG, EG = "SwitchMLIngress.", "SwitchMLEgress."
JOB, MGID, EPOCH = 3, 30, 5


@functools.cache
def _program() -> dict[str, Any]:
    import compiler

    return compiler.compile_file(str(ROOT / "p4src" / "omnireduce.p4"),
                                 defines={"INA_NUM_ELEMS": str(N), "INA_POOL_SIZE": str(POOL)}).json


def _ip(text: str) -> int:
    return int.from_bytes(bytes(int(p) for p in text.split(".")), "big")


def _mac(text: str) -> int:
    return int(text.replace(":", ""), 16)


def host(rank: int) -> tuple[int, str, str, int]:
    """(switch port, MAC, IP, UDP port) of worker `rank`."""
    return rank + 1, f"00:00:00:00:00:{rank + 1:02x}", f"10.0.0.{rank + 1}", 40001 + rank


@pytest.fixture
def sw(request: pytest.FixtureRequest) -> Any:
    """The switch with job JOB of 3 workers (ranks 0..2) on the whole pool."""
    from switch.v1model import V1Switch

    s = V1Switch()
    s.load(_program())
    s.tables[IG + "ina_jobs"].insert((JOB,), IG + "ina_set_job", [3, MGID, 0, POOL])
    s.tables[IG + "ina_epochs"].insert((JOB,), IG + "ina_set_epoch", [EPOCH])
    for r in range(3):
        port, mac, ip, udp = host(r)
        s.tables[IG + "ina_workers"].insert((port, _ip(ip), udp, JOB), IG + "ina_set_worker", [r])
        s.tables[EG + "ina_destinations"].insert((JOB, r), EG + "ina_set_destination",
                                                 [_mac(SWITCH_MAC), _ip(SWITCH_IP), _mac(mac), _ip(ip), udp])
    s.pre.set_group(MGID, [(host(r)[0], r) for r in range(3)])
    return s


def frame(rank: int, slot: int, block: int, nxt: int, exponent: int, values: Sequence[int] | None, *, set_: int = 0,
          flags: int = 0, msg_type: int = DATA, udp_len: int | None = None) -> bytes:
    port, mac, ip, udp = host(rank)
    ina = HEADER.pack(msg_type, JOB, (set_ << 15) | slot, block, exponent, flags, rank, nxt)
    if values is not None:
        ina += struct.pack(f"!{N}i", *values)
    pkt = (Ether(src=mac, dst=SWITCH_MAC) / IP(src=ip, dst=SWITCH_IP, id=7, flags="DF")
           / UDP(sport=udp, dport=PORT, len=udp_len) / ina)
    return bytes(pkt)


def send(sw: Any, rank: int, data: bytes) -> list[tuple[int, bytes]]:
    return sorted(sw.process(host(rank)[0], data))


def result_frame(rank: int, slot: int, block: int, nxt: int, exponent: int, values: Sequence[int], *, set_: int = 0,
                 flags: int = 0, sender: int) -> bytes:
    """The RESULT the switch must send to `rank`: whole length, addresses rewritten, IPv4 checksum right, UDP 0."""
    _, mac, ip, udp = host(rank)
    ina = HEADER.pack(RESULT, JOB, (set_ << 15) | slot, block, exponent, (flags & 1) | EPOCH << 1, sender, nxt)
    ina += struct.pack(f"!{N}i", *values)
    pkt = (Ether(src=SWITCH_MAC, dst=mac) / IP(src=SWITCH_IP, dst=ip, id=7, flags="DF", ttl=64)
           / UDP(sport=PORT, dport=udp, chksum=0) / ina)
    return bytes(pkt)


def counter(sw: Any, name: str) -> int:
    """Packets of job JOB counted by counter `name` (ingress or egress)."""
    return sw.counters[(IG if IG + name in sw.counters else EG) + name].read(JOB)[0]


def test_header_only_packets_add_zeros_and_the_result_is_whole(sw: Any) -> None:
    a = [i * 1000 - 7 for i in range(N)]
    c = [-(i ** 3) for i in range(N)]
    assert send(sw, 0, frame(0, 2, block=10, nxt=42, exponent=131, values=a)) == []
    assert send(sw, 1, frame(1, 2, block=10, nxt=18, exponent=129, values=None)) == []
    last = frame(2, 2, block=10, nxt=26, exponent=140, values=c)
    out = send(sw, 2, last)
    want = [x + y for x, y in zip(a, c)]
    # the stream's next block: the smallest named (18), with the exponent its namer sent
    assert out == [(host(r)[0], result_frame(r, 2, 10, 18, 129, want, sender=2)) for r in range(3)]
    assert sw.registers[IG + "ina_next"].read(4) == 18
    assert counter(sw, "ina_aggregated") == 3 and counter(sw, "ina_multicast") == 1
    assert counter(sw, "ina_drop_malformed") == 0


def test_a_header_only_packet_that_completes_the_set_leaves_with_the_payload(sw: Any) -> None:
    a = list(range(1, N + 1))
    send(sw, 0, frame(0, 5, block=5, nxt=13, exponent=130, values=a))
    send(sw, 1, frame(1, 5, block=5, nxt=NO_BLOCK, exponent=0, values=None))
    out = send(sw, 2, frame(2, 5, block=5, nxt=NO_BLOCK, exponent=0, values=None))
    assert out == [(host(r)[0], result_frame(r, 5, 5, 13, 130, a, sender=2)) for r in range(3)]
    ip = Ether(out[0][1])[IP]
    assert ip.len == 20 + 8 + HEADER.size + 4 * N and IP(bytes(ip)).chksum == ip.chksum


def test_equal_next_blocks_keep_the_largest_exponent_and_none_ends_the_stream(sw: Any) -> None:
    z = [0] * N
    send(sw, 0, frame(0, 1, block=NO_BLOCK, nxt=9, exponent=133, values=None))
    send(sw, 1, frame(1, 1, block=NO_BLOCK, nxt=9, exponent=137, values=None))
    out = send(sw, 2, frame(2, 1, block=NO_BLOCK, nxt=17, exponent=150, values=None))
    assert out[0] == (1, result_frame(0, 1, NO_BLOCK, 9, 137, z, sender=2))
    # the next round, in the other set: nobody has a further block
    for r in range(2):
        send(sw, r, frame(r, 1, block=9, nxt=NO_BLOCK, exponent=0, values=None, set_=1))
    out = send(sw, 2, frame(2, 1, block=9, nxt=NO_BLOCK, exponent=0, values=None, set_=1))
    assert out[2] == (3, result_frame(2, 1, 9, NO_BLOCK, 0, z, set_=1, sender=2))


def test_a_retransmission_gets_the_stored_next_block_and_exponent(sw: Any) -> None:
    a = [7] * N
    send(sw, 0, frame(0, 0, block=4, nxt=12, exponent=135, values=a))
    send(sw, 1, frame(1, 0, block=4, nxt=20, exponent=128, values=None))
    send(sw, 2, frame(2, 0, block=4, nxt=NO_BLOCK, exponent=0, values=None))
    # worker 1 lost the result: its header-only retransmission is answered with the whole result, to it alone
    out = send(sw, 1, frame(1, 0, block=4, nxt=20, exponent=128, values=None, flags=1))
    assert out == [(2, result_frame(1, 0, 4, 12, 135, a, flags=1, sender=1))]
    assert counter(sw, "ina_retx_answered") == 1 and counter(sw, "ina_aggregated") == 3


@pytest.mark.parametrize("udp_len", [8 + HEADER.size - 1, 8 + HEADER.size + 4, 8 + HEADER.size + 4 * N - 4])
def test_other_lengths_are_dropped_as_malformed(sw: Any, udp_len: int) -> None:
    values = [1] * N if udp_len > 8 + HEADER.size else None
    data = frame(0, 0, block=0, nxt=1, exponent=128, values=values, udp_len=udp_len)
    assert send(sw, 0, data) == []
    assert counter(sw, "ina_drop_malformed") == 1 and counter(sw, "ina_aggregated") == 0
    assert sw.registers[IG + "ina_bitmap"].read(0) == 0


def test_a_header_only_result_is_not_a_contribution(sw: Any) -> None:
    assert send(sw, 0, frame(0, 0, block=0, nxt=1, exponent=128, values=None, msg_type=RESULT)) == []
    assert counter(sw, "ina_drop_malformed") == 1 and sw.registers[IG + "ina_bitmap"].read(0) == 0
