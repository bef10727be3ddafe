// A header-valued conditional as the source of a header assignment (h = c ? h1 : h2; BMv2's TERNARY_OP on
// headers): the condition is evaluated once, before the copy, even when it reads the header being written; nested
// conditionals and a stack element as a branch; header copies under an `if` in an action (predicated, as p4c does).
#include <core.p4>
#include <v1model.p4>

header ctl_t { bit<8> op; bit<8> sel; }
header e_t { bit<8> x; bit<8> y; }
struct headers { ctl_t ctl; e_t a; e_t b; e_t[2] s; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ctl); pkt.extract(hdr.a);
        transition select(hdr.ctl.op) { 3: no_b; default: with_b; }
    }
    state with_b { pkt.extract(hdr.b); pkt.extract(hdr.s.next); transition accept; }
    state no_b { transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action pick() {
        if (hdr.ctl.sel == 1) { hdr.a = hdr.b; } else if (hdr.ctl.sel == 2) { hdr.a = hdr.s[0]; }
    }
    apply {
        sm.egress_spec = 1;
        if (hdr.ctl.op == 1) {
            hdr.a = hdr.ctl.sel == 1 ? hdr.b : hdr.s[0];
        } else if (hdr.ctl.op == 2) {
            // the condition reads a.x, which the copy overwrites: chosen once, so all of b is copied
            hdr.a = hdr.a.x == 0x11 ? hdr.b : hdr.s[0];
        } else if (hdr.ctl.op == 3) {
            // b was not parsed (invalid): copying it invalidates a
            hdr.a = hdr.ctl.sel == 1 ? hdr.b : hdr.a;
        } else if (hdr.ctl.op == 4) {
            hdr.a = hdr.ctl.sel == 0 ? hdr.a : (hdr.ctl.sel == 1 ? hdr.b : hdr.s[0]);
        } else if (hdr.ctl.op == 5) {
            pick();
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
