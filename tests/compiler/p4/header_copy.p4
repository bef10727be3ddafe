/* Header assignment through indirection (P4_16 spec §8.17): assigning a header copies its validity and, when the
 * source is valid, every field; from an invalid source the destination becomes invalid. Covered: stack element
 * <- header, header <- stack element, stack element <- stack element, struct member header <- header and back,
 * through local headers/structs, action out parameters, and whole-struct copies.
 * Input: eth, then req (which copies to do), then two `h_t` headers a, b; out: eth, req, s[0], s[1], a, b, the
 * struct's copy `w.h` re-emitted as `c`. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header req_t { bit<8> op; bit<8> valid_b; }
header h_t { bit<8> x; bit<16> y; }
struct wrap_t { h_t h; bit<8> tag; }
struct outer_t { wrap_t w; }
struct headers { ethernet_t eth; req_t req; h_t a; h_t b; h_t[2] s; h_t c; }
struct metadata { wrap_t w; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.req);
        pkt.extract(hdr.a);
        transition select(hdr.req.valid_b) { 1: parse_b; default: accept; }
    }
    state parse_b { pkt.extract(hdr.b); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action copy_into(out h_t dst, in h_t src) { dst = src; }
    apply {
        sm.egress_spec = 1;
        if (hdr.req.op == 1) {
            hdr.s[0] = hdr.a;          // valid source: s[0] valid with a's fields
            hdr.s[1] = hdr.b;          // b may be invalid: then s[1] stays invalid
        } else if (hdr.req.op == 2) {
            hdr.s[1] = hdr.a;
            hdr.s[0] = hdr.s[1];       // element to element
            hdr.a = hdr.b;             // header <- header: a becomes invalid when b is
        } else if (hdr.req.op == 3) {
            meta.w.h = hdr.a;          // struct member <- header
            meta.w.h.x = meta.w.h.x + 1;
            hdr.c = meta.w.h;          // header <- struct member
            hdr.b = hdr.s[0];          // s[0] was never made valid: b becomes invalid
        } else if (hdr.req.op == 4) {
            h_t tmp;                   // a local header: starts invalid
            wrap_t lw;
            tmp = hdr.a;
            hdr.a.setInvalid();        // a's old field values must not leak through the copies below
            lw.h = tmp;
            outer_t o;
            o.w.h = lw.h;              // a header two struct levels down
            hdr.s[1] = o.w.h;
            hdr.c = hdr.a;             // invalid source: c stays invalid
        } else if (hdr.req.op == 6) {
            wrap_t lw;
            meta.w.h = hdr.b;          // valid or invalid
            meta.w.tag = 7;
            lw = meta.w;               // struct copy carries the header's validity
            hdr.c = lw.h;
            hdr.a = lw.h;
        } else if (hdr.req.op == 5) {
            copy_into(hdr.s[0], hdr.b);  // through an action's out/in header parameters
            copy_into(hdr.c, hdr.s[0]);
        }
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.eth); pkt.emit(hdr.req); pkt.emit(hdr.s); pkt.emit(hdr.a); pkt.emit(hdr.b); pkt.emit(hdr.c); }
}

V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
