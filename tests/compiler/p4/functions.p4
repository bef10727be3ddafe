/* Functions whose body is a single return statement, inlined at every call (as p4c does), also from actions and
 * from other functions. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; }
struct headers { h_t h; }
struct metadata { }
bit<8> max8(in bit<8> x, in bit<8> y) { return x > y ? x : y; }
bit<8> twice_max(in bit<8> x, in bit<8> y) { return max8(x, y) << 1; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action f(bit<8> k) { hdr.h.c = max8(k, hdr.h.a); }
    table t { key = { hdr.h.a: exact; } actions = { f; } default_action = f(9); }
    apply { hdr.h.b = twice_max(hdr.h.a, hdr.h.b + 1); t.apply(); sm.egress_spec = 1; }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
