/* Register windows at a computed base: the header's `base` selects cells base+0 .. base+5 of `acc` (20 cells,
 * not a power of two) and each element is read, added and written back (read-modify-write with the sums left in
 * the packet); `tag` is read from `marks` (bit<8> x 200) at index `small` (bit<8>: may exceed the size) and from
 * `full` (bit<8> x 256: every bit<8> index is in range). Indices base+k wrap modulo 2^32. Out-of-range reads
 * leave the destination unchanged, out-of-range writes change nothing (BMv2 logs an error and goes on).
 * Every packet is reflected to its ingress port. Used by tests/switch/test_registers.py. */
#include <core.p4>
#include <v1model.p4>

header win_h {
    bit<32> base;
    bit<8>  small;
    bit<8>  tag;
    bit<8>  tag_full;
    bit<8>  pad;
    bit<32> v0;
    bit<32> v1;
    bit<32> v2;
    bit<32> v3;
    bit<32> v4;
    bit<32> v5;
    bit<32> last;   // the temporary after the window: the last successful read (or its start value 7)
}

struct headers_t { win_h win; }
struct meta_t { bit<32> tmp; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.win); transition accept; }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(20) acc;
    register<bit<8>>(200) marks;
    register<bit<8>>(256) full;

    action window() {
        meta.tmp = 7;
        acc.read(meta.tmp, hdr.win.base + 0);
        hdr.win.v0 = hdr.win.v0 + meta.tmp;
        acc.write(hdr.win.base + 0, hdr.win.v0);
        acc.read(meta.tmp, hdr.win.base + 1);
        hdr.win.v1 = hdr.win.v1 + meta.tmp;
        acc.write(hdr.win.base + 1, hdr.win.v1);
        acc.read(meta.tmp, hdr.win.base + 2);
        hdr.win.v2 = hdr.win.v2 + meta.tmp;
        acc.write(hdr.win.base + 2, hdr.win.v2);
        acc.read(meta.tmp, hdr.win.base + 3);
        hdr.win.v3 = hdr.win.v3 + meta.tmp;
        acc.write(hdr.win.base + 3, hdr.win.v3);
        acc.read(meta.tmp, hdr.win.base + 4);
        hdr.win.v4 = hdr.win.v4 + meta.tmp;
        acc.write(hdr.win.base + 4, hdr.win.v4);
        acc.read(meta.tmp, hdr.win.base + 5);
        hdr.win.v5 = hdr.win.v5 + meta.tmp;
        acc.write(hdr.win.base + 5, hdr.win.v5);
        hdr.win.last = meta.tmp;
        marks.read(hdr.win.tag, (bit<32>)hdr.win.small);
        marks.write((bit<32>)hdr.win.small, hdr.win.small + 1);
        full.read(hdr.win.tag_full, (bit<32>)hdr.win.small);
        full.write((bit<32>)hdr.win.small, hdr.win.small + 2);
    }

    table t_window {
        actions = { window; }
        const default_action = window();
    }

    apply {
        t_window.apply();
        sm.egress_spec = sm.ingress_port;
    }
}

control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.win); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
