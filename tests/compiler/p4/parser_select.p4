/* Parser lowering: select on one field with a mask, on two fields with `_` and masks, on a header stack's last
 * element, on lookahead (bits, a slice of them, a field of a looked-ahead header); header stack `.next` extraction; parser-local assignments; verify() with a user error;
 * PacketTooShort; transition accept. Ingress reports the path taken and the parser error in header `rep`. */
#include <core.p4>
#include <v1model.p4>

error { BadVersion }

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header vlan_t { bit<3> pcp; bit<1> cfi; bit<12> vid; bit<16> etherType; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> totalLen; bit<16> identification; bit<3> flags;
    bit<13> fragOffset; bit<8> ttl; bit<8> protocol; bit<16> hdrChecksum; bit<32> srcAddr; bit<32> dstAddr;
}
header tag_t { bit<8> kind; bit<8> val; }
header out_t { bit<8> path; bit<8> la; bit<8> nvlan; bit<8> err; }

struct headers { ethernet_t eth; vlan_t[2] vlan; ipv4_t ipv4; tag_t tag; out_t rep; }
struct metadata { bit<8> path; bit<8> la; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        meta.path = 8w0x01;
        transition select(hdr.eth.etherType) {
            0x8100 &&& 0xEFFF: parse_vlan;   // 0x8100 and 0x9100
            0x0800: parse_ipv4;
            0x88B5: parse_tag;
            default: accept;
        }
    }
    state parse_vlan {
        pkt.extract(hdr.vlan.next);
        meta.path = meta.path + 0x10;
        transition select(hdr.vlan.last.etherType) {
            0x8100: parse_vlan;
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        verify(hdr.ipv4.version == 4, error.BadVersion);
        meta.path = meta.path | 0x04;
        transition select(hdr.ipv4.ihl, hdr.ipv4.protocol) {
            (5, 17): is_udp;
            (_, 6): is_tcp;
            (4w0 &&& 4w0, 8w0x80 &&& 8w0x80): is_high;
            default: accept;
        }
    }
    state is_udp { meta.path = meta.path | 0x08; transition accept; }
    state is_tcp { meta.path = meta.path | 0x40; transition accept; }
    state is_high { meta.path = meta.path | 0x20; transition accept; }
    state parse_tag {
        meta.la = pkt.lookahead<bit<16>>()[15:8];
        transition select(pkt.lookahead<tag_t>().kind, pkt.lookahead<bit<16>>()[3:0]) {
            (1, _): tag_one;
            (_, 0xF): tag_one;
            default: tag_other;
        }
    }
    state tag_one { pkt.extract(hdr.tag); meta.path = meta.path | 0x80; transition accept; }
    state tag_other { pkt.extract(hdr.tag); meta.path = meta.path | 0x02; transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.rep.setValid();
        hdr.rep.path = meta.path;
        hdr.rep.la = meta.la;
        hdr.rep.nvlan = (hdr.vlan[0].isValid() ? 8w1 : 8w0) + (hdr.vlan[1].isValid() ? 8w1 : 8w0);
        if (sm.parser_error == error.NoError) {
            hdr.rep.err = 0;
        } else if (sm.parser_error == error.BadVersion) {
            hdr.rep.err = 1;
        } else if (sm.parser_error == error.PacketTooShort) {
            hdr.rep.err = 2;
        } else {
            hdr.rep.err = 3;
        }
        sm.egress_spec = 1;
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }

control Dep(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.vlan);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.tag);
        pkt.emit(hdr.rep);
    }
}

V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
