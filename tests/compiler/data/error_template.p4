// Template for tests/compiler/test_errors.py: @DECLS@, @LOCALS@ (ingress locals) and @BODY@ (ingress apply) are
// replaced by each case. Line 16 is the first line of @BODY@.
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct headers { eth_t eth; }
struct metadata { bit<8> a; bit<16> b; bool f; }
@DECLS@
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    @LOCALS@
    apply {
        @BODY@
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
