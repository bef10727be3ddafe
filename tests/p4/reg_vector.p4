/* Vector register updates as the optimised code generator rewrites them (switch/sim/optimize.py: register windows
 * as slices, forwarded temporaries), for tests/switch/test_register_vectors.py:
 *   op 0: acc[base + k] += s_k (int<32> header fields, the sums left in the packet), k = 0..7;
 *   op 1: acc[base + k] := s_k;   op 2: s_k := acc[base + k];
 *   op 3: g_k[small] += u_k for 8 bit<16> registers g_k of 16 cells at one index (small: bit<8>, may exceed 16);
 *   ops 4, 5, 6: as 0, 1, 2 on uacc (also bit<32> x 40) with bit<32> header fields w_k (no casts: the plain
 *   copies the optimiser forwards into the slice write, F-slot runs moved as one slice).
 * acc has 40 cells (not a power of two); base + k wraps modulo 2^32; out-of-range reads leave the destination
 * unchanged, out-of-range writes change nothing (BMv2). meta.tmp / meta.t16 end up in `last` / `last16`.
 * Every packet is reflected to its ingress port. */
#include <core.p4>
#include <v1model.p4>

header vec_h {
    bit<8>  op;
    bit<8>  small;
    bit<16> last16;
    bit<32> base;
    int<32> s0;
    int<32> s1;
    int<32> s2;
    int<32> s3;
    int<32> s4;
    int<32> s5;
    int<32> s6;
    int<32> s7;
    bit<16> u0;
    bit<16> u1;
    bit<16> u2;
    bit<16> u3;
    bit<16> u4;
    bit<16> u5;
    bit<16> u6;
    bit<16> u7;
    bit<32> w0;
    bit<32> w1;
    bit<32> w2;
    bit<32> w3;
    bit<32> w4;
    bit<32> w5;
    bit<32> w6;
    bit<32> w7;
    bit<32> last;
}

struct headers_t { vec_h v; }
struct meta_t { bit<32> tmp; bit<16> t16; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.v); transition accept; }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(40) acc;
    register<bit<32>>(40) uacc;
    register<bit<16>>(16) g0;
    register<bit<16>>(16) g1;
    register<bit<16>>(16) g2;
    register<bit<16>>(16) g3;
    register<bit<16>>(16) g4;
    register<bit<16>>(16) g5;
    register<bit<16>>(16) g6;
    register<bit<16>>(16) g7;

    action vadd() {
        meta.tmp = 7;
        acc.read(meta.tmp, hdr.v.base + 0);
        hdr.v.s0 = hdr.v.s0 + (int<32>)meta.tmp;
        acc.write(hdr.v.base + 0, (bit<32>)hdr.v.s0);
        acc.read(meta.tmp, hdr.v.base + 1);
        hdr.v.s1 = hdr.v.s1 + (int<32>)meta.tmp;
        acc.write(hdr.v.base + 1, (bit<32>)hdr.v.s1);
        acc.read(meta.tmp, hdr.v.base + 2);
        hdr.v.s2 = hdr.v.s2 + (int<32>)meta.tmp;
        acc.write(hdr.v.base + 2, (bit<32>)hdr.v.s2);
        acc.read(meta.tmp, hdr.v.base + 3);
        hdr.v.s3 = hdr.v.s3 + (int<32>)meta.tmp;
        acc.write(hdr.v.base + 3, (bit<32>)hdr.v.s3);
        acc.read(meta.tmp, hdr.v.base + 4);
        hdr.v.s4 = hdr.v.s4 + (int<32>)meta.tmp;
        acc.write(hdr.v.base + 4, (bit<32>)hdr.v.s4);
        acc.read(meta.tmp, hdr.v.base + 5);
        hdr.v.s5 = hdr.v.s5 + (int<32>)meta.tmp;
        acc.write(hdr.v.base + 5, (bit<32>)hdr.v.s5);
        acc.read(meta.tmp, hdr.v.base + 6);
        hdr.v.s6 = hdr.v.s6 + (int<32>)meta.tmp;
        acc.write(hdr.v.base + 6, (bit<32>)hdr.v.s6);
        acc.read(meta.tmp, hdr.v.base + 7);
        hdr.v.s7 = hdr.v.s7 + (int<32>)meta.tmp;
        acc.write(hdr.v.base + 7, (bit<32>)hdr.v.s7);
        hdr.v.last = meta.tmp;
    }

    action vstore() {
        acc.write(hdr.v.base + 0, (bit<32>)hdr.v.s0);
        acc.write(hdr.v.base + 1, (bit<32>)hdr.v.s1);
        acc.write(hdr.v.base + 2, (bit<32>)hdr.v.s2);
        acc.write(hdr.v.base + 3, (bit<32>)hdr.v.s3);
        acc.write(hdr.v.base + 4, (bit<32>)hdr.v.s4);
        acc.write(hdr.v.base + 5, (bit<32>)hdr.v.s5);
        acc.write(hdr.v.base + 6, (bit<32>)hdr.v.s6);
        acc.write(hdr.v.base + 7, (bit<32>)hdr.v.s7);
    }

    action vload() {
        meta.tmp = 9;
        acc.read(meta.tmp, hdr.v.base + 0);
        hdr.v.s0 = (int<32>)meta.tmp;
        acc.read(meta.tmp, hdr.v.base + 1);
        hdr.v.s1 = (int<32>)meta.tmp;
        acc.read(meta.tmp, hdr.v.base + 2);
        hdr.v.s2 = (int<32>)meta.tmp;
        acc.read(meta.tmp, hdr.v.base + 3);
        hdr.v.s3 = (int<32>)meta.tmp;
        acc.read(meta.tmp, hdr.v.base + 4);
        hdr.v.s4 = (int<32>)meta.tmp;
        acc.read(meta.tmp, hdr.v.base + 5);
        hdr.v.s5 = (int<32>)meta.tmp;
        acc.read(meta.tmp, hdr.v.base + 6);
        hdr.v.s6 = (int<32>)meta.tmp;
        acc.read(meta.tmp, hdr.v.base + 7);
        hdr.v.s7 = (int<32>)meta.tmp;
        hdr.v.last = meta.tmp;
    }

    action uadd() {
        meta.tmp = 7;
        uacc.read(meta.tmp, hdr.v.base + 0);
        hdr.v.w0 = hdr.v.w0 + meta.tmp;
        uacc.write(hdr.v.base + 0, hdr.v.w0);
        uacc.read(meta.tmp, hdr.v.base + 1);
        hdr.v.w1 = hdr.v.w1 + meta.tmp;
        uacc.write(hdr.v.base + 1, hdr.v.w1);
        uacc.read(meta.tmp, hdr.v.base + 2);
        hdr.v.w2 = hdr.v.w2 + meta.tmp;
        uacc.write(hdr.v.base + 2, hdr.v.w2);
        uacc.read(meta.tmp, hdr.v.base + 3);
        hdr.v.w3 = hdr.v.w3 + meta.tmp;
        uacc.write(hdr.v.base + 3, hdr.v.w3);
        uacc.read(meta.tmp, hdr.v.base + 4);
        hdr.v.w4 = hdr.v.w4 + meta.tmp;
        uacc.write(hdr.v.base + 4, hdr.v.w4);
        uacc.read(meta.tmp, hdr.v.base + 5);
        hdr.v.w5 = hdr.v.w5 + meta.tmp;
        uacc.write(hdr.v.base + 5, hdr.v.w5);
        uacc.read(meta.tmp, hdr.v.base + 6);
        hdr.v.w6 = hdr.v.w6 + meta.tmp;
        uacc.write(hdr.v.base + 6, hdr.v.w6);
        uacc.read(meta.tmp, hdr.v.base + 7);
        hdr.v.w7 = hdr.v.w7 + meta.tmp;
        uacc.write(hdr.v.base + 7, hdr.v.w7);
        hdr.v.last = meta.tmp;
    }

    action ustore() {
        uacc.write(hdr.v.base + 0, hdr.v.w0);
        uacc.write(hdr.v.base + 1, hdr.v.w1);
        uacc.write(hdr.v.base + 2, hdr.v.w2);
        uacc.write(hdr.v.base + 3, hdr.v.w3);
        uacc.write(hdr.v.base + 4, hdr.v.w4);
        uacc.write(hdr.v.base + 5, hdr.v.w5);
        uacc.write(hdr.v.base + 6, hdr.v.w6);
        uacc.write(hdr.v.base + 7, hdr.v.w7);
    }

    action uload() {
        uacc.read(hdr.v.w0, hdr.v.base + 0);
        uacc.read(hdr.v.w1, hdr.v.base + 1);
        uacc.read(hdr.v.w2, hdr.v.base + 2);
        uacc.read(hdr.v.w3, hdr.v.base + 3);
        uacc.read(hdr.v.w4, hdr.v.base + 4);
        uacc.read(hdr.v.w5, hdr.v.base + 5);
        uacc.read(hdr.v.w6, hdr.v.base + 6);
        uacc.read(hdr.v.w7, hdr.v.base + 7);
    }

    action gadd() {
        meta.t16 = 5;
        g0.read(meta.t16, (bit<32>)hdr.v.small);
        meta.t16 = meta.t16 + hdr.v.u0;
        g0.write((bit<32>)hdr.v.small, meta.t16);
        hdr.v.u0 = meta.t16;
        g1.read(meta.t16, (bit<32>)hdr.v.small);
        meta.t16 = meta.t16 + hdr.v.u1;
        g1.write((bit<32>)hdr.v.small, meta.t16);
        hdr.v.u1 = meta.t16;
        g2.read(meta.t16, (bit<32>)hdr.v.small);
        meta.t16 = meta.t16 + hdr.v.u2;
        g2.write((bit<32>)hdr.v.small, meta.t16);
        hdr.v.u2 = meta.t16;
        g3.read(meta.t16, (bit<32>)hdr.v.small);
        meta.t16 = meta.t16 + hdr.v.u3;
        g3.write((bit<32>)hdr.v.small, meta.t16);
        hdr.v.u3 = meta.t16;
        g4.read(meta.t16, (bit<32>)hdr.v.small);
        meta.t16 = meta.t16 + hdr.v.u4;
        g4.write((bit<32>)hdr.v.small, meta.t16);
        hdr.v.u4 = meta.t16;
        g5.read(meta.t16, (bit<32>)hdr.v.small);
        meta.t16 = meta.t16 + hdr.v.u5;
        g5.write((bit<32>)hdr.v.small, meta.t16);
        hdr.v.u5 = meta.t16;
        g6.read(meta.t16, (bit<32>)hdr.v.small);
        meta.t16 = meta.t16 + hdr.v.u6;
        g6.write((bit<32>)hdr.v.small, meta.t16);
        hdr.v.u6 = meta.t16;
        g7.read(meta.t16, (bit<32>)hdr.v.small);
        meta.t16 = meta.t16 + hdr.v.u7;
        g7.write((bit<32>)hdr.v.small, meta.t16);
        hdr.v.u7 = meta.t16;
        hdr.v.last16 = meta.t16;
    }

    apply {
        if (hdr.v.isValid()) {
            if (hdr.v.op == 0) {
                vadd();
            } else if (hdr.v.op == 1) {
                vstore();
            } else if (hdr.v.op == 2) {
                vload();
            } else if (hdr.v.op == 3) {
                gadd();
            } else if (hdr.v.op == 4) {
                uadd();
            } else if (hdr.v.op == 5) {
                ustore();
            } else if (hdr.v.op == 6) {
                uload();
            }
        }
        sm.egress_spec = sm.ingress_port;
    }
}

control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.v); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
