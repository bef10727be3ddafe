// Header stack elements at run-time indices (hs[i] with i not a constant; BMv2's dereference_header_stack and
// access_field): read and write a field, isValid(), setValid()/setInvalid(), element-to-element assignment, an index
// computed by an expression, and the location fixed before side effects: an assignment whose right side changes the
// index through an inout argument, and an action's inout argument whose index the action changes.
#include <core.p4>
#include <v1model.p4>

header ctl_t { bit<8> op; bit<8> i; bit<8> j; bit<8> r; }
header e_t { bit<8> v; }
struct headers { ctl_t ctl; e_t[4] s; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.ctl); pkt.extract(hdr.s.next); pkt.extract(hdr.s.next); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

// sets the index to 0 and returns 0x77
bit<8> reset_index(inout bit<8> i) { i = 0; return 0x77; }

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action bump(inout bit<8> x) { hdr.ctl.i = 0; x = x + 0x10; }
    apply {
        sm.egress_spec = 1;
        if (hdr.ctl.op == 1) {
            hdr.ctl.r = hdr.s[hdr.ctl.i].v;                  // read
        } else if (hdr.ctl.op == 2) {
            hdr.s[hdr.ctl.i].v = 0xaa;                       // write
        } else if (hdr.ctl.op == 3) {
            hdr.ctl.r = hdr.s[hdr.ctl.i].isValid() ? 8w1 : 8w0;
        } else if (hdr.ctl.op == 4) {
            hdr.s[hdr.ctl.i].setValid();                     // element 2 or 3 appears (its v is 0)
        } else if (hdr.ctl.op == 5) {
            hdr.s[hdr.ctl.i].setInvalid();
        } else if (hdr.ctl.op == 6) {
            hdr.s[hdr.ctl.j] = hdr.s[hdr.ctl.i];             // header assignment, both sides at run-time indices
        } else if (hdr.ctl.op == 7) {
            hdr.s[(hdr.ctl.i + hdr.ctl.j) & 3].v = 0xbb;     // an index expression
        } else if (hdr.ctl.op == 8) {
            hdr.s[hdr.ctl.i].v = reset_index(hdr.ctl.i);     // the target's index is read before the call
        } else if (hdr.ctl.op == 9) {
            bump(hdr.s[hdr.ctl.i].v);                        // copy-out goes to the element of the call's index
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
