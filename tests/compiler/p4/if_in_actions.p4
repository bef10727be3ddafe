// `if` around what predication cannot express, inside actions (p4c-bm2-ss 1.2.5.0+, p4c#4999: _jump_if_zero):
// extern calls, exit, return followed by a call, slice assignments, header validity, nested ifs.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  op;
    bit<8>  n;
    bit<8>  c;
    bit<32> a;
    bit<32> b;
}

header tail_t {
    bit<8> v;
}

struct headers_t {
    h_t    h;
    tail_t tail;
}

struct meta_t {}

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control V(inout headers_t hdr, inout meta_t m) { apply {} }

control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    register<bit<32>>(4) r;

    action drop_if_zero() {
        if (hdr.h.n == 0) {
            mark_to_drop(sm);
        } else {
            hdr.h.a = 1;
        }
    }

    // exit when n == 1 (the apply block's last statement does not run)
    action exit_if_one() {
        if (hdr.h.n == 1) {
            hdr.h.b = 5;
            exit;
        }
        hdr.h.b = 6;
    }

    // r[0] = n when n > 2; a = r[0]
    action write_if_big() {
        if (hdr.h.n > 2) {
            r.write(0, (bit<32>)hdr.h.n);
        }
        r.read(hdr.h.a, 0);
    }

    // a[7:0] = 0xff when n is odd; the tail header appears when n == 4
    action slice_and_validity() {
        if (hdr.h.n[0:0] == 1) {
            hdr.h.a[7:0] = 0xff;
        }
        if (hdr.h.n == 4) {
            hdr.tail.setValid();
            hdr.tail.v = 9;
        }
    }

    // 1 < n < 5: b = 2; n >= 5: dropped; otherwise b untouched
    action nested() {
        if (hdr.h.n > 1) {
            if (hdr.h.n < 5) {
                hdr.h.b = 2;
            } else {
                mark_to_drop(sm);
            }
        }
    }

    // n == 7: a = 7 and return; otherwise a = 8 and the egress port becomes 2
    action return_then_call() {
        if (hdr.h.n == 7) {
            hdr.h.a = 7;
            return;
        }
        hdr.h.a = 8;
        sm.egress_spec = 2;
    }

    table t {
        key = { hdr.h.op : exact; }
        actions = { drop_if_zero; exit_if_one; write_if_big; slice_and_validity; nested; return_then_call;
                    NoAction; }
        default_action = NoAction();
    }

    apply {
        sm.egress_spec = 1;
        t.apply();
        hdr.h.c = 0x77;
    }
}

control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control C(inout headers_t hdr, inout meta_t m) { apply {} }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
        pkt.emit(hdr.tail);
    }
}

V1Switch(P(), V(), I(), E(), C(), D()) main;
