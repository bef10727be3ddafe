/* Table keys that are expressions (p4c's SimplifyKey): the key is computed into a variable right before each
 * statement that applies the table, also when the apply is an if condition, and a constant key matches its value.
 * In: a b; out: a b r, r = what the tables did. */
#include <core.p4>
#include <v1model.p4>

header in_t { bit<8> a; bit<8> b; }
header r_t { bit<8> r; }
struct headers { in_t i; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.i); pkt.extract(hdr.r); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action set(bit<8> v) { hdr.r.r = hdr.r.r | v; }
    table sum {
        key = { hdr.i.a + hdr.i.b : exact @name("a_plus_b"); }
        actions = { set; NoAction; }
        const entries = { 10 : set(1); }
        default_action = NoAction();
    }
    table big {
        key = { hdr.i.a > hdr.i.b : exact @name("a_gt_b"); 8w7 : exact @name("seven"); }
        actions = { set; NoAction; }
        const entries = { (true, 7) : set(2); }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        hdr.i.b = hdr.i.b + 1;      /* the keys see this update: computed where the table is applied */
        sum.apply();
        if (big.apply().hit) {
            hdr.r.r = hdr.r.r | 4;
        }
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.i); pkt.emit(hdr.r); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
