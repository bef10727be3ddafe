// Tables applied inside larger expressions (P4_16 spec: expressions are evaluated left to right, && / || / ?: short
// circuit): in conditions with && and ||, in a local's initializer, under ?: in an assignment, under ! and inside a
// function argument. Every table records in `log` that it ran, so the packets show which tables ran and in what order
// relative to the reads around them.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> op; bit<8> a; bit<8> b; bit<8> log; bit<8> r1; bit<8> r2; bit<8> r3; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

bit<8> twice(in bit<8> x) { return x + x; }

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    // each action marks the log and changes `a`, which the expressions read after the apply
    action m1() { hdr.h.log = hdr.h.log | 1; hdr.h.a = hdr.h.a + 1; }
    action m2() { hdr.h.log = hdr.h.log | 2; }
    action m4() { hdr.h.log = hdr.h.log | 4; }
    action m8() { hdr.h.log = hdr.h.log | 8; hdr.h.a = 9; }
    action m16() { hdr.h.log = hdr.h.log | 16; }
    action nop2() { hdr.h.log = hdr.h.log | 0x20; }
    table t1 { key = { hdr.h.b: exact; } actions = { m1; NoAction; } const entries = { 1: m1(); } }
    table t2 { key = { hdr.h.b: exact; } actions = { m2; NoAction; } const entries = { 2: m2(); } }
    table t3 { key = { hdr.h.b: exact; } actions = { m4; NoAction; } const entries = { 3: m4(); } }
    table t4 { key = { hdr.h.b: exact; } actions = { m8; NoAction; } const entries = { 4: m8(); } }
    table t5 { key = { hdr.h.b: exact; } actions = { m16; NoAction; } const entries = { 5: m16(); } }
    table t6 { key = { hdr.h.b: exact; } actions = { nop2; NoAction; } default_action = nop2(); }
    apply {
        sm.egress_spec = 1;
        if (hdr.h.op == 1) {
            // t1 runs first; `a` is read after it (m1 increments a)
            if (t1.apply().hit && hdr.h.a == 8) { hdr.h.r1 = 1; } else { hdr.h.r1 = 2; }
        } else if (hdr.h.op == 2) {
            // t2 runs only when a != 7
            if (hdr.h.a == 7 || t2.apply().miss) { hdr.h.r1 = 3; } else { hdr.h.r1 = 4; }
        } else if (hdr.h.op == 3) {
            bit<8> v = t3.apply().hit ? 8w5 : 8w6;
            hdr.h.r1 = v;
        } else if (hdr.h.op == 4) {
            // t4 runs only when a == 0; m8 sets a = 9, read by the assignment below
            hdr.h.r1 = hdr.h.a == 0 ? (t4.apply().hit ? 8w1 : 8w2) : 8w3;
            hdr.h.r2 = hdr.h.a;
        } else if (hdr.h.op == 5) {
            bool missed = !t5.apply().hit;
            hdr.h.r1 = missed ? 8w0x10 : 8w0x20;
        } else if (hdr.h.op == 6) {
            hdr.h.r3 = twice(t6.apply().hit ? 8w3 : 8w4);   // t6 hits nothing: its default runs, a miss
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
