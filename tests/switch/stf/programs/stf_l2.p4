/* L2 switch exercising what STF tests drive through the control plane (tests/switch/stf/l2_*.stf):
 * an exact dmac table (forward / drop / multicast group / forward + I2E clone) with a direct counter, a ternary ACL
 * that can drop, an indirect counter and a register indexed by ingress port. In egress, multicast replicas carry their
 * rid in etherType and I2E clones the marker 0x0c10, so expectations can tell the copies apart.
 *
 * stf_l2.json is this program as p4c-bm2-ss would emit it, written by hand while compiler/ is not available
 * (same names, keyless tbl_* tables for statements, conditionals as node_N); regenerate it with
 * `p4c-bm2-ss` or `python -m compiler` once either is at hand. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct metadata { }

struct headers {
    ethernet_t ethernet;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t standard_metadata) {
    counter(8, CounterType.packets_and_bytes) rx;
    register<bit<32>>(8) seen;
    direct_counter(CounterType.packets_and_bytes) dmac_hits;

    action drop() {
        mark_to_drop(standard_metadata);
    }
    action forward(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    action flood(bit<16> grp) {
        standard_metadata.mcast_grp = grp;
    }
    action forward_and_clone(bit<9> port, bit<32> session) {
        standard_metadata.egress_spec = port;
        clone(CloneType.I2E, session);
    }
    table acl {
        key = { hdr.ethernet.etherType: ternary; }
        actions = { drop; NoAction; }
        default_action = NoAction();
    }
    table dmac {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { forward; drop; flood; forward_and_clone; }
        default_action = drop();
        counters = dmac_hits;
    }
    apply {
        bit<32> n;
        rx.count((bit<32>)standard_metadata.ingress_port);
        seen.read(n, (bit<32>)standard_metadata.ingress_port);
        seen.write((bit<32>)standard_metadata.ingress_port, n + 1);
        acl.apply();
        if (standard_metadata.egress_spec != 511) {
            dmac.apply();
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.instance_type == 5) {
            hdr.ethernet.etherType = standard_metadata.egress_rid;
        } else if (standard_metadata.instance_type == 1) {
            hdr.ethernet.etherType = 0x0c10;
        }
    }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
