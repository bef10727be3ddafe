/* A loop by recirculation, as programs that process a packet in several passes write it: egress recirculates the
 * packet until the counter in its header reaches the target, then it leaves on port 1. BMv2 puts no bound on the
 * number of passes (simple_switch.cpp); the embedded switch drops only a packet that is still looping after
 * `--max-loop` passes (an endless loop), counting and logging it. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header loop_t { bit<16> n; bit<16> target; }
struct headers { ethernet_t eth; loop_t loop; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.loop); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.loop.n < hdr.loop.target) {
            hdr.loop.n = hdr.loop.n + 1;
            recirculate_preserving_field_list(0);
        }
    }
}
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.loop); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
