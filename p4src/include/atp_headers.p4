/* atp_headers.p4: the ATP header, its payload, and the headers/metadata structs of atp.p4.
 *
 *   -D ATP_NUM_ELEMS=N   int32 elements per packet, N in {16, 32, 64, 128} (default 32, as ATP's 31 + 1)
 *   -D ATP_NUM_AGTR=A    aggregators in the pool shared by every job, 1..65535 (default 4096)
 *   -D ATP_L2_SIZE=S     entries of l2_forward: hosts (MACs) a switch forwards to, plus one (default 1024)
 *
 * Tools derive the layout from the compiled JSON's header_types "atp_h" and "atp_data_h" (fields d0..d{N-1},
 * 32 bits each, big-endian two's complement int32), as for switchml.p4.
 */
#ifndef ATP_HEADERS_P4
#define ATP_HEADERS_P4

#include "net.p4"
#include "repeat.p4"

#ifndef ATP_NUM_ELEMS
#define ATP_NUM_ELEMS 32
#endif
#ifndef ATP_NUM_AGTR
#define ATP_NUM_AGTR 4096
#endif
#ifndef ATP_L2_SIZE
#define ATP_L2_SIZE 1024
#endif
#if ATP_NUM_AGTR < 1 || ATP_NUM_AGTR > 65535
#error "ATP_NUM_AGTR must be between 1 and 65535 (the agtr field has 16 bits)"
#endif

#if ATP_NUM_ELEMS == 16
#define ATP_FOREACH_ELEM(M) INA_REPEAT_16(M)
#elif ATP_NUM_ELEMS == 32
#define ATP_FOREACH_ELEM(M) INA_REPEAT_32(M)
#elif ATP_NUM_ELEMS == 64
#define ATP_FOREACH_ELEM(M) INA_REPEAT_64(M)
#elif ATP_NUM_ELEMS == 128
#define ATP_FOREACH_ELEM(M) INA_REPEAT_128(M)
#else
#error "ATP_NUM_ELEMS must be one of 16, 32, 64, 128"
#endif

#define ATP_VALUE_REGS (ATP_NUM_AGTR * ATP_NUM_ELEMS)
/* per-job counters: index = job id (0..255); 256 = no readable job id */
#define ATP_NO_JOB       256
#define ATP_COUNTER_SIZE 257

const bit<16> ATP_UDP_PORT = 0xBEE1;   /* 48865: every ATP packet (to the PS, and ACKs to the switch) */
/* UDP length of a well-formed ATP packet: UDP header + ATP header + N int32 elements */
const bit<16> ATP_UDP_LEN  = 8 + 24 + 4 * ATP_NUM_ELEMS;

/* flags */
const bit<8> ATP_ACK       = 0x01;  /* parameter packet from the PS: frees the aggregator, multicast to workers */
const bit<8> ATP_ECN       = 0x02;  /* congestion seen on the path (egress queue above the threshold) */
const bit<8> ATP_RESEND    = 0x04;  /* retransmission: flushes the partial aggregate to the PS and frees it */
const bit<8> ATP_COLLISION = 0x08;  /* the aggregator was owned by another (job, seq): raw packet to the PS */
const bit<8> ATP_OVERFLOW  = 0x10;  /* an addition saturated: the aggregate holds INT32_MAX/MIN somewhere */
const bit<8> ATP_RAW       = 0x20;  /* payload is the worker's raw values (float resend): never aggregated */
const bit<8> ATP_FLOAT     = 0x40;  /* raw payload holds float32 bit patterns */

header atp_h {
    bit<32> bitmap0;     /* contributions contained: bit r = worker rank r of the job (in a job of more than 32
                            workers, aggregated on two levels: the worker at place r of its rack) */
    bit<32> bitmap1;     /* racks contained (two-level): bit k = first-level switch k */
    bit<8>  fan_in0;     /* contributions that complete a first-level aggregate (workers of the rack) */
    bit<8>  fan_in1;     /* racks that complete a second-level aggregate */
    bit<8>  flags;       /* ATP_* flags above */
    bit<8>  job_id;
    bit<32> seq;         /* sequence number of the packet in the job's stream, from 1 */
    bit<16> agtr;        /* aggregator index, chosen by the worker */
    bit<16> agtr_next;   /* ACK: aggregator the workers use from now on for this window position */
    bit<8>  rank;        /* sender's rank (informational; the switch takes the bit from its table) */
    bit<8>  reserved;
    bit<16> reserved2;
}

#define ATP_DECLARE_ELEM(i) bit<32> d##i;
header atp_data_h {
    ATP_FOREACH_ELEM(ATP_DECLARE_ELEM)
}

struct atp_headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    udp_t      udp;
    atp_h      atp;
    atp_data_h atp_data;
}

struct atp_metadata_t {
    bit<32> job_index;      /* counter index: job id, or ATP_NO_JOB */
    /* drop simulator */
    bit<16> ig_drop_prob;
    bit<16> ig_rnd;
    bit<16> eg_drop_prob;
    bit<16> eg_rnd;
    bit<1>  dropped;
    /* this switch's role for the job, from atp_jobs / atp_workers / atp_ack_ports */
    bit<1>  job_known;
    bit<2>  level;          /* 0: first level (workers' rack), 1: second level (merges racks) */
    bit<16> mgid;
    bit<32> rack_bit;
    bit<1>  worker_known;
    bit<32> worker_bit;
    bit<1>  ack_allowed;
    /* aggregator state */
    bit<32> idx;
    bit<32> value_base;
    bit<40> owner_id;       /* job_id ++ seq of this packet */
    bit<40> owner;          /* job_id ++ seq owning the aggregator, 0 = free */
    bit<1>  owned;
    bit<32> bitmap;
    bit<32> racks;
    bit<8>  count;
    bit<8>  agtr_flags;
    bit<32> old;            /* contributions already in the aggregator (ranks at level 0, racks at level 1) */
    bit<32> fresh;          /* the packet's contributions that are new */
    bit<8>  fan_in;
    bit<32> value;
    bit<1>  ovf;
    bit<1>  l2;             /* forward by destination MAC (l2_forward) */
    /* egress */
    bit<1>  ack_replica;
    bit<1>  flood;
    bit<1>  dst_known;
    bit<19> ecn_threshold;
#ifdef ATP_ESA
    /* ESA (esa.p4): preemptive allocation by job priority */
    bit<8>  priority;       /* this packet's job's, from atp_jobs */
    bit<8>  owner_priority; /* the aggregator owner's */
    bit<8>  victim_job;     /* the job whose partial aggregate this packet evicts */
    bit<1>  evicted;        /* the packet now carries that partial to the victim's PS (addresses rewritten) */
    bit<40> evicted_owner;  /* the (job, seq) last evicted from the aggregator, until its PS's ACK passes */
    bit<1>  late;           /* the packet belongs to that evicted partial aggregate: on to its PS */
    bit<1>  preempt;        /* the aggregator's partial aggregate may be evicted for this packet */
#endif
#ifdef ATP_RELEASE
    /* release.p4: a partial aggregate older than its job's timeout is released to its PS */
    bit<48> timeout;        /* this packet's job's, from atp_jobs (us; 0: never) */
    bit<48> deadline;       /* the aggregator's: when its partial aggregate may be released (0: never) */
    bit<1>  expired;        /* the aggregator's deadline has passed */
#endif
}

#endif
