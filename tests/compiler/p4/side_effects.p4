/* Calls of functions with inout parameters inside larger expressions, evaluated left to right as the P4_16 spec
 * requires (p4c's SideEffectOrdering): an operand read before a call is not changed by the call's copy-out; `&&`,
 * `||` and `?:` evaluate their other operands (and so their side effects) only when needed. Results in header `r`. */
#include <core.p4>
#include <v1model.p4>

header in_t { bit<8> a; bit<8> b; }
header r_t { bit<8> p; bit<8> q; bit<8> r; bit<8> s; bit<8> t; bit<8> u; bit<8> v; bit<8> w; bit<8> x; }
struct headers { in_t i; r_t r; }
struct metadata { bit<8> a; }

bit<8> bump(inout bit<8> x) {
    x = x + 1;
    return x;
}

bool set_ff(inout bit<8> v) {
    v = 0xff;
    return true;
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.i); pkt.extract(hdr.r); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        meta.a = hdr.i.a;
        hdr.r.p = meta.a + bump(meta.a);
        hdr.r.q = meta.a;
        hdr.r.r = bump(meta.a) * 2 + bump(meta.a);
        hdr.r.s = 0;
        bool b1 = hdr.i.b == 0 || set_ff(hdr.r.s);
        hdr.r.t = b1 ? 8w1 : 8w2;
        hdr.r.x = (hdr.i.b == 1 && set_ff(hdr.r.u)) ? 8w7 : 8w9;
        hdr.r.v = hdr.i.b > 3 ? bump(hdr.r.w) : hdr.r.w;
        sm.egress_spec = 1;
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.i); pkt.emit(hdr.r); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
