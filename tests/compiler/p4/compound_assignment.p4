/* Compound assignments (P4_16 1.2.2): `x op= y` is `x = x op y`, also `<<=`, `>>=` and the saturating `|+|=`; a
   target holding a call with side effects (a stack index from `post_inc(i)`, which increments i) is evaluated once. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
header e_t { bit<8> v; }
struct headers { h_t h; e_t[4] s; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition select(hdr.h.a) { 0: elems; default: accept; } }
    state elems { pkt.extract(hdr.s.next); pkt.extract(hdr.s.next); pkt.extract(hdr.s.next); transition accept; }
}
bit<8> post_inc(inout bit<8> i) { bit<8> r = i; i = i + 1; return r; }
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.h.a == 0) {
            // s[c] += 0x10, then s[c + 1] += 0x20: c is incremented once per statement
            hdr.s[post_inc(hdr.h.c) & 3].v += 0x10;
            hdr.s[post_inc(hdr.h.c) & 3].v |= 0x20;
        } else {
            hdr.h.a += hdr.h.b; hdr.h.b <<= 2; hdr.h.c >>= 1; hdr.h.d |+|= 200;
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
