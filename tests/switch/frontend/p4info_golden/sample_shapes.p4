/* P4Info of shapes p4c's own samples use (pins, dash, pvs-struct, junk-prop): structured
 * annotations (@Name[k=v] and @Name[v, ...]) next to unstructured ones with the same
 * look; a multi-line string in an annotation, comments included; an untyped constant
 * given a type made with `type` where it is assigned or initializes; a value set of a
 * one-field struct matched against a single field; a table property p4c-bm2-ss does
 * not know (ignored, with a warning); a controller header of 18 bits the program only
 * declares. */
#include <core.p4>
#include <v1model.p4>

@p4runtime_translation_mappings({ { "" , 0 } , })
type bit<10> vrf_id_t;
const vrf_id_t kDefaultVrf = 0;

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<9> target_port;
}

header h_t { bit<32> a; bit<8> b; bit<8> c; }
struct headers { h_t h; }
struct metadata { vrf_id_t vrf; bit<8> x; }
struct one_t { bit<32> a; }

parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t sm) {
    @SaiVal[name="pvs", size=4]
    value_set<one_t>(4) pvs;
    state start {
        b.extract(h.h);
        transition select(h.h.a) {
            pvs: accept;
            0x810: accept;
            default: accept;
        }
    }
}

control VC(inout headers h, inout metadata m) { apply { } }

control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    @SaiAction[name="set_vrf", type="VRF"]
    action set_vrf(@SaiVal[type="sai_object_id_t"] vrf_id_t vrf) {
        m.vrf = vrf;
    }
    @unstructured(key=1, other="x")
    action no_vrf() { m.vrf = 0; }
    @SaiTable[name="vrf", api="virtual_router", order=0, hidden=false]
    @Tags[1, -2, "three", true]
    @entry_restriction("
      // no entry may match a zero
      b != 0;
      /* nor a one */
      b != 1
    ")
    table vrf {
        key = { h.h.b : exact @SaiVal[name="b"]; }
        actions = { set_vrf; @SaiAction[name="none"] no_vrf; }
        junk = 1;
    }
    apply {
        vrf_id_t fallback = 3;
        if (m.x == 0) {
            m.vrf = fallback;
        }
        vrf.apply();
        sm.egress_spec = 1;
    }
}

control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out b, in headers h) { apply { b.emit(h.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
