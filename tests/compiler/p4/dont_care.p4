/* `_` (DontCare) as an `out` argument: it stands for a fresh variable of the parameter's type whose value is
 * dropped — a header extracted and thrown away in the parser (`extract<T>(_)` skips its bytes), an unused result of
 * an action, of a function and of a control. Results in header `r`. */
#include <core.p4>
#include <v1model.p4>

header skip_t { bit<16> junk; }
header in_t { bit<8> a; bit<8> b; }
header r_t { bit<8> lo; bit<8> hi; bit<8> sum; bit<8> n; }
struct headers { in_t i; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract<skip_t>(_);
        pkt.extract(hdr.i);
        pkt.extract(hdr.r);
        transition accept;
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

void split(in bit<8> x, out bit<4> lo, out bit<4> hi) {
    lo = x[3:0];
    hi = x[7:4];
}

control Sum(in bit<8> x, in bit<8> y, out bit<8> s, out bit<8> d) {
    apply {
        s = x + y;
        d = x - y;
    }
}

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Sum() sum;
    action count(in bit<8> x, out bit<8> ones, out bit<8> zeros) {
        ones = (bit<8>)x[0:0] + (bit<8>)x[1:1] + (bit<8>)x[2:2] + (bit<8>)x[3:3];
        zeros = 4 - ones;
    }
    apply {
        bit<4> lo;
        split(hdr.i.a, lo, _);
        hdr.r.lo = (bit<8>)lo;
        bit<4> hi;
        split(hdr.i.b, _, hi);
        hdr.r.hi = (bit<8>)hi;
        sum.apply(hdr.i.a, hdr.i.b, hdr.r.sum, _);
        count(hdr.i.a, hdr.r.n, _);
        sm.egress_spec = 1;
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.i); pkt.emit(hdr.r); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
