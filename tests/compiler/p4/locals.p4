/* Locals and predication: control-local variables (with and without initializers), action-local variables, a
 * header-typed local, a struct-typed local, a plain enum, an error-typed local, and if/else (nested) inside an
 * action, which BMv2 only supports as predicated assignments; struct assignment and struct expressions;
 * division and modulo by powers of two; log_msg and assert. Results in header `rep`. */
#include <core.p4>
#include <v1model.p4>

enum Dir { UP, DOWN, SIDEWAYS }

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header req_t { bit<8> x; bit<8> y; }
header rep_t { bit<8> p; bit<8> q; bit<8> r; bit<8> s; bit<8> t; bit<8> u; bit<8> v; bit<8> w; }
struct pair_t { bit<8> lo; bit<8> hi; }

struct headers { ethernet_t eth; req_t req; rep_t rep; }
struct metadata { bit<8> unused; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.req); pkt.extract(hdr.rep); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    bit<8> base = 8w10;
    bit<8> acc;
    Dir dir;
    error e;
    pair_t pair;
    req_t saved;

    // classify x: < 10 -> p = 1; < 100 -> p = 2 (and q = x); else p = 3
    action classify() {
        bit<8> tmp = hdr.req.x;
        if (tmp < 10) {
            hdr.rep.p = 1;
        } else if (tmp < 100) {
            hdr.rep.p = 2;
            hdr.rep.q = tmp;
        } else {
            hdr.rep.p = 3;
        }
        tmp = tmp + 1;
        hdr.rep.r = tmp;
    }

    apply {
        classify();
        acc = base + hdr.req.y;
        hdr.rep.s = acc;
        dir = hdr.req.y > 5 ? Dir.DOWN : Dir.UP;
        if (dir == Dir.DOWN) {
            hdr.rep.t = 0xd0;
        } else {
            hdr.rep.t = 0x0f;
        }
        e = error.NoMatch;
        pair.lo = hdr.req.x;
        pair.hi = hdr.req.y;
        saved = hdr.req;
        saved.x = 0;
        if (e == error.NoMatch && saved.x == 0 && saved.isValid()) {
            hdr.rep.u = pair.hi ^ pair.lo;
        }
        pair_t q = { lo = hdr.req.y, hi = 8w7 };
        pair_t q2;
        q2 = q;
        hdr.rep.v = q2.lo + q2.hi;
        hdr.rep.w = hdr.req.x / 4 + hdr.req.x % 4;
        log_msg("x={} y={}", {hdr.req.x, hdr.req.y});
        assert(hdr.req.x != 0x77);  // a failed assert aborts the packet
        sm.egress_spec = 1;
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.eth); pkt.emit(hdr.req); pkt.emit(hdr.rep); }
}

V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
