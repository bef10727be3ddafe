/* A control instance passed to another control as a constructor argument (`leaf() l; upd(l) u;`), the class of
 * third-party programs issue 41 lists: p4c-bm2-ss 1.2.4.8 compiles it, and so does ours, with the same P4Info (the
 * table inside the passed instance is named by where it was instantiated, Ing.l.t; applying the instance twice is
 * refused by both: "a path from table Ing.l.t back to itself"). In: a, b. Out: port 1, a plus the table's increment
 * (1 by default, an entry's value for its b), then b plus 1. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control Leaf_t(inout headers hdr);

control leaf(inout headers hdr) {
    action inc(bit<8> by) { hdr.h.a = hdr.h.a + by; }
    table t {
        key = { hdr.h.b: exact; }
        actions = { inc; }
        default_action = inc(1);
    }
    apply { t.apply(); }
}

control upd(inout headers hdr)(Leaf_t l) {
    apply { l.apply(hdr); hdr.h.b = hdr.h.b + 1; }
}

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    leaf() l;
    upd(l) u;
    apply { u.apply(hdr); sm.egress_spec = 1; }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
