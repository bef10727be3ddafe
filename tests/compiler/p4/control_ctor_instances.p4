/* Control instances as constructor arguments (P4_16 spec §14.1): `Twice(shared) t1; Twice(shared) t2;` both apply
 * the one instance `shared` (one register, bumped twice per packet), `Twice(Bump()) t3;` an instance of its own.
 * Input/output: eth, then data_t { a, b }; a goes through t1 and t2, b through t3. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header data_t { bit<8> a; bit<8> b; }
struct headers { ethernet_t eth; data_t d; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.d); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control bump_t(inout bit<8> x);
control Bump(inout bit<8> x) {
    register<bit<8>>(1) r;
    apply {
        bit<8> v;
        r.read(v, 0);
        v = v + 1;
        r.write(0, v);
        x = x + v;
    }
}
control AddTen(inout bit<8> x) {
    apply { x = x + 10; }
}
control Twice(inout bit<8> x)(bump_t b) {
    apply { x = x << 1; b.apply(x); }
}
control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Bump() shared;
    Twice(shared) t1;
    Twice(shared) t2;
    Twice(AddTen()) t3;
    apply {
        sm.egress_spec = 1;
        t1.apply(hdr.d.a);
        t2.apply(hdr.d.a);
        t3.apply(hdr.d.b);
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.d); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
