/* @priority(n) on const entries (a p4c extension BMv2 honours): p4c's BMv2 back end writes n as the entry's JSON
 * priority and gives an entry without it its 1-based position; BMv2 picks the matching entry with the smallest
 * priority, the earlier entry on a tie. Input: eth.etherType; out: rep.a (which entry won). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header rep_t { bit<8> a; bit<8> b; }
struct headers { ethernet_t eth; rep_t rep; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.rep); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action win(bit<8> v) { hdr.rep.a = v; }
    action win_b(bit<8> v) { hdr.rep.b = v; }
    table t {
        key = { hdr.eth.etherType: ternary; }
        actions = { win; NoAction; }
        const entries = {
            0x1100 &&& 0xFF00 : win(1) @priority(30);  // loses to entry 3 (10) and to entry 2 (position 2)
            0x11AA            : win(2);                 // priority 2 (its position)
            0x1100 &&& 0xF000 : win(3) @priority(1);    // wins wherever it matches
            0x2200 &&& 0xFF00 : win(4) @priority(5);    // ties with entry 5: the earlier entry wins
            0x22BB &&& 0xFFFF : win(5) @priority(5);
            0x3300 &&& 0xFF00 : win(6) @priority(40);
            0x33CC            : win(7) @priority(41);   // a larger number loses, even though it is more specific
        }
    }
    table u {  // no annotations: the first matching entry wins
        key = { hdr.eth.etherType: ternary; }
        actions = { win_b; }
        const entries = {
            0x3300 &&& 0xFF00 : win_b(1);
            0x33CC            : win_b(2);
        }
    }
    apply { sm.egress_spec = 1; t.apply(); u.apply(); }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.rep); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
