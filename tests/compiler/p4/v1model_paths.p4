/* v1model packet paths and checksums: clone_preserving_field_list I2E and E2E with @field_list metadata,
 * resubmit_preserving_field_list, recirculate_preserving_field_list, multicast (mcast_grp, egress_rid),
 * mark_to_drop in egress, verify_checksum / update_checksum / update_checksum_with_payload (csum16). Header `info`
 * reports what each copy saw: instance types in ingress and egress, egress_rid, the preserved counter, checksum_error. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> totalLen; bit<16> identification; bit<3> flags;
    bit<13> fragOffset; bit<8> ttl; bit<8> protocol; bit<16> hdrChecksum; bit<32> srcAddr; bit<32> dstAddr;
}
header udp_t { bit<16> sport; bit<16> dport; bit<16> len; bit<16> checksum; }
header info_t { bit<8> op; bit<8> itype; bit<16> rid; bit<8> round; bit<8> cksum_err; bit<8> eitype; }

struct headers { ethernet_t eth; ipv4_t ipv4; udp_t udp; info_t info; }
struct metadata {
    @field_list(1) bit<8> round;
    bit<8> scratch;
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etherType) {
            0x0800: parse_ipv4;
            default: parse_info;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) { 17: parse_udp; default: accept; }
    }
    state parse_udp { pkt.extract(hdr.udp); transition parse_info; }
    state parse_info { pkt.extract(hdr.info); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen, hdr.ipv4.identification,
              hdr.ipv4.flags, hdr.ipv4.fragOffset, hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.srcAddr,
              hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.info.itype = (bit<8>)sm.instance_type;
        hdr.info.cksum_err = (bit<8>)sm.checksum_error;
        sm.egress_spec = 1;
        if (hdr.ipv4.isValid()) {
            hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        }
        if (hdr.info.op == 1) {
            meta.round = 7;
            clone_preserving_field_list(CloneType.I2E, 5, 1);
        } else if (hdr.info.op == 2) {
            if (meta.round == 0) {
                meta.round = 3;
                resubmit_preserving_field_list(1);
            } else {
                sm.egress_spec = 2;
            }
        } else if (hdr.info.op == 3) {
            sm.mcast_grp = 10;
        }
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.info.rid = sm.egress_rid;
        hdr.info.eitype = (bit<8>)sm.instance_type;
        hdr.info.round = meta.round;
        if (hdr.info.op == 4 && meta.round < 2) {
            meta.round = meta.round + 1;
            recirculate_preserving_field_list(1);
        }
        if (hdr.info.op == 5 && sm.instance_type == 0) {
            clone_preserving_field_list(CloneType.E2E, 6, 1);
        }
        if (hdr.info.op == 6) {
            mark_to_drop(sm);
        }
    }
}

control CC(inout headers hdr, inout metadata meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen, hdr.ipv4.identification,
              hdr.ipv4.flags, hdr.ipv4.fragOffset, hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.srcAddr,
              hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
        update_checksum_with_payload(hdr.udp.isValid(),
            { hdr.ipv4.srcAddr, hdr.ipv4.dstAddr, 8w0, hdr.ipv4.protocol, hdr.udp.len,
              hdr.udp.sport, hdr.udp.dport, hdr.udp.len, 16w0, hdr.info },
            hdr.udp.checksum, HashAlgorithm.csum16);
    }
}

control Dep(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.info);
    }
}

V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
