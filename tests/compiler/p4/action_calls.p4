/* Actions calling actions (inlined into the caller with copy-in/copy-out, as p4c's front end does), nested three
 * deep, with action data forwarded to a directionless parameter, `_` for an out parameter, and an exit in the callee
 * (its inout parameters are copied out first); directional arguments that are slices (inout and in) and constants
 * (in). Results in header `r`. */
#include <core.p4>
#include <v1model.p4>

header in_t { bit<8> a; bit<8> b; bit<8> flag; }
header r_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; }
struct headers { in_t i; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.i); pkt.extract(hdr.r); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action set_pair(inout bit<8> x, in bit<8> v, bit<8> k) {
        hdr.r.e = 0xee;
        x = v + k;
    }
    action inc_nibble(inout bit<4> n) {
        n = n + 1;
    }
    // action data `d` passed on to a directionless parameter; a slice as an inout argument
    action outer(bit<8> d) {
        set_pair(hdr.r.a, hdr.i.a, d);
        inc_nibble(hdr.r.b[7:4]);
    }
    action level3(inout bit<8> x) { x = x + 1; }
    action level2(inout bit<8> x) { level3(x); x = x << 1; }
    action level1() { level2(hdr.r.c); }
    action plus4(in bit<8> f, out bit<8> b) {
        b = f + 4;
        hdr.r.e = b;
    }
    action drop_result() { plus4(hdr.i.b, _); }
    action addk(inout bit<8> x, in bit<8> k) { x = x + k; }
    action snap(in bit<4> v) { hdr.r.d = (bit<8>)v; }
    action quit(inout bit<8> x) {
        x = 0x42;
        exit;
    }
    table t {
        key = { hdr.i.flag: exact; }
        actions = { outer; }
        const entries = { 0 : outer(3); }
        default_action = outer(7);
    }
    apply {
        sm.egress_spec = 1;
        t.apply();
        level1();
        drop_result();
        addk(hdr.r.c, 5);
        snap(hdr.i.b[3:0]);
        if (hdr.i.flag == 2) {
            quit(hdr.r.d);
        }
        hdr.r.e = hdr.r.e + 1;
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.i); pkt.emit(hdr.r); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
