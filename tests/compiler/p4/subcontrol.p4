/* Sub-controls: a control instantiated twice inside the ingress and applied with different arguments; its tables,
 * actions, counters and locals are inlined per instance with names `Ing.<instance>.<name>`, as p4c does. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header req_t { bit<8> k1; bit<8> k2; }
header rep_t { bit<8> r1; bit<8> r2; bit<8> hits; }

struct headers { ethernet_t eth; req_t req; rep_t rep; }
struct metadata { bit<8> hits; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.req); pkt.extract(hdr.rep); transition accept; }
}

control Lookup(in bit<8> k, out bit<8> result, inout bit<8> hits) {
    counter(4, CounterType.packets) seen;
    bit<8> tmp;
    action found(bit<8> v) { tmp = v; hits = hits + 1; }
    action miss() { tmp = 0xff; }
    table t {
        key = { k: exact; }
        actions = { found; miss; }
        default_action = miss();
    }
    apply {
        seen.count(0);
        t.apply();
        result = tmp;
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Lookup() first;
    Lookup() second;
    apply {
        meta.hits = 0;
        first.apply(hdr.req.k1, hdr.rep.r1, meta.hits);
        second.apply(hdr.req.k2, hdr.rep.r2, meta.hits);
        hdr.rep.hits = meta.hits;
        sm.egress_spec = 1;
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.req); pkt.emit(hdr.rep); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
