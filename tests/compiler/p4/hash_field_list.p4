/* hash() over a field list naming fields of a header the packet may not carry, as ECMP and flowlet programs do:
 * `{ipv4.src, ipv4.dst, tcp.sport, tcp.dport, ipv4.protocol}` on a UDP packet. p4c copies every element into a
 * temporary before the call, so the calculation always hashes 13 bytes; for an invalid `tcp` the two ports are
 * whatever tcp's storage holds (on BMv2: the last packet's, see invalid_header_fields.p4). A whole header in the
 * list is copied with its validity, so an invalid one is left out. Out: eth.src[15:0] = crc16 of the 5-tuple,
 * eth.dst[31:0] = crc32 of {tcp, ipv4.protocol}. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> totalLen; bit<16> identification; bit<3> flags;
    bit<13> fragOffset; bit<8> ttl; bit<8> protocol; bit<16> hdrChecksum; bit<32> src; bit<32> dst;
}
header tcp_t { bit<16> sport; bit<16> dport; }
struct headers { ethernet_t eth; ipv4_t ipv4; tcp_t tcp; }
struct metadata { bit<16> h16; bit<32> h32; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etherType) { 0x0800: parse_ipv4; default: accept; }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) { 6: parse_tcp; default: accept; }
    }
    state parse_tcp { pkt.extract(hdr.tcp); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hash(meta.h16, HashAlgorithm.crc16, (bit<16>)0,
             { hdr.ipv4.src, hdr.ipv4.dst, hdr.tcp.sport, hdr.tcp.dport, hdr.ipv4.protocol }, (bit<32>)65536);
        hash(meta.h32, HashAlgorithm.crc32, (bit<32>)0, { hdr.tcp, hdr.ipv4.protocol }, (bit<64>)4294967296);
        hdr.eth.src[15:0] = meta.h16;
        hdr.eth.dst[31:0] = meta.h32;
        sm.egress_spec = 1;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.ipv4); pkt.emit(hdr.tcp); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
