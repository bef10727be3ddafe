"""The optimised code (structured pipelines, inlined actions, PHV slots in locals, merged and hoisted bounds
checks, struct-packed headers) against the straightforward traced code generator, on the all-reduce program
p4src/switchml.p4: the same frames out, the same register and counter contents, for a mix of first
contributions, additions, completions, retransmissions, foreign slots, unknown senders and truncated packets."""

from __future__ import annotations

import random
import struct

import pytest

from switch.v1model import V1Switch
from tests.paths import ROOT

SWITCHML = ROOT / "p4src" / "switchml.p4"
IG, EG = "SwitchMLIngress.", "SwitchMLEgress."
N, POOL, WORKERS = 16, 4, 3
SW_MAC, SW_IP = 0x00000A0000FE, 0x0A0000FE


def _program() -> dict:
    compiler = pytest.importorskip("compiler")
    try:
        return compiler.compile_file(str(SWITCHML), defines={"INA_NUM_ELEMS": str(N),
                                                              "INA_POOL_SIZE": str(POOL)}).json
    except Exception as exc:  # noqa: BLE001 - the compiler's and switchml's own tests own their failures
        pytest.skip(f"cannot compile p4src/switchml.p4: {exc}")


def _switch(program: dict, traced: bool) -> V1Switch:
    sw = V1Switch(trace=(lambda pid, msg: None) if traced else None)
    sw.load(program)
    sw.tables[IG + "ina_jobs"].insert((1,), IG + "ina_set_job", [WORKERS, 1, 0, POOL - 1])
    for r in range(WORKERS):
        sw.tables[IG + "ina_workers"].insert((r + 1, 0x0A000001 + r, 40001 + r, 1), IG + "ina_set_worker", [r])
        sw.tables[EG + "ina_destinations"].insert((1, r), EG + "ina_set_destination",
                                                  [SW_MAC, SW_IP, r + 1, 0x0A000001 + r, 40001 + r])
    sw.pre.set_group(1, [(r + 1, r) for r in range(WORKERS)])
    return sw


def _frame(rng: random.Random, rank: int, slot: int, set_: int) -> bytes:
    vals = [rng.choice([0, 1, -1, 2**31 - 1, -2**31, rng.randrange(-2**31, 2**31)]) for _ in range(N)]
    ina = struct.pack("!BBHIBBH", 1, 1, (set_ << 15) | slot, rng.randrange(2**32), rng.randrange(256), 0, rank)
    ina += struct.pack(f"!{N}i", *vals)
    udp = struct.pack("!HHHH", 40001 + rank, 48864, 8 + len(ina), 0) + ina
    ip = struct.pack("!BBHHHBBHII", 0x45, 0, 20 + len(udp), rank, 0x4000, 64, 17, 0, 0x0A000001 + rank, SW_IP)
    return SW_MAC.to_bytes(6, "big") + (rank + 1).to_bytes(6, "big") + b"\x08\x00" + ip + udp


def test_optimised_and_traced_code_agree_on_switchml():
    program = _program()
    plain, traced = _switch(program, False), _switch(program, True)
    assert "_T(" not in plain.generated_source and "_T(" in traced.generated_source
    rng = random.Random(2026)
    outputs = 0
    for n in range(600):
        rank = rng.randrange(WORKERS + 1) if rng.random() < 0.1 else rng.randrange(WORKERS)  # rank 3: unknown
        port = rank + 1
        slot = rng.randrange(POOL + 1)  # POOL - 1 and POOL are outside the job's / the switch's pool
        f = _frame(rng, min(rank, WORKERS - 1), slot, rng.randrange(2))
        if rng.random() < 0.05:
            f = f[:rng.randrange(len(f))]
        a, b = plain.process(port, f), traced.process(port, f)
        assert a == b, f"packet {n}"
        outputs += len(a)
    assert outputs > 100  # completions and retransmission answers happened
    for name, reg in plain.registers.items():
        assert reg.cells() == traced.registers[name].cells(), name
    for name, ctr in plain.counters.items():
        assert (ctr.packets, ctr.bytes) == (traced.counters[name].packets, traced.counters[name].bytes), name
    assert plain.stats == traced.stats


@pytest.mark.parametrize("name", ["basic_forward", "tables_ctl", "v1_features", "parser_features", "agg64"])
def test_node_function_fallback_forwards_the_same_bytes(load, monkeypatch, name):
    """Pipelines the structured generator gives up on (here: forced by a negative duplication budget) run as one
    function per node; both forms must forward the same bytes and leave the same state."""
    import random

    from switch.sim import gen_flow

    structured = load(name)
    monkeypatch.setattr(gen_flow, "DUPLICATION_BUDGET", -1000)
    nodes = load(name)
    assert "n = n(F)" in nodes.generated_source and "n = n(F)" not in structured.generated_source
    if name == "basic_forward":  # a route, so that frames are forwarded and rewritten, not only dropped
        for sw in (structured, nodes):
            sw.tables["MyIngress.ipv4_lpm"].insert(((0x0A000000, 8),), "MyIngress.ipv4_forward",
                                                   (0x00AABBCCDDEE, 3))
    rng = random.Random(11)
    for _ in range(200):
        n = rng.choice([14, 34, 60, 120, 330])
        f = bytes(rng.getrandbits(8) for _ in range(n))
        f = f[:12] + rng.choice([b"\x08\x00", b"\x88\x47", b"\x88\xb5"]) + f[14:]
        if len(f) > 30 and rng.random() < 0.5:
            f = f[:14] + b"\x45" + f[15:30] + b"\x0a" + f[31:]  # IPv4 without options, destination 10.x.x.x
        port = rng.randrange(4)
        assert structured.process(port, f) == nodes.process(port, f)
    for reg, other in zip(structured.registers.values(), nodes.registers.values()):
        assert reg.cells() == other.cells()
    assert structured.stats == nodes.stats
