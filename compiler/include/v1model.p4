/*
 * v1model.p4 — the v1model architecture (BMv2 simple_switch), written for this
 * project's embedded compiler from the architecture's documentation
 * (behavioral-model docs/simple_switch.md) and the P4_16 specification. It declares
 * the same interface as the v1model.p4 shipped with p4c, so programs compile
 * unchanged with either compiler.
 *
 * Versioning: programs may define V1MODEL_VERSION before including this file to
 * ask for the newer interface (20200408: register<T, I>, counter<I> ... with typed indices); the default, as in
 * p4c's own v1model.p4, is the 2018-01-01 interface (bit<32> indices), and the
 * value is visible to P4 code as the constant __v1model_version.
 */

#ifndef _V1_MODEL_P4_
#define _V1_MODEL_P4_

#include "core.p4"

#ifndef V1MODEL_VERSION
#define V1MODEL_VERSION 20180101
#endif

/* Match kinds of v1model tables beyond the core ones. */
match_kind {
    range,     /* lo <= key <= hi */
    optional,  /* exact, or don't care */
    selector   /* key of an action selector's hash */
}

const bit<32> __v1model_version = V1MODEL_VERSION;

#if V1MODEL_VERSION >= 20200408
typedef bit<9> PortId_t;
#endif

/*
 * Per-packet intrinsic metadata of simple_switch, in BMv2's field order and widths.
 * @alias gives the name under which BMv2 looks a field up (the JSON field_aliases).
 */
@metadata @name("standard_metadata")
struct standard_metadata_t {
#if V1MODEL_VERSION >= 20200408
    PortId_t ingress_port;     /* port the packet arrived on */
    PortId_t egress_spec;      /* output port chosen by ingress (511 = drop) */
    PortId_t egress_port;      /* actual output port, valid in egress */
#else
    bit<9>   ingress_port;
    bit<9>   egress_spec;
    bit<9>   egress_port;
#endif
    bit<32>  instance_type;    /* normal, clone, resubmit, recirculate, replication */
    bit<32>  packet_length;    /* bytes */
    @alias("queueing_metadata.enq_timestamp")            bit<32> enq_timestamp;
    @alias("queueing_metadata.enq_qdepth")               bit<19> enq_qdepth;
    @alias("queueing_metadata.deq_timedelta")            bit<32> deq_timedelta;
    @alias("queueing_metadata.deq_qdepth")               bit<19> deq_qdepth;
    @alias("intrinsic_metadata.ingress_global_timestamp") bit<48> ingress_global_timestamp;
    @alias("intrinsic_metadata.egress_global_timestamp")  bit<48> egress_global_timestamp;
    @alias("intrinsic_metadata.mcast_grp")               bit<16> mcast_grp;   /* multicast group, 0 = none */
    @alias("intrinsic_metadata.egress_rid")              bit<16> egress_rid;  /* replication id in egress */
    bit<1>   checksum_error;   /* set when verify_checksum fails */
    error    parser_error;     /* error signalled by the parser */
    @alias("intrinsic_metadata.priority")                bit<3>  priority;
}

enum CounterType {
    packets,
    bytes,
    packets_and_bytes
}

enum MeterType {
    packets,
    bytes
}

/* An array of `size` packet and/or byte counters, updated by count(index). */
#if V1MODEL_VERSION >= 20200408
extern counter<I> {
    counter(bit<32> size, CounterType type);
    void count(in I index);
}
#else
extern counter {
    counter(bit<32> size, CounterType type);
    void count(in bit<32> index);
}
#endif

/* One counter per entry of the table whose `counters` property names it; counted on every hit. */
extern direct_counter {
    direct_counter(CounterType type);
    void count();
}

#define V1MODEL_METER_COLOR_GREEN  0
#define V1MODEL_METER_COLOR_YELLOW 1
#define V1MODEL_METER_COLOR_RED    2

/* An array of two-rate three-color meters; execute_meter writes the color (0 green, 1 yellow, 2 red). */
#if V1MODEL_VERSION >= 20200408
extern meter<I> {
    meter(bit<32> size, MeterType type);
    void execute_meter<T>(in I index, out T result);
}
#else
extern meter {
    meter(bit<32> size, MeterType type);
    void execute_meter<T>(in bit<32> index, out T result);
}
#endif

/* One meter per entry of the table whose `meters` property names it. */
extern direct_meter<T> {
    direct_meter(MeterType type);
    void read(out T result);
}

/* An array of `size` values of type T that keeps its state across packets. */
#if V1MODEL_VERSION >= 20200408
extern register<T, I> {
    register(bit<32> size);
    @noSideEffects void read(out T result, in I index);
    void write(in I index, in T value);
}
#else
extern register<T> {
    register(bit<32> size);
    @noSideEffects void read(out T result, in bit<32> index);
    void write(in bit<32> index, in T value);
}
#endif

/* Table implementation: entries refer to shared action members. */
extern action_profile {
    action_profile(bit<32> size);
}

/* result := a random value in lo..hi (inclusive). */
extern void random<T>(out T result, in T lo, in T hi);

/* Send `data` to the control plane (receiver is ignored by BMv2). */
extern void digest<T>(in bit<32> receiver, in T data);

enum HashAlgorithm {
    crc32,
    crc32_custom,
    crc16,
    crc16_custom,
    random,
    identity,
    csum16,
    xor16
}

/* Drop the packet at the end of this pipeline: egress_spec := drop port, mcast_grp := 0. */
@deprecated("Please use mark_to_drop(standard_metadata) instead.")
extern void mark_to_drop();
extern void mark_to_drop(inout standard_metadata_t standard_metadata);

/* result := base + (H(data) % max) when max >= 1, else base. */
@pure
extern void hash<O, T, D, M>(out O result, in HashAlgorithm algo, in T base, in D data, in M max);

/* Table implementation: an action profile with hash-based member selection. */
extern action_selector {
    action_selector(HashAlgorithm algorithm, bit<32> size, bit<32> outputWidth);
}

enum CloneType {
    I2E,  /* ingress to egress */
    E2E   /* egress to egress */
}

@deprecated("Please use verify_checksum/update_checksum instead.")
extern Checksum16 {
    Checksum16();
    bit<16> get<D>(in D data);
}

/* In the verify-checksum control: if condition holds and checksum != algo(data), set checksum_error. */
extern void verify_checksum<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);
/* In the compute-checksum control: if condition holds, checksum := algo(data). */
extern void update_checksum<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);
/* As above, with the unparsed payload appended to data. */
extern void verify_checksum_with_payload<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);
extern void update_checksum_with_payload<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);

/* Resubmit / recirculate / clone. The *_preserving_field_list forms carry the user metadata
 * fields annotated @field_list(index) along with the packet. */
extern void clone(in CloneType type, in bit<32> session);

@deprecated("Please use 'resubmit_preserving_field_list' instead")
extern void resubmit<T>(in T data);
extern void resubmit_preserving_field_list(bit<8> index);

@deprecated("Please use 'recirculate_preserving_field_list' instead")
extern void recirculate<T>(in T data);
extern void recirculate_preserving_field_list(bit<8> index);

@deprecated("Please use 'clone_preserving_field_list' instead")
extern void clone3<T>(in CloneType type, in bit<32> session, in T data);
extern void clone_preserving_field_list(in CloneType type, in bit<32> session, bit<8> index);

/* Keep only the first `length` bytes of the packet on output. */
extern void truncate(in bit<32> length);

/* Run-time checks (BMv2 stops with an error when check is false) and assumptions for verifiers. */
extern void assert(in bool check);
extern void assume(in bool check);

/* Write a message to the switch log; "{}" in msg is replaced by the fields of data. */
extern void log_msg(string msg);
extern void log_msg<T>(string msg, in T data);

/* The architecture: six programmable blocks. H = struct of headers, M = user metadata struct. */
parser Parser<H, M>(packet_in b,
                    out H parsedHdr,
                    inout M meta,
                    inout standard_metadata_t standard_metadata);

/* May only call verify_checksum / verify_checksum_with_payload. */
control VerifyChecksum<H, M>(inout H hdr, inout M meta);

@pipeline
control Ingress<H, M>(inout H hdr, inout M meta, inout standard_metadata_t standard_metadata);

@pipeline
control Egress<H, M>(inout H hdr, inout M meta, inout standard_metadata_t standard_metadata);

/* May only call update_checksum / update_checksum_with_payload. */
control ComputeChecksum<H, M>(inout H hdr, inout M meta);

@deparser
control Deparser<H>(packet_out b, in H hdr);

package V1Switch<H, M>(Parser<H, M> p,
                       VerifyChecksum<H, M> vr,
                       Ingress<H, M> ig,
                       Egress<H, M> eg,
                       ComputeChecksum<H, M> ck,
                       Deparser<H> dep);

#endif /* _V1_MODEL_P4_ */
