/* mark_to_drop on a copy of standard_metadata: an action's inout parameter bound to standard_metadata (as p4c's
 * v1model-special-ops-bmv2.p4 sample binds its default action my_drop(standard_metadata)) drops the packet when the
 * copy is written back; a local standard_metadata_t marked for dropping leaves the real one alone. p4c passes the
 * copy to simple_switch's primitive as a metadata header of its own; ours marks the real one and moves egress_spec
 * and mcast_grp over, restoring the real ones. In: op, then two bit<16> the program writes. Out: op 1 dropped by the
 * table's default action; op 2 forwarded to port 2 carrying the local copy's egress_spec (511, the drop port) and
 * mcast_grp (0); anything else forwarded to port 3 untouched. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> op; bit<16> es; bit<16> mg; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t standard_metadata) {
    action my_drop(inout standard_metadata_t smeta) { mark_to_drop(smeta); }
    action fwd(bit<9> port) { standard_metadata.egress_spec = port; }
    table t {
        key = { hdr.h.es: exact; }
        actions = { fwd; my_drop(standard_metadata); }
        default_action = my_drop(standard_metadata);
    }
    apply {
        standard_metadata.egress_spec = 3;
        standard_metadata.mcast_grp = 0;
        if (hdr.h.op == 1) {
            t.apply();
        } else if (hdr.h.op == 2) {
            standard_metadata_t c = standard_metadata;
            mark_to_drop(c);
            hdr.h.es = (bit<16>)c.egress_spec;
            hdr.h.mg = c.mcast_grp;
            standard_metadata.egress_spec = 2;
        }
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
