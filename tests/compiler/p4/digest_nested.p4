/* A digest whose struct holds another struct: p4c-bm2-ss 1.2.4.8 flattens the members into the learn list (one
 * temporary each, in order) and describes both structs in the P4Info's type_info. simple_switch sends such a
 * digest; PI refuses the pipeline (UNIMPLEMENTED: "Struct can only include bistring members for digests"), and so
 * does the embedded switch's P4Runtime server. In: h = a b; out: the same on port 1. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
struct headers { h_t h; }
struct pair_t { bit<8> x; bit<16> y; }
struct learn_t { pair_t pair; bit<9> port; }
struct metadata { pair_t last; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        meta.last = { hdr.h.b, (bit<16>)hdr.h.a };
        if (hdr.h.a == 0) {
            digest<learn_t>(1, { { hdr.h.a, (bit<16>)hdr.h.b }, sm.ingress_port });
        } else {
            digest<learn_t>(1, { meta.last, 9w3 });
        }
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
