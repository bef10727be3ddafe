/* switchml.p4: SwitchML-style in-network aggregation for BMv2 v1model (p4c-bm2-ss or the embedded compiler).
 *
 * Workers send DATA packets (Ethernet/IPv4/UDP dport 48864/INA header/N int32) to the switch's service address.
 * Per (slot, set) the switch keeps a bitmap of W workers, a countdown, N int32 sums and the max exponent. The first
 * contribution overwrites, later ones add (32-bit wraparound); the last one multicasts the result to the job's
 * group, each replica rewritten in egress for the worker whose rank is the replica id. A retransmission to a
 * completed slot is answered with the stored result (unicast, out of the ingress port); one to an incomplete slot
 * is dropped. Writing one set clears the worker's bit in the other set (lazy reset). Other traffic is switched by
 * destination MAC; a drop simulator drops packets per port with a controller-set probability. Build: p4c-bm2-ss
 * [-D INA_NUM_ELEMS=64] [-D INA_POOL_SIZE=256] [-D INA_MAX_WORKERS=W, W in 32 (default), 64, 128, 256, 512] switchml.p4
 *
 * Control plane (names as in the BMv2 JSON / P4Info; see p4src/README.md for the full description):
 *
 *   SwitchMLIngress.ina_workers       key: standard_metadata.ingress_port (exact, 9), hdr.ipv4.srcAddr (exact, 32),
 *                                          hdr.udp.srcPort (exact, 16), hdr.ina.job_id (exact, 8)
 *                                     action ina_set_worker(bit<16> rank)    rank < W (else unknown); miss = unknown sender
 *   SwitchMLIngress.ina_jobs          key: hdr.ina.job_id (exact, 8)
 *                                     action ina_set_job(bit<C> num_workers, bit<16> mgid,
 *                                                        bit<16> pool_base, bit<16> pool_size)   miss = unknown job
 *   SwitchMLIngress.ina_epochs        key: hdr.ina.job_id (exact, 8)
 *                                     action ina_set_epoch(bit<8> epoch)   1..127, fresh at every install of the job;
 *                                     RESULT flags = retransmission bit | epoch << 1 (miss: epoch 0)
 *   SwitchMLIngress.l2_forward        key: hdr.ethernet.dstAddr (exact, 48)
 *                                     actions l2_set_port(bit<9> port), l2_flood(bit<16> mgid), l2_drop()  default l2_drop
 *   SwitchMLIngress.drop_sim_ingress  key: standard_metadata.ingress_port (exact, 9)
 *                                     action set_ingress_drop_prob(bit<16> prob)    drop probability = prob / 65535
 *   SwitchMLEgress.drop_sim_egress    key: standard_metadata.egress_port (exact, 9)
 *                                     action set_egress_drop_prob(bit<16> prob)
 *   SwitchMLEgress.ina_destinations   key: hdr.ina.job_id (exact, 8), meta.dst_rank (exact, 16)
 *                                     action ina_set_destination(bit<48> switch_mac, bit<32> switch_ip,
 *                                            bit<48> worker_mac, bit<32> worker_ip, bit<16> worker_port)
 *                                     miss = result dropped, counted in ina_drop_no_destination
 *   Multicast groups: per job mgid (non-zero) with replicas (worker's switch port, rid = rank);
 *                     flood group (any mgid not used by a job) with (port, rid 0) for every port.
 *
 *   Registers (index = slot * 2 + set; size 2 * INA_POOL_SIZE; W = INA_MAX_WORKERS; C = 8 if W < 256, else 16):
 *     SwitchMLIngress.ina_bitmap (bit<W>)  SwitchMLIngress.ina_countdown (bit<C>)  SwitchMLIngress.ina_exponent (bit<8>)
 *     SwitchMLIngress.ina_values (bit<32>, size 2 * INA_POOL_SIZE * INA_NUM_ELEMS, element i at index (slot*2+set)*N + i)
 *   Counters (packets and bytes, size 257, index = job id, index 256 = no readable job id):
 *     SwitchMLIngress.ina_received, ina_aggregated, ina_multicast, ina_retx_answered, ina_drop_unknown,
 *     ina_drop_malformed, ina_drop_retx_incomplete, ina_drop_sim_ingress;
 *     SwitchMLEgress.ina_results_sent, ina_drop_sim_egress, ina_drop_no_destination.
 *   Ingress invariant per job: received = aggregated + retx_answered + drop_unknown + drop_malformed
 *                                         + drop_retx_incomplete.
 */
#include <core.p4>
#include <v1model.p4>

#include "include/ina_config.p4"
#include "include/headers.p4"

parser SwitchMLParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                      inout standard_metadata_t standard_metadata) {
    state start {
        transition parse_ethernet;
    }
    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        /* only unfragmented datagrams without IP options carry a UDP header we look at */
        transition select(hdr.ipv4.ihl, hdr.ipv4.fragOffset, hdr.ipv4.protocol) {
            (4w5, 13w0, IPPROTO_UDP): parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        packet.extract(hdr.udp);
        transition select(hdr.udp.dstPort) {
            INA_UDP_PORT: parse_ina;
            default: accept;
        }
    }
    state parse_ina {
        /* a truncated packet stops here with PacketTooShort: ingress still runs (BMv2 does not drop on
         * parser errors) and finds hdr.ina or hdr.ina_data invalid -> dropped as malformed */
        packet.extract(hdr.ina);
#ifdef INA_SPARSE
        /* a zero block travels without payload */
        transition select(hdr.udp.len) {
            INA_UDP_LEN_EMPTY: accept;
            default: parse_ina_data;
        }
#else
        transition parse_ina_data;
#endif
    }
    state parse_ina_data {
        packet.extract(hdr.ina_data);
        transition accept;
    }
}

control SwitchMLVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control SwitchMLIngress(inout headers_t hdr, inout metadata_t meta,
                        inout standard_metadata_t standard_metadata) {

    register<ina_bitmap_t>(INA_SLOT_REGS) ina_bitmap;
    register<ina_count_t>(INA_SLOT_REGS) ina_countdown;
    register<bit<8>>(INA_SLOT_REGS) ina_exponent;
    register<bit<32>>(INA_VALUE_REGS) ina_values;
#ifdef INA_SPARSE
    register<bit<32>>(INA_SLOT_REGS) ina_next;
#endif

    counter(INA_COUNTER_SIZE, CounterType.packets_and_bytes) ina_received;
    counter(INA_COUNTER_SIZE, CounterType.packets_and_bytes) ina_aggregated;
    counter(INA_COUNTER_SIZE, CounterType.packets_and_bytes) ina_multicast;
    counter(INA_COUNTER_SIZE, CounterType.packets_and_bytes) ina_retx_answered;
    counter(INA_COUNTER_SIZE, CounterType.packets_and_bytes) ina_drop_unknown;
    counter(INA_COUNTER_SIZE, CounterType.packets_and_bytes) ina_drop_malformed;
    counter(INA_COUNTER_SIZE, CounterType.packets_and_bytes) ina_drop_retx_incomplete;
    counter(INA_COUNTER_SIZE, CounterType.packets_and_bytes) ina_drop_sim_ingress;

    action drop() {
        mark_to_drop(standard_metadata);
    }

    /* --- drop simulator ------------------------------------------------------------------------- */

    action set_ingress_drop_prob(bit<16> prob) {
        meta.ig_drop_prob = prob;
    }

    table drop_sim_ingress {
        key = { standard_metadata.ingress_port: exact; }
        actions = { set_ingress_drop_prob; NoAction; }
        default_action = NoAction();
        size = 512;
    }

    /* --- L2 forwarding of non-INA traffic ---------------------------------------------------------- */

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
#if INA_MAX_WORKERS > 32   /* --- INA: sender and job ------------------------------------------------------------ */
    action ina_set_worker(bit<16> rank) { meta.worker_known = 1; meta.rank = rank; meta.worker_bit = INA_WORKER_BIT(rank); }
#else   /* W = 32, the default: as before INA_MAX_WORKERS, line for line (the default build's JSON is unchanged) */
    action ina_set_worker(bit<16> rank) {
        meta.worker_known = 1;
        meta.rank = rank;
        /* p4c-bm2-ss limits a run-time shift amount to 8 bits (INA_WORKER_BIT); ranks >= W are refused in apply */
        meta.worker_bit = 32w1 << (bit<8>)rank;
    }
#endif
    table ina_workers {
        key = {
            standard_metadata.ingress_port: exact;
            hdr.ipv4.srcAddr: exact;
            hdr.udp.srcPort: exact;
            hdr.ina.job_id: exact;
        }
        actions = { ina_set_worker; NoAction; }
        default_action = NoAction();
        size = 1024;
    }

    action ina_set_job(ina_count_t num_workers, bit<16> mgid, bit<16> pool_base, bit<16> pool_size) {
        meta.job_known = 1;
        meta.num_workers = num_workers;
        meta.mgid = mgid;
        meta.pool_base = pool_base;
        meta.pool_size = pool_size;
    }

    table ina_jobs {
        key = { hdr.ina.job_id: exact; }
        actions = { ina_set_job; NoAction; }
        default_action = NoAction();
        size = 256;
    }

    /* the job's epoch (1..127), a fresh one whenever the controller installs the job: results carry it, so workers
       notice a switch that lost its state (restarted and re-programmed) in the middle of a run */
    action ina_set_epoch(bit<8> epoch) {
        meta.epoch = epoch;
    }

    table ina_epochs {
        key = { hdr.ina.job_id: exact; }
        actions = { ina_set_epoch; NoAction; }
        default_action = NoAction();
        size = 256;
    }

    /* --- INA: slot state ------------------------------------------------------------------------- */

    /* pool_index = set (bit 15) | slot (bits 14..0); register index = slot * 2 + set */
    action ina_compute_index() {
        meta.slot = (bit<16>)hdr.ina.pool_index[14:0];
        meta.idx = ((bit<32>)hdr.ina.pool_index[14:0] << 1) | (bit<32>)hdr.ina.pool_index[15:15];
        meta.other_idx = meta.idx ^ 1;
        meta.value_base = meta.idx * INA_NUM_ELEMS;
    }

    /* Marks the sender in this set, clears it in the other set (lazy reset of the set the worker
     * has finished with), and reads the countdown. */
    action ina_update_bitmaps() {
        ina_bitmap.read(meta.bitmap_before, meta.idx);
        ina_bitmap.write(meta.idx, meta.bitmap_before | meta.worker_bit);
        ina_bitmap.read(meta.bitmap_other, meta.other_idx);
        ina_bitmap.write(meta.other_idx, meta.bitmap_other & ~meta.worker_bit);
        ina_countdown.read(meta.countdown, meta.idx);
    }

#define INA_STORE_ELEM(i) \
        ina_values.write(meta.value_base + i, hdr.ina_data.d##i);
#define INA_ADD_ELEM(i) \
        ina_values.read(meta.value, meta.value_base + i); \
        hdr.ina_data.d##i = hdr.ina_data.d##i + meta.value; \
        ina_values.write(meta.value_base + i, hdr.ina_data.d##i);
#define INA_LOAD_ELEM(i) \
        ina_values.read(hdr.ina_data.d##i, meta.value_base + i);

    /* first contribution to the set: overwrite */
    action ina_store_first() {
        INA_FOREACH_ELEM(INA_STORE_ELEM)
        ina_exponent.write(meta.idx, hdr.ina.exponent);
    }

    /* later contribution: add (wraps modulo 2^32); the packet now carries the partial sums */
    action ina_add() {
        INA_FOREACH_ELEM(INA_ADD_ELEM)
        ina_exponent.read(meta.stored_exponent, meta.idx);
    }

    action ina_store_exponent() {
        ina_exponent.write(meta.idx, hdr.ina.exponent);
    }

    /* retransmission to a completed set: the packet gets the stored result */
    action ina_load_result() {
        INA_FOREACH_ELEM(INA_LOAD_ELEM)
        ina_exponent.read(hdr.ina.exponent, meta.idx);
#ifdef INA_SPARSE
        ina_next.read(hdr.ina.next_block, meta.idx);
#endif
    }
#ifdef INA_SPARSE

#define INA_ZERO_ELEM(i) \
        hdr.ina_data.d##i = 0;

    /* a DATA packet without payload (the sender's block is zero): from here on it carries N zeros, so that it adds
     * like any contribution and leaves as a whole RESULT when it completes the set or is answered */
    action ina_expand_empty() {
        hdr.ina_data.setValid();
        INA_FOREACH_ELEM(INA_ZERO_ELEM)
        hdr.udp.len = INA_UDP_LEN;
        hdr.ipv4.totalLen = 20 + INA_UDP_LEN;
    }

    action ina_read_next() {
        ina_next.read(meta.stored_next, meta.idx);
    }

    action ina_store_next() {
        ina_next.write(meta.idx, hdr.ina.next_block);
    }
#endif

    action ina_multicast_result() {
        hdr.ina.msg_type = INA_MSG_RESULT;
        hdr.ina.flags = (hdr.ina.flags & 8w1) | (meta.epoch << 1);
        standard_metadata.mcast_grp = meta.mgid;
    }

    action ina_unicast_result() {
        hdr.ina.msg_type = INA_MSG_RESULT;
        hdr.ina.flags = (hdr.ina.flags & 8w1) | (meta.epoch << 1);
        standard_metadata.egress_spec = standard_metadata.ingress_port;
        meta.unicast_reply = 1;
    }

    apply {
        meta.job_index = INA_NO_JOB;
        if (hdr.ina.isValid()) {
            meta.job_index = (bit<32>)hdr.ina.job_id;
        }

        drop_sim_ingress.apply();
        if (meta.ig_drop_prob != 0) {
            random(meta.ig_rnd, 16w0, 16w65534);
            if (meta.ig_rnd < meta.ig_drop_prob) {
                meta.dropped = 1;
            }
        }

        if (meta.dropped == 1) {
            ina_drop_sim_ingress.count(meta.job_index);
            drop();
        } else if (hdr.udp.isValid() && hdr.udp.dstPort == INA_UDP_PORT) {
            ina_received.count(meta.job_index);
#ifdef INA_SPARSE
            if (hdr.ina.isValid() && !hdr.ina_data.isValid() && hdr.udp.len == INA_UDP_LEN_EMPTY) {
                ina_expand_empty();
            }
#endif
            if (!hdr.ina.isValid() || !hdr.ina_data.isValid() || hdr.udp.len != INA_UDP_LEN
                    || hdr.ina.msg_type != INA_MSG_DATA) {
                ina_drop_malformed.count(meta.job_index);
                drop();
            } else {
                ina_workers.apply();
                if (meta.worker_known == 1) {
                    ina_jobs.apply();
                    ina_epochs.apply();
                }
                ina_compute_index();
                if (meta.worker_known == 0 || meta.job_known == 0 || meta.rank >= INA_MAX_WORKERS) {
                    /* rank >= INA_MAX_WORKERS: an entry whose worker has no bit in the bitmap */
                    ina_drop_unknown.count(meta.job_index);
                    drop();
                } else if (meta.slot >= INA_POOL_SIZE || meta.slot < meta.pool_base
                        || meta.slot - meta.pool_base >= meta.pool_size) {
                    /* slot outside the switch's pool or outside the job's range */
                    ina_drop_malformed.count(meta.job_index);
                    drop();
                } else {
                    ina_update_bitmaps();
                    if ((meta.bitmap_before & meta.worker_bit) == 0) {
                        /* a new contribution */
                        ina_aggregated.count(meta.job_index);
                        if (meta.bitmap_before == 0) {
                            /* nobody in this set yet: the other workers cleared their bits when they moved on */
                            ina_store_first();
#ifdef INA_SPARSE
                            ina_store_next();
#endif
                        } else {
                            ina_add();
#ifdef INA_SPARSE
                            /* the stream's next block is the smallest next_block; its exponent the largest among
                             * the workers whose next block it is (the others' block there is zero) */
                            ina_read_next();
                            if (meta.stored_next < hdr.ina.next_block) {
                                hdr.ina.next_block = meta.stored_next;
                                hdr.ina.exponent = meta.stored_exponent;
                            } else if (meta.stored_next == hdr.ina.next_block
                                    && meta.stored_exponent > hdr.ina.exponent) {
                                hdr.ina.exponent = meta.stored_exponent;
                            }
                            ina_store_next();
#else
                            if (meta.stored_exponent > hdr.ina.exponent) {
                                hdr.ina.exponent = meta.stored_exponent;
                            }
#endif
                            ina_store_exponent();
                        }
                        /* countdown 0 = idle or complete: this contribution opens the set */
                        if (meta.countdown == 0) {
                            meta.countdown = meta.num_workers - 1;
                        } else {
                            meta.countdown = meta.countdown - 1;
                        }
                        ina_countdown.write(meta.idx, meta.countdown);
                        if (meta.countdown == 0) {
                            ina_multicast.count(meta.job_index);
                            ina_multicast_result();
                        } else {
                            drop();
                        }
                    } else if (meta.countdown == 0) {
                        /* retransmission to a completed set: answer with the stored result */
                        ina_retx_answered.count(meta.job_index);
                        ina_load_result();
                        ina_unicast_result();
                    } else {
                        /* retransmission to an incomplete set: its contribution is already counted */
                        ina_drop_retx_incomplete.count(meta.job_index);
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

control SwitchMLEgress(inout headers_t hdr, inout metadata_t meta,
                       inout standard_metadata_t standard_metadata) {

    counter(INA_COUNTER_SIZE, CounterType.packets_and_bytes) ina_results_sent;
    counter(INA_COUNTER_SIZE, CounterType.packets_and_bytes) ina_drop_sim_egress;
    counter(INA_COUNTER_SIZE, CounterType.packets_and_bytes) ina_drop_no_destination;

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

    /* RESULT addressing: from the switch's service address to the worker's address and UDP port */
    action ina_set_destination(bit<48> switch_mac, bit<32> switch_ip,
                               bit<48> worker_mac, bit<32> worker_ip, bit<16> worker_port) {
        hdr.ethernet.srcAddr = switch_mac;
        hdr.ethernet.dstAddr = worker_mac;
        hdr.ipv4.srcAddr = switch_ip;
        hdr.ipv4.dstAddr = worker_ip;
        hdr.ipv4.ttl = 64;
        hdr.udp.srcPort = INA_UDP_PORT;
        hdr.udp.dstPort = worker_port;
        hdr.udp.checksum = 0;
        meta.dst_known = 1;
    }

    table ina_destinations {
        key = {
            hdr.ina.job_id: exact;
            meta.dst_rank: exact;
        }
        actions = { ina_set_destination; NoAction; }
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
            ina_drop_sim_egress.count(meta.job_index);
            drop();
        } else if (hdr.ina.isValid()) {
            /* a replica of a multicast result is for the worker whose rank is its replica id;
             * a unicast answer to a retransmission is for the sender */
            if (meta.unicast_reply == 1) {
                meta.dst_rank = meta.rank;
            } else {
                meta.dst_rank = standard_metadata.egress_rid;
            }
            ina_destinations.apply();
            if (meta.dst_known == 1) {
                ina_results_sent.count(meta.job_index);
            } else {
                ina_drop_no_destination.count(meta.job_index);
                drop();
            }
        } else if (meta.flood == 1 && standard_metadata.egress_port == standard_metadata.ingress_port) {
            drop();
        }
    }
}

control SwitchMLComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        /* only RESULT packets leave with an INA header, and their IPv4 header was rewritten */
        update_checksum(
            hdr.ina.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum,
            HashAlgorithm.csum16);
    }
}

control SwitchMLDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.udp);
        packet.emit(hdr.ina);
        packet.emit(hdr.ina_data);
    }
}

V1Switch(SwitchMLParser(), SwitchMLVerifyChecksum(), SwitchMLIngress(), SwitchMLEgress(),
         SwitchMLComputeChecksum(), SwitchMLDeparser()) main;
