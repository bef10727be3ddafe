/* A header field of struct type (P4_16 spec §7.2.2: a struct of bit<W>, int<W>, bool or serializable enum fields,
 * nested structs included). p4c's FlattenHeaders lays such a header out as plain fields, renamed after their path
 * and position (`_addr_hi0`, ...); the program reads and writes the nested fields, copies the struct to and from
 * metadata, matches a table on a nested field and assigns the whole header.
 * Input: eth, then tag_t; output: eth, tag (rewritten), copy (a second tag_t built from metadata). */
#include <core.p4>
#include <v1model.p4>

enum bit<8> kind_t { A = 1, B = 2 }
struct pair_t { bit<4> hi; bit<4> lo; }
struct addr_t { pair_t p; bit<16> port; kind_t kind; }
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header tag_t { bit<8> op; addr_t addr; bool flag; bit<7> rest; }
struct headers { ethernet_t eth; tag_t tag; tag_t copy; }
struct metadata { addr_t saved; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.tag); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action to_port(bit<9> port) { sm.egress_spec = port; }
    table by_kind {
        key = { hdr.tag.addr.kind: exact; hdr.tag.addr.p.lo: exact; }
        actions = { to_port; NoAction; }
        const entries = { (kind_t.A, 4w5) : to_port(2); (kind_t.B, 4w5) : to_port(3); }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        by_kind.apply();
        meta.saved = hdr.tag.addr;                       // struct out of a header
        hdr.tag.addr.p = { hdr.tag.addr.p.lo, hdr.tag.addr.p.hi };   // swap the nibbles
        hdr.tag.addr.port = hdr.tag.addr.port + 1;
        hdr.tag.flag = !hdr.tag.flag;
        if (hdr.tag.op == 1) {
            hdr.copy = hdr.tag;                          // whole header with its struct field
            hdr.copy.addr = meta.saved;                  // struct into a header
        }
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.tag); pkt.emit(hdr.copy); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
