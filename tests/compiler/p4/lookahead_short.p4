/* lookahead<T>() past the end of the packet (BMv2: the parser `set` from a lookahead throws PacketTooShort when
 * fewer than ceil(W/8) bytes remain): parsing stops with error.PacketTooShort, what was extracted before stays
 * valid, the packet is not dropped (v1model) and ingress sees the error in standard_metadata.parser_error.
 * A bare lookahead statement (result unused) checks the length too: p4c's BMv2 back end assigns it to a temporary.
 * Input: eth, then `m` (1 byte: 1 = peek 16 bits, 2 = peek 32 bits after extracting tag, 3 = bare lookahead of a
 * 4-byte header), then payload. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header m_t { bit<8> mode; }
header tag_t { bit<8> t; }
header rep_t { bit<8> err; bit<16> peek16; bit<8> tag_valid; }
struct headers { ethernet_t eth; m_t m; tag_t tag; rep_t rep; }
struct metadata { bit<16> p16; bit<32> p32; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.m);
        transition select(hdr.m.mode) { 1: peek16; 2: peek32; 3: bare; default: accept; }
    }
    state peek16 {
        meta.p16 = pkt.lookahead<bit<16>>();
        transition accept;
    }
    state bare {
        pkt.lookahead<rep_t>();  // result unused: still PacketTooShort when fewer than 4 bytes remain (as p4c+BMv2)
        transition accept;
    }
    state peek32 {
        pkt.extract(hdr.tag);
        meta.p32 = pkt.lookahead<bit<32>>();
        meta.p16 = meta.p32[31:16];
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.rep.setValid();
        hdr.rep.err = 0xEE;
        if (sm.parser_error == error.NoError) { hdr.rep.err = 0; }
        if (sm.parser_error == error.PacketTooShort) { hdr.rep.err = 1; }
        hdr.rep.peek16 = meta.p16;
        hdr.rep.tag_valid = hdr.tag.isValid() ? 8w1 : 8w0;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.eth); pkt.emit(hdr.m); pkt.emit(hdr.tag); pkt.emit(hdr.rep); }
}

V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
