// A header or struct read whole with lookahead (h = pkt.lookahead<H>(); p4c's ExpandLookahead: all of H's bits into
// a temporary, the header valid, each field from its bits): select on a looked-ahead field, copy it out, and a packet
// too short for H ending the parser with PacketTooShort.
#include <core.p4>
#include <v1model.p4>

header peek_t { bit<4> kind; bit<12> len; bit<8> tag; }
struct pair_t { bit<8> a; bit<8> b; }
header out_t { bit<8> kind; bit<8> tag; bit<8> a; bit<8> err; }
header data_t { bit<24> d; }
struct headers { out_t o; data_t data; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        hdr.o.setValid();
        peek_t p = pkt.lookahead<peek_t>();
        pair_t q = pkt.lookahead<pair_t>();
        hdr.o.kind = (bit<8>) p.kind;
        hdr.o.tag = p.tag;
        hdr.o.a = q.b;
        transition select(p.kind) { 1: take; default: accept; }
    }
    state take { pkt.extract(hdr.data); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.o.err = sm.parser_error == error.PacketTooShort ? 8w1 : 8w0;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
