/* Calls inside an `if` in an action: the inlined code (copy-in/copy-out of a struct argument, the callee's own `if`)
 * is predicated on the condition, struct copies field by field, as p4c's mid end does for BMv2. Also control-local
 * initializers that call a function (they keep their order). Results in `r`. */
#include <core.p4>
#include <v1model.p4>

header in_t { bit<8> a; bit<8> b; bit<8> c; }
header r_t { bit<8> lo; bit<8> hi; bit<8> x; bit<8> y; }
struct pair_t { bit<8> lo; bit<8> hi; }
struct headers { in_t i; r_t r; }
struct metadata { pair_t pair; }

// puts the smaller value first
void order(inout pair_t p) {
    if (p.lo > p.hi) {
        bit<8> t = p.lo;
        p.lo = p.hi;
        p.hi = t;
    }
}

bit<8> smaller(in bit<8> a, in bit<8> b) {
    if (a < b) {
        return a;
    }
    return b;
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.i); pkt.extract(hdr.r); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    bit<8> first = smaller(hdr.i.a, hdr.i.b);
    bit<8> second = first + 1;
    action sort_if_asked() {
        meta.pair.lo = hdr.i.a;
        meta.pair.hi = hdr.i.b;
        if (hdr.i.c == 1) {
            order(meta.pair);
        }
        hdr.r.lo = meta.pair.lo;
        hdr.r.hi = meta.pair.hi;
    }
    apply {
        sort_if_asked();
        hdr.r.x = first;
        hdr.r.y = second;
        sm.egress_spec = 1;
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.i); pkt.emit(hdr.r); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
