/* Vector headers (switch/sim/vectors.py): a header of 16 bit<32> fields that meets a bit<32> register in register
 * windows, for tests/switch/test_vector_headers.py:
 *   op 0: acc[base + k] += e_k (k = 0..15, the sums left in the packet, meta.tmp -> last);
 *   op 1: acc[base + k] := e_k;   op 2: e_k := acc[base + k];
 *   op 3: acc[base + 1 + k] += e_(k+4) (k = 0..7: part of the header, the window one cell on);
 *   op 4: e_(k+8) := acc[base + k] (k = 0..7);
 *   op 5: single elements: if e3 == 7 then e5 := e5 + 1; last := e15; e0 := base;
 *   op 6: the element header invalidated (not emitted);   op 7: e_k := e_k of a second header f (header copy).
 * acc has 40 cells (not a power of two); base + k wraps modulo 2^32; out-of-range reads leave the destination
 * unchanged, out-of-range writes change nothing (BMv2). Every packet is reflected to its ingress port. */
#include <core.p4>
#include <v1model.p4>

header ctl_h {
    bit<8>  op;
    bit<8>  has_f;
    bit<16> pad;
    bit<32> base;
    bit<32> last;
}

header elems_h {
    bit<32> e0;
    bit<32> e1;
    bit<32> e2;
    bit<32> e3;
    bit<32> e4;
    bit<32> e5;
    bit<32> e6;
    bit<32> e7;
    bit<32> e8;
    bit<32> e9;
    bit<32> e10;
    bit<32> e11;
    bit<32> e12;
    bit<32> e13;
    bit<32> e14;
    bit<32> e15;
}

struct headers_t { ctl_h c; elems_h e; elems_h f; }
struct meta_t { bit<32> tmp; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.c);
        pkt.extract(hdr.e);
        transition select(hdr.c.has_f) {
            1: parse_f;
            default: accept;
        }
    }
    state parse_f { pkt.extract(hdr.f); transition accept; }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(40) acc;

    action add() {
        meta.tmp = 7;
        acc.read(meta.tmp, hdr.c.base + 0); hdr.e.e0 = hdr.e.e0 + meta.tmp; acc.write(hdr.c.base + 0, hdr.e.e0);
        acc.read(meta.tmp, hdr.c.base + 1); hdr.e.e1 = hdr.e.e1 + meta.tmp; acc.write(hdr.c.base + 1, hdr.e.e1);
        acc.read(meta.tmp, hdr.c.base + 2); hdr.e.e2 = hdr.e.e2 + meta.tmp; acc.write(hdr.c.base + 2, hdr.e.e2);
        acc.read(meta.tmp, hdr.c.base + 3); hdr.e.e3 = hdr.e.e3 + meta.tmp; acc.write(hdr.c.base + 3, hdr.e.e3);
        acc.read(meta.tmp, hdr.c.base + 4); hdr.e.e4 = hdr.e.e4 + meta.tmp; acc.write(hdr.c.base + 4, hdr.e.e4);
        acc.read(meta.tmp, hdr.c.base + 5); hdr.e.e5 = hdr.e.e5 + meta.tmp; acc.write(hdr.c.base + 5, hdr.e.e5);
        acc.read(meta.tmp, hdr.c.base + 6); hdr.e.e6 = hdr.e.e6 + meta.tmp; acc.write(hdr.c.base + 6, hdr.e.e6);
        acc.read(meta.tmp, hdr.c.base + 7); hdr.e.e7 = hdr.e.e7 + meta.tmp; acc.write(hdr.c.base + 7, hdr.e.e7);
        acc.read(meta.tmp, hdr.c.base + 8); hdr.e.e8 = hdr.e.e8 + meta.tmp; acc.write(hdr.c.base + 8, hdr.e.e8);
        acc.read(meta.tmp, hdr.c.base + 9); hdr.e.e9 = hdr.e.e9 + meta.tmp; acc.write(hdr.c.base + 9, hdr.e.e9);
        acc.read(meta.tmp, hdr.c.base + 10); hdr.e.e10 = hdr.e.e10 + meta.tmp; acc.write(hdr.c.base + 10, hdr.e.e10);
        acc.read(meta.tmp, hdr.c.base + 11); hdr.e.e11 = hdr.e.e11 + meta.tmp; acc.write(hdr.c.base + 11, hdr.e.e11);
        acc.read(meta.tmp, hdr.c.base + 12); hdr.e.e12 = hdr.e.e12 + meta.tmp; acc.write(hdr.c.base + 12, hdr.e.e12);
        acc.read(meta.tmp, hdr.c.base + 13); hdr.e.e13 = hdr.e.e13 + meta.tmp; acc.write(hdr.c.base + 13, hdr.e.e13);
        acc.read(meta.tmp, hdr.c.base + 14); hdr.e.e14 = hdr.e.e14 + meta.tmp; acc.write(hdr.c.base + 14, hdr.e.e14);
        acc.read(meta.tmp, hdr.c.base + 15); hdr.e.e15 = hdr.e.e15 + meta.tmp; acc.write(hdr.c.base + 15, hdr.e.e15);
        hdr.c.last = meta.tmp;
    }
    action store() {
        acc.write(hdr.c.base + 0, hdr.e.e0);
        acc.write(hdr.c.base + 1, hdr.e.e1);
        acc.write(hdr.c.base + 2, hdr.e.e2);
        acc.write(hdr.c.base + 3, hdr.e.e3);
        acc.write(hdr.c.base + 4, hdr.e.e4);
        acc.write(hdr.c.base + 5, hdr.e.e5);
        acc.write(hdr.c.base + 6, hdr.e.e6);
        acc.write(hdr.c.base + 7, hdr.e.e7);
        acc.write(hdr.c.base + 8, hdr.e.e8);
        acc.write(hdr.c.base + 9, hdr.e.e9);
        acc.write(hdr.c.base + 10, hdr.e.e10);
        acc.write(hdr.c.base + 11, hdr.e.e11);
        acc.write(hdr.c.base + 12, hdr.e.e12);
        acc.write(hdr.c.base + 13, hdr.e.e13);
        acc.write(hdr.c.base + 14, hdr.e.e14);
        acc.write(hdr.c.base + 15, hdr.e.e15);
    }
    action load() {
        acc.read(hdr.e.e0, hdr.c.base + 0);
        acc.read(hdr.e.e1, hdr.c.base + 1);
        acc.read(hdr.e.e2, hdr.c.base + 2);
        acc.read(hdr.e.e3, hdr.c.base + 3);
        acc.read(hdr.e.e4, hdr.c.base + 4);
        acc.read(hdr.e.e5, hdr.c.base + 5);
        acc.read(hdr.e.e6, hdr.c.base + 6);
        acc.read(hdr.e.e7, hdr.c.base + 7);
        acc.read(hdr.e.e8, hdr.c.base + 8);
        acc.read(hdr.e.e9, hdr.c.base + 9);
        acc.read(hdr.e.e10, hdr.c.base + 10);
        acc.read(hdr.e.e11, hdr.c.base + 11);
        acc.read(hdr.e.e12, hdr.c.base + 12);
        acc.read(hdr.e.e13, hdr.c.base + 13);
        acc.read(hdr.e.e14, hdr.c.base + 14);
        acc.read(hdr.e.e15, hdr.c.base + 15);
    }
    action part_add() {
        meta.tmp = 9;
        acc.read(meta.tmp, hdr.c.base + 1); hdr.e.e4 = meta.tmp + hdr.e.e4; acc.write(hdr.c.base + 1, hdr.e.e4);
        acc.read(meta.tmp, hdr.c.base + 2); hdr.e.e5 = meta.tmp + hdr.e.e5; acc.write(hdr.c.base + 2, hdr.e.e5);
        acc.read(meta.tmp, hdr.c.base + 3); hdr.e.e6 = meta.tmp + hdr.e.e6; acc.write(hdr.c.base + 3, hdr.e.e6);
        acc.read(meta.tmp, hdr.c.base + 4); hdr.e.e7 = meta.tmp + hdr.e.e7; acc.write(hdr.c.base + 4, hdr.e.e7);
        acc.read(meta.tmp, hdr.c.base + 5); hdr.e.e8 = meta.tmp + hdr.e.e8; acc.write(hdr.c.base + 5, hdr.e.e8);
        acc.read(meta.tmp, hdr.c.base + 6); hdr.e.e9 = meta.tmp + hdr.e.e9; acc.write(hdr.c.base + 6, hdr.e.e9);
        acc.read(meta.tmp, hdr.c.base + 7); hdr.e.e10 = meta.tmp + hdr.e.e10; acc.write(hdr.c.base + 7, hdr.e.e10);
        acc.read(meta.tmp, hdr.c.base + 8); hdr.e.e11 = meta.tmp + hdr.e.e11; acc.write(hdr.c.base + 8, hdr.e.e11);
        hdr.c.last = meta.tmp;
    }
    action part_load() {
        acc.read(hdr.e.e8, hdr.c.base + 0);
        acc.read(hdr.e.e9, hdr.c.base + 1);
        acc.read(hdr.e.e10, hdr.c.base + 2);
        acc.read(hdr.e.e11, hdr.c.base + 3);
        acc.read(hdr.e.e12, hdr.c.base + 4);
        acc.read(hdr.e.e13, hdr.c.base + 5);
        acc.read(hdr.e.e14, hdr.c.base + 6);
        acc.read(hdr.e.e15, hdr.c.base + 7);
    }
    apply {
        if (hdr.e.isValid()) {
            if (hdr.c.op == 0) {
                add();
            } else if (hdr.c.op == 1) {
                store();
            } else if (hdr.c.op == 2) {
                load();
            } else if (hdr.c.op == 3) {
                part_add();
            } else if (hdr.c.op == 4) {
                part_load();
            } else if (hdr.c.op == 5) {
                if (hdr.e.e3 == 7) {
                    hdr.e.e5 = hdr.e.e5 + 1;
                }
                hdr.c.last = hdr.e.e15;
                hdr.e.e0 = hdr.c.base;
            } else if (hdr.c.op == 6) {
                hdr.e.setInvalid();
            } else if (hdr.c.op == 7 && hdr.f.isValid()) {
                hdr.e = hdr.f;
            }
        }
        sm.egress_spec = sm.ingress_port;
    }
}

control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.c); pkt.emit(hdr.e); pkt.emit(hdr.f); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
