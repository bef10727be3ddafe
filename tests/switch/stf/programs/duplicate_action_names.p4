/* Two JSON actions named Ing.fwd, as p4c emits them: the table's fwd(port) and the copy the direct call fwd(4)
 * specialises (no parameters). A control-plane command naming Ing.fwd for table t means the table's action. */
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
struct headers { ethernet_t eth; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; } }
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action fwd(bit<9> port) { sm.egress_spec = port; hdr.eth.etherType = (bit<16>)port; }
    table t { key = { hdr.eth.dst: exact; } actions = { fwd; NoAction; } default_action = NoAction(); }
    apply { if (hdr.eth.etherType == 0xFFFF) { fwd(4); } else { t.apply(); } }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
