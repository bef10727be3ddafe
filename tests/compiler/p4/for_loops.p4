// for loops inside actions (p4c-bm2-ss 1.2.5.12+, p4c#5552: _jump / _jump_if_zero primitives): bounds read from
// the packet, nested loops, break, continue, return from an action and from a function inside a loop, exit inside a
// loop, several initializers and updates, empty clauses, declarations in the body, if/else, externs and header
// validity inside a loop.
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

// the lowest set bit of x, or 0xff: a return inside a loop of a function
bit<8> first_set(in bit<32> x) {
    for (bit<8> i = 0; i < 32; i = i + 1) {
        if (((x >> i) & 1) == 1) {
            return i;
        }
    }
    return 0xff;
}

control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    register<bit<32>>(8) r;

    // a = 1 + 2 + ... + n, b = iterations
    action sum_to() {
        hdr.h.a = 0;
        hdr.h.b = 0;
        for (bit<8> i = 1; i <= hdr.h.n; i = i + 1) {
            hdr.h.a = hdr.h.a + (bit<32>)i;
            hdr.h.b = hdr.h.b + 1;
        }
    }

    // a = n * min(n, c): the inner loop breaks at j == c
    action nested_break() {
        hdr.h.a = 0;
        for (bit<8> i = 0; i < hdr.h.n; i = i + 1) {
            for (bit<8> j = 0; j < hdr.h.n; j = j + 1) {
                if (j == hdr.h.c) {
                    break;
                }
                hdr.h.a = hdr.h.a + 1;
            }
        }
    }

    // a = sum of the even i < n, b = number of odd ones skipped
    action skip_odd() {
        hdr.h.a = 0;
        hdr.h.b = 0;
        for (bit<8> i = 0; i < hdr.h.n; i = i + 1) {
            if (i[0:0] == 1) {
                hdr.h.b = hdr.h.b + 1;
                continue;
            }
            hdr.h.a = hdr.h.a + (bit<32>)i;
        }
    }

    // the first i < n with i * i >= c: a = i, b = i; otherwise a = 0xffffffff after the loop
    action early_return() {
        hdr.h.b = 0;
        for (bit<8> i = 0; i < hdr.h.n; i = i + 1) {
            if (i * i >= hdr.h.c) {
                hdr.h.a = (bit<32>)i;
                return;
            }
            hdr.h.b = hdr.h.b + 1;
        }
        hdr.h.a = 0xffffffff;
    }

    // the first (i, j) with i * j == c, as a = i << 8 | j; 0xeeeeeeee if none (return from a nested loop)
    action nested_return() {
        for (bit<8> i = 1; i < hdr.h.n; i = i + 1) {
            for (bit<8> j = 1; j < hdr.h.n; j = j + 1) {
                if (i * j == hdr.h.c) {
                    hdr.h.a = (bit<32>)i << 8 | (bit<32>)j;
                    return;
                }
            }
        }
        hdr.h.a = 0xeeeeeeee;
    }

    // exit at i == c: b = i, and the apply block's last statement does not run
    action exit_in_loop() {
        for (bit<8> i = 0; i < hdr.h.n; i = i + 1) {
            hdr.h.a = (bit<32>)i;
            if (i == hdr.h.c) {
                hdr.h.b = (bit<32>)i;
                exit;
            }
        }
        hdr.h.b = 0xbbbbbbbb;
    }

    // two counters meeting in the middle: a = iterations, b = j at the end
    action two_counters() {
        hdr.h.a = 0;
        for (bit<8> i = 0, bit<8> j = hdr.h.n; i < j; i = i + 1, j = j - 1) {
            hdr.h.a = hdr.h.a + 1;
            hdr.h.b = (bit<32>)j;
        }
    }

    // no initializer, no update: count b down from n, a += 2 each time; the condition also reads a
    action empty_clauses() {
        hdr.h.a = 0;
        hdr.h.b = (bit<32>)hdr.h.n;
        for (; hdr.h.b != 0 && hdr.h.a < 20; ) {
            hdr.h.b = hdr.h.b - 1;
            hdr.h.a = hdr.h.a + 2;
        }
    }

    // a declaration with an initializer in the body, and if/else: a = sum of i*i for even i, b = sum of i for odd i
    action squares() {
        hdr.h.a = 0;
        hdr.h.b = 0;
        for (bit<8> i = 0; i < hdr.h.n; i = i + 1) {
            bit<32> sq = (bit<32>)i * (bit<32>)i;
            if (i[0:0] == 0) {
                hdr.h.a = hdr.h.a + sq;
            } else {
                hdr.h.b = hdr.h.b + (bit<32>)i;
            }
        }
    }

    // register writes in a loop, then a read: r[k] = c + k for k < 8; b = r[n & 7]; a = first_set(c)
    action registers() {
        for (bit<32> k = 0; k < 8; k = k + 1) {
            r.write(k, (bit<32>)hdr.h.c + k);
        }
        bit<32> v;
        r.read(v, (bit<32>)(hdr.h.n & 7));
        hdr.h.b = v;
        hdr.h.a = (bit<32>)first_set((bit<32>)hdr.h.c << 4);
    }

    // the tail header becomes valid when the loop reaches i == 3 (v = its index count)
    action validity() {
        hdr.h.a = 0;
        for (bit<8> i = 0; i < hdr.h.n; i = i + 1) {
            if (i == 3) {
                hdr.tail.setValid();
                hdr.tail.v = 0;
            }
            if (hdr.tail.isValid()) {
                hdr.tail.v = hdr.tail.v + 1;
            }
            hdr.h.a = hdr.h.a + 1;
        }
    }

    table t {
        key = { hdr.h.op : exact; }
        actions = { sum_to; nested_break; skip_odd; early_return; nested_return; exit_in_loop; two_counters;
                    empty_clauses; squares; registers; validity; NoAction; }
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
