/* Fields of a header the packet does not carry. P4_16 leaves their value unspecified; BMv2 hands each packet the PHV
 * the packet before it released and clears only validity and metadata (bm_sim/phv.cpp PHV::reset, phv_source.cpp),
 * so they hold what the last packet left there: its parsed values, or a value written while the header was invalid.
 * setValid() on an invalid header zeroes its fields first (simple_switch's add_header). Out: eth.src = ipv4.src ++
 * tcp.sport, read whether or not the headers are valid; eth.dst = 0xAAAAAAAAAAAA when ipv4.diffserv == 1;
 * etherType 0x8888 writes tcp.sport = 0x7777 into the invalid header first; 0x9999 calls tcp.setValid(). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> totalLen; bit<16> identification; bit<3> flags;
    bit<13> fragOffset; bit<8> ttl; bit<8> protocol; bit<16> hdrChecksum; bit<32> src; bit<32> dst;
}
header tcp_t { bit<16> sport; bit<16> dport; }
struct headers { ethernet_t eth; ipv4_t ipv4; tcp_t tcp; }
struct metadata { }

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
        if (hdr.eth.etherType == 0x8888) { hdr.tcp.sport = 0x7777; }
        if (hdr.eth.etherType == 0x9999) { hdr.tcp.setValid(); }
        hdr.eth.src = hdr.ipv4.src ++ hdr.tcp.sport;
        if (hdr.ipv4.diffserv == 1) { hdr.eth.dst = 0xAAAAAAAAAAAA; }
        sm.egress_spec = 1;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.ipv4); pkt.emit(hdr.tcp); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
