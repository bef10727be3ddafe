/* Initial entries without `const` (P4_16 1.2): p4c-bm2-ss 1.2.4.8 writes them into the BMv2 JSON as it writes const
 * entries, and BMv2 1.15 takes a table with JSON entries as const: no entry can be added at run time (the embedded
 * switch does the same). The P4Info is p4c's. In: a, b. Out: port 1 for a = 5 and port 2 for a = 7 (the initial
 * entries), else port 9 (the default action); b is the port. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action fwd(bit<9> port) { sm.egress_spec = port; hdr.h.b = (bit<8>)port; }
    table t {
        key = { hdr.h.a: exact; }
        actions = { fwd; }
        entries = {
            5: fwd(1);
            7: fwd(2);
        }
        default_action = fwd(9);
        size = 8;
    }
    apply { t.apply(); }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
