"""Register arrays indexed by computed values (tests/p4/reg_window.p4): read-modify-write windows at a base taken
from the packet, in range, partly or wholly out of range and wrapping modulo 2^32, against a model of BMv2's
register_read / register_write (simple_switch primitives.cpp: an out-of-bounds index leaves the destination
unchanged, writes nothing, and the action goes on). The generated code checks bounds once per window when it can
prove the whole window in range and per access otherwise, so each case runs on both paths — and on the traced
variant, whose code is generated without those optimisations."""

from __future__ import annotations

import random
import struct

import pytest

WIN = struct.Struct("!IBBBB7I")
M32 = 0xFFFFFFFF


class Model:
    """BMv2 semantics of reg_window.p4's `window` action, on plain lists."""

    def __init__(self) -> None:
        self.acc = [0] * 20
        self.marks = [0] * 200
        self.full = [0] * 256

    def packet(self, base: int, small: int, vals: list[int]) -> bytes:
        tmp = 7
        out = []
        for k, v in enumerate(vals):
            idx = (base + k) & M32
            if idx < len(self.acc):
                tmp = self.acc[idx]
            v = (v + tmp) & M32
            if idx < len(self.acc):
                self.acc[idx] = v
            out.append(v)
        tag = 0  # hdr.win.tag arrives as 0 in every test packet and stays so when the read is out of range
        if small < len(self.marks):
            tag = self.marks[small]
            self.marks[small] = (small + 1) & 0xFF
        tag_full = self.full[small]
        self.full[small] = (small + 2) & 0xFF
        return WIN.pack(base, small, tag, tag_full, 0, *out, tmp)


def frame(base: int, small: int, vals: list[int]) -> bytes:
    return WIN.pack(base, small, 0, 0, 0, *vals, 0)


CASES = [0, 1, 14, 15, 16, 19, 20, 21, 1000, M32 - 5, M32 - 4, M32 - 2, M32, 3, 14, 0]


@pytest.mark.parametrize("traced", [False, True], ids=["optimised", "traced"])
def test_register_windows_match_bmv2_semantics(load_compiled, traced):
    lines: list[str] = []
    sw = load_compiled("reg_window", **({"trace": lambda pid, msg: lines.append(msg)} if traced else {}))
    model = Model()
    rng = random.Random(7)
    bases = CASES + [rng.choice([rng.randrange(25), rng.randrange(M32 + 1), M32 - rng.randrange(8)])
                     for _ in range(60)]
    for n, base in enumerate(bases):
        small = rng.choice([0, 5, 199, 200, 201, 255, rng.randrange(256)])
        vals = [rng.choice([0, 1, M32, rng.randrange(M32 + 1)]) for _ in range(6)]
        out = sw.process(3, frame(base, small, vals))
        assert out == [(3, model.packet(base, small, vals))], f"packet {n}: base {base:#x} small {small}"
    assert sw.registers["Ing.acc"].cells() == model.acc
    assert sw.registers["Ing.marks"].cells() == model.marks
    assert sw.registers["Ing.full"].cells() == model.full
    assert any(v for v in model.acc)  # the windows did land
    assert traced == bool(lines)
