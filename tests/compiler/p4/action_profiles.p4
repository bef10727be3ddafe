/* Action profiles and selectors, ECMP-style: `ecmp` (exact on eth.dst, selector keys eth.src and etherType) runs a
 * member or a group of action_selector `paths`, which picks a member by crc16 over the selector keys (BMv2: hash %
 * group size, over the group's members in handle order); `l2` runs members of action_profile `ports`. p4c's JSON
 * has no default entry for either table: a miss runs nothing (port 0). Out: the port only; eth.src[7:0] = 0x11 on
 * the ecmp path, 0x22 on l2. Entries come over P4Runtime (tests/switch/runtime/test_action_profiles.py). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
struct headers { ethernet_t eth; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action_selector(HashAlgorithm.crc16, 32w128, 32w14) paths;
    action_profile(32w64) ports;
    action set_port(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    table ecmp {
        key = { hdr.eth.dst: exact; hdr.eth.src: selector; hdr.eth.etherType: selector; }
        actions = { set_port; drop; }
        implementation = paths;
        size = 64;
    }
    table l2 {
        key = { hdr.eth.dst: exact; }
        actions = { set_port; }
        implementation = ports;
    }
    apply {
        if (hdr.eth.dst[47:40] == 0) {
            hdr.eth.src[7:0] = 0x11;
            ecmp.apply();
        } else {
            hdr.eth.src[7:0] = 0x22;
            l2.apply();
        }
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control VC(inout headers hdr, inout metadata meta) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
