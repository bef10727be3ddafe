/* Whole header stack assignment (BMv2's assign_header_stack, which p4c emits in parsers and controls alike): each
 * element's validity and, when valid, its fields are copied, and so is the stack's next index, so that a later
 * extract into `.next` continues after the copied elements.
 * Input: eth, op (1 byte), then h_t headers (2 bytes each). op 1: the parser extracts t.next once, copies t to s, then
 * extracts s.next (lands in s[1]). op 2: the parser extracts s[0], s[1]; ingress copies s to u, then invalidates s[0].
 * Output: eth, op, s[0], s[1], u[0], u[1]. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header op_t { bit<8> op; }
header h_t { bit<16> v; }
struct headers { ethernet_t eth; op_t op; h_t[2] s; h_t[2] t; h_t[2] u; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.op);
        transition select(hdr.op.op) { 1: via_t; 2: two; default: accept; }
    }
    state via_t {
        pkt.extract(hdr.t.next);
        hdr.s = hdr.t;
        pkt.extract(hdr.s.next);
        transition accept;
    }
    state two { pkt.extract(hdr.s.next); pkt.extract(hdr.s.next); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.op.op == 2) {
            hdr.u = hdr.s;
            hdr.s[0].setInvalid();
        }
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.eth); pkt.emit(hdr.op); pkt.emit(hdr.s); pkt.emit(hdr.u); }
}

V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
