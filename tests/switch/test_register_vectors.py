"""Vector register updates (tests/p4/reg_vector.p4) on the optimised code, which turns a window of one register into
one slice read and one slice write and folds read-modify-write temporaries (switch/sim/optimize.py), against the
traced code (generated without those optimisations, run through the generic V1Switch path) and against a model of
BMv2's register_read / register_write: int<32> sums wrapping at 2^31, bit<32> cells at 2^32, bit<16> cells at
2^16, windows wholly, partly or not in range (indices wrap modulo 2^32), one index across many registers, and
frames too short for the header."""

from __future__ import annotations

import struct

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

N = 8
ACC, GROUP, GSIZE = 40, N, 16
VEC = struct.Struct(f"!BBHI{N}i{N}H{N}II")
M32, M16 = 0xFFFFFFFF, 0xFFFF


def wrap32(x: int) -> int:
    return (x + 2**31) % 2**32 - 2**31


class Model:
    """BMv2 semantics of reg_vector.p4's actions on plain lists."""

    def __init__(self, acc: list[int], uacc: list[int], groups: list[list[int]]) -> None:
        self.acc = list(acc)
        self.uacc = list(uacc)
        self.g = [list(x) for x in groups]

    def packet(self, op: int, small: int, last16: int, base: int, s: list[int], u: list[int], w: list[int],
               last: int) -> bytes:
        s, u, w = list(s), list(u), list(w)
        idx = [(base + k) & M32 for k in range(N)]
        if op == 0:
            tmp = 7
            for k in range(N):
                if idx[k] < ACC:
                    tmp = self.acc[idx[k]]
                s[k] = wrap32(s[k] + wrap32(tmp))
                if idx[k] < ACC:
                    self.acc[idx[k]] = s[k] & M32
            last = tmp
        elif op == 1:
            for k in range(N):
                if idx[k] < ACC:
                    self.acc[idx[k]] = s[k] & M32
        elif op == 2:
            tmp = 9
            for k in range(N):
                if idx[k] < ACC:
                    tmp = self.acc[idx[k]]
                s[k] = wrap32(tmp)
            last = tmp
        elif op == 3:
            t = 5
            for k in range(N):
                if small < GSIZE:
                    t = self.g[k][small]
                t = (t + u[k]) & M16
                if small < GSIZE:
                    self.g[k][small] = t
                u[k] = t
            last16 = t
        elif op == 4:
            tmp = 7
            for k in range(N):
                if idx[k] < ACC:
                    tmp = self.uacc[idx[k]]
                w[k] = (w[k] + tmp) & M32
                if idx[k] < ACC:
                    self.uacc[idx[k]] = w[k]
            last = tmp
        elif op == 5:
            for k in range(N):
                if idx[k] < ACC:
                    self.uacc[idx[k]] = w[k]
        elif op == 6:
            for k in range(N):
                if idx[k] < ACC:
                    w[k] = self.uacc[idx[k]]
        return VEC.pack(op, small, last16, base, *s, *u, *w, last)


def _switches(load_compiled):
    fast = load_compiled("reg_vector")
    ref = load_compiled("reg_vector", trace=lambda pid, msg: None)
    assert fast._l.fast_process is not None and ref._l.fast_process is None
    src = fast.generated_source
    assert src.count(":_f") >= 6 and "] = F[" in src and "F[" in src  # the window slices are there
    return fast, ref


int32 = st.one_of(st.sampled_from([0, 1, -1, 2**31 - 1, -2**31, 2**30, -2**30 - 1]),
                  st.integers(-2**31, 2**31 - 1))
u16 = st.one_of(st.sampled_from([0, 1, M16, 0x8000]), st.integers(0, M16))
cell32 = st.one_of(st.sampled_from([0, 1, M32, 2**31, 2**31 - 1]), st.integers(0, M32))
bases = st.one_of(st.sampled_from([0, 1, 31, 32, 33, 34, 39, 40, 41, M32, M32 - 3, M32 - 6, M32 - 7, M32 - 8]),
                  st.integers(0, 50), st.integers(0, M32))
packets = st.tuples(st.sampled_from([0, 0, 1, 2, 3, 3, 4, 4, 5, 6, 7, 255]),
                    st.one_of(st.sampled_from([0, 15, 16, 17, 255]), st.integers(0, 255)),
                    u16, bases, st.lists(int32, min_size=N, max_size=N), st.lists(u16, min_size=N, max_size=N),
                    st.lists(cell32, min_size=N, max_size=N), cell32, st.one_of(st.none(), st.integers(0, VEC.size - 1)), st.binary(max_size=6))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(acc=st.lists(cell32, min_size=ACC, max_size=ACC), uacc=st.lists(cell32, min_size=ACC, max_size=ACC),
       groups=st.lists(st.lists(u16, min_size=GSIZE, max_size=GSIZE), min_size=GROUP, max_size=GROUP),
       seq=st.lists(packets, min_size=1, max_size=25))
def test_vector_updates_match_reference_and_model(load_compiled, acc, uacc, groups, seq):
    fast, ref = _switches(load_compiled)
    model = Model(acc, uacc, groups)
    for sw in (fast, ref):
        for i, v in enumerate(acc):
            sw.registers["Ing.acc"].write(i, v)
        for i, v in enumerate(uacc):
            sw.registers["Ing.uacc"].write(i, v)
        for k in range(GROUP):
            for i, v in enumerate(groups[k]):
                sw.registers[f"Ing.g{k}"].write(i, v)
    for n, (op, small, last16, base, s, u, w, last, cut, payload) in enumerate(seq):
        frame = VEC.pack(op, small, last16, base, *s, *u, *w, last) + payload
        if cut is not None:
            frame = frame[:cut]  # too short for the header: parser error, header invalid, no register access
        out = fast.process(2, frame)
        assert out == ref.process(2, frame), f"packet {n}"
        want = frame if cut is not None else model.packet(op, small, last16, base, s, u, w, last) + payload
        assert out == [(2, want)], f"packet {n}"
    for name, reg in fast.registers.items():
        assert reg.cells() == ref.registers[name].cells(), name
    assert fast.registers["Ing.acc"].cells() == model.acc
    assert fast.registers["Ing.uacc"].cells() == model.uacc
    for k in range(GROUP):
        assert fast.registers[f"Ing.g{k}"].cells() == model.g[k]
    assert fast.stats == ref.stats

