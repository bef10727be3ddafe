/* Copy-in/copy-out of action arguments (P4_16 spec §6.8): arguments are evaluated and copied in at the call, left
 * to right; out/inout parameters are copied back at return, left to right, overwriting whatever the action wrote
 * directly to the argument's storage; an out parameter starts uninitialized (0 for a bit<W> on BMv2, an invalid
 * header); the copy-out also happens before an exit. Results in header `r`. */
#include <core.p4>
#include <v1model.p4>

header in_t { bit<8> x; bit<8> y; bit<8> flag; }
header r_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; bit<8> f; bit<8> g; bit<8> h; }
header opt_t { bit<8> v; }
struct headers { in_t i; r_t r; opt_t opt; }
struct metadata { bit<8> m; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.i); pkt.extract(hdr.r); pkt.extract(hdr.opt); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    bit<8> v;

    // v is passed as `x` and also written directly: the copy-out of x wins
    action bump(inout bit<8> x) {
        v = 100;
        x = x + 1;
    }
    // the header field is both the argument and written directly
    action add2(inout bit<8> f) {
        hdr.r.b = 0xee;
        f = f + 2;
    }
    // an `in` argument is a copy taken at the call
    action snap(in bit<8> w) {
        hdr.r.c = 0x55;
        hdr.r.d = w;
    }
    // the same variable passed twice: both copies start from its value, the last copy-out wins
    action twice(inout bit<8> p, inout bit<8> q) {
        p = p + 1;
        q = q + 10;
    }
    // an out parameter does not see the argument's value
    action fresh(out bit<8> o) {
        hdr.r.f = o;
        o = 7;
    }
    // an out header parameter starts invalid: copying it out invalidates the argument
    action reset(out opt_t o) {
        o.v = 9;
    }
    table t {
        key = { hdr.i.flag: exact; }
        actions = { add2(hdr.r.b); NoAction; }
        const entries = { 1 : add2(hdr.r.b); }
        default_action = NoAction();
    }
    apply {
        v = hdr.i.x;
        bump(v);
        hdr.r.a = v;
        t.apply();
        snap(hdr.r.c);
        meta.m = hdr.i.y;
        twice(meta.m, meta.m);
        hdr.r.e = meta.m;
        hdr.r.g = 0x33;
        fresh(hdr.r.g);
        if (hdr.i.flag == 2) {
            reset(hdr.opt);
        }
        sm.egress_spec = 1;
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    // copy-out happens before exit too
    action set_and_exit(inout bit<8> z) {
        z = 0x44;
        exit;
    }
    apply {
        if (hdr.i.flag == 3) {
            set_and_exit(hdr.r.h);
        }
        hdr.r.h = 0x99;
    }
}
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.i); pkt.emit(hdr.r); pkt.emit(hdr.opt); }
}
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
