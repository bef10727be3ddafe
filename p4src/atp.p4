/* atp.p4: ATP-style (NSDI'21) multi-tenant, best-effort in-network aggregation for BMv2 v1model.
 *
 * Workers send ATP packets (Ethernet/IPv4/UDP dport 48865/atp_h/N int32) addressed to their job's parameter
 * server (PS). One pool of ATP_NUM_AGTR aggregators is shared by every job; a packet names its aggregator
 * (the worker hashes (job, window position) into the job's range). An aggregator is owned by one (job, seq) from
 * its first contribution until the PS's ACK or a resend frees it; a packet whose aggregator another (job, seq)
 * owns is flagged COLLISION and goes on, unaggregated, to the PS, which aggregates it there (best effort).
 * Per aggregator: owner, contribution bitmaps, counter, sticky ECN/OVERFLOW flags and N int32 values added with
 * saturation (an addition that saturates leaves INT32_MAX/MIN and flags OVERFLOW, and the PS asks for a raw
 * resend). When the fan-in is reached the aggregate goes on to the PS; the PS's ACK (parameter packet) passes back
 * through the switch, frees the aggregator and is multicast to the job's workers. A RESEND packet flushes the
 * partial aggregate (plus its own contribution if new) to the PS and frees the aggregator.
 *
 * Two levels: per job, a switch is first level (level 0: the workers' rack; aggregates worker contributions,
 * counted in bitmap0 by rank, and tags its aggregate with its rack bit in bitmap1) or second level (level 1: the
 * PS's rack; aggregates rack aggregates, counted in bitmap1). A one-level network has one level-0 switch. A switch
 * without an atp_jobs entry for a job forwards its packets unchanged. Egress marks ECN on every ATP packet that
 * leaves while the egress queue is at least the controller's threshold. Other traffic is switched by destination
 * MAC; a drop simulator drops packets per port, as in switchml.p4.
 *
 * Build: p4c-bm2-ss [-D ATP_NUM_ELEMS=32] [-D ATP_NUM_AGTR=4096] [-D ATP_L2_SIZE=1024] atp.p4
 *
 * Control plane (names as in the BMv2 JSON / P4Info; p4src/README.md describes them):
 *   AtpIngress.atp_jobs        key hdr.atp.job_id (exact)  action atp_set_job(bit<2> level, bit<16> mgid, bit<8> rack)
 *   AtpIngress.atp_workers     key ingress_port, hdr.ipv4.srcAddr, hdr.udp.srcPort, hdr.atp.job_id (exact)
 *                              action atp_set_worker(bit<8> rank)           level 0: unknown senders are dropped
 *   AtpIngress.atp_ack_ports   key hdr.atp.job_id, ingress_port (exact)    action atp_allow_ack()   where ACKs come from
 *   AtpIngress.l2_forward, drop_sim_ingress; AtpEgress.drop_sim_egress     as in switchml.p4
 *   AtpEgress.atp_ecn          keyless; default action atp_set_ecn_threshold(bit<19> threshold)  (0x7ffff: off)
 *   AtpEgress.atp_destinations key hdr.atp.job_id, standard_metadata.egress_rid (exact)
 *                              action atp_set_destination(switch_mac, switch_ip, worker_mac, worker_ip, worker_port)
 *                              miss: the ACK replica leaves unchanged (for the next switch down)
 *   Multicast: per job mgid with replicas (worker port, rid = rank) or (uplink port to a first-level switch, rid >= 256).
 *   Registers (index = aggregator): atp_owner (bit<40> job ++ seq), atp_bitmap, atp_racks, atp_count, atp_flags;
 *              atp_values (bit<32>, element i of aggregator a at a * N + i).
 *   Counters (packets and bytes, index = job id, 256 = no readable job id): see AtpIngress / AtpEgress below.
 *   Ingress invariant per job: received = aggregated + duplicates + collisions + resend_to_ps + raw_to_ps + acks
 *                                         + transit + drop_unknown + drop_malformed.
 */
#include <core.p4>
#include <v1model.p4>

#include "include/atp_headers.p4"

const bit<32> ATP_SAT_MAX = 0x7fffffff;
const bit<32> ATP_SAT_MIN = 0x80000000;

parser AtpParser(packet_in packet, out atp_headers_t hdr, inout atp_metadata_t meta,
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
            ATP_UDP_PORT: parse_atp;
            default: accept;
        }
    }
    state parse_atp {
        /* a truncated packet stops with PacketTooShort; ingress finds a header invalid and drops it as malformed */
        packet.extract(hdr.atp);
        packet.extract(hdr.atp_data);
        transition accept;
    }
}

control AtpVerifyChecksum(inout atp_headers_t hdr, inout atp_metadata_t meta) {
    apply { }
}

control AtpIngress(inout atp_headers_t hdr, inout atp_metadata_t meta,
                   inout standard_metadata_t standard_metadata) {

    register<bit<40>>(ATP_NUM_AGTR) atp_owner;
    register<bit<32>>(ATP_NUM_AGTR) atp_bitmap;
    register<bit<32>>(ATP_NUM_AGTR) atp_racks;
    register<bit<8>>(ATP_NUM_AGTR) atp_count;
    register<bit<8>>(ATP_NUM_AGTR) atp_flags;
    register<bit<32>>(ATP_VALUE_REGS) atp_values;
#ifdef ATP_ESA
    register<bit<8>>(ATP_NUM_AGTR) atp_priority;
    register<bit<40>>(ATP_NUM_AGTR) atp_evicted_owner;
    counter(ATP_COUNTER_SIZE, CounterType.packets_and_bytes) atp_evicted;
#endif
#ifdef ATP_RELEASE
    register<bit<48>>(ATP_NUM_AGTR) atp_deadline;
    counter(ATP_COUNTER_SIZE, CounterType.packets_and_bytes) atp_expired;
#endif

    counter(ATP_COUNTER_SIZE, CounterType.packets_and_bytes) atp_received;
    counter(ATP_COUNTER_SIZE, CounterType.packets_and_bytes) atp_aggregated;
    counter(ATP_COUNTER_SIZE, CounterType.packets_and_bytes) atp_duplicates;
    counter(ATP_COUNTER_SIZE, CounterType.packets_and_bytes) atp_collisions;
    counter(ATP_COUNTER_SIZE, CounterType.packets_and_bytes) atp_resend_to_ps;
    counter(ATP_COUNTER_SIZE, CounterType.packets_and_bytes) atp_raw_to_ps;
    counter(ATP_COUNTER_SIZE, CounterType.packets_and_bytes) atp_completed;
    counter(ATP_COUNTER_SIZE, CounterType.packets_and_bytes) atp_flushed;
    counter(ATP_COUNTER_SIZE, CounterType.packets_and_bytes) atp_acks;
    counter(ATP_COUNTER_SIZE, CounterType.packets_and_bytes) atp_freed;
    counter(ATP_COUNTER_SIZE, CounterType.packets_and_bytes) atp_transit;
    counter(ATP_COUNTER_SIZE, CounterType.packets_and_bytes) atp_drop_unknown;
    counter(ATP_COUNTER_SIZE, CounterType.packets_and_bytes) atp_drop_malformed;
    counter(ATP_COUNTER_SIZE, CounterType.packets_and_bytes) atp_drop_sim_ingress;

    action drop() {
        mark_to_drop(standard_metadata);
    }

    /* --- drop simulator and L2 forwarding (as in switchml.p4) ------------------------------------------ */

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
        size = ATP_L2_SIZE;
    }

    /* --- this switch's role for the job --------------------------------------------------------------- */

#if defined(ATP_RELEASE)
    action atp_set_job(bit<2> level, bit<16> mgid, bit<8> rack, bit<8> priority, bit<32> timeout) {
        meta.job_known = 1;
        meta.level = level;
        meta.mgid = mgid;
        meta.rack_bit = 32w1 << rack;
        meta.priority = priority;
        meta.timeout = (bit<48>)timeout;
    }
#elif defined(ATP_ESA)
    action atp_set_job(bit<2> level, bit<16> mgid, bit<8> rack, bit<8> priority) {
        meta.job_known = 1;
        meta.level = level;
        meta.mgid = mgid;
        meta.rack_bit = 32w1 << rack;
        meta.priority = priority;
    }
#else
    action atp_set_job(bit<2> level, bit<16> mgid, bit<8> rack) {
        meta.job_known = 1;
        meta.level = level;
        meta.mgid = mgid;
        /* p4c-bm2-ss limits a run-time shift amount to 8 bits */
        meta.rack_bit = 32w1 << rack;
    }
#endif

    table atp_jobs {
        key = { hdr.atp.job_id: exact; }
        actions = { atp_set_job; NoAction; }
        default_action = NoAction();
        size = 256;
    }

    action atp_set_worker(bit<8> rank) {
        meta.worker_known = 1;
        meta.worker_bit = 32w1 << rank;
    }

    table atp_workers {
        key = {
            standard_metadata.ingress_port: exact;
            hdr.ipv4.srcAddr: exact;
            hdr.udp.srcPort: exact;
            hdr.atp.job_id: exact;
        }
        actions = { atp_set_worker; NoAction; }
        default_action = NoAction();
        size = 1024;
    }

    action atp_allow_ack() {
        meta.ack_allowed = 1;
    }

    table atp_ack_ports {
        key = {
            hdr.atp.job_id: exact;
            standard_metadata.ingress_port: exact;
        }
        actions = { atp_allow_ack; NoAction; }
        default_action = NoAction();
        size = 1024;
    }

    /* --- aggregator state ------------------------------------------------------------------------------ */

    action atp_read_state() {
        meta.idx = (bit<32>)hdr.atp.agtr;
        meta.value_base = (bit<32>)hdr.atp.agtr * ATP_NUM_ELEMS;
        meta.owner_id = hdr.atp.job_id ++ hdr.atp.seq;
        atp_owner.read(meta.owner, meta.idx);
        atp_bitmap.read(meta.bitmap, meta.idx);
        atp_racks.read(meta.racks, meta.idx);
        atp_count.read(meta.count, meta.idx);
        atp_flags.read(meta.agtr_flags, meta.idx);
#ifdef ATP_ESA
        atp_priority.read(meta.owner_priority, meta.idx);
        atp_evicted_owner.read(meta.evicted_owner, meta.idx);
#endif
#ifdef ATP_RELEASE
        atp_deadline.read(meta.deadline, meta.idx);
#endif
    }

    action atp_write_state() {
        atp_owner.write(meta.idx, meta.owner_id);
        atp_bitmap.write(meta.idx, meta.bitmap);
        atp_racks.write(meta.idx, meta.racks);
        atp_count.write(meta.idx, meta.count);
        atp_flags.write(meta.idx, meta.agtr_flags);
#ifdef ATP_ESA
        atp_priority.write(meta.idx, meta.priority);
#endif
#ifdef ATP_RELEASE
        atp_deadline.write(meta.idx, meta.deadline);
#endif
    }

    action atp_free() {
        atp_owner.write(meta.idx, 0);
        atp_bitmap.write(meta.idx, 0);
        atp_racks.write(meta.idx, 0);
        atp_count.write(meta.idx, 0);
        atp_flags.write(meta.idx, 0);
#ifdef ATP_ESA
        atp_priority.write(meta.idx, 0);
#endif
#ifdef ATP_RELEASE
        atp_deadline.write(meta.idx, 0);
#endif
    }

#define ATP_STORE_ELEM(i) \
        atp_values.write(meta.value_base + i, hdr.atp_data.d##i);
#define ATP_ADD_ELEM(i) \
        atp_values.read(meta.value, meta.value_base + i); \
        hdr.atp_data.d##i = (bit<32>)((int<32>)hdr.atp_data.d##i |+| (int<32>)meta.value); \
        meta.ovf = meta.ovf | (bit<1>)(hdr.atp_data.d##i == ATP_SAT_MAX) | (bit<1>)(hdr.atp_data.d##i == ATP_SAT_MIN); \
        atp_values.write(meta.value_base + i, hdr.atp_data.d##i);
#define ATP_LOAD_ELEM(i) \
        atp_values.read(hdr.atp_data.d##i, meta.value_base + i);

    /* first contribution: the packet's values become the aggregate */
    action atp_store() {
        ATP_FOREACH_ELEM(ATP_STORE_ELEM)
    }

    /* later contribution: saturating add; the packet now carries the running aggregate */
    action atp_add() {
        ATP_FOREACH_ELEM(ATP_ADD_ELEM)
    }

    /* the packet's own contribution was already in: it leaves with the stored aggregate */
    action atp_load() {
        ATP_FOREACH_ELEM(ATP_LOAD_ELEM)
    }
#ifdef ATP_ESA

    /* --- ESA: a packet of a higher-priority job evicts a lower-priority partial aggregate ------------------- */

    /* the victim's PS: where its evicted partial aggregate goes */
    action esa_set_server(bit<48> ps_mac, bit<32> ps_ip) {
        hdr.ethernet.dstAddr = ps_mac;
        hdr.ipv4.dstAddr = ps_ip;
        meta.evicted = 1;
    }

    table esa_servers {
        key = { meta.victim_job: exact; }
        actions = { esa_set_server; NoAction; }
        default_action = NoAction();
        size = 256;
    }

#define ESA_SWAP_ELEM(i) \
        atp_values.read(meta.value, meta.value_base + i); \
        atp_values.write(meta.value_base + i, hdr.atp_data.d##i); \
        hdr.atp_data.d##i = meta.value;

    /* the packet's values become the aggregate; the packet takes the evicted partial aggregate */
    action esa_swap() {
        ATP_FOREACH_ELEM(ESA_SWAP_ELEM)
    }
#endif

    apply {
        meta.job_index = ATP_NO_JOB;
        if (hdr.atp.isValid()) {
            meta.job_index = (bit<32>)hdr.atp.job_id;
        }

        drop_sim_ingress.apply();
        if (meta.ig_drop_prob != 0) {
            random(meta.ig_rnd, 16w0, 16w65534);
            if (meta.ig_rnd < meta.ig_drop_prob) {
                meta.dropped = 1;
            }
        }

        if (meta.dropped == 1) {
            atp_drop_sim_ingress.count(meta.job_index);
            drop();
        } else if (hdr.udp.isValid() && hdr.udp.dstPort == ATP_UDP_PORT) {
            atp_received.count(meta.job_index);
            if (!hdr.atp.isValid() || !hdr.atp_data.isValid() || hdr.udp.len != ATP_UDP_LEN
                    || hdr.atp.agtr >= ATP_NUM_AGTR) {
                atp_drop_malformed.count(meta.job_index);
                drop();
            } else {
                atp_jobs.apply();
                /* the switch changes ATP payloads: no UDP checksum (0 = none over IPv4) */
                hdr.udp.checksum = 0;
                if (meta.job_known == 0) {
                    /* no role for this job here: on towards its destination */
                    atp_transit.count(meta.job_index);
                    meta.l2 = 1;
                } else if ((hdr.atp.flags & ATP_ACK) != 0) {
                    atp_ack_ports.apply();
                    if (meta.ack_allowed == 0) {
                        atp_drop_unknown.count(meta.job_index);
                        drop();
                    } else {
                        atp_read_state();
                        if (meta.owner == meta.owner_id) {
                            atp_freed.count(meta.job_index);
                            atp_free();
                        }
#ifdef ATP_ESA
                        if (meta.evicted_owner == meta.owner_id) {
                            /* the evicted partial aggregate is complete at its PS: its late packets may stop here */
                            atp_evicted_owner.write(meta.idx, 0);
                        }
#endif
                        atp_acks.count(meta.job_index);
                        standard_metadata.mcast_grp = meta.mgid;
                        meta.ack_replica = 1;
                    }
                } else {
                    if (meta.level == 0) {
                        atp_workers.apply();
                        /* the contribution bit comes from the table, not from the packet */
                        hdr.atp.bitmap0 = meta.worker_bit;
                        hdr.atp.bitmap1 = meta.rack_bit;
                    }
                    if (meta.level == 0 && meta.worker_known == 0) {
                        atp_drop_unknown.count(meta.job_index);
                        drop();
                    } else if ((hdr.atp.flags & ATP_RAW) != 0) {
                        /* raw values (overflow resend): only the PS adds them */
                        atp_raw_to_ps.count(meta.job_index);
                        meta.l2 = 1;
                    } else if (meta.level == 1 && (hdr.atp.flags & ATP_COLLISION) != 0) {
                        /* one worker's packet that collided in its rack: unaggregated to the PS (merged here it
                           would take its rack's place in the second-level fan-in) */
                        atp_collisions.count(meta.job_index);
                        meta.l2 = 1;
                    } else {
                        atp_read_state();
                        if ((hdr.atp.flags & ATP_RESEND) != 0) {
                            if (meta.owner == meta.owner_id) {
                                meta.owned = 1;
                            }
                        } else if (meta.owner == meta.owner_id || meta.owner == 0) {
                            meta.owned = 1;
                        }
#ifdef ATP_ESA
                        if (meta.level == 0 && meta.owner_id == meta.evicted_owner) {
                            /* a late contribution to a partial aggregate evicted from here: it completes at its PS
                               (taking the free aggregator, it would wait for contributions that went there) */
                            meta.owned = 0;
                            meta.late = 1;
                        }
                        if (meta.priority > meta.owner_priority) {
                            meta.preempt = 1;
                        }
#ifdef ATP_RELEASE
                        if (meta.deadline != 0 && standard_metadata.ingress_global_timestamp >= meta.deadline) {
                            /* no timer in v1model: the first packet to find the deadline passed releases it */
                            meta.preempt = 1;
                            meta.expired = 1;
                        }
#endif
                        if (meta.owned == 0 && meta.late == 0 && meta.owner != 0 && meta.preempt == 1
                                && (hdr.atp.flags & ATP_RESEND) == 0 && meta.level == 0 && hdr.atp.fan_in0 > 1) {
                            /* a lower-priority (release.p4: or overdue) partial aggregate: it goes to its PS in
                               this packet, whose contribution starts the aggregate of its own (job, seq) here */
                            meta.victim_job = meta.owner[39:32];
                            esa_servers.apply();
                        }
                        if (meta.evicted == 1) {
                            atp_aggregated.count(meta.job_index);
                            atp_evicted.count((bit<32>)meta.victim_job);
#ifdef ATP_RELEASE
                            if (meta.expired == 1) {
                                atp_expired.count((bit<32>)meta.victim_job);
                            }
                            meta.deadline = 0;
                            if (meta.timeout != 0) {
                                meta.deadline = standard_metadata.ingress_global_timestamp + meta.timeout;
                            }
#endif
                            atp_evicted_owner.write(meta.idx, meta.owner);
                            esa_swap();
                            hdr.atp.job_id = meta.victim_job;
                            hdr.atp.seq = meta.owner[31:0];
                            hdr.atp.bitmap0 = meta.bitmap;
                            hdr.atp.bitmap1 = meta.racks;
                            /* COLLISION: the victim's PS moves that window position to a fresh aggregator */
                            meta.count = hdr.atp.flags & (ATP_ECN | ATP_OVERFLOW);  /* the new owner's flags */
                            hdr.atp.flags = meta.agtr_flags | ATP_COLLISION;
                            meta.agtr_flags = meta.count;
                            meta.bitmap = meta.worker_bit;
                            meta.racks = meta.rack_bit;
                            meta.count = 1;
                            atp_write_state();
                            meta.l2 = 1;
                        } else
#endif
                        if (meta.owned == 0) {
                            if ((hdr.atp.flags & ATP_RESEND) != 0) {
                                /* its aggregator was flushed or reused: the PS takes the retransmission */
                                atp_resend_to_ps.count(meta.job_index);
                            } else {
                                hdr.atp.flags = hdr.atp.flags | ATP_COLLISION;
                                atp_collisions.count(meta.job_index);
                            }
                            meta.l2 = 1;
                        } else {
                            if (meta.level == 0) {
                                meta.old = meta.bitmap;
                                meta.fresh = hdr.atp.bitmap0 & ~meta.bitmap;
                                meta.fan_in = hdr.atp.fan_in0;
                            } else {
                                meta.old = meta.racks;
                                meta.fresh = hdr.atp.bitmap1 & ~meta.racks;
                                meta.fan_in = hdr.atp.fan_in1;
                            }
                            if (meta.fresh != 0) {
                                atp_aggregated.count(meta.job_index);
                                if (meta.old == 0) {
                                    atp_store();
#ifdef ATP_RELEASE
                                    if (meta.timeout != 0) {
                                        meta.deadline = standard_metadata.ingress_global_timestamp + meta.timeout;
                                    }
#endif
                                } else {
                                    atp_add();
                                }
                                meta.count = meta.count + 1;
                                meta.bitmap = meta.bitmap | hdr.atp.bitmap0;
                                meta.racks = meta.racks | hdr.atp.bitmap1;
                            } else {
                                /* a retransmission whose contribution is already in: never added twice */
                                atp_duplicates.count(meta.job_index);
                            }
                            meta.agtr_flags = meta.agtr_flags | (hdr.atp.flags & (ATP_ECN | ATP_OVERFLOW));
                            if (meta.ovf == 1) {
                                meta.agtr_flags = meta.agtr_flags | ATP_OVERFLOW;
                            }
                            if ((hdr.atp.flags & ATP_RESEND) != 0 || meta.count == meta.fan_in) {
                                if (meta.fresh == 0) {
                                    atp_load();
                                }
                                hdr.atp.bitmap0 = meta.bitmap;
                                hdr.atp.bitmap1 = meta.racks;
                                hdr.atp.flags = hdr.atp.flags | meta.agtr_flags;
                                if ((hdr.atp.flags & ATP_RESEND) != 0) {
                                    /* flush the partial aggregate to the PS and free the aggregator */
                                    atp_flushed.count(meta.job_index);
                                    atp_free();
                                } else {
                                    atp_completed.count(meta.job_index);
#ifdef ATP_ESA
                                    /* released at once, not at the PS's ACK: the PS holds the result from here */
                                    atp_free();
#else
                                    atp_write_state();
#endif
                                }
                                meta.l2 = 1;
                            } else {
                                atp_write_state();
                                drop();
                            }
                        }
                    }
                }
            }
        } else if (hdr.ethernet.isValid()) {
            meta.l2 = 1;
        } else {
            drop();
        }
        /* one application of l2_forward: packets that go on towards their destination MAC */
        if (meta.l2 == 1) {
            l2_forward.apply();
        }
    }
}

control AtpEgress(inout atp_headers_t hdr, inout atp_metadata_t meta,
                  inout standard_metadata_t standard_metadata) {

    counter(ATP_COUNTER_SIZE, CounterType.packets_and_bytes) atp_acks_sent;
    counter(ATP_COUNTER_SIZE, CounterType.packets_and_bytes) atp_ecn_marked;
    counter(ATP_COUNTER_SIZE, CounterType.packets_and_bytes) atp_drop_sim_egress;

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

    action atp_set_ecn_threshold(bit<19> threshold) {
        meta.ecn_threshold = threshold;
    }

    table atp_ecn {
        actions = { atp_set_ecn_threshold; }
        default_action = atp_set_ecn_threshold(19w0x7ffff);
    }

    /* an ACK replica for a worker: from the switch's service address to the worker's address and port */
    action atp_set_destination(bit<48> switch_mac, bit<32> switch_ip,
                               bit<48> worker_mac, bit<32> worker_ip, bit<16> worker_port) {
        hdr.ethernet.srcAddr = switch_mac;
        hdr.ethernet.dstAddr = worker_mac;
        hdr.ipv4.srcAddr = switch_ip;
        hdr.ipv4.dstAddr = worker_ip;
        hdr.ipv4.ttl = 64;
        hdr.udp.srcPort = ATP_UDP_PORT;
        hdr.udp.dstPort = worker_port;
        meta.dst_known = 1;
    }

    table atp_destinations {
        key = {
            hdr.atp.job_id: exact;
            standard_metadata.egress_rid: exact;
        }
        actions = { atp_set_destination; NoAction; }
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
            atp_drop_sim_egress.count(meta.job_index);
            drop();
        } else if (hdr.atp.isValid()) {
            atp_ecn.apply();
            if ((bit<19>)standard_metadata.deq_qdepth >= meta.ecn_threshold) {
                hdr.atp.flags = hdr.atp.flags | ATP_ECN;
                atp_ecn_marked.count(meta.job_index);
            }
            if (meta.ack_replica == 1) {
                atp_destinations.apply();
                atp_acks_sent.count(meta.job_index);
            }
        } else if (meta.flood == 1 && standard_metadata.egress_port == standard_metadata.ingress_port) {
            drop();
        }
    }
}

control AtpComputeChecksum(inout atp_headers_t hdr, inout atp_metadata_t meta) {
    apply {
        /* ACK replicas leave with a rewritten IPv4 header */
        update_checksum(
#ifdef ATP_ESA
            meta.dst_known == 1 || meta.evicted == 1,
#else
            meta.dst_known == 1,
#endif
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum,
            HashAlgorithm.csum16);
    }
}

control AtpDeparser(packet_out packet, in atp_headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.udp);
        packet.emit(hdr.atp);
        packet.emit(hdr.atp_data);
    }
}

V1Switch(AtpParser(), AtpVerifyChecksum(), AtpIngress(), AtpEgress(), AtpComputeChecksum(), AtpDeparser()) main;
