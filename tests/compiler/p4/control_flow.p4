/* More control lowering: a top-level action used by a table, exit inside a table action, switch labels that share a
 * body, actions with directional parameters, a masked key (`f & 0xF1`), an isValid() key, const entries with @priority annotations (p4c's BMv2 back
 * end: the smaller value wins), header stack operations in a control (push_front, pop_front; .last and
 * .lastIndex read in the parser), clone() without a field list and a switch on a value. Results in header `rep`. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header req_t { bit<8> op; bit<8> key; }
header lbl_t { bit<8> v; }
header rep_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }

struct headers { ethernet_t eth; req_t req; lbl_t[3] lbl; rep_t rep; }
struct metadata { bit<8> last_v; bit<8> last_index; }

action global_nop() { }
// directional parameters are bound where the action is used (in an actions list or a direct call)
action set_pair(inout bit<8> x, out bit<8> y, bit<8> v) { x = x + v; y = v; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.req);
        pkt.extract(hdr.rep);
        transition select(hdr.req.op) { 7: labels; default: accept; }
    }
    state labels {
        pkt.extract(hdr.lbl.next);
        pkt.extract(hdr.lbl.next);
        meta.last_v = hdr.lbl.last.v;  // .last and .lastIndex exist only in parsers (p4c refuses them elsewhere)
        meta.last_index = (bit<8>)hdr.lbl.lastIndex;
        transition accept;
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action set_a(bit<8> v) { hdr.rep.a = v; }
    action set_b(bit<8> v) { hdr.rep.b = v; }
    action stop(bit<9> port) { sm.egress_spec = port; exit; }
    action mark() { hdr.rep.d = 0x99; }

    table by_op {
        key = { hdr.req.op: exact; hdr.rep.isValid(): exact; }
        actions = { set_a; set_b; stop; mark; global_nop; set_pair(hdr.rep.a, hdr.rep.b); }
        const entries = {
            (1, true): set_a(0x11);
            (2, true): set_b(0x22);
            (3, true): stop(3);
            (4, true): mark();
            (5, true): global_nop();
            (9, true): set_pair(hdr.rep.a, hdr.rep.b, 0x05);
        }
    }
    table by_key {
        key = { hdr.req.key & 0xF1: ternary; }
        actions = { set_a; }
        const entries = {
            0x10 &&& 0x10: set_a(0xA2) @priority(2);  // listed first, loses where the entry below matches too
            0x10 &&& 0xF0: set_a(0xA1) @priority(1);
        }
    }

    apply {
        bit<8> saved_key = hdr.req.key;  // declared before a table, used after it
        sm.egress_spec = 1;
        switch (by_op.apply().action_run) {
            set_a:
            set_b: {
                hdr.rep.c = 0xab;
            }
            mark: {
                by_key.apply();
            }
        }
        if (hdr.req.op == 5) {
            clone(CloneType.I2E, 6);
        }
        if (hdr.req.op == 1) {
            hdr.rep.d = saved_key;
        }
        if (hdr.req.op == 9) {
            set_pair(hdr.rep.c, hdr.rep.d, 0x30);
        }
        switch (hdr.req.op) {  // a switch on a value: a chain of conditionals
            2:
            3: { hdr.rep.d = 0x23; }
            7: { hdr.rep.a = 0x77; }
            default: { }
        }
        if (hdr.lbl[0].isValid()) {
            hdr.rep.c = meta.last_v;
            hdr.rep.b = meta.last_index;
            hdr.lbl.pop_front(1);
            hdr.lbl.push_front(2);
            hdr.lbl[0].setValid();
            hdr.lbl[0].v = 0xee;
        }
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.eth); pkt.emit(hdr.req); pkt.emit(hdr.rep); pkt.emit(hdr.lbl); }
}

V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
