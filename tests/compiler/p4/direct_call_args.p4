/* A direct action call whose action-data argument is not a constant (a header field): the argument is copied into
 * the parameter at the call, like an `in` argument (p4c removes every parameter of a directly called action). The
 * same action is also in a table, where the control plane supplies the value. Results in header `r`. */
#include <core.p4>
#include <v1model.p4>

header in_t { bit<8> k; bit<8> v; }
header r_t { bit<8> direct; bit<8> from_table; }
struct headers { in_t i; r_t r; }
struct metadata { bit<8> res; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.i); pkt.extract(hdr.r); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action put(bit<8> val) {
        meta.res = val + 1;
    }
    table t {
        key = { hdr.i.k: exact; }
        actions = { put; NoAction; }
        default_action = NoAction();
    }
    apply {
        put(hdr.i.v);
        hdr.r.direct = meta.res;
        meta.res = 0;
        t.apply();
        hdr.r.from_table = meta.res;
        sm.egress_spec = 1;
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.i); pkt.emit(hdr.r); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
