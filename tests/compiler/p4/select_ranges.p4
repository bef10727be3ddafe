/* `select` cases with ranges: p4c turns each range into value/mask cases (aligned power-of-two blocks; a signed
 * range that spans zero is split at zero; a range with hi < lo matches nothing), and a case with ranges on two keys
 * into their cross product. The state reached is written to r.state. */
#include <core.p4>
#include <v1model.p4>

header in_t { bit<8> a; int<8> s; }
header r_t { bit<8> state; }
struct headers { in_t i; r_t r; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.i);
        pkt.extract(hdr.r);
        transition select(hdr.i.a) {
            8w9 .. 8w3: never;              // empty: 5 falls through to the next case
            8w3 .. 8w17: low;               // 3, 4..7, 8..15, 16..17
            8w200 .. 8w255: high;
            default: two_keys;
        }
    }
    state two_keys {
        transition select(hdr.i.a, hdr.i.s) {
            (8w18 .. 8w19, -3 .. 2): mixed; // 18..19 x {-3..-1, 0..2}
            (_, 8s100 .. 8s127): big;
            default: accept;
        }
    }
    state never { hdr.r.state = 9; transition accept; }
    state low { hdr.r.state = 1; transition accept; }
    state high { hdr.r.state = 2; transition accept; }
    state mixed { hdr.r.state = 3; transition accept; }
    state big { hdr.r.state = 4; transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { sm.egress_spec = 1; } }
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.i); pkt.emit(hdr.r); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
