/* Direct application of a control or parser type (P4_16 spec §15.1): `Swap.apply(...)` and `Opt.apply(...)` with
 * no declared instance apply anonymous instances; control-plane names are the type's (`Ing.Swap.pick`), as p4c's
 * InstantiateDirectCalls names them.
 * Input: eth, then opt_t when etherType is 0x88B5; output: eth with src/dst swapped when opt.kind selects it. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header opt_t { bit<8> kind; bit<8> value; }
struct headers { ethernet_t eth; opt_t opt; }
struct metadata { bit<8> seen; }

parser Opt(packet_in pkt, out opt_t opt, inout bit<8> seen) {
    state start { pkt.extract(opt); seen = opt.value; transition accept; }
}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etherType) { 0x88B5: opt; default: accept; }
    }
    state opt { Opt.apply(pkt, hdr.opt, meta.seen); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Swap(inout ethernet_t eth, in bit<8> kind) {
    action swap() { bit<48> t = eth.dst; eth.dst = eth.src; eth.src = t; }
    table pick {
        key = { kind: exact; }
        actions = { swap; NoAction; }
        const entries = { 1 : swap(); }
        default_action = NoAction();
    }
    apply { pick.apply(); }
}
control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.opt.isValid()) {
            Swap.apply(hdr.eth, hdr.opt.kind);
            hdr.opt.value = meta.seen + 1;
        }
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.opt); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
