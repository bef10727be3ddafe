/* v1model externs in actions and apply blocks: register read/write, indexed counter, direct counter, hash with
 * crc16/crc32/identity/csum16 (and base + H % max), random, setValid/setInvalid (add_header/remove_header). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header req_t { bit<8> op; bit<8> idx; bit<32> val; }
header res_t { bit<32> old; bit<16> h16; bit<32> h32; bit<16> hid; bit<16> hcs; bit<8> rnd; bit<8> hmod; }
header extra_t { bit<16> tag; }

struct headers { ethernet_t eth; req_t req; res_t res; extra_t extra; }
struct metadata { bit<32> sum; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.req);
        pkt.extract(hdr.res);
        transition accept;
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    register<bit<32>>(16) regs;
    counter(8, CounterType.packets_and_bytes) ctr;
    direct_counter(CounterType.packets) dctr;

    action hit_it() { dctr.count(); }
    table t_direct {
        key = { hdr.req.op: exact; }
        actions = { hit_it; NoAction; }
        counters = dctr;
    }
    action accumulate() {
        regs.read(hdr.res.old, (bit<32>)hdr.req.idx);
        meta.sum = hdr.res.old + hdr.req.val;
        regs.write((bit<32>)hdr.req.idx, meta.sum);
    }

    apply {
        accumulate();
        ctr.count((bit<32>)hdr.req.op);
        t_direct.apply();
        hash(hdr.res.h16, HashAlgorithm.crc16, 16w0, { hdr.req.op, hdr.req.idx, hdr.req.val }, 32w65536);
        hash(hdr.res.h32, HashAlgorithm.crc32, 32w0, { hdr.req.val }, 64w4294967296);
        hash(hdr.res.hid, HashAlgorithm.identity, 16w0, { hdr.req.idx, hdr.req.op }, 32w65536);
        hash(hdr.res.hcs, HashAlgorithm.csum16, 16w0, { hdr.req.val }, 32w65536);
        hash(hdr.res.hmod, HashAlgorithm.identity, 8w100, { hdr.req.val }, 16w7);
        random(hdr.res.rnd, 8w5, 8w5);
        if (hdr.req.op == 2) {
            hdr.extra.setValid();
            hdr.extra.tag = 0xBEEF;
        }
        if (hdr.req.op == 3) {
            hdr.res.setInvalid();
        }
        sm.egress_spec = 1;
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }

control Dep(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.req);
        pkt.emit(hdr.res);
        pkt.emit(hdr.extra);
    }
}

V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
