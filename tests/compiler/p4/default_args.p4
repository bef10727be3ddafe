// Default parameter values (P4_16 spec, "Optional parameters and default values"): a call that leaves out trailing
// parameters with defaults gets the defaults (p4c's DefaultArguments), for an action called directly, a control and
// a parser applied from their callers, and a function.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; bit<8> f; }
struct headers { h_t h; }
struct metadata { }

parser Sub(packet_in pkt, inout h_t h, in bit<8> add = 0x40) {
    state start { h.e = h.e + add; transition accept; }
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Sub() sub;
    state start { pkt.extract(hdr.h); sub.apply(pkt, hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

bit<8> plus(in bit<8> x, in bit<8> y = 3) { return x + y; }

action set2(out bit<8> x, in bit<8> y = 5) { x = y << 1; }

control Add(inout bit<8> v, in bit<8> k = 7) { apply { v = v + k; } }

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Add() add;
    apply {
        sm.egress_spec = 1;
        set2(hdr.h.a);              // a = 5 << 1
        set2(hdr.h.b, hdr.h.b);     // b = b << 1
        add.apply(hdr.h.c);         // c = c + 7
        add.apply(hdr.h.d, 1);      // d = d + 1
        hdr.h.f = plus(hdr.h.f);    // f = f + 3
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
