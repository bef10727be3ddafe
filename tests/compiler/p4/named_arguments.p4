/* Named arguments (P4_16 8.20) in every kind of call: an action called directly, extern methods (register read and
 * write), an extern function (hash), a function whose middle parameter is left to its default, and a sub-control's
 * apply. p4c binds them by name, whatever their order. Out: eth.dst = 1, eth.src = register cell + identity hash
 * of etherType + clamp(etherType, 4..9) as f() sees it, port 2 (3 for etherType 0x0003: t.apply(port = 3)). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
struct headers { ethernet_t eth; }
struct metadata { bit<16> h; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}

bit<16> clamp(in bit<16> x, in bit<16> lo = 4, in bit<16> hi) {
    return x < lo ? lo : (x > hi ? hi : x);
}

control Port(inout standard_metadata_t s, in bit<9> port) {
    apply { s.egress_spec = port; }
}

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    register<bit<32>>(32w8) r;
    Port() t;
    action fwd(bit<9> p, bit<48> d) { sm.egress_spec = p; hdr.eth.dst = d; }
    apply {
        r.write(value = 32w7, index = 32w3);
        bit<32> x;
        r.read(index = 32w3, result = x);
        hash(algo = HashAlgorithm.identity, result = meta.h, base = 16w0, data = { hdr.eth.etherType },
             max = 32w65536);
        bit<16> c = clamp(hi = 9, x = hdr.eth.etherType);
        hdr.eth.src = (bit<48>)x + (bit<48>)meta.h + (bit<48>)c;
        fwd(d = 48w1, p = 9w2);
        if (hdr.eth.etherType == 3) {
            t.apply(port = 3, s = sm);
        }
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control VC(inout headers hdr, inout metadata meta) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
