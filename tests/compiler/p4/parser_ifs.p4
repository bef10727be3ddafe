/* `if` in parser states, which p4c turns into states selecting on the condition (BMv2 parsers have none): nested,
 * without else, extracting in a branch, with a state-local variable declared before the if and read after it.
 * Out: eth.src[7:0] = the path taken (1 / 2 / 3), eth.src[15:8] = the local, vlan extracted only for
 * etherType 0x8100 (and then emitted). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header vlan_t { bit<16> tci; bit<16> etherType; }
struct headers { ethernet_t eth; vlan_t vlan; }
struct metadata { bit<8> path; bit<8> seen; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        bit<8> n = 8w0x10;
        if (hdr.eth.etherType == 0x8100) {
            pkt.extract(hdr.vlan);
            meta.path = 1;
            if (hdr.vlan.tci == 5) {
                n = n + 1;
            }
        } else if (hdr.eth.etherType[15:8] == 0x08) {
            meta.path = 2;
        } else {
            meta.path = 3;
            n = 8w0x30;
        }
        meta.seen = n;
        transition accept;
    }
}

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.eth.src[7:0] = meta.path;
        hdr.eth.src[15:8] = meta.seen;
        sm.egress_spec = 1;
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control VC(inout headers hdr, inout metadata meta) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.vlan); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
