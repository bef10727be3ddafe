/* crc16_custom and crc32_custom (count-min sketches use them for independent hash rows): BMv2 gives every such
 * calculation parameters of its own, which simple_switch_CLI's set_crc16_parameters / set_crc32_parameters change
 * (here: V1Switch.crc_custom(name).configure); until then they equal crc16 and crc32. Out: eth.dst[15:0] =
 * crc16_custom(src, type), eth.dst[47:16] = crc32_custom(src, type), eth.src = their plain counterparts. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
struct headers { ethernet_t eth; }
struct metadata { bit<16> c16; bit<32> c32; bit<16> p16; bit<32> p32; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hash(meta.c16, HashAlgorithm.crc16_custom, 16w0, { hdr.eth.src, hdr.eth.etherType }, 32w65536);
        hash(meta.c32, HashAlgorithm.crc32_custom, 32w0, { hdr.eth.src, hdr.eth.etherType }, 33w4294967296);
        hash(meta.p16, HashAlgorithm.crc16, 16w0, { hdr.eth.src, hdr.eth.etherType }, 32w65536);
        hash(meta.p32, HashAlgorithm.crc32, 32w0, { hdr.eth.src, hdr.eth.etherType }, 33w4294967296);
        hdr.eth.dst = meta.c32 ++ meta.c16;
        hdr.eth.src = meta.p32 ++ meta.p16;
        sm.egress_spec = 1;
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control VC(inout headers hdr, inout metadata meta) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
