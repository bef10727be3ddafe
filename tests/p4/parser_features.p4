/* Parser features: masked select, a header stack (MPLS, extract of .next, select on .last.bos), verify with a
 * program error, lookahead, IPv4 checksum verification; ingress reports parser_error / checksum_error in a `res`
 * header it adds in front of the frame (perr: 0 NoError, 1 PacketTooShort, 2 NoMatch, 3 StackOutOfBounds,
 * 7 IpOptions), and pops / pushes MPLS labels (labels 100 / 200).
 * Fixture: tests/fixtures/parser_features.json. */
#include <core.p4>
#include <v1model.p4>

error { IpOptions }

header res_t {
    bit<32> perr;
    bit<8>  cerr;
    bit<8>  magic;
    bit<20> top;
    bit<4>  pad;
}

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header mpls_t {
    bit<20> label;
    bit<3>  tc;
    bit<1>  bos;
    bit<8>  ttl;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> totalLen;
    bit<16> identification;
    bit<3>  flags;
    bit<13> fragOffset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdrChecksum;
    bit<32> srcAddr;
    bit<32> dstAddr;
}

header magic_t {
    bit<16> value;
}

struct metadata { }

struct headers {
    res_t      res;
    ethernet_t ethernet;
    mpls_t[3]  mpls;
    ipv4_t     ipv4;
    magic_t    magic;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x8847: parse_mpls;
            0x0800 &&& 0xff00: parse_ipv4;
            default: accept;
        }
    }
    state parse_mpls {
        packet.extract(hdr.mpls.next);
        transition select(hdr.mpls.last.bos) {
            0: parse_mpls;
            1: parse_ipv4;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        verify(hdr.ipv4.ihl == 5, error.IpOptions);
        transition select(packet.lookahead<bit<16>>()) {
            0xbeef: parse_magic;
            default: accept;
        }
    }
    state parse_magic {
        packet.extract(hdr.magic);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen, hdr.ipv4.identification,
              hdr.ipv4.flags, hdr.ipv4.fragOffset, hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.srcAddr,
              hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t standard_metadata) {
    apply {
        hdr.res.setValid();
        if (standard_metadata.parser_error == error.PacketTooShort) {
            hdr.res.perr = 1;
        } else if (standard_metadata.parser_error == error.NoMatch) {
            hdr.res.perr = 2;
        } else if (standard_metadata.parser_error == error.StackOutOfBounds) {
            hdr.res.perr = 3;
        } else if (standard_metadata.parser_error == error.IpOptions) {
            hdr.res.perr = 7;
        }
        hdr.res.cerr = (bit<8>) standard_metadata.checksum_error;
        hdr.res.magic = hdr.magic.isValid() ? 8w1 : 8w0;
        hdr.res.top = hdr.mpls[0].label;
        standard_metadata.egress_spec = 1;
        if (hdr.mpls[0].isValid() && hdr.mpls[0].label == 100) {
            hdr.mpls.pop_front(1);
        } else if (hdr.mpls[0].isValid() && hdr.mpls[0].label == 200) {
            hdr.mpls.push_front(1);
            hdr.mpls[0].setValid();
            hdr.mpls[0].label = 999;
            hdr.mpls[0].ttl = 64;
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t standard_metadata) { apply { } }

control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.res);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.mpls);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.magic);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
