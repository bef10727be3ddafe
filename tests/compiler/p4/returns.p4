/* `return;` in an action (the rest of the action is skipped: predicated on a flag, as p4c's RemoveReturns does),
 * in an apply block (the rest of the control is skipped) and in an inlined sub-control (only the sub-control's rest
 * is skipped); a `return` under a constant condition in an action. Results in header `r`. */
#include <core.p4>
#include <v1model.p4>

header in_t { bit<8> a; bit<8> b; }
header r_t { bit<8> x; bit<8> y; bit<8> z; bit<8> w; }
struct headers { in_t i; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.i); pkt.extract(hdr.r); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control Sub(inout r_t r, in bit<8> b) {
    apply {
        if (b == 0) {
            return;
        }
        r.z = b;
    }
}

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Sub() sub;
    action first(inout bit<8> v) {
        v = 1;
        if (hdr.i.a > 100) {
            return;
        }
        v = 2;
        hdr.r.y = hdr.i.a;
    }
    apply {
        sm.egress_spec = 1;
        first(hdr.r.x);
        sub.apply(hdr.r, hdr.i.b);
        if (hdr.i.b == 0xff) {
            return;
        }
        hdr.r.w = 0x77;
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    // the return is unconditional once the constant condition is folded: the exit is never reached
    action skip() {
        if (!false) {
            return;
        }
        hdr.r.w = 0xee;
        exit;
    }
    apply {
        skip();
        hdr.r.w = hdr.r.w | 0x80;
    }
}
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.i); pkt.emit(hdr.r); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
