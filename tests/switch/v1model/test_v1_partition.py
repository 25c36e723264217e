"""The steering rule of a program with a ``@pipeline_key`` field: where the kernel finds
the key, and what a frame must meet to be steered by it; refused, with the reason,
where the kernel could not find it."""

from __future__ import annotations

from pathlib import Path

import pytest

from switch.frontend import compile_file, compile_text
from switch.v1model.partition import FrameField, PartitionError, steering

ROOT = Path(__file__).resolve().parents[3]

HEADERS = """
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header tag_t { bit<3> pcp; bit<1> cfi; bit<12> vid; bit<16> type; }
header opt_t { varbit<32> data; }
header k_t { bit<4> hi; KEY bit<12> key; bit<16> more; }
struct headers_t { eth_t eth; tag_t tag; opt_t opt; k_t k; }
struct meta_t { bit<8> unused; }
"""

REST = """
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pk, in headers_t h) { apply { pk.emit(h.eth); pk.emit(h.k); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def _program(states: str, key: str = "@pipeline_key") -> object:
    return compile_text(HEADERS.replace("KEY", key) + """
parser P(packet_in pk, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
""" + states + "\n}\n" + REST, "steer.p4")


def test_the_key_after_fixed_headers_and_selects() -> None:
    rule = steering(_program("""
    state start {
        pk.extract(h.eth);
        transition select(h.eth.type) { 0x8100: tagged; 0x88b5: keyed; default: accept; }
    }
    state tagged {
        pk.extract(h.tag);
        transition select(h.tag.vid, h.tag.type) { (1, 0x88b5): accept;
                                                   (_, 0x88b5): keyed; default: accept; }
    }
    state keyed { pk.extract(h.k); transition accept; }"""))
    assert rule is not None
    assert rule.key == FrameField(112 + 4, 12)  # after Ethernet, behind 4 bits


def test_a_masked_case_and_a_tagged_path() -> None:
    rule = steering(_program("""
    state start {
        pk.extract(h.eth);
        transition select(h.eth.type) { 0x88b5: other; 0x8100 &&& 0xff00: tagged;
                                         default: accept; }
    }
    state other { transition accept; }
    state tagged {
        pk.extract(h.tag);
        transition select(h.tag.type) { 0x88b5: keyed; default: accept; }
    }
    state keyed { pk.extract(h.k); transition accept; }"""))
    assert rule is not None
    assert rule.conditions == ((FrameField(96, 16), 0xFF00, 0x8100),
                               (FrameField(112 + 16, 16), 0xFFFF, 0x88B5))
    assert rule.key == FrameField(112 + 32 + 4, 12)


def test_the_project_programs() -> None:
    branches = steering(compile_file(str(ROOT / "p4" / "bench" / "switchml_branches.p4")))
    assert branches is not None and branches.key == FrameField(8 * 44, 16)
    assert [c[2] for c in branches.conditions] == [0x0800, 17, 48879]
    # the aggregation program names cells of other slots: no key, one pipeline
    assert steering(compile_file(str(ROOT / "p4" / "aggregation.p4"))) is None


@pytest.mark.parametrize(("states", "why"), [
    ("""state start { pk.extract(h.eth); pk.extract(h.opt, 8); pk.extract(h.k);
                      transition accept; }""", "at a place the kernel can find"),
    ("""state start { pk.extract(h.eth);
                      transition select(h.eth.type) { 0x8100: accept; default: keyed; } }
        state keyed { pk.extract(h.k); transition accept; }""",
     "at a place the kernel can find"),
    ("""state start { pk.extract(h.eth);
                      transition select(h.eth.type) { 0x8100: tagged; 0x88b5: keyed;
                                                      default: accept; } }
        state tagged { pk.extract(h.tag); transition keyed; }
        state keyed { pk.extract(h.k); transition accept; }""", "on 2 paths"),
])
def test_keys_the_kernel_cannot_find(states: str, why: str) -> None:
    with pytest.raises(PartitionError, match=why) as e:
        steering(_program(states))
    assert str(e.value).startswith("steer.p4(")
    assert "@pipeline_key on k_t.key" in str(e.value)


def test_no_key_and_two_keys() -> None:
    states = "state start { pk.extract(h.eth); pk.extract(h.k); transition accept; }"
    assert steering(_program(states, key="")) is None
    two = HEADERS.replace("KEY", "@pipeline_key").replace(
        "bit<16> type; }\nheader tag_t", "@pipeline_key bit<16> type; }\nheader tag_t")
    program = compile_text(two + "parser P(packet_in pk, out headers_t h, inout meta_t m, "
                           "inout standard_metadata_t sm) {\n" + states + "\n}\n" + REST,
                           "steer.p4")
    with pytest.raises(PartitionError, match="on more than one field"):
        steering(program)
