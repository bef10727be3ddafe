/* Digests as an L2 learning switch sends them: an unknown source MAC (a miss in `smac`) sends
 * {source MAC, ingress port} to the controller. The values are copied at the call (p4c's temporaries): the later
 * write of eth.src does not change what is sent. Only the last digest() of a packet is sent (simple_switch
 * samples one learn list when ingress ends): etherType 0x9999 sends {dst, 7} instead. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
struct headers { ethernet_t eth; }
struct mac_learn_t { bit<48> mac; bit<9> port; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action learn() { digest<mac_learn_t>(1, { hdr.eth.src, sm.ingress_port }); }
    table smac {
        key = { hdr.eth.src: exact; }
        actions = { learn; NoAction; }
        default_action = learn();
    }
    apply {
        smac.apply();
        if (hdr.eth.etherType == 0x9999) {
            digest<mac_learn_t>(1, { hdr.eth.dst, 9w7 });
        }
        hdr.eth.src = 0;
        sm.egress_spec = 1;
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control VC(inout headers hdr, inout metadata meta) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
