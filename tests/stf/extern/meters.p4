/*
 * extern/meters: an indexed meter (execute_meter) and a direct_meter read
 * in a table action. A meter that was never configured by the control plane
 * marks every packet GREEN (0).
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> color;
    bit<8> dcolor;
}
struct headers_t { h_t h; }
struct meta_t {
    bit<8> color;
    bit<8> dcolor;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    meter(32w4, MeterType.packets) m;
    direct_meter<bit<8>>(MeterType.bytes) dm;
    action fwd(bit<9> port) {
        sm.egress_spec = port;
        dm.read(meta.dcolor);
    }
    table t {
        key = { hdr.h.a : exact; }
        actions = { fwd; }
        meters = dm;
    }
    apply {
        meta.color = 8w0xFF;
        meta.dcolor = 8w0xFF;
        m.execute_meter((bit<32>)hdr.h.a[1:0], meta.color);
        t.apply();
        hdr.h.color = meta.color;
        hdr.h.dcolor = meta.dcolor;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply { }
}

control MyComputeChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
