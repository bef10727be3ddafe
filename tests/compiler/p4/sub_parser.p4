/* Sub-parsers: a parser instance applied from a parser state, inlined as p4c does (the calling state continues
 * with the sub-parser's states; its `accept` resumes the rest of the calling state). Two instances of the same
 * parser with their own local variable, an `out` header argument, an `inout` metadata field shared by both calls and
 * an `in` argument that is an expression; parsers with constructor parameters (the sub-parser's step, the
 * top-level parser's tag count). Results: `i.n` = number of tags found. */
#include <core.p4>
#include <v1model.p4>

header in_t { bit<8> kind; bit<8> n; }
header tag_t { bit<8> v; }
struct headers { in_t i; tag_t t1; tag_t t2; tag_t last; }
struct metadata { bit<8> seen; }

// extracts a tag when the next byte equals `want`, counting it in `seen` (by `step`)
parser Tag(packet_in pkt, out tag_t t, inout bit<8> seen, in bit<8> want)(bit<8> step) {
    bit<8> peek;
    state start {
        peek = pkt.lookahead<bit<8>>();
        transition select(peek == want) {
            true: take;
            false: accept;
        }
    }
    state take {
        pkt.extract(t);
        seen = seen + step;
        transition accept;
    }
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm)(bit<8> all) {
    Tag(1) first;
    Tag(1) second;
    state start {
        pkt.extract(hdr.i);
        meta.seen = 0;
        first.apply(pkt, hdr.t1, meta.seen, hdr.i.kind);
        second.apply(pkt, hdr.t2, meta.seen, hdr.i.kind + 1);
        transition select(meta.seen) {
            all: both;
            default: accept;
        }
    }
    state both {
        pkt.extract(hdr.last);
        transition accept;
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.i.n = meta.seen;
        sm.egress_spec = 1;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.i); pkt.emit(hdr.t1); pkt.emit(hdr.t2); pkt.emit(hdr.last); }
}
V1Switch(P(2), VC(), Ing(), Eg(), CC(), Dep()) main;
