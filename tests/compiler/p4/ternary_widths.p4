/* `?:` with an untyped integer branch and a bit<W> branch has type bit<W> (P4_16 spec §8.9.2 implicit casts; p4c
 * types `c ? 2 : 3w1` as bit<3> whatever the context), so `(bit<16>)-(c ? 2 : 3w1)` negates modulo 2^3.
 * Input/output: eth, then data_t; out.x = (bit<16>)-(in.k == 1 ? 2 : 3w1), out.y = in.k == 1 ? 8w200 : 7. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header data_t { bit<8> k; bit<16> x; bit<8> y; }
struct headers { ethernet_t eth; data_t d; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.d); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.d.x = (bit<16>)-((hdr.d.k == 1) ? 2 : 3w1);
        hdr.d.y = (hdr.d.k == 1) ? 8w200 : 7;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.d); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
