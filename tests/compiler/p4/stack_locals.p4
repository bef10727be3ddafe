// Header stacks as local variables (H[2] tmp;): elements start invalid, whole-stack assignment in both directions,
// element assignment, push_front on the local, stack equality (p4c's RemoveComplexComparisons: element by element,
// two invalid headers equal).
#include <core.p4>
#include <v1model.p4>

header ctl_t { bit<8> op; bit<8> r; }
header e_t { bit<8> v; }
struct headers { ctl_t ctl; e_t[2] s; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.ctl); transition select(hdr.ctl.op) { 0: accept; default: elems; } }
    state elems { pkt.extract(hdr.s.next); pkt.extract(hdr.s.next); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    e_t[2] keep;
    apply {
        sm.egress_spec = 1;
        e_t[2] t;
        if (hdr.ctl.op == 1) {
            t = hdr.s;                       // copy, then change the copy only
            t[0].v = 0x99;
            hdr.ctl.r = t == hdr.s ? 8w1 : 8w2;
        } else if (hdr.ctl.op == 2) {
            t = hdr.s;
            t.push_front(1);                 // [-, s0]
            t[0].setValid();
            t[0].v = 0x55;
            hdr.s = t;
        } else if (hdr.ctl.op == 3) {
            keep[1] = hdr.s[0];               // keep = [-, s0]
            hdr.s = keep;                    // only element 1 is valid and emitted
        } else {
            // op 0 (no elements) or another value: a fresh local equals the parsed stack only when both are empty
            hdr.ctl.r = t == hdr.s ? 8w3 : 8w4;
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
