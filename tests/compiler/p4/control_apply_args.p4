/* A control's apply arguments that are not variables: a constant, an expression and slices, for `in` and `inout`
 * parameters (copied in, and out, through temporaries, as p4c does). In: h = a b w (w: bit<32>); out: a = a + 17 +
 * w[7:0], b = b + w[15:8] with w[31:24] (the inout slice) incremented by each apply. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<32> w; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control Add(in bit<8> x, inout bit<8> y, inout bit<8> n) {
    apply {
        y = y + x;
        n = n + 1;
    }
}

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Add() add;
    apply {
        sm.egress_spec = 1;
        add.apply(17, hdr.h.a, hdr.h.w[31:24]);
        add.apply(hdr.h.w[7:0], hdr.h.a, hdr.h.w[31:24]);
        add.apply(hdr.h.w[15:8] + 0, hdr.h.b, hdr.h.w[31:24]);
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
