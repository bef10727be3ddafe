/* Control lowering: lpm/ternary/exact/range keys, a slice key (mask), const entries (first entry wins), const and
 * plain default actions with arguments, NoAction added to a table without default_action, @name on a table,
 * switch (t.apply().action_run) with a default label, t.apply().hit / .miss, direct action calls (tbl_*), exit,
 * straight-line statements between tables (act/tbl_act). Results are reported in header `rep`. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> totalLen; bit<16> identification; bit<3> flags;
    bit<13> fragOffset; bit<8> ttl; bit<8> protocol; bit<16> hdrChecksum; bit<32> srcAddr; bit<32> dstAddr;
}
header rep_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; }

struct headers { ethernet_t eth; ipv4_t ipv4; rep_t rep; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etherType) { 0x0800: parse_ipv4; default: accept; }
    }
    state parse_ipv4 { pkt.extract(hdr.ipv4); pkt.extract(hdr.rep); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action drop() { mark_to_drop(sm); }
    action fwd(bit<9> port) { sm.egress_spec = port; }
    action set_a(bit<8> v) { hdr.rep.a = v; }
    action set_b(bit<8> v) { hdr.rep.b = v; }
    action set_c(bit<8> v) { hdr.rep.c = v; }
    action set_d(bit<8> v) { hdr.rep.d = v; }

    @name("routes") table lpm_t {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { fwd; drop; }
        size = 64;
        default_action = drop();
    }
    table classify {
        key = { hdr.ipv4.srcAddr: ternary; hdr.ipv4.protocol: exact; }
        actions = { set_a; set_b; }
        const entries = {
            (0x0a000000 &&& 0xff000000, 17): set_a(1);
            (0x0a000001 &&& 0xffffffff, 17): set_a(2);  // never wins: the entry above comes first
            (_, 6): set_b(3);
        }
    }
    table by_len {
        key = { hdr.ipv4.totalLen: range; }
        actions = { set_c; NoAction; }
        const entries = {
            0 .. 99: set_c(1);
            100 .. 0xFFFF: set_c(2);
        }
    }
    table dscp {
        key = { hdr.ipv4.diffserv[7:2]: exact; }
        actions = { set_d; }
        const entries = { 0x2E: set_d(0x46); }
        const default_action = set_d(0xEE);
    }

    apply {
        if (!hdr.ipv4.isValid()) {
            drop();
            exit;
        }
        if (hdr.ipv4.ttl == 0) {
            fwd(4);
            exit;
        }
        switch (lpm_t.apply().action_run) {
            fwd: {
                if (classify.apply().hit) {
                    hdr.rep.e = 0x11;
                } else {
                    hdr.rep.e = 0x22;
                }
            }
            default: {
                exit;
            }
        }
        by_len.apply();
        dscp.apply();
        if (hdr.rep.e == 0x22) {
            set_b(0x77);
        }
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }

control Dep(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.rep);
    }
}

V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
