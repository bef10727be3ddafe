// Header unions (P4_16 spec, "Header unions"): extract into a member, emit of a union (its valid member only),
// u.isValid(), setValid() of a member invalidating the others, member assignment, union assignment, a union local,
// union/header equality and a table keyed on u.isValid().
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header ctl_t { bit<8> op; bit<8> kind; bit<8> flag; bit<8> key; }
header a_t { bit<8> x; bit<8> y; }
header b_t { bit<32> w; }
header_union u_t { a_t a; b_t b; }

struct headers { eth_t eth; ctl_t ctl; u_t u; u_t u2; a_t extra; }
struct metadata { bit<8> m; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.ctl);
        transition select(hdr.ctl.kind) {
            1: get_a;
            2: get_b;
            3: get_a_then_b;
            default: accept;
        }
    }
    state get_a { pkt.extract(hdr.u.a); transition accept; }
    state get_b { pkt.extract(hdr.u.b); transition accept; }
    // extracting b after a leaves only b valid
    state get_a_then_b { pkt.extract(hdr.u.a); pkt.extract(hdr.u.b); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action set_key(bit<8> k) { hdr.ctl.key = k; }
    table by_valid {
        key = { hdr.u.isValid(): exact; }
        actions = { set_key; NoAction; }
        const entries = { true : set_key(0x11); false : set_key(0x22); }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        by_valid.apply();
        if (hdr.ctl.op == 1) {
            hdr.u.b.setValid();            // a (if valid) becomes invalid
            hdr.u.b.w = 0xdeadbeef;
        } else if (hdr.ctl.op == 2) {
            hdr.u.a.setInvalid();
            hdr.u.b.setInvalid();
        } else if (hdr.ctl.op == 3) {
            hdr.u2 = hdr.u;                // a copy of the whole union
            if (hdr.u.a.isValid()) { hdr.u.a.x = hdr.u.a.x + 1; }
        } else if (hdr.ctl.op == 4) {
            hdr.extra.setValid();
            hdr.extra.x = 0x5a;
            hdr.extra.y = 0xa5;
            hdr.u.a = hdr.extra;           // b (if valid) becomes invalid
            hdr.extra.setInvalid();
        } else if (hdr.ctl.op == 5) {
            u_t tmp;
            tmp = hdr.u;
            tmp.b.setValid();
            tmp.b.w = 7;
            hdr.u = tmp;
        } else if (hdr.ctl.op == 6) {
            hdr.u2 = hdr.u;
            hdr.ctl.flag = hdr.u2 == hdr.u ? 8w1 : 8w0;
            if (hdr.u.a.isValid()) { hdr.u2.a.y = 0; }
            if (hdr.u2 != hdr.u) { hdr.ctl.flag = hdr.ctl.flag | 2; }
            if (hdr.u2.a == hdr.u.a) { hdr.ctl.flag = hdr.ctl.flag | 4; }
            hdr.u2.a.setInvalid();
            hdr.u2.b.setInvalid();
        }
        if (hdr.u.isValid()) { hdr.ctl.flag = hdr.ctl.flag | 0x80; }
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }

control D(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.ctl);
        pkt.emit(hdr.u);
        pkt.emit(hdr.u2);
        pkt.emit(hdr.extra);
    }
}

V1Switch(P(), VC(), I(), E(), C(), D()) main;
