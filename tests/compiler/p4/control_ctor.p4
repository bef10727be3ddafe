/* Controls with constructor parameters (compile-time constants bound at instantiation: p4c specializes the control
 * per instance), instantiated inside another control and as a V1Switch argument, and the package written with
 * explicit type arguments `V1Switch<H, M>(...)`. Results in header `r`. */
#include <core.p4>
#include <v1model.p4>

header in_t { bit<8> a; bit<8> b; }
header r_t { bit<8> x; bit<8> y; bit<8> z; bit<8> base; }
struct headers { in_t i; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.i); pkt.extract(hdr.r); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

// v = v * factor (+ factor when `twice`), the addition in an action of a table of each instance
control Scale(inout bit<8> v)(bit<8> factor, bool twice) {
    action add_factor() { v = v + factor; }
    table extra {
        actions = { add_factor; NoAction; }
        default_action = NoAction();
    }
    apply {
        v = v * factor;
        if (twice) {
            extra.apply();
        }
    }
}

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm)(bit<8> base) {
    Scale(2, false) s2;
    Scale(3, true) s3;
    Scale(2, false) again;
    apply {
        hdr.r.x = hdr.i.a;
        s2.apply(hdr.r.x);
        hdr.r.y = hdr.i.b;
        s3.apply(hdr.r.y);
        hdr.r.z = hdr.i.a;
        again.apply(hdr.r.z);
        hdr.r.base = base;
        sm.egress_spec = 1;
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.i); pkt.emit(hdr.r); } }
V1Switch<headers, metadata>(P(), VC(), Ing(8w9), Eg(), CC(), Dep()) main;
