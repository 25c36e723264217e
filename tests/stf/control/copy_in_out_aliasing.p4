/*
 * control/copy_in_out_aliasing: copy-in/copy-out of headers and scalars when the
 * callee also reaches the argument another way. Arguments are evaluated left to
 * right and copied in when the call starts; out and inout parameters are copied
 * back, left to right, when it ends, so that:
 *  - an action's direct write to the storage it got as an inout header is undone
 *    by the copy-out (also when an action it calls makes the write);
 *  - an in header keeps the value it had at the call;
 *  - an out header starts invalid and is the argument's new value only at the end
 *    (of an action, or of a function);
 *  - two arguments naming the same storage: the last one copied out wins;
 *  - a function's inout argument written through an in argument of the same call;
 *  - a call in an argument runs after the arguments before it were copied in;
 *  - `exit` in an action or a control still copies its out and inout parameters out.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
}
header o_t {
    bit<8> x;
    bit<8> y;
}
struct headers_t {
    h_t h;
    h_t g;
    h_t k;
    h_t m;
    h_t n;
    h_t q;
    h_t s;
    h_t f;
    o_t o;
}
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        pkt.extract(hdr.g);
        pkt.extract(hdr.k);
        pkt.extract(hdr.m);
        pkt.extract(hdr.n);
        pkt.extract(hdr.q);
        pkt.extract(hdr.s);
        pkt.extract(hdr.f);
        pkt.extract(hdr.o);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

bit<8> inc(inout bit<8> v) {
    v = v + 1;
    return v;
}

bit<8> write_then_read(inout h_t p, in h_t q) {
    p.a = 0x99;
    return q.a;
}

void make_header(out h_t h) {
    h.setValid();
    h.b = 0x21;
}

control Sub(inout bit<8> x, inout h_t p, in h_t q) {
    apply {
        x = 0x55;
        p.a = 0x66;
        p.b = q.a;
        if (x == 0x55) {
            exit;
        }
        p.c = 0x77;
    }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    Sub() sub;

    action header_inout(inout h_t h) {
        hdr.h.b = 0xAA;
        h.a = 0x11;
    }
    action scalar_inout(inout bit<8> x) {
        hdr.h.c = 0xBB;
        x = x + 1;
    }
    action header_in(in h_t h) {
        hdr.g.a = 0x55;
        hdr.g.b = h.a;
    }
    action header_out(out h_t h) {
        hdr.o.x = hdr.k.a;
        h.setValid();
        h.a = 0x12;
    }
    action two_scalars(inout bit<8> x, inout bit<8> y) {
        x = 1;
        y = 2;
    }
    action add_to(inout bit<8> x, in bit<8> y) {
        x = x + y;
    }
    action scalar_then_header(inout bit<8> x, inout h_t h) {
        x = 0x01;
        h.a = 0x02;
    }
    action header_then_scalar(inout h_t h, inout bit<8> x) {
        h.b = 0x03;
        x = 0x04;
    }
    action inner() {
        hdr.q.d = 0x42;
    }
    action outer(inout h_t h) {
        inner();
        h.c = 0x31;
    }
    action header_then_exit(inout h_t h) {
        hdr.s.b = 0x01;
        h.a = 0x02;
        exit;
    }

    apply {
        sm.egress_spec = 1;
        header_inout(hdr.h);
        scalar_inout(hdr.h.c);
        header_in(hdr.g);
        header_out(hdr.k);
        two_scalars(hdr.g.c, hdr.g.c);
        add_to(hdr.g.d, inc(hdr.g.d));
        hdr.h.d = write_then_read(hdr.m, hdr.m);
        scalar_then_header(hdr.n.a, hdr.n);
        header_then_scalar(hdr.n, hdr.n.b);
        outer(hdr.q);
        make_header(hdr.f);
        if (hdr.s.d == 0xFF) {
            header_then_exit(hdr.s);
        }
        sub.apply(hdr.o.y, hdr.s, hdr.s);
        hdr.h.a = 0xEE;
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
        pkt.emit(hdr);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
