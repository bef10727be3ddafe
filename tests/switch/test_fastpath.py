"""The untraced per-packet fast paths (switch/v1model/fastpath.py) against the generic packet walk of a traced switch:
the same frames out in the same order, the same registers, counters and statistics, for random frames through every
fixture program — unicast, drops at ingress and egress, clones (I2E, E2E, to ports and to multicast groups),
multicast, resubmit, recirculate, parser errors — one by one (`process`) and in batches (`receive` ... `drain`, with
queues deep enough to fill up)."""

from __future__ import annotations

import random
import struct

import pytest

from switch.v1model import V1Switch

PROGRAMS = ["v1_features", "basic_forward", "agg64", "tables_ctl", "parser_features"]


def _setup(sw: V1Switch, name: str) -> None:
    if name == "v1_features":
        d = sw.tables["MyIngress.dispatch"]
        for op, action, data in [(0, "to_port", (2,)), (1, "clone_i2e", (2, 5)), (2, "flood", (1,)),
                                 (3, "to_port", (4,)), (4, "to_port", (4,)), (5, "to_port", (2,)),
                                 (6, "to_port", (2,)), (7, "clone_i2e", (3, 6)), (8, "to_port", (511,))]:
            d.insert((op,), f"MyIngress.{action}", data)
        sw.pre.set_group(1, [(2, 10), (3, 20), (7, 30)])
        sw.pre.set_group(3, [(5, 1), (6, 2)])
        sw.mirror.set_session(5, egress_port=9)
        sw.mirror.set_session(6, mgid=3)
        sw.mirror.set_session(7, egress_port=8)
    elif name == "basic_forward":
        sw.tables["MyIngress.ipv4_lpm"].insert(((0x0A000000, 8),), "MyIngress.ipv4_forward", (0x00AABBCCDDEE, 3))


def _frame(rng: random.Random, name: str) -> bytes:
    if name == "v1_features":
        f = bytes.fromhex("020000000002" "020000000001" "88b5") + \
            struct.pack("!BBHIIHHI", rng.randrange(10), 0, 0, 0, 0, 0, 0, 0) + b"PAYLOAD"
    else:
        n = rng.choice([60, 342, 342, 342] if name == "agg64" else [14, 34, 42, 60, 120, 342])
        f = bytes(rng.getrandbits(8) for _ in range(n))
        f = f[:12] + rng.choice([b"\x08\x00", b"\x88\x47", b"\x88\xb5"]) + f[14:]
        if len(f) > 30 and rng.random() < 0.7:
            f = f[:14] + b"\x45" + f[15:23] + b"\x11" + f[24:30] + b"\x0a" + f[31:]  # IPv4/UDP to 10.x.x.x
        if len(f) > 38 and rng.random() < (0.9 if name == "agg64" else 0.5):
            f = f[:36] + b"\xbe\xe0" + f[38:]  # agg64's INA port
    if rng.random() < 0.1:
        f = f[:rng.randrange(len(f) + 1)]
    return f


@pytest.mark.parametrize("batched", [False, True], ids=["process", "receive-drain"])
@pytest.mark.parametrize("name", PROGRAMS)
def test_fast_path_matches_generic_walk(load, name, batched):
    fast = load(name)
    ref = V1Switch(trace=lambda pid, msg: None)
    ref.load(fast.program_json)
    assert fast._l.fast_process is not None and ref._l.fast_process is None
    for sw in (fast, ref):
        _setup(sw, name)
    rng = random.Random(hash(name) & 0xFFFF)
    sent = 0
    for n in range(300):
        if batched:
            frames = [(rng.randrange(1, 5), _frame(rng, name)) for _ in range(rng.randrange(1, 80))]
            for sw in (fast, ref):
                for port, f in frames:
                    sw.receive(port, f)
            a, b = fast.drain(), ref.drain()
        else:
            port, f = rng.randrange(1, 5), _frame(rng, name)
            a, b = fast.process(port, f), ref.process(port, f)
        assert a == b, f"round {n}"
        sent += len(a)
    assert sent > 20  # frames did come out (not only drops)
    for reg_name, reg in fast.registers.items():
        assert reg.cells() == ref.registers[reg_name].cells(), reg_name
    for ctr_name, ctr in fast.counters.items():
        other = ref.counters[ctr_name]
        assert (ctr.packets, ctr.bytes) == (other.packets, other.bytes), ctr_name
    for t_name, t in fast.tables.items():
        assert [(e.packets, e.bytes) for e in t.entries] == [(e.packets, e.bytes) for e in ref.tables[t_name].entries]
    assert fast.stats == ref.stats


def test_fast_path_with_other_drop_port_and_full_queues(load):
    """drop_port 100 (a to_port(100) is a drop, 511 a real port) and 2-packet queues (receive must egress early)."""
    prog = load("v1_features").program_json
    fast, ref = V1Switch(drop_port=100, queue_capacity=2), V1Switch(drop_port=100, queue_capacity=2,
                                                                    trace=lambda pid, msg: None)
    for sw in (fast, ref):
        sw.load(prog)
        _setup(sw, "v1_features")
        sw.tables["MyIngress.dispatch"].insert((9,), "MyIngress.to_port", (100,))
    rng = random.Random(5)
    for n in range(200):
        frames = [(rng.randrange(1, 5), _frame(rng, "v1_features")) for _ in range(rng.randrange(1, 6))]
        for sw in (fast, ref):
            for port, f in frames:
                sw.receive(port, f)
        assert fast.drain() == ref.drain(), f"round {n}"
        port, f = frames[0]
        assert fast.process(port, f) == ref.process(port, f)
    assert fast.stats == ref.stats and fast.stats["queue_full_waits"] > 0


def test_tracing_switches_paths(load):
    sw = load("basic_forward")
    assert sw._l.fast_process is not None
    sw.trace = lambda pid, msg: None
    assert sw._l.fast_process is None and sw._l.fast_receive is None and sw._l.fast_egress is None
    sw.trace = None
    assert sw._l.fast_process is not None
