/* Generic functions: specialized for each list of type arguments, given explicitly (`pick<bit<8>>(...)`) or
 * inferred from the arguments (as p4c's SpecializeGenericFunctions does), with a statement body. A generic body is
 * checked against its type variables, so `h.isValid()` for `in H h` is refused (tests/compiler/test_errors.py), as p4c
 * refuses it. Results in header `r`. */
#include <core.p4>
#include <v1model.p4>

header in_t { bit<8> a; bit<8> b; bit<16> w; }
header r_t { bit<8> x; bit<16> y; bit<8> z; }
struct headers { in_t i; r_t r; }
struct metadata { }

T pick<T>(in bool c, in T a, in T b) {
    if (c) {
        return a;
    }
    return b;
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.i); pkt.extract(hdr.r); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.r.x = pick<bit<8>>(hdr.i.a > hdr.i.b, hdr.i.a, hdr.i.b);
        hdr.r.y = pick(hdr.i.a < 10, 16w1, hdr.i.w);
        hdr.r.z = pick(hdr.i.isValid() && hdr.i.b == 7, 8w1, 8w0);
        sm.egress_spec = 1;
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.i); pkt.emit(hdr.r); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
