/* Tuple-typed locals (p4c's EliminateTuples makes them structs): initialized from a list, read and written by
 * constant index, assigned whole from a list that reads the tuple itself (copied first). Out: eth.src = t[0] ++
 * t[1] after the swap, eth.etherType = the second tuple's sum. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
struct headers { ethernet_t eth; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        tuple<bit<16>, bit<32>> t = { hdr.eth.etherType, hdr.eth.dst[31:0] };
        t[0] = t[0] + 1;
        t = { (bit<16>)t[1], (bit<32>)t[0] };
        hdr.eth.src = t[0] ++ t[1];
        tuple<bit<16>, bit<16>, bool> u = { 16w3, 16w4, hdr.eth.dst[47:40] == 0 };
        hdr.eth.etherType = u[2] ? u[0] + u[1] : u[0];
        sm.egress_spec = 1;
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control VC(inout headers hdr, inout metadata meta) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
