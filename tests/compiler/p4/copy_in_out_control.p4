/* Copy-in/copy-out of control apply arguments (P4_16 spec §6.8): the same variable passed for two inout parameters
 * (both start from its value; the copies back happen left to right, so the last one wins), a whole header passed
 * together with one of its own fields, an expression for an `in` parameter, and an `out` header argument, which
 * starts invalid. Results in header `r`. */
#include <core.p4>
#include <v1model.p4>

header in_t { bit<8> x; bit<8> y; }
header r_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
header opt_t { bit<8> v; }
struct headers { in_t i; r_t r; opt_t opt; }
struct metadata { bit<8> m; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.i); pkt.extract(hdr.r); pkt.extract(hdr.opt); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control Twice(inout bit<8> p, inout bit<8> q) {
    apply {
        p = p + 1;
        q = q + 10;
    }
}

control Whole(inout r_t r, inout bit<8> part, in bit<8> k) {
    apply {
        part = k;     // written back after r: wins for r.c
        r.c = 0x77;
        r.d = r.c;
    }
}

control Fill(out opt_t o, in bit<8> k) {
    apply {
        if (k == 1) {
            o.setValid();
            o.v = 0xab;
        }
    }
}

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Twice() twice;
    Whole() whole;
    Fill() fill;
    apply {
        meta.m = hdr.i.x;
        twice.apply(meta.m, meta.m);
        hdr.r.a = meta.m;
        whole.apply(hdr.r, hdr.r.c, hdr.i.y + 1);
        fill.apply(hdr.opt, hdr.i.y);
        sm.egress_spec = 1;
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.i); pkt.emit(hdr.r); pkt.emit(hdr.opt); }
}
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
