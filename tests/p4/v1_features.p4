/* v1model architecture features, driven by hdr.info.op (an exact table on it picks the ingress behaviour):
 *   op 0 unicast, 1 I2E clone, 2 multicast, 3 resubmit (twice), 4 recirculate (twice), 5 E2E clone, 6 egress drop.
 * Egress writes what it sees (instance_type, egress_rid, enq_qdepth, packet_length, meta.round) into hdr.info.
 * Also: an indirect counter indexed by ingress port, a direct counter on `dispatch`, an 8-bit register.
 * Fixture: tests/fixtures/v1_features.json. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header info_t {
    bit<8>  op;
    bit<8>  itype;
    bit<16> rid;
    bit<32> round;
    bit<32> qdepth;
    bit<16> inport;
    bit<16> ing_itype;
    bit<32> pktlen;
}

struct metadata {
    @field_list(1)
    bit<32> round;
    bit<8>  acc;
}

struct headers {
    ethernet_t ethernet;
    info_t     info;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88b5: parse_info;
            default: accept;
        }
    }
    state parse_info {
        packet.extract(hdr.info);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t standard_metadata) {
    counter(16, CounterType.packets_and_bytes) port_ctr;
    direct_counter(CounterType.packets_and_bytes) dispatch_ctr;
    register<bit<8>>(4) acc_reg;

    action to_port(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    action flood(bit<16> grp) {
        standard_metadata.mcast_grp = grp;
    }
    action clone_i2e(bit<9> port, bit<32> session) {
        standard_metadata.egress_spec = port;
        clone_preserving_field_list(CloneType.I2E, session, 1);
    }
    table dispatch {
        key = { hdr.info.op: exact; }
        actions = { to_port; flood; clone_i2e; NoAction; }
        counters = dispatch_ctr;
        default_action = NoAction();
    }
    apply {
        port_ctr.count((bit<32>) standard_metadata.ingress_port);
        dispatch.apply();
        hdr.info.inport = (bit<16>) standard_metadata.ingress_port;
        hdr.info.ing_itype = (bit<16>) standard_metadata.instance_type;
        acc_reg.read(meta.acc, 0);
        acc_reg.write(0, meta.acc + 8w200);
        if (hdr.info.op == 3 && meta.round < 2) {
            meta.round = meta.round + 1;
            resubmit_preserving_field_list(1);
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t standard_metadata) {
    apply {
        hdr.info.itype = (bit<8>) standard_metadata.instance_type;
        hdr.info.rid = standard_metadata.egress_rid;
        hdr.info.round = meta.round;
        hdr.info.qdepth = (bit<32>) standard_metadata.enq_qdepth;
        hdr.info.pktlen = standard_metadata.packet_length;
        if (hdr.info.op == 4 && meta.round < 2) {
            meta.round = meta.round + 1;
            recirculate_preserving_field_list(1);
        }
        if (hdr.info.op == 5 && standard_metadata.instance_type == 0) {
            clone_preserving_field_list(CloneType.E2E, 7, 1);
        }
        if (hdr.info.op == 6) {
            mark_to_drop(standard_metadata);
        }
    }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.info);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
