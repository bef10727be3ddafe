/* packet.advance by a run-time amount (p4c's issue1755-1-bmv2.p4): BMv2 checks the amount against what is left
 * before it moves, so an advance past the end raises PacketTooShort with the offset where it was, and the packet goes
 * on (v1model does not drop on parser errors) carrying the bytes from there. In: a byte skipped, a length byte n,
 * n bytes advanced over. Out (port 0; the deparser emits no header): the bytes after the n, or after the length byte
 * when fewer than n are left. */
#include <core.p4>
#include <v1model.p4>

header len_t { bit<8> n; }
struct headers { len_t len; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.advance(8);
        pkt.extract(hdr.len);
        pkt.advance((bit<32>)hdr.len.n * 8);
        transition accept;
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
