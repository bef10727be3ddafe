/* Width rules and expression lowering: arithmetic wraps at the type width, signed values wrap in two's complement,
 * saturating ops clamp, shifts (constant and run-time), slices, concatenation, casts, ?:, comparisons, bool<->bit,
 * serializable enums, typedefs and constant folding. Operands come in header `ops`, results go out in `res`. */
#include <core.p4>
#include <v1model.p4>

typedef bit<8> byte_t;
const byte_t K = 3 * 5 + (1 << 4);  // folded: 31

enum bit<8> Color { RED = 1, GREEN = 0x22 }

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header ops_t { byte_t a; byte_t b; bit<16> c; int<8> s; bit<8> sh; }
header res_t {
    bit<8> add; bit<8> sub; bit<8> mul; bit<8> shl; bit<8> shr; bit<8> vshl;
    bit<8> and_; bit<8> or_; bit<8> xor_; bit<8> not_; bit<8> neg;
    bit<16> cat; bit<4> hi; bit<4> lo; bit<8> tern; bit<8> cmp;
    int<8> sadd; int<8> sneg; bit<8> usat; int<8> ssat; bit<8> sshr;
    bit<16> widen; bit<8> narrow; bit<8> enumv; bit<8> cst; bit<8> sliceset; bit<8> flag; bit<16> wrap16;
}

struct headers { ethernet_t eth; ops_t ops; res_t res; }
struct metadata { bool big; bit<8> tmp; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.ops);
        pkt.extract(hdr.res);
        transition accept;
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        byte_t a = hdr.ops.a;
        byte_t b = hdr.ops.b;
        hdr.res.add = a + b;
        hdr.res.sub = b - a;
        hdr.res.mul = a * 3;
        hdr.res.shl = a << 2;
        hdr.res.shr = a >> hdr.ops.sh;
        hdr.res.vshl = 8w1 << hdr.ops.sh;
        hdr.res.and_ = a & b;
        hdr.res.or_ = a | b;
        hdr.res.xor_ = a ^ b;
        hdr.res.not_ = ~a;
        hdr.res.neg = -a;
        hdr.res.cat = a ++ b;
        hdr.res.hi = hdr.ops.c[15:12];
        hdr.res.lo = hdr.ops.c[3:0];
        hdr.res.tern = a > b ? a : b;
        hdr.res.cmp = (bit<1>)(a > b) ++ (bit<1>)(a == b) ++ (bit<1>)(a != b) ++ (bit<1>)(a <= b) ++ 4w0;
        hdr.res.sadd = hdr.ops.s + hdr.ops.s;
        hdr.res.sneg = -hdr.ops.s;
        hdr.res.usat = a |+| b;
        hdr.res.ssat = hdr.ops.s |-| 8s100;
        hdr.res.sshr = (bit<8>)(hdr.ops.s >> 2);
        hdr.res.widen = (bit<16>)a;
        hdr.res.narrow = (bit<8>)hdr.ops.c;
        hdr.res.enumv = (bit<8>)Color.GREEN;
        hdr.res.cst = K + 8w1;
        hdr.res.sliceset[7:4] = b[7:4];
        hdr.res.sliceset[3:0] = 4w0xF;
        meta.big = a > b;
        hdr.res.flag = meta.big ? 8w1 : 8w0;
        hdr.res.wrap16 = hdr.ops.c + 16w0xFFFF;
        sm.egress_spec = 1;
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }

control Dep(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.ops);
        pkt.emit(hdr.res);
    }
}

V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
