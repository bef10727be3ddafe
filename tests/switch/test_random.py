"""`random()` (modify_field_rng_uniform) draws from the switch's own generator: `V1Switch(seed=...)` repeats runs."""

from __future__ import annotations

import random

from compiler import compile_source
from switch.v1model import V1Switch

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> r; }
struct headers { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply { random(hdr.h.r, 8w10, 8w200); sm.egress_spec = 1; }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def draws(seed: int, n: int = 64) -> list[int]:
    sw = V1Switch(seed=seed)
    sw.load(compile_source(PROGRAM, name="random.p4").json)
    return [sw.process(0, b"\x00")[0][1][0] for _ in range(n)]


def test_seeded_switches_draw_the_same_values_within_bounds() -> None:
    a, b, c = draws(1), draws(1), draws(2)
    assert a == b
    assert a != c
    assert all(10 <= x <= 200 for x in a + c)
    assert len(set(a)) > 16  # really random, not a constant


BOUNDS_PROGRAM = PROGRAM.replace("header h_t { bit<8> r; }", "header h_t { bit<8> r; bit<8> lo; bit<8> hi; }").replace(
    "random(hdr.h.r, 8w10, 8w200);", "random(hdr.h.r, hdr.h.lo, hdr.h.hi);")


def test_draws_are_randint_of_the_seeded_generator() -> None:
    """The inlined draw consumes the generator as `random.Random.randint` does: same values, same order."""
    ref = random.Random(7)
    assert draws(7, 200) == [ref.randint(10, 200) for _ in range(200)]


def test_bounds_from_fields_draw_within_them() -> None:
    sw = V1Switch(seed=3)
    sw.load(compile_source(BOUNDS_PROGRAM, name="random_bounds.p4").json)
    ref = random.Random(3)
    for lo, hi in [(0, 255), (7, 7), (100, 163), (0, 1), (200, 10)]:
        got = [sw.process(0, bytes([0, lo, hi]))[0][1][0] for _ in range(40)]
        if lo <= hi:
            assert got == [ref.randint(lo, hi) for _ in range(40)]
        else:  # an empty range: BMv2's uniform_int_distribution is undefined there; the low bound, no draw
            assert got == [lo] * 40
