/* Optional match keys (P4_16 1.2): a key field matches one value or anything. p4c-bm2-ss 1.2.4.8 writes an
 * optional key into the BMv2 JSON as `ternary` (the table's match_type too) and keeps OPTIONAL in the P4Info; a
 * const entry's `_` is a ternary don't-care there. Out: port 1 for (a, b) = (5, anything) by the const entries,
 * port 2 for (anything, 7) by the const entries, the runtime entries' port otherwise, port 9 by default. Table
 * `s` has `size = 0`, which p4c takes as the default size (1024). */
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
    action fwd(bit<9> port) { sm.egress_spec = port; }
    table c {
        key = { hdr.h.a: optional; hdr.h.b: optional; }
        actions = { fwd; NoAction; }
        const entries = {
            (5, _): fwd(1);
            (_, 7): fwd(2);
        }
        default_action = NoAction();
    }
    table s {
        key = { hdr.h.a: optional; hdr.h.b: exact; }
        actions = { fwd; }
        default_action = fwd(9);
        size = 0;
    }
    apply {
        if (!c.apply().hit) {
            s.apply();
        }
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
