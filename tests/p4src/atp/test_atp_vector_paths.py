"""atp.p4 on the optimised code, whose payload header and value register are arrays (switch/sim/vectors.py:
saturating sums with `_vsat32`, the overflow flag with `any()`), against the same switch state on the traced code
(scalar reference), for random contributions near int32's bounds, retransmissions, ACKs and resends: the same frames
out and the same registers."""

from __future__ import annotations

import random

INT32 = (-2**31, 2**31 - 1)


def _values(rng: random.Random, n: int) -> list[int]:
    return [rng.choice([0, 1, -1, INT32[0], INT32[1], 2**30, -2**30, rng.randint(*INT32)]) for _ in range(n)]


def test_vector_and_traced_code_agree_on_atp(atp_factory):
    fast, ref = atp_factory(), atp_factory()
    ws = [fast.host(r) for r in range(3)]
    for a in (fast, ref):
        a.add_job(1, ws, mgid=1)
    ref.sw.trace = lambda pid, msg: None  # regenerated as traced code, registers (arrays) kept
    assert fast.sw._l.cg.vectors and not ref.sw._l.cg.vectors
    assert fast.sw.registers["AtpIngress.atp_values"].is_vector
    rng = random.Random(7)
    sent = 0
    for n in range(400):
        agtr, seq = rng.randrange(6), rng.randrange(1, 4)
        vals = _values(rng, fast.num_elems)
        r = rng.random()
        if r < 0.8:
            w = ws[rng.randrange(3)]
            frame = fast.data(w, 1, seq=seq, agtr=agtr, values=vals, fan_in0=3,
                              flags=fast.RESEND if rng.random() < 0.05 else 0)
            port = w.port
        else:
            frame = fast.ack(1, seq, agtr, vals, bitmap0=0b111)
            port = fast.PS.port
        out = fast.send(port, frame)
        assert out == ref.send(port, frame), f"packet {n}"
        sent += len(out)
    assert sent > 50
    for name, reg in fast.sw.registers.items():
        assert reg.cells() == ref.sw.registers[name].cells(), name
    assert fast.counts(1) == ref.counts(1)
