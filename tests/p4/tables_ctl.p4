/* Table kinds and control flow: ternary priorities, range, two-field exact, const entries and const default,
 * hit/miss and action_run branching, a conditional and a direct action call (keyless table).
 * Fixture: tests/fixtures/tables_ctl.json. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
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

struct metadata {
    bit<8> cls;
}

struct headers {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }
    action set_port(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    action set_cls(bit<8> cls) {
        meta.cls = cls;
    }
    action mark(bit<8> tos) {
        hdr.ipv4.diffserv = tos;
    }
    table acl {
        key = { hdr.ipv4.srcAddr: ternary; hdr.ipv4.protocol: ternary; }
        actions = { set_cls; NoAction; }
        default_action = NoAction();
    }
    table by_len {
        key = { hdr.ipv4.totalLen: range; }
        actions = { set_cls; NoAction; }
        default_action = NoAction();
    }
    table fwd {
        key = { meta.cls: exact; hdr.ipv4.dstAddr: exact; }
        actions = { set_port; drop; }
        default_action = drop();
    }
    table qos {
        key = { hdr.ipv4.protocol: exact; }
        actions = { mark; NoAction; }
        const entries = {
            17 : mark(0x20);
            6  : mark(0x40);
        }
        const default_action = NoAction();
    }
    apply {
        if (hdr.ipv4.isValid()) {
            if (!acl.apply().hit) {
                by_len.apply();
            }
            switch (fwd.apply().action_run) {
                set_port: { qos.apply(); }
            }
            if (meta.cls == 0xff) {
                drop();
            }
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t standard_metadata) { apply { } }

control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
