/* Meters as BMv2 runs them: an indexed meter (execute_meter, cell = etherType[3:0], packets) and a direct meter on
 * table `dmac` (bytes), each a two-rate three-colour marker (0 green, 1 yellow, 2 red). Out: eth.src[7:0] = the
 * indexed meter's colour, eth.src[15:8] = the direct meter's (written by the table on a hit only), port = dmac's.
 * The STF sets rates as simple_switch_CLI does; tests/switch/runtime/test_meters.py sets them over P4Runtime. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
struct headers { ethernet_t eth; }
struct metadata { bit<8> colour; bit<8> dcolour; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    meter(32w16, MeterType.packets) per_type;
    direct_meter<bit<8>>(MeterType.bytes) per_dst;

    action forward(bit<9> port) {
        sm.egress_spec = port;
        per_dst.read(meta.dcolour);
    }
    action drop() { mark_to_drop(sm); }
    table dmac {
        key = { hdr.eth.dst: exact; }
        actions = { forward; drop; }
        default_action = drop();
        meters = per_dst;
    }
    apply {
        meta.dcolour = 8w0xff;
        per_type.execute_meter((bit<32>)hdr.eth.etherType[3:0], meta.colour);
        dmac.apply();
        hdr.eth.src[7:0] = meta.colour;
        hdr.eth.src[15:8] = meta.dcolour;
        if (meta.dcolour == 2) {
            mark_to_drop(sm);
        }
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control VC(inout headers hdr, inout metadata meta) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
