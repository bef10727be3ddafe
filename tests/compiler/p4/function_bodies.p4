/* Functions with statement bodies, inlined at each call as p4c's front end does: early `return`s (with and without
 * a value), if/else, local variables, out/inout parameters (copy-in/copy-out), a header inout parameter, nested
 * calls and calls inside larger expressions, in an apply block, in an action (predicated) and as a parser select
 * key. Results in header `r`. */
#include <core.p4>
#include <v1model.p4>

header in_t { bit<8> a; bit<8> b; bit<8> c; }
header r_t { bit<8> p; bit<8> q; bit<8> r; bit<8> s; bit<8> t; bit<8> u; bit<8> v; bit<8> w; }
header opt_t { bit<8> v; }
struct headers { in_t i; r_t r; opt_t opt; }
struct metadata { bit<8> n; }

bit<8> clamp(in bit<8> x, in bit<8> lo, in bit<8> hi) {
    if (x < lo) {
        return lo;
    }
    if (x > hi) {
        return hi;
    }
    return x;
}

// lo/hi get x/y in order; an early `return;` in a void function
void minmax(in bit<8> x, in bit<8> y, out bit<8> lo, out bit<8> hi) {
    lo = x;
    hi = y;
    if (x <= y) {
        return;
    }
    lo = y;
    hi = x;
}

bool is_small(in bit<8> x) { return x < 16; }

// a local initialized by a call, and a call inside the returned expression
bit<8> weight(in bit<8> x) {
    bit<8> c = clamp(x, 2, 100);
    return c + clamp(x >> 1, 0, 10);
}

bit<8> upper(in bit<8> x) {
    bit<8> t = x & 0xf0;
    return t >> 4;
}

bit<8> bump(inout bit<8> n) {
    n = n + 1;
    return n + 100;
}

void mark(inout opt_t o, in bit<8> v) {
    if (v == 0) {
        return;
    }
    o.setValid();
    o.v = v;
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.i);
        pkt.extract(hdr.r);
        transition select(upper(hdr.i.a)) {
            0xf: extra;
            default: accept;
        }
    }
    state extra { pkt.extract(hdr.opt); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action act(bit<8> k) {
        hdr.r.u = clamp(hdr.i.c, k, 200);
        meta.n = hdr.i.c;
        hdr.r.v = bump(meta.n);
        hdr.r.w = meta.n;
    }
    table t {
        actions = { act; }
        default_action = act(30);
    }
    apply {
        hdr.r.p = clamp(hdr.i.a, 10, 50);
        minmax(hdr.i.a, hdr.i.b, hdr.r.q, hdr.r.r);
        if (is_small(hdr.i.a) && clamp(hdr.i.b, 0, 20) == 20) {
            hdr.r.s = 1;
        } else {
            hdr.r.s = 2;
        }
        hdr.r.t = weight(hdr.i.a) + upper(hdr.i.b);
        t.apply();
        mark(hdr.opt, hdr.i.c);
        sm.egress_spec = 1;
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.i); pkt.emit(hdr.r); pkt.emit(hdr.opt); }
}
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
