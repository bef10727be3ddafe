/* Varbit fields (P4_16 spec §7.1.6.2, BMv2 `extract_VL` / `assign_VL`): a header with a varbit field in the middle
 * is extracted with a run-time size in bits and emitted with the width it was extracted with; varbit values are
 * compared, copied (also through a local varbit and a whole-header copy), summed into a checksum, extracted into a
 * stack; sizes that are not a multiple of 8 (ParserInvalidArgument), larger than the field (HeaderTooShort) or
 * beyond the packet (PacketTooShort) stop the parser as on BMv2. A size computed from a lookahead of a 16-bit header
 * needs all 16 bits in the packet, as p4c's lowering of lookahead<T>() reads the whole T.
 * Input: ctl (op, len in bits), then headers of type opt_t; output: ctl (err set), the valid headers, sum. */
#include <core.p4>
#include <v1model.p4>

header ctl_t { bit<8> op; bit<8> len; bit<8> err; }
header opt_t { bit<8> kind; varbit<64> data; bit<8> tail; }
header peek_t { bit<8> kind; bit<8> next; bit<8> pad; }
header sum_t { bit<16> csum; }
struct headers { ctl_t ctl; opt_t a; opt_t b; opt_t[2] s; sum_t sum; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ctl);
        transition select(hdr.ctl.op) { 3: stack; 4: peek; default: first; }
    }
    state first {
        pkt.extract(hdr.a, (bit<32>)hdr.ctl.len);
        transition select(hdr.ctl.op) { 2: second; default: accept; }
    }
    state second { pkt.extract(hdr.b, (bit<32>)hdr.ctl.len + 8); transition accept; }
    state stack {
        pkt.extract(hdr.s.next, (bit<32>)hdr.ctl.len);
        pkt.extract(hdr.s.next, 16);
        transition accept;
    }
    state peek {
        // the size is the looked-ahead `next` byte of the header itself, in bytes
        pkt.extract(hdr.a, (bit<32>)pkt.lookahead<peek_t>().next * 8);
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    varbit<64> tmp;
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.ParserInvalidArgument) { hdr.ctl.err = 1; }
        else if (sm.parser_error == error.HeaderTooShort) { hdr.ctl.err = 2; }
        else if (sm.parser_error == error.PacketTooShort) { hdr.ctl.err = 3; }
        if (hdr.ctl.op == 1 && hdr.a.isValid()) {
            hdr.sum.setValid();
        } else if (hdr.ctl.op == 2 && hdr.b.isValid()) {
            if (hdr.a.data == hdr.b.data) { hdr.ctl.err = 0x10; }
            tmp = hdr.a.data;
            hdr.a.data = hdr.b.data;
            hdr.b.data = tmp;
        } else if (hdr.ctl.op == 3 && hdr.s[1].isValid()) {
            hdr.a = hdr.s[1];
            hdr.b = hdr.s[0];
            hdr.s[0].setInvalid();
            if (hdr.a.data == hdr.b.data) { hdr.ctl.err = 0x20; }
        }
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) {
    apply {
        update_checksum(hdr.sum.isValid(), { hdr.a.kind, hdr.a.data, hdr.a.tail }, hdr.sum.csum,
                        HashAlgorithm.csum16);
    }
}
control D(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.ctl); pkt.emit(hdr.a); pkt.emit(hdr.b); pkt.emit(hdr.s); pkt.emit(hdr.sum); }
}
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
