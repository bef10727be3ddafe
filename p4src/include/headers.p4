/* headers.p4: packet headers and metadata of switchml.p4 (Ethernet / IPv4 / UDP / INA / payload).
 * The INA header layout is fixed by the team brief; tools derive it from the compiled JSON's
 * header_types "ina_h" and "ina_data_h" (fields d0..d{N-1}, 32 bits each, big endian int32).
 */
#ifndef INA_HEADERS_P4
#define INA_HEADERS_P4

#include "ina_config.p4"
#include "net.p4"

const bit<16> INA_UDP_PORT   = 0xBEE0;    /* 48864: DATA goes to it, RESULT comes from it */
const bit<8>  INA_MSG_DATA   = 1;
const bit<8>  INA_MSG_RESULT = 2;
#ifdef INA_SPARSE
/* omnireduce.p4: the INA header has next_block (16 bytes); a DATA packet without payload (a zero block) has
 * INA_UDP_LEN_EMPTY. */
const bit<16> INA_UDP_LEN       = 8 + 16 + 4 * INA_NUM_ELEMS;
const bit<16> INA_UDP_LEN_EMPTY = 8 + 16;
const bit<32> INA_NO_BLOCK      = 0xFFFFFFFF;   /* next_block: the stream has no further non-zero block */
#else
/* UDP length of a well-formed INA packet: UDP header + INA header + N int32 elements. */
const bit<16> INA_UDP_LEN    = 8 + 12 + 4 * INA_NUM_ELEMS;
#endif

header ina_h {
    bit<8>  msg_type;       /* 1 = DATA (worker -> switch), 2 = RESULT (switch -> worker) */
    bit<8>  job_id;
    bit<16> pool_index;     /* bit 15: set (0/1); bits 14..0: slot */
    bit<32> packet_id;      /* worker's block sequence number */
    bit<8>  exponent;       /* block exponent + 128; the switch keeps the max */
    bit<8>  flags;          /* bit 0: retransmission (informational); RESULT bits 7..1: the job's epoch */
    bit<16> worker_rank;    /* informational; the switch identifies workers by table */
#ifdef INA_SPARSE
    bit<32> next_block;     /* DATA: the sender's next non-zero block of this stream (INA_NO_BLOCK: none);
                               RESULT: the stream's next block, the minimum over the workers */
#endif
}

#define INA_DECLARE_ELEM(i) bit<32> d##i;
header ina_data_h {
    INA_FOREACH_ELEM(INA_DECLARE_ELEM)
}

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    udp_t      udp;
    ina_h      ina;
    ina_data_h ina_data;
}

struct metadata_t {
    /* counters index: job id, or INA_NO_JOB */
    bit<32> job_index;
    /* drop simulator */
    bit<16> ig_drop_prob;
    bit<16> ig_rnd;
    bit<16> eg_drop_prob;
    bit<16> eg_rnd;
    bit<1>  dropped;
    /* sender and job, from ina_workers / ina_jobs */
    bit<1>  worker_known;
    bit<1>  job_known;
    bit<16> rank;
    ina_bitmap_t worker_bit;
    ina_count_t  num_workers;
    bit<16> mgid;
    bit<16> pool_base;
    bit<16> pool_size;
    bit<8>  epoch;          /* from ina_epochs: stamped into RESULT flags bits 7..1 (0 = none) */
    /* slot state */
    bit<16> slot;
    bit<32> idx;            /* slot * 2 + set */
    bit<32> other_idx;      /* slot * 2 + (1 - set) */
    bit<32> value_base;     /* idx * INA_NUM_ELEMS */
    ina_bitmap_t bitmap_before;
    ina_bitmap_t bitmap_other;
    ina_count_t  countdown;
    bit<8>  stored_exponent;
    bit<32> value;
#ifdef INA_SPARSE
    bit<32> stored_next;
#endif
    /* forwarding decisions carried to egress */
    bit<1>  unicast_reply;  /* result answered to a retransmission: egress rewrites for meta.rank */
    bit<1>  flood;          /* L2 flood replica: egress prunes the ingress port */
    bit<16> dst_rank;
    bit<1>  dst_known;
}

#endif
