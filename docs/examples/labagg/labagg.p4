/* labagg.p4: the course labs' reliable in-network aggregation, the smallest program of this testbed that aggregates
 * exactly once under loss: one slot per packet, two sets per slot (SwitchML's shadow copies), int32 sums, nothing
 * else (no exponents, no epochs, no shared pool). A plug-in protocol: docs/adding-a-protocol.md.
 *
 * Workers send DATA (Ethernet/IPv4/UDP dport 48866/lab header/32 int32) to the switch's address. Per (slot, set)
 * the switch keeps a worker bitmap, a count and 32 int32 sums: the first contribution overwrites, later ones add
 * (modulo 2^32), the last multicasts the RESULT to the job's workers (replica id = rank, addressed in egress). A
 * retransmission to a complete set gets the stored result (unicast), one to an incomplete set is dropped. Writing one
 * set clears the sender's bit in the other (the lazy reset that lets a set be reused). Other traffic is switched by
 * destination MAC; a drop simulator drops packets per port.
 *
 * Control plane: LabIngress.lab_workers (port, IPv4 source, UDP source, job -> rank), LabIngress.lab_jobs (job ->
 * workers, mgid, pool base and size), LabEgress.lab_destinations ((job, rank) -> addresses), l2_forward,
 * drop_sim_ingress / drop_sim_egress as in every program of p4src/. Registers (index slot * 2 + set):
 * LabIngress.lab_bitmap, LabIngress.lab_count, LabIngress.lab_values (index (slot * 2 + set) * 32 + i). Per-job
 * counters (index job id, 256 = no job): received = aggregated + retx_answered + drop_unknown + drop_malformed +
 * drop_retx_incomplete.
 */
#include <core.p4>
#include <v1model.p4>

#include "include/net.p4"
#include "include/repeat.p4"

#define LAB_POOL_SIZE 256
#define LAB_SLOT_REGS 512
#define LAB_VALUE_REGS 16384
#define LAB_COUNTERS 257
#define LAB_NO_JOB 256

const bit<16> LAB_UDP_PORT   = 0xBEE2;    /* 48866 */
const bit<8>  LAB_MSG_DATA   = 1;
const bit<8>  LAB_MSG_RESULT = 2;
const bit<16> LAB_UDP_LEN    = 8 + 11 + 4 * 32;

header lab_h {
    bit<8>  msg_type;   /* 1 = DATA, 2 = RESULT */
    bit<8>  job_id;
    bit<16> slot;       /* bit 15: set; bits 14..0: slot */
    bit<32> seq;        /* the worker's packet number in the all-reduce */
    bit<16> rank;       /* informational: the switch knows workers by table */
    bit<8>  flags;      /* bit 0: retransmission */
}

#define LAB_DECLARE(i) bit<32> d##i;
header lab_data_h {
    INA_REPEAT_32(LAB_DECLARE)
}

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    udp_t      udp;
    lab_h      lab;
    lab_data_h lab_data;
}

struct metadata_t {
    bit<32> job_index;
    bit<16> ig_drop_prob;
    bit<16> ig_rnd;
    bit<16> eg_drop_prob;
    bit<16> eg_rnd;
    bit<1>  dropped;
    bit<1>  flood;
    bit<1>  worker_known;
    bit<1>  job_known;
    bit<16> rank;
    bit<32> worker_bit;
    bit<8>  num_workers;
    bit<16> mgid;
    bit<16> pool_base;
    bit<16> pool_size;
    bit<16> slot;
    bit<32> idx;
    bit<32> value_base;
    bit<32> bitmap_before;
    bit<32> bitmap_other;
    bit<8>  count;
    bit<32> value;
    bit<1>  unicast_reply;
    bit<16> dst_rank;
    bit<1>  dst_known;
}

parser LabParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl, hdr.ipv4.fragOffset, hdr.ipv4.protocol) {
            (4w5, 13w0, IPPROTO_UDP): parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        packet.extract(hdr.udp);
        transition select(hdr.udp.dstPort) {
            LAB_UDP_PORT: parse_lab;
            default: accept;
        }
    }
    state parse_lab {
        packet.extract(hdr.lab);
        packet.extract(hdr.lab_data);
        transition accept;
    }
}

control LabVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control LabIngress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t standard_metadata) {

    register<bit<32>>(LAB_SLOT_REGS) lab_bitmap;
    register<bit<8>>(LAB_SLOT_REGS) lab_count;
    register<bit<32>>(LAB_VALUE_REGS) lab_values;

    counter(LAB_COUNTERS, CounterType.packets_and_bytes) lab_received;
    counter(LAB_COUNTERS, CounterType.packets_and_bytes) lab_aggregated;
    counter(LAB_COUNTERS, CounterType.packets_and_bytes) lab_retx_answered;
    counter(LAB_COUNTERS, CounterType.packets_and_bytes) lab_drop_unknown;
    counter(LAB_COUNTERS, CounterType.packets_and_bytes) lab_drop_malformed;
    counter(LAB_COUNTERS, CounterType.packets_and_bytes) lab_drop_retx_incomplete;
    counter(LAB_COUNTERS, CounterType.packets_and_bytes) lab_drop_sim_ingress;

    action drop() {
        mark_to_drop(standard_metadata);
    }

    action set_ingress_drop_prob(bit<16> prob) {
        meta.ig_drop_prob = prob;
    }

    table drop_sim_ingress {
        key = { standard_metadata.ingress_port: exact; }
        actions = { set_ingress_drop_prob; NoAction; }
        default_action = NoAction();
        size = 512;
    }

    action l2_set_port(bit<9> port) {
        standard_metadata.egress_spec = port;
    }

    action l2_flood(bit<16> mgid) {
        standard_metadata.mcast_grp = mgid;
        meta.flood = 1;
    }

    action l2_drop() {
        mark_to_drop(standard_metadata);
    }

    table l2_forward {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { l2_set_port; l2_flood; l2_drop; }
        default_action = l2_drop();
        size = 1024;
    }

    action lab_set_worker(bit<16> rank) {
        meta.worker_known = 1;
        meta.rank = rank;
        meta.worker_bit = 32w1 << (bit<8>)rank;
    }

    table lab_workers {
        key = {
            standard_metadata.ingress_port: exact;
            hdr.ipv4.srcAddr: exact;
            hdr.udp.srcPort: exact;
            hdr.lab.job_id: exact;
        }
        actions = { lab_set_worker; NoAction; }
        default_action = NoAction();
        size = 1024;
    }

    action lab_set_job(bit<8> num_workers, bit<16> mgid, bit<16> pool_base, bit<16> pool_size) {
        meta.job_known = 1;
        meta.num_workers = num_workers;
        meta.mgid = mgid;
        meta.pool_base = pool_base;
        meta.pool_size = pool_size;
    }

    table lab_jobs {
        key = { hdr.lab.job_id: exact; }
        actions = { lab_set_job; NoAction; }
        default_action = NoAction();
        size = 256;
    }

    action lab_index() {
        meta.slot = (bit<16>)hdr.lab.slot[14:0];
        meta.idx = ((bit<32>)hdr.lab.slot[14:0] << 1) | (bit<32>)hdr.lab.slot[15:15];
        meta.value_base = meta.idx * 32;
    }

    /* the sender's bit set in this set, cleared in the other one (it has taken that set's result) */
    action lab_bitmaps() {
        lab_bitmap.read(meta.bitmap_before, meta.idx);
        lab_bitmap.write(meta.idx, meta.bitmap_before | meta.worker_bit);
        lab_bitmap.read(meta.bitmap_other, meta.idx ^ 1);
        lab_bitmap.write(meta.idx ^ 1, meta.bitmap_other & ~meta.worker_bit);
        lab_count.read(meta.count, meta.idx);
    }

#define LAB_STORE(i) lab_values.write(meta.value_base + i, hdr.lab_data.d##i);
#define LAB_ADD(i) \
        lab_values.read(meta.value, meta.value_base + i); \
        hdr.lab_data.d##i = hdr.lab_data.d##i + meta.value; \
        lab_values.write(meta.value_base + i, hdr.lab_data.d##i);
#define LAB_LOAD(i) lab_values.read(hdr.lab_data.d##i, meta.value_base + i);

    action lab_store_first() {
        INA_REPEAT_32(LAB_STORE)
    }

    action lab_add() {
        INA_REPEAT_32(LAB_ADD)
    }

    action lab_load_result() {
        INA_REPEAT_32(LAB_LOAD)
    }

    apply {
        meta.job_index = LAB_NO_JOB;
        if (hdr.lab.isValid()) {
            meta.job_index = (bit<32>)hdr.lab.job_id;
        }
        drop_sim_ingress.apply();
        if (meta.ig_drop_prob != 0) {
            random(meta.ig_rnd, 16w0, 16w65534);
            if (meta.ig_rnd < meta.ig_drop_prob) {
                meta.dropped = 1;
            }
        }
        if (meta.dropped == 1) {
            lab_drop_sim_ingress.count(meta.job_index);
            drop();
        } else if (hdr.udp.isValid() && hdr.udp.dstPort == LAB_UDP_PORT) {
            lab_received.count(meta.job_index);
            if (!hdr.lab.isValid() || !hdr.lab_data.isValid() || hdr.udp.len != LAB_UDP_LEN
                    || hdr.lab.msg_type != LAB_MSG_DATA) {
                lab_drop_malformed.count(meta.job_index);
                drop();
            } else {
                lab_workers.apply();
                if (meta.worker_known == 1) {
                    lab_jobs.apply();
                }
                lab_index();
                if (meta.worker_known == 0 || meta.job_known == 0 || meta.rank >= 32) {
                    lab_drop_unknown.count(meta.job_index);
                    drop();
                } else if (meta.slot >= LAB_POOL_SIZE || meta.slot < meta.pool_base
                        || meta.slot - meta.pool_base >= meta.pool_size) {
                    lab_drop_malformed.count(meta.job_index);
                    drop();
                } else {
                    lab_bitmaps();
                    if ((meta.bitmap_before & meta.worker_bit) == 0) {
                        lab_aggregated.count(meta.job_index);
                        if (meta.bitmap_before == 0) {
                            lab_store_first();
                            meta.count = 1;
                        } else {
                            lab_add();
                            meta.count = meta.count + 1;
                        }
                        lab_count.write(meta.idx, meta.count);
                        if (meta.count == meta.num_workers) {
                            hdr.lab.msg_type = LAB_MSG_RESULT;
                            standard_metadata.mcast_grp = meta.mgid;
                        } else {
                            drop();
                        }
                    } else if (meta.count == meta.num_workers) {
                        lab_retx_answered.count(meta.job_index);
                        lab_load_result();
                        hdr.lab.msg_type = LAB_MSG_RESULT;
                        standard_metadata.egress_spec = standard_metadata.ingress_port;
                        meta.unicast_reply = 1;
                    } else {
                        lab_drop_retx_incomplete.count(meta.job_index);
                        drop();
                    }
                }
            }
        } else if (hdr.ethernet.isValid()) {
            l2_forward.apply();
        } else {
            drop();
        }
    }
}

control LabEgress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t standard_metadata) {

    counter(LAB_COUNTERS, CounterType.packets_and_bytes) lab_results_sent;
    counter(LAB_COUNTERS, CounterType.packets_and_bytes) lab_drop_sim_egress;

    action drop() {
        mark_to_drop(standard_metadata);
    }

    action set_egress_drop_prob(bit<16> prob) {
        meta.eg_drop_prob = prob;
    }

    table drop_sim_egress {
        key = { standard_metadata.egress_port: exact; }
        actions = { set_egress_drop_prob; NoAction; }
        default_action = NoAction();
        size = 512;
    }

    action lab_set_destination(bit<48> switch_mac, bit<32> switch_ip, bit<48> worker_mac, bit<32> worker_ip,
                               bit<16> worker_port) {
        hdr.ethernet.srcAddr = switch_mac;
        hdr.ethernet.dstAddr = worker_mac;
        hdr.ipv4.srcAddr = switch_ip;
        hdr.ipv4.dstAddr = worker_ip;
        hdr.ipv4.ttl = 64;
        hdr.udp.srcPort = LAB_UDP_PORT;
        hdr.udp.dstPort = worker_port;
        hdr.udp.checksum = 0;
        meta.dst_known = 1;
    }

    table lab_destinations {
        key = {
            hdr.lab.job_id: exact;
            meta.dst_rank: exact;
        }
        actions = { lab_set_destination; NoAction; }
        default_action = NoAction();
        size = 1024;
    }

    apply {
        drop_sim_egress.apply();
        if (meta.eg_drop_prob != 0) {
            random(meta.eg_rnd, 16w0, 16w65534);
            if (meta.eg_rnd < meta.eg_drop_prob) {
                meta.dropped = 1;
            }
        }
        if (meta.dropped == 1) {
            lab_drop_sim_egress.count(meta.job_index);
            drop();
        } else if (hdr.lab.isValid()) {
            if (meta.unicast_reply == 1) {
                meta.dst_rank = meta.rank;
            } else {
                meta.dst_rank = standard_metadata.egress_rid;
            }
            lab_destinations.apply();
            if (meta.dst_known == 1) {
                lab_results_sent.count(meta.job_index);
            } else {
                drop();
            }
        } else if (meta.flood == 1 && standard_metadata.egress_port == standard_metadata.ingress_port) {
            drop();
        }
    }
}

control LabComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(
            hdr.lab.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum,
            HashAlgorithm.csum16);
    }
}

control LabDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.udp);
        packet.emit(hdr.lab);
        packet.emit(hdr.lab_data);
    }
}

V1Switch(LabParser(), LabVerifyChecksum(), LabIngress(), LabEgress(), LabComputeChecksum(), LabDeparser()) main;
