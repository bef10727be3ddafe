// Serializable enums meeting their underlying type (p4c casts implicitly): compared with a bit<16> field on either
// side, and a header stack index of enum type (a run-time one, from a cast of a field).
#include <core.p4>
#include <v1model.p4>

enum bit<16> kind_t { A = 0x0800, B = 0x86dd }
enum bit<8> slot_t { FIRST = 0, SECOND = 1 }
header ctl_t { bit<16> kind; bit<8> slot; bit<8> r; }
header e_t { bit<8> v; }
struct headers { ctl_t ctl; e_t[2] s; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.ctl); pkt.extract(hdr.s.next); pkt.extract(hdr.s.next); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        kind_t k = kind_t.B;
        if (hdr.ctl.kind == kind_t.A) {
            hdr.ctl.r = 1;
        } else if (k == hdr.ctl.kind) {
            hdr.ctl.r = 2;
        }
        slot_t i = (slot_t) hdr.ctl.slot;
        hdr.s[i].v = hdr.s[i].v + 1;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
