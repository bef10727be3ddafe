"""Vector headers (switch/sim/vectors.py, tests/p4/vec_header.p4): a header of 16 bit<32> fields kept as one numpy
array and register windows over it done as array operations, against the traced code (scalar PHV, generic
V1Switch path) and a model of BMv2's register_read / register_write: whole and partial windows wholly, partly or not
in range (indices wrap modulo 2^32), single elements read and written, an invalidated header, a header copy, frames
too short for the header, and the cells of the register as P4Runtime and the control plane see them (ints)."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from switch.sim.vectors import MAX_HOT_ELEMENTS, NotVectorizable, VectorHeader, _vsat32, finish_module, namespace
from tests.paths import ROOT, TESTS

N, ACC = 16, 40
CTL = struct.Struct("!BBHII")
ELEMS = struct.Struct(f"!{N}I")
M32 = 0xFFFFFFFF


class Model:
    """BMv2 semantics of vec_header.p4's ingress on a plain list."""

    def __init__(self, acc: list[int]) -> None:
        self.acc = list(acc)

    def packet(self, op: int, has_f: int, pad: int, base: int, last: int, e: list[int], f: list[int] | None) -> bytes:
        e = list(e)
        idx = [(base + k) & M32 for k in range(N + 1)]
        if op in (0, 3):
            tmp = 7 if op == 0 else 9
            ks = [(k, k) for k in range(N)] if op == 0 else [(k + 1, k + 4) for k in range(8)]
            for c, k in ks:
                if idx[c] < ACC:
                    tmp = self.acc[idx[c]]
                e[k] = (e[k] + tmp) & M32
                if idx[c] < ACC:
                    self.acc[idx[c]] = e[k]
            last = tmp
        elif op == 1:
            for k in range(N):
                if idx[k] < ACC:
                    self.acc[idx[k]] = e[k]
        elif op in (2, 4):
            for c, k in ([(k, k) for k in range(N)] if op == 2 else [(k, k + 8) for k in range(8)]):
                if idx[c] < ACC:
                    e[k] = self.acc[idx[c]]
        elif op == 5:
            if e[3] == 7:
                e[5] = (e[5] + 1) & M32
            last = e[15]
            e[0] = base
        out = CTL.pack(op, has_f, pad, base, last)
        if op == 7 and f is not None:
            e = list(f)
        if op != 6:
            out += ELEMS.pack(*e)
        if f is not None:
            out += ELEMS.pack(*f)
        return out


def _switches(load_compiled):
    fast = load_compiled("vec_header")
    ref = load_compiled("vec_header", trace=lambda pid, msg: None)
    assert [v.name for v in fast._l.cg.vectors] == ["e", "f"] and not ref._l.cg.vectors
    e, f = fast._l.cg.vectors
    assert f"F[{e.vslot}] = F[{f.vslot}]" in fast.generated_source  # hdr.e = hdr.f: one array reference
    src = fast.generated_source
    # every window became an array operation: 2 adds, a store, a load, a partial load
    assert src.count("_vw += ") >= 2 and "] = F[" in src and ".copy()" in src and "_vsplice(" in src
    assert fast.registers["Ing.acc"].is_vector
    return fast, ref


cell32 = st.one_of(st.sampled_from([0, 1, 7, M32, 2**31, 2**31 - 1]), st.integers(0, M32))
bases = st.one_of(st.sampled_from([0, 1, 23, 24, 25, 31, 32, 39, 40, M32, M32 - 3, M32 - 15, M32 - 16]),
                  st.integers(0, 50), st.integers(0, M32))
packets = st.tuples(st.sampled_from([0, 0, 1, 2, 3, 3, 4, 5, 5, 6, 7, 7, 9]), st.sampled_from([0, 1]), bases,
                    cell32, st.lists(cell32, min_size=N, max_size=N), st.lists(cell32, min_size=N, max_size=N),
                    st.one_of(st.none(), st.integers(0, CTL.size + 2 * ELEMS.size - 1)), st.binary(max_size=6))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(acc=st.lists(cell32, min_size=ACC, max_size=ACC), seq=st.lists(packets, min_size=1, max_size=25))
def test_vector_header_windows_match_reference_and_model(load_compiled, acc, seq):
    fast, ref = _switches(load_compiled)
    model = Model(acc)
    for sw in (fast, ref):
        for i, v in enumerate(acc):
            sw.registers["Ing.acc"].write(i, v)
    for n, (op, has_f, base, last, e, f, cut, payload) in enumerate(seq):
        frame = CTL.pack(op, has_f, 0, base, last) + ELEMS.pack(*e) + (ELEMS.pack(*f) if has_f else b"") + payload
        cut_short = cut is not None and cut < len(frame) - len(payload)
        if cut_short:
            frame = frame[:cut]  # too short for the headers: parser error, ingress runs on those extracted
        out = fast.process(2, frame)
        assert out == ref.process(2, frame), f"packet {n}"
        if cut_short:
            model.acc = ref.registers["Ing.acc"].cells()  # the model knows no parser errors: follow the reference
        else:
            want = model.packet(op, has_f, 0, base, last, e, f if has_f else None) + payload
            assert out == [(2, want)], f"packet {n}"
    assert fast.registers["Ing.acc"].cells() == ref.registers["Ing.acc"].cells() == model.acc
    assert fast.stats == ref.stats


def test_vector_register_cells_are_ints_for_the_control_plane(load_compiled):
    fast, _ = _switches(load_compiled)
    reg = fast.registers["Ing.acc"]
    reg.write(3, M32)
    frame = CTL.pack(0, 0, 0, 3, 0) + ELEMS.pack(*([2] * N))
    fast.process(1, frame)
    assert reg.read(3) == 1 and type(reg.read(3)) is int  # (2^32 - 1) + 2 wraps to 1
    assert all(type(x) is int for x in reg.cells()) and reg.cells(3, 5) == [1, 2]
    reg.reset()
    assert reg.cells() == [0] * ACC and isinstance(reg.values, np.ndarray)


def test_repeated_frames_accumulate_exactly(load_compiled):
    """The arrays in the PHV are replaced, never changed in place: three packets parsed from equal frames, each
    accumulating into the register, see their own values."""
    fast, ref = _switches(load_compiled)
    frame = CTL.pack(0, 0, 0, 0, 0) + ELEMS.pack(*range(N))
    for _ in range(3):
        assert fast.process(1, frame) == ref.process(1, frame)
    assert fast.registers["Ing.acc"].cells()[:N] == [3 * k for k in range(N)]


def test_which_programs_get_vector_headers():
    """switchml.p4's, atp.p4's and omnireduce.p4's payload headers and value registers are arrays (atp.p4's sums
    saturate and set an overflow flag: `_vsat32` and `any()`; omnireduce.p4 zeroes its payload for a header-only
    packet: `_vfill`)."""
    from compiler import compile_file
    from switch.v1model import V1Switch

    p4src = ROOT / "p4src"
    made = {}
    for name in ("switchml", "atp", "omnireduce"):
        sw = V1Switch()
        sw.load(compile_file(str(p4src / f"{name}.p4")).json)
        made[name] = ([v.name for v in sw._l.cg.vectors], sorted(r.name for r in sw.registers.values() if r.is_vector))
    assert made["switchml"] == (["ina_data"], ["SwitchMLIngress.ina_values"])
    assert made["atp"] == (["atp_data"], ["AtpIngress.atp_values"])
    assert made["omnireduce"] == (["ina_data"], ["SwitchMLIngress.ina_values"])


def test_a_header_set_to_one_constant_is_one_shared_array():
    """add_header's zeroing (and a program setting every element to one constant) is one read-only array, not an
    element-wise run that would keep the header scalar; a run that differs in one element stays element-wise."""
    v = VectorHeader("h", 10, 16, 40)
    zero = "def A(F, D):\n    if not F[3]:\n        F[3] = 1\n" + "".join(
        f"        F[{10 + k}] = 0\n" for k in range(16)) + "        F[1] += 64\n"
    out = finish_module(zero, [v], set())
    assert "F[40] = _vfill(16, 0)" in out and "F[10]" not in out
    a = namespace([v])["_vfill"](16, 7)
    assert a.tolist() == [7] * 16 and not a.flags.writeable
    mixed = "def A(F, D):\n" + "".join(f"    F[{10 + k}] = {int(k == 5)}\n" for k in range(16))
    with pytest.raises(NotVectorizable):
        finish_module(mixed, [v], set())


def test_a_header_only_omnireduce_packet_is_the_same_frame_fast_and_traced():
    """omnireduce.p4 expands a header-only DATA packet into N zeros: the vector build's RESULT equals the traced
    code's, byte for byte, and so do the registers."""
    from compiler import compile_file
    from switch.v1model import V1Switch
    from topo.inprocess import frame

    program = compile_file(str(ROOT / "p4src" / "omnireduce.p4")).json
    out = []
    for trace in (None, lambda pid, msg: None):
        sw = V1Switch()
        sw.load(program)
        sw.trace = trace
        sw.tables["SwitchMLIngress.ina_jobs"].insert((1,), "SwitchMLIngress.ina_set_job", [2, 5, 0, 8])
        sw.tables["SwitchMLIngress.ina_epochs"].insert((1,), "SwitchMLIngress.ina_set_epoch", [3])
        for r in range(2):
            sw.tables["SwitchMLIngress.ina_workers"].insert((r + 1, 0x0A000001 + r, 4000 + r, 1),
                                                             "SwitchMLIngress.ina_set_worker", [r])
            sw.tables["SwitchMLEgress.ina_destinations"].insert((1, r), "SwitchMLEgress.ina_set_destination",
                                                                [1, 2, 3 + r, 4 + r, 5 + r])
        sw.pre.set_group(5, [(1, 0), (2, 1)])
        got = []
        for r, payload in ((0, b""), (1, struct.pack("!64i", *range(-32, 32)))):
            ina = struct.pack("!BBHIBBHI", 1, 1, 2, 9, 130, 0, r, 17) + payload
            got.append(sw.process(r + 1, frame(f"00:00:00:00:00:0{r + 1}", "00:00:00:00:00:fe", f"10.0.0.{r + 1}",
                                               "10.0.0.254", 4000 + r, 48864, ina)))
        out.append((got, sw.registers["SwitchMLIngress.ina_values"].cells()[4 * 64:5 * 64]))
    fast, traced = out
    assert fast == traced and fast[0][0] == [] and len(fast[0][1]) == 2
    assert fast[1] == [x & M32 for x in range(-32, 32)]


def test_element_wise_common_paths_keep_a_header_scalar():
    """More than MAX_HOT_ELEMENTS element accesses in one straight-line run would each copy the array: the header
    is refused (and built scalar), unless the run is the out-of-range branch of a hoisted window."""
    v = VectorHeader("h", 10, 16, 40)
    run = [f"F[{10 + k}] = F[{10 + k}] + 1 & 4294967295" for k in range(MAX_HOT_ELEMENTS + 1)]
    with pytest.raises(NotVectorizable) as exc:
        finish_module("def A(F, D):\n" + "\n".join("    " + x for x in run) + "\n", [v], set())
    assert exc.value.headers == {"h"}
    cold = "def A(F, D):\n    if 0 <= F[1] <= 5:\n        pass\n    else:\n" + "\n".join("        " + x for x in run)
    out = finish_module(cold + "\n", [v], set())
    assert "_vput(F[40], 8, int(F[40][8]) + 1 & 4294967295)" in out and "F[18]" not in out
    with pytest.raises(NotVectorizable) as exc:
        finish_module("def A(F, D):\n    x = F[9:12]\n", [v], set())  # a slice cutting through the header
    assert exc.value.headers is None


i32 = st.integers(-2**31, 2**31 - 1)


@given(st.lists(st.tuples(i32, i32), min_size=1, max_size=40))
def test_vsat32_is_a_saturating_int32_add(pairs):
    cells = np.array([a & M32 for a, _ in pairs], dtype=np.uint32)
    fields = np.array([b & M32 for _, b in pairs], dtype=">u4")
    _vsat32(cells, fields)
    assert cells.tolist() == [max(-2**31, min(2**31 - 1, a + b)) & M32 for a, b in pairs]


@pytest.mark.parametrize("source", ["fixture", "compiled"])
def test_column_windows_match_the_traced_code_on_agg64(source):
    """tests/p4/agg64.p4 adds 64 fields into 64 registers at one index: the registers become the columns of one
    2-D array and each packet one row addition; random elements and pool indices (the index is masked to the
    registers' 256 cells), the same frames out and the same registers as the scalar traced code, whose registers
    are the same columns after toggling tracing on."""
    import random

    from switch.v1model import V1Switch
    from topo.frames import udp_frame
    from worker.switchml.header import EXPONENT_BIAS, INA_UDP_PORT, Codec, InaHeader

    if source == "fixture":
        program = json.loads((TESTS / "fixtures" / "agg64.json").read_text())
    else:  # compiler/'s JSON bounds-checks the index: the row addition sits in `if i < 256:`
        from compiler import compile_file
        program = compile_file(str(TESTS / "p4" / "agg64.p4")).json
    codec = Codec.from_program_json(program)
    fast, ref = V1Switch(), V1Switch()
    for sw in (fast, ref):
        sw.load(program)
    ref.trace = lambda pid, msg: None
    assert "RC0[i]" in fast.generated_source and "RC0" not in ref.generated_source
    regs = [fast.registers[f"MyIngress.agg_{k:02d}"] for k in range(64)]
    assert all(r.columns is regs[0].columns for r in regs) and regs[0].columns.shape == (256, 64)
    rng = random.Random(5)
    for n in range(300):
        elems = [rng.choice([0, 1, -1, 2**31 - 1, -2**31, rng.randrange(-2**31, 2**31)]) for _ in range(64)]
        frame = udp_frame("00:00:0a:00:00:fe", "00:00:00:00:00:01", "10.0.0.1", "10.0.0.2", 20000, INA_UDP_PORT,
                          codec.encode(InaHeader(pool_index=rng.randrange(2**16), packet_id=n,
                                                 exponent=EXPONENT_BIAS), elems))
        if rng.random() < 0.05:
            frame = frame[:rng.randrange(len(frame))]
        assert fast.process(1, frame) == ref.process(1, frame), f"packet {n}"
    for name, reg in fast.registers.items():
        assert reg.cells() == ref.registers[name].cells(), name
    assert fast.stats == ref.stats


def test_a_failing_vector_build_falls_back_to_the_scalar_code(load_compiled, monkeypatch):
    """Vector headers may only ever add failures: if generating them breaks, the program loads as scalar code."""
    import switch.sim.vectors as vectors

    real = vectors.finish_module

    def broken(source, vecs, numpy_regs):
        if vecs:
            raise RuntimeError("a bug in the vector rewrite")
        return real(source, vecs, numpy_regs)

    monkeypatch.setattr(vectors, "finish_module", broken)
    sw = load_compiled("vec_header")
    assert not sw._l.cg.vectors and not sw.registers["Ing.acc"].is_vector
    frame = CTL.pack(0, 0, 0, 3, 0) + ELEMS.pack(*range(N))
    assert sw.process(1, frame) == [(1, Model([0] * ACC).packet(0, 0, 0, 3, 0, list(range(N)), None))]


def test_deparse_bytes_follow_the_array_not_a_stale_copy():
    # _vbytes hands the bytes of the last array out again for the same object (multicast replicas share it); any other
    # array, even one created right after the last one was dropped, gets its own bytes
    vbytes = namespace([])["_vbytes"]
    a = np.arange(N, dtype=np.uint32)
    assert vbytes(a) == ELEMS.pack(*range(N))
    assert vbytes(a) is vbytes(a)
    b = a + 1
    assert vbytes(b) == ELEMS.pack(*range(1, N + 1))
    for k in range(50):  # fresh arrays whose ids may repeat those of freed ones
        assert vbytes(np.full(N, k, dtype=np.uint32)) == ELEMS.pack(*[k] * N)
    assert vbytes(a) == ELEMS.pack(*range(N))
