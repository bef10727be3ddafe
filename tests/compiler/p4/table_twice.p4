/* A table applied in two places that continue alike (both branches of an if, each after its own statements, then
 * the same code): BMv2 has one node for the table, with one set of successors, as p4c builds it. p4c refuses the
 * other cases (a path from the table back to itself, or two different successors), and so do we
 * (test_errors.py). Out: eth.src[7:0] = branch, eth.src[15:8] = 3 after the join, port from `fwd`. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
struct headers { ethernet_t eth; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action forward(bit<9> port) { sm.egress_spec = port; }
    table fwd {
        key = { hdr.eth.dst: exact; }
        actions = { forward; NoAction; }
        const entries = { 0x000000000001 : forward(2); 0x000000000002 : forward(3); }
    }
    apply {
        if (hdr.eth.etherType == 0x0800) {
            hdr.eth.src[7:0] = 1;
            fwd.apply();
        } else {
            hdr.eth.src[7:0] = 2;
            fwd.apply();
        }
        hdr.eth.src[15:8] = 3;
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control VC(inout headers hdr, inout metadata meta) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
