"""The generated fast path (``switch.v1model.fastpath``) and ``Pipeline.process``
give the same packets, logs and state: every program of the STF suite, set up by its
STF file, gets its packets (and mutations of them) through both paths."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ina.bench_engine import BenchError, stf_setup
from switch.frontend import CompileError, compile_file
from switch.v1model import V1Switch
from switch.v1model.fastpath import GENERAL_ONLY

STF_DIR = Path(__file__).resolve().parents[2] / "stf"
CASES = sorted(p for p in STF_DIR.rglob("*.stf")
               if "negative" not in p.parts and not p.name.endswith(".bmv2.stf"))


def _mutations(packets: list[tuple[int, bytes]], rng: random.Random) -> list[tuple[int, bytes]]:
    """The packets, then copies with a byte flipped or cut short (parser errors)."""
    out = list(packets)
    for port, data in packets:
        if data:
            b = bytearray(data)
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
            out.append((port, bytes(b)))
            out.append((port, data[:rng.randrange(len(data))]))
    return out


def _state(sw: V1Switch) -> tuple[object, ...]:
    regs = tuple((n, tuple(r.read(i) for i in range(r.size)))
                 for n, r in sorted(sw.externs.registers.items()))
    ctrs = tuple((n, tuple(c.packets), tuple(c.bytes))
                 for n, c in sorted(sw.externs.counters.items()))
    return regs, ctrs, tuple(sw.log), tuple(sw.digests)


@pytest.mark.parametrize("stf", CASES, ids=lambda p: p.relative_to(STF_DIR).with_suffix("")
                         .as_posix())
def test_fast_path_matches_the_general_path(stf: Path) -> None:
    try:
        program = compile_file(str(stf.with_suffix(".p4")))
    except CompileError:
        pytest.skip("the program does not compile (the STF suite says why)")
    fast, general = V1Switch(program), V1Switch(program)
    general.pipeline.inject = general.pipeline.process
    try:
        packets = stf_setup(program, fast, str(stf))
        stf_setup(program, general, str(stf))
    except BenchError:
        pytest.skip("the STF set-up does not run on its own (the STF suite covers it)")
    uses_fast = fast.pipeline.inject != fast.pipeline.process
    assert uses_fast == (not fast.hooks.used & GENERAL_ONLY)
    rng = random.Random(stf.name)
    for i, (port, data) in enumerate(_mutations(packets, rng)):
        out = _outcome(fast, port, data)
        assert out == _outcome(general, port, data), f"packet {i}"
        # the same failure on both paths is still a failure: only a mutated packet may
        # make the program divide by zero, and nothing else may raise
        assert isinstance(out, list) or (
            i >= len(packets) and out.startswith("ZeroDivisionError:")), f"packet {i}: {out}"
    assert _state(fast) == _state(general)


def _outcome(sw: V1Switch, port: int, data: bytes) -> list[tuple[int, bytes]] | str:
    """The packets out, or the failure as text."""
    try:
        return sw.inject(port, data)
    except Exception as e:  # noqa: BLE001 - compared, then judged
        return f"{type(e).__name__}: {e}"


STAMPS = """
#include <core.p4>
#include <v1model.p4>
header t_t { bit<48> ig; bit<48> eg; }
struct h_t { t_t t; }
struct m_t { bit<8> unused; }
parser P(packet_in pk, out h_t h, inout m_t m, inout standard_metadata_t sm) {
    state start { pk.extract(h.t); transition accept; }
}
control V(inout h_t h, inout m_t m) { apply { } }
bit<48> ingress_stamp(in standard_metadata_t s) { return s.ingress_global_timestamp; }
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; h.t.ig = INGRESS; }
}
control E(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply { h.t.eg = sm.egress_global_timestamp; }
}
control C(inout h_t h, inout m_t m) { apply { } }
control D(packet_out pk, in h_t h) { apply { pk.emit(h.t); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@pytest.mark.parametrize("ingress", ["sm.ingress_global_timestamp", "ingress_stamp(sm)"])
def test_the_fast_path_sets_the_timestamps_a_program_reads(ingress: str) -> None:
    from switch.frontend import compile_text

    sw = V1Switch(compile_text(STAMPS.replace("INGRESS", ingress), "stamps.p4"))
    assert sw.pipeline.inject != sw.pipeline.process
    sw.inject(0, bytes(12))
    (_port, out), = sw.inject(0, bytes(12))  # the clock has moved on since the start
    ig, eg = int.from_bytes(out[:6], "big"), int.from_bytes(out[6:], "big")
    assert 0 < ig <= eg
