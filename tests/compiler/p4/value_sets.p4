// Parser value sets (value_set<T>(size)): a bit<16> set and a struct set over two select keys; members come from
// the control plane (empty at first: only the constant case and default match). p4c's JSON: parse_vsets and
// parse_vset transitions; P4Info value_sets.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<16> t; bit<8> p; bit<8> r; }
struct headers { h_t h; }
struct metadata { }
struct pair_t { bit<16> t; @match(exact) bit<8> p; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    value_set<bit<16>>(4) types;
    value_set<pair_t>(2) pairs;
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.t) { types: one; 0x1234: two; default: pair; }
    }
    state one { hdr.h.r = 1; transition accept; }
    state two { hdr.h.r = 2; transition accept; }
    state pair { transition select(hdr.h.t, hdr.h.p) { pairs: three; default: accept; } }
    state three { hdr.h.r = 3; transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { sm.egress_spec = 1; } }
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
