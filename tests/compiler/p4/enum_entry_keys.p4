/* Serializable enum members as const-entry keys, also masked by a number of the enum's underlying type. */
#include <core.p4>
#include <v1model.p4>

enum bit<16> Kind { A = 0x0100, B = 0x0203 }
header h_t { Kind k; bit<8> r; }
struct headers { h_t h; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action set(bit<8> r) { hdr.h.r = r; }
    table t {
        key = { hdr.h.k : ternary; }
        actions = { set; NoAction; }
        const entries = {
            Kind.A : set(1);
            Kind.B &&& 0xff00 : set(2);
        }
        default_action = NoAction();
    }
    apply { sm.egress_spec = 1; t.apply(); }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
