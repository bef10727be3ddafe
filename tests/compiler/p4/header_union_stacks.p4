// Header union stacks: extract into `stack.next.member` (a parser loop), into a constant element's member, emit of
// the stack (each element's valid member), setValid() of a member of an element, element assignment,
// push_front/pop_front on a stack that is not full, and lastIndex in the parser.
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header ctl_t { bit<8> op; bit<8> last; }
header a_t { bit<8> tag; bit<8> x; }
header b_t { bit<8> tag; bit<24> y; }
header_union u_t { a_t a; b_t b; }

struct headers { eth_t eth; ctl_t ctl; u_t[3] us; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.ctl);
        transition select(hdr.ctl.op) {
            9: fixed;
            default: elem;
        }
    }
    state elem {
        transition select(pkt.lookahead<bit<8>>()) {
            0xaa: elem_a;
            0xbb: elem_b;
            default: done;
        }
    }
    state elem_a { pkt.extract(hdr.us.next.a); transition elem; }
    state elem_b { pkt.extract(hdr.us.next.b); transition elem; }
    state done {
        hdr.ctl.last = (bit<8>) hdr.us.lastIndex;
        transition accept;
    }
    // op 9: element 2 gets a b, element 0 an a (no `next`)
    state fixed { pkt.extract(hdr.us[2].b); pkt.extract(hdr.us[0].a); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.ctl.op == 1) {
            hdr.us[0].a.setValid();        // element 0's b (if valid) becomes invalid
            hdr.us[0].a.tag = 0xaa;
            hdr.us[0].a.x = 0x77;
        } else if (hdr.ctl.op == 2) {
            hdr.us[1] = hdr.us[0];
        } else if (hdr.ctl.op == 3) {
            hdr.us.push_front(1);
            hdr.us[0].b.setValid();
            hdr.us[0].b.tag = 0xbb;
            hdr.us[0].b.y = 0x111111;
        } else if (hdr.ctl.op == 4) {
            hdr.us.pop_front(1);
        }
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), VC(), I(), E(), C(), D()) main;
