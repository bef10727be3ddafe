/* Aggregation benchmark program: adds the 64 32-bit elements of every INA packet into 64 register arrays
 * (one per element, 256 slots, slot = pool_index & 0xff) and reflects the running sums back to the sender's port.
 * INA header layout from /work/team/BRIEF.md. Fixture: tests/fixtures/agg64.json (benchmarked by `make bench-switch`). */
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

header udp_t {
    bit<16> srcPort;
    bit<16> dstPort;
    bit<16> length;
    bit<16> checksum;
}

header ina_h {
    bit<8>  msg_type;
    bit<8>  job_id;
    bit<16> pool_index;
    bit<32> packet_id;
    bit<8>  exponent;
    bit<8>  flags;
    bit<16> worker_rank;
}

header data_h {
    bit<32> e00;
    bit<32> e01;
    bit<32> e02;
    bit<32> e03;
    bit<32> e04;
    bit<32> e05;
    bit<32> e06;
    bit<32> e07;
    bit<32> e08;
    bit<32> e09;
    bit<32> e10;
    bit<32> e11;
    bit<32> e12;
    bit<32> e13;
    bit<32> e14;
    bit<32> e15;
    bit<32> e16;
    bit<32> e17;
    bit<32> e18;
    bit<32> e19;
    bit<32> e20;
    bit<32> e21;
    bit<32> e22;
    bit<32> e23;
    bit<32> e24;
    bit<32> e25;
    bit<32> e26;
    bit<32> e27;
    bit<32> e28;
    bit<32> e29;
    bit<32> e30;
    bit<32> e31;
    bit<32> e32;
    bit<32> e33;
    bit<32> e34;
    bit<32> e35;
    bit<32> e36;
    bit<32> e37;
    bit<32> e38;
    bit<32> e39;
    bit<32> e40;
    bit<32> e41;
    bit<32> e42;
    bit<32> e43;
    bit<32> e44;
    bit<32> e45;
    bit<32> e46;
    bit<32> e47;
    bit<32> e48;
    bit<32> e49;
    bit<32> e50;
    bit<32> e51;
    bit<32> e52;
    bit<32> e53;
    bit<32> e54;
    bit<32> e55;
    bit<32> e56;
    bit<32> e57;
    bit<32> e58;
    bit<32> e59;
    bit<32> e60;
    bit<32> e61;
    bit<32> e62;
    bit<32> e63;
}

struct metadata {
    bit<32> v;
    bit<32> slot;     /* a register index: bit<32> in v1model (p4c's default V1MODEL_VERSION) */
}

struct headers {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    udp_t      udp;
    ina_h      ina;
    data_h     data;
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
        transition select(hdr.ipv4.protocol) {
            17: parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        packet.extract(hdr.udp);
        transition select(hdr.udp.dstPort) {
            48864: parse_ina;
            default: accept;
        }
    }
    state parse_ina {
        packet.extract(hdr.ina);
        packet.extract(hdr.data);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t standard_metadata) {
    register<bit<32>>(256) agg_00;
    register<bit<32>>(256) agg_01;
    register<bit<32>>(256) agg_02;
    register<bit<32>>(256) agg_03;
    register<bit<32>>(256) agg_04;
    register<bit<32>>(256) agg_05;
    register<bit<32>>(256) agg_06;
    register<bit<32>>(256) agg_07;
    register<bit<32>>(256) agg_08;
    register<bit<32>>(256) agg_09;
    register<bit<32>>(256) agg_10;
    register<bit<32>>(256) agg_11;
    register<bit<32>>(256) agg_12;
    register<bit<32>>(256) agg_13;
    register<bit<32>>(256) agg_14;
    register<bit<32>>(256) agg_15;
    register<bit<32>>(256) agg_16;
    register<bit<32>>(256) agg_17;
    register<bit<32>>(256) agg_18;
    register<bit<32>>(256) agg_19;
    register<bit<32>>(256) agg_20;
    register<bit<32>>(256) agg_21;
    register<bit<32>>(256) agg_22;
    register<bit<32>>(256) agg_23;
    register<bit<32>>(256) agg_24;
    register<bit<32>>(256) agg_25;
    register<bit<32>>(256) agg_26;
    register<bit<32>>(256) agg_27;
    register<bit<32>>(256) agg_28;
    register<bit<32>>(256) agg_29;
    register<bit<32>>(256) agg_30;
    register<bit<32>>(256) agg_31;
    register<bit<32>>(256) agg_32;
    register<bit<32>>(256) agg_33;
    register<bit<32>>(256) agg_34;
    register<bit<32>>(256) agg_35;
    register<bit<32>>(256) agg_36;
    register<bit<32>>(256) agg_37;
    register<bit<32>>(256) agg_38;
    register<bit<32>>(256) agg_39;
    register<bit<32>>(256) agg_40;
    register<bit<32>>(256) agg_41;
    register<bit<32>>(256) agg_42;
    register<bit<32>>(256) agg_43;
    register<bit<32>>(256) agg_44;
    register<bit<32>>(256) agg_45;
    register<bit<32>>(256) agg_46;
    register<bit<32>>(256) agg_47;
    register<bit<32>>(256) agg_48;
    register<bit<32>>(256) agg_49;
    register<bit<32>>(256) agg_50;
    register<bit<32>>(256) agg_51;
    register<bit<32>>(256) agg_52;
    register<bit<32>>(256) agg_53;
    register<bit<32>>(256) agg_54;
    register<bit<32>>(256) agg_55;
    register<bit<32>>(256) agg_56;
    register<bit<32>>(256) agg_57;
    register<bit<32>>(256) agg_58;
    register<bit<32>>(256) agg_59;
    register<bit<32>>(256) agg_60;
    register<bit<32>>(256) agg_61;
    register<bit<32>>(256) agg_62;
    register<bit<32>>(256) agg_63;

    action aggregate() {
        meta.slot = (bit<32>) hdr.ina.pool_index[7:0];
        agg_00.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e00;
        agg_00.write(meta.slot, meta.v);
        hdr.data.e00 = meta.v;
        agg_01.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e01;
        agg_01.write(meta.slot, meta.v);
        hdr.data.e01 = meta.v;
        agg_02.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e02;
        agg_02.write(meta.slot, meta.v);
        hdr.data.e02 = meta.v;
        agg_03.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e03;
        agg_03.write(meta.slot, meta.v);
        hdr.data.e03 = meta.v;
        agg_04.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e04;
        agg_04.write(meta.slot, meta.v);
        hdr.data.e04 = meta.v;
        agg_05.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e05;
        agg_05.write(meta.slot, meta.v);
        hdr.data.e05 = meta.v;
        agg_06.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e06;
        agg_06.write(meta.slot, meta.v);
        hdr.data.e06 = meta.v;
        agg_07.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e07;
        agg_07.write(meta.slot, meta.v);
        hdr.data.e07 = meta.v;
        agg_08.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e08;
        agg_08.write(meta.slot, meta.v);
        hdr.data.e08 = meta.v;
        agg_09.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e09;
        agg_09.write(meta.slot, meta.v);
        hdr.data.e09 = meta.v;
        agg_10.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e10;
        agg_10.write(meta.slot, meta.v);
        hdr.data.e10 = meta.v;
        agg_11.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e11;
        agg_11.write(meta.slot, meta.v);
        hdr.data.e11 = meta.v;
        agg_12.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e12;
        agg_12.write(meta.slot, meta.v);
        hdr.data.e12 = meta.v;
        agg_13.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e13;
        agg_13.write(meta.slot, meta.v);
        hdr.data.e13 = meta.v;
        agg_14.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e14;
        agg_14.write(meta.slot, meta.v);
        hdr.data.e14 = meta.v;
        agg_15.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e15;
        agg_15.write(meta.slot, meta.v);
        hdr.data.e15 = meta.v;
        agg_16.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e16;
        agg_16.write(meta.slot, meta.v);
        hdr.data.e16 = meta.v;
        agg_17.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e17;
        agg_17.write(meta.slot, meta.v);
        hdr.data.e17 = meta.v;
        agg_18.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e18;
        agg_18.write(meta.slot, meta.v);
        hdr.data.e18 = meta.v;
        agg_19.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e19;
        agg_19.write(meta.slot, meta.v);
        hdr.data.e19 = meta.v;
        agg_20.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e20;
        agg_20.write(meta.slot, meta.v);
        hdr.data.e20 = meta.v;
        agg_21.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e21;
        agg_21.write(meta.slot, meta.v);
        hdr.data.e21 = meta.v;
        agg_22.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e22;
        agg_22.write(meta.slot, meta.v);
        hdr.data.e22 = meta.v;
        agg_23.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e23;
        agg_23.write(meta.slot, meta.v);
        hdr.data.e23 = meta.v;
        agg_24.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e24;
        agg_24.write(meta.slot, meta.v);
        hdr.data.e24 = meta.v;
        agg_25.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e25;
        agg_25.write(meta.slot, meta.v);
        hdr.data.e25 = meta.v;
        agg_26.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e26;
        agg_26.write(meta.slot, meta.v);
        hdr.data.e26 = meta.v;
        agg_27.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e27;
        agg_27.write(meta.slot, meta.v);
        hdr.data.e27 = meta.v;
        agg_28.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e28;
        agg_28.write(meta.slot, meta.v);
        hdr.data.e28 = meta.v;
        agg_29.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e29;
        agg_29.write(meta.slot, meta.v);
        hdr.data.e29 = meta.v;
        agg_30.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e30;
        agg_30.write(meta.slot, meta.v);
        hdr.data.e30 = meta.v;
        agg_31.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e31;
        agg_31.write(meta.slot, meta.v);
        hdr.data.e31 = meta.v;
        agg_32.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e32;
        agg_32.write(meta.slot, meta.v);
        hdr.data.e32 = meta.v;
        agg_33.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e33;
        agg_33.write(meta.slot, meta.v);
        hdr.data.e33 = meta.v;
        agg_34.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e34;
        agg_34.write(meta.slot, meta.v);
        hdr.data.e34 = meta.v;
        agg_35.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e35;
        agg_35.write(meta.slot, meta.v);
        hdr.data.e35 = meta.v;
        agg_36.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e36;
        agg_36.write(meta.slot, meta.v);
        hdr.data.e36 = meta.v;
        agg_37.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e37;
        agg_37.write(meta.slot, meta.v);
        hdr.data.e37 = meta.v;
        agg_38.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e38;
        agg_38.write(meta.slot, meta.v);
        hdr.data.e38 = meta.v;
        agg_39.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e39;
        agg_39.write(meta.slot, meta.v);
        hdr.data.e39 = meta.v;
        agg_40.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e40;
        agg_40.write(meta.slot, meta.v);
        hdr.data.e40 = meta.v;
        agg_41.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e41;
        agg_41.write(meta.slot, meta.v);
        hdr.data.e41 = meta.v;
        agg_42.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e42;
        agg_42.write(meta.slot, meta.v);
        hdr.data.e42 = meta.v;
        agg_43.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e43;
        agg_43.write(meta.slot, meta.v);
        hdr.data.e43 = meta.v;
        agg_44.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e44;
        agg_44.write(meta.slot, meta.v);
        hdr.data.e44 = meta.v;
        agg_45.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e45;
        agg_45.write(meta.slot, meta.v);
        hdr.data.e45 = meta.v;
        agg_46.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e46;
        agg_46.write(meta.slot, meta.v);
        hdr.data.e46 = meta.v;
        agg_47.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e47;
        agg_47.write(meta.slot, meta.v);
        hdr.data.e47 = meta.v;
        agg_48.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e48;
        agg_48.write(meta.slot, meta.v);
        hdr.data.e48 = meta.v;
        agg_49.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e49;
        agg_49.write(meta.slot, meta.v);
        hdr.data.e49 = meta.v;
        agg_50.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e50;
        agg_50.write(meta.slot, meta.v);
        hdr.data.e50 = meta.v;
        agg_51.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e51;
        agg_51.write(meta.slot, meta.v);
        hdr.data.e51 = meta.v;
        agg_52.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e52;
        agg_52.write(meta.slot, meta.v);
        hdr.data.e52 = meta.v;
        agg_53.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e53;
        agg_53.write(meta.slot, meta.v);
        hdr.data.e53 = meta.v;
        agg_54.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e54;
        agg_54.write(meta.slot, meta.v);
        hdr.data.e54 = meta.v;
        agg_55.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e55;
        agg_55.write(meta.slot, meta.v);
        hdr.data.e55 = meta.v;
        agg_56.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e56;
        agg_56.write(meta.slot, meta.v);
        hdr.data.e56 = meta.v;
        agg_57.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e57;
        agg_57.write(meta.slot, meta.v);
        hdr.data.e57 = meta.v;
        agg_58.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e58;
        agg_58.write(meta.slot, meta.v);
        hdr.data.e58 = meta.v;
        agg_59.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e59;
        agg_59.write(meta.slot, meta.v);
        hdr.data.e59 = meta.v;
        agg_60.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e60;
        agg_60.write(meta.slot, meta.v);
        hdr.data.e60 = meta.v;
        agg_61.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e61;
        agg_61.write(meta.slot, meta.v);
        hdr.data.e61 = meta.v;
        agg_62.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e62;
        agg_62.write(meta.slot, meta.v);
        hdr.data.e62 = meta.v;
        agg_63.read(meta.v, meta.slot);
        meta.v = meta.v + hdr.data.e63;
        agg_63.write(meta.slot, meta.v);
        hdr.data.e63 = meta.v;
        hdr.ina.msg_type = 2;
        standard_metadata.egress_spec = standard_metadata.ingress_port;
    }
    apply {
        if (hdr.data.isValid()) {
            aggregate();
        } else {
            mark_to_drop(standard_metadata);
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t standard_metadata) { apply { } }

control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.udp);
        packet.emit(hdr.ina);
        packet.emit(hdr.data);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
