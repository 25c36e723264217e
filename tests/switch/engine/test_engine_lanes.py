"""Lane fusion: the fused code gives the same packets and register contents as the
statement-by-statement code, on random inputs with wrap-around, indexes past the
end of the registers, every vector type, and programs where the pattern almost holds
(those must not be fused, or only where it does hold, and still be right)."""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import pytest

from switch.frontend import compile_text
from switch.v1model import V1Switch

K = 8
SIZE = 16  # register cells; indexes go up to 23, so some accesses fall past the end

WIDTHS = {"bit<8>": (8, False), "bit<16>": (16, False), "int<16>": (16, True),
          "bit<32>": (32, False), "int<32>": (32, True), "bit<64>": (64, False),
          "int<64>": (64, True), "bit<24>": (24, False)}

Lane = Callable[[int], str]


def program(t: str, op0: Lane, op1: Lane = lambda i: "", op2: Lane = lambda i: "",
            tail0: str = "", lanes: int = K) -> str:
    """A program whose ingress runs ``op<ctl.op>(i)`` for i in 0 .. lanes - 1 (op 0
    followed by ``tail0``), over registers r<i> of type ``t`` and fields v<i> of a
    header of ``t`` values."""
    regs = "\n".join(f"    register<{t}>({SIZE}) r{i};" for i in range(lanes + 1))
    fields = " ".join(f"{t} v{i};" for i in range(lanes + 1))

    def body(op: Lane) -> str:
        return "\n".join(op(i) for i in range(lanes))

    return f"""
#include <core.p4>
#include <v1model.p4>
header eth_t {{ bit<48> dst; bit<48> src; bit<16> type; }}
header ctl_t {{ bit<8> op; bit<8> idx; bit<8> pad; bit<8> flag; }}
header vals_t {{ {fields} }}
struct headers_t {{ eth_t eth; ctl_t ctl; vals_t vals; }}
struct meta_t {{ bit<8> unused; }}
parser P(packet_in pk, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {{
    state start {{ pk.extract(h.eth); pk.extract(h.ctl); pk.extract(h.vals); transition accept; }}
}}
control VC(inout headers_t h, inout meta_t m) {{ apply {{ }} }}
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {{
{regs}
    apply {{
        sm.egress_spec = 1;
        bit<32> cell = (bit<32>)h.ctl.idx;
        {t} x = 0;
        {t} acc = 0;
        if (h.ctl.op == 0) {{
{body(op0)}
            {tail0}
        }} else if (h.ctl.op == 1) {{
{body(op1)}
        }} else {{
{body(op2)}
        }}
    }}
}}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {{ apply {{ }} }}
control CC(inout headers_t h, inout meta_t m) {{ apply {{ }} }}
control D(packet_out pk, in headers_t h) {{
    apply {{ pk.emit(h.eth); pk.emit(h.ctl); pk.emit(h.vals); }}
}}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


# the statements of the aggregation program, per lane
REPLACE: Lane = lambda i: f"r{i}.write(cell, h.vals.v{i});"  # noqa: E731
ADD: Lane = lambda i: (f"r{i}.read(x, cell); x = x + h.vals.v{i}; "  # noqa: E731
                       f"r{i}.write(cell, x); h.vals.v{i} = x;")
READ: Lane = lambda i: f"r{i}.read(h.vals.v{i}, cell);"  # noqa: E731


def _value(rng: random.Random, width: int, signed: bool) -> int:
    """A random value, often an extreme one (wrap-around)."""
    lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
    return rng.choice([lo, hi, 0, -1 if signed else 1, lo + 1, hi - 1,
                       rng.randint(lo, hi), rng.randint(lo, hi), rng.randint(lo, hi)])


def _packet(rng: random.Random, t: str, op: int, idx: int, lanes: int = K) -> bytes:
    width, signed = WIDTHS[t]
    vals = 0
    for _ in range(lanes + 1):
        vals = (vals << width) | (_value(rng, width, signed) & ((1 << width) - 1))
    nbits = width * (lanes + 1)
    return (bytes(12) + b"\x12\x34" + bytes([op, idx, rng.randrange(256), rng.randrange(2)])
            + (vals << (-nbits % 8)).to_bytes((nbits + 7) // 8, "big"))


def _registers(sw: V1Switch, lanes: int = K) -> list[list[int]]:
    return [[sw.register_read(f"r{i}", j) for j in range(SIZE)] for i in range(lanes + 1)]


def _switches(src: str) -> tuple[V1Switch, V1Switch, V1Switch]:
    """The program fused, plain, and traced (plain code on the fused storage)."""
    fused = V1Switch(compile_text(src, "lanes.p4"))
    plain = V1Switch(compile_text(src, "lanes.p4"), lane_fusion=False)
    traced = V1Switch(compile_text(src, "lanes.p4"), trace=lambda line: None)
    return fused, plain, traced


def _fused_runs(sw: V1Switch) -> int:
    return sw.compiled().source.count("# fused:")


def _same(src: str, t: str, packets: int = 150, seed: int = 1, lanes: int = K,
          ops: tuple[int, ...] = (0, 1, 2)) -> tuple[V1Switch, V1Switch]:
    """Run random packets through the fused, plain and traced switch: every output
    and every register must be the same. Returns (fused, plain)."""
    fused, plain, traced = _switches(src)
    rng = random.Random(seed)
    for n in range(packets):
        pkt = _packet(rng, t, rng.choice(ops), rng.randrange(SIZE + 8), lanes)
        out = plain.inject(0, pkt)
        assert fused.inject(0, pkt) == out, f"packet {n}"
        assert traced.inject(0, pkt) == out, f"packet {n} (traced)"
        if n % 10 == 0:
            regs = _registers(plain, lanes)
            assert _registers(fused, lanes) == regs, f"registers after packet {n}"
            assert _registers(traced, lanes) == regs
    return fused, plain


def test_aggregation_lanes_are_fused_and_sum_like_numpy() -> None:
    src = program("int<32>", REPLACE, ADD, READ)
    fused, plain = _same(src, "int<32>", packets=300)
    assert _fused_runs(fused) == 3 and _fused_runs(plain) == 0
    # a real outcome: two contributions sum with int32 wrap-around
    a = np.array([2**31 - 1, -2**31, -1, 5, 0, 7, 1 << 30, -(1 << 30), 0], dtype=np.int32)
    b = np.array([1, -1, -1, -6, 0, 9, 1 << 30, -(1 << 30), 0], dtype=np.int32)

    def pkt(op: int, v: np.ndarray) -> bytes:
        return bytes(12) + b"\x12\x34" + bytes([op, 3, 0, 0]) + v.astype(">i4").tobytes()

    sw = V1Switch(compile_text(src, "lanes.p4"))
    sw.inject(0, pkt(0, a))
    (_port, out), = sw.inject(0, pkt(1, b))
    got = np.frombuffer(out[18:18 + 4 * K], ">i4")
    assert got.tolist() == (a + b)[:K].tolist()
    assert [sw.register_read(f"r{i}", 3) for i in range(K)] == (a + b)[:K].tolist()
    assert got.tolist()[:2] == [-2**31, 2**31 - 1]  # wrapped both ways


@pytest.mark.parametrize("t", ["bit<8>", "bit<16>", "int<16>", "bit<32>", "int<32>",
                               "bit<64>", "int<64>"])
def test_every_vector_type_and_operator(t: str) -> None:
    width, signed = WIDTHS[t]
    other = {"bit<8>": "bit<16>", "bit<16>": "bit<8>", "int<16>": "int<32>",
             "bit<32>": "bit<64>", "int<32>": "bit<32>", "bit<64>": "bit<32>",
             "int<64>": "int<16>"}[t]

    def mix(i: int) -> str:
        return (f"r{i}.read(x, cell); x = (x * 3) ^ (h.vals.v{i} - x); "
                f"x = ~x + (x << 3) - (x >> 2) + 7; x = (x & h.vals.v{i}) | -x; "
                f"x = ({t})(({other})x + 1) + ({t})(bit<{width}>)h.ctl.pad; "
                f"r{i}.write(cell, x); h.vals.v{i} = x << {width - 1};")

    def stores(i: int) -> str:
        return f"h.vals.v{i} = 5; r{i}.write(cell + 1, 3); r{i}.read(x, cell); h.vals.v{i} = -x;"

    fused, _ = _same(program(t, mix, stores, READ), t)
    assert _fused_runs(fused) == 3


def test_a_choice_the_same_in_every_lane() -> None:
    def first_or_add(i: int) -> str:  # switchml_like.p4's lanes
        return (f"r{i}.read(x, cell); x = h.ctl.flag == 1 ? h.vals.v{i} : x + h.vals.v{i}; "
                f"r{i}.write(cell, x); h.vals.v{i} = h.ctl.pad == 0 ? 7 : x;")

    fused, _ = _same(program("int<32>", first_or_add, REPLACE, READ), "int<32>")
    assert _fused_runs(fused) == 3


def test_declarations_inside_lanes_are_private() -> None:
    def block(i: int) -> str:
        return (f"{{ int<32> y; r{i}.read(y, cell); y = y - h.vals.v{i}; "
                f"r{i}.write(cell, y); }}")

    def decl(i: int) -> str:
        return f"int<32> t{i} = h.vals.v{i} + 1; r{i}.write(cell, t{i});"

    fused, _ = _same(program("int<32>", decl, block, READ,
                             tail0=f"h.vals.v{K} = t{K - 1} + t2;"), "int<32>")
    assert _fused_runs(fused) == 3


def test_an_if_else_the_same_in_every_lane() -> None:
    """SwitchML's processor, one lane at a time: the first contribution replaces, a
    later one adds, a retransmission reads the cell (p4/bench/switchml_branches.p4)."""
    def switchml(i: int) -> str:
        return (f"if (h.ctl.flag == 1) {{ {REPLACE(i)} }} "
                f"else if (h.ctl.pad < 128) {{ {ADD(i)} }} else {{ {READ(i)} }}")

    def valid_or_not(i: int) -> str:
        return (f"if (h.ctl.isValid() && h.ctl.flag == 0) {{ r{i}.read(x, cell); "
                f"h.vals.v{i} = x - h.vals.v{i}; }}")

    fused, _ = _same(program("int<32>", switchml, valid_or_not, READ), "int<32>",
                     packets=300)
    assert _fused_runs(fused) == 3


@pytest.mark.parametrize("t", ["bit<8>", "int<16>", "bit<32>", "int<32>", "bit<64>",
                               "int<64>"])
def test_saturating_arithmetic(t: str) -> None:
    """ATP adds with |+|: each lane saturates on its own."""
    def add(i: int) -> str:
        return (f"r{i}.read(x, cell); x = x |+| h.vals.v{i}; r{i}.write(cell, x); "
                f"h.vals.v{i} = x |-| (h.vals.v{i} |+| 3);")

    def sub(i: int) -> str:
        return f"r{i}.read(x, cell); h.vals.v{i} = 1 |-| x; r{i}.write(cell, h.vals.v{i} |-| x);"

    fused, _ = _same(program(t, add, sub, READ), t, packets=300)
    assert _fused_runs(fused) == 3


def test_conditions_that_differ_between_lanes() -> None:
    """A maximum, and choices by comparisons, lane by lane (np.where)."""
    def maximum(i: int) -> str:
        return (f"r{i}.read(x, cell); x = x > h.vals.v{i} ? x : h.vals.v{i}; "
                f"r{i}.write(cell, x); h.vals.v{i} = x;")

    def choose(i: int) -> str:
        return (f"r{i}.read(x, cell); h.vals.v{i} = (x == 0 || !(h.vals.v{i} < x)) && "
                f"h.ctl.flag == 1 ? x - 1 : 7; r{i}.write(cell, x >= 5 ? x : h.vals.v{i});")

    for t in ("int<32>", "bit<16>", "bit<64>"):
        fused, _ = _same(program(t, maximum, choose, READ), t)
        assert _fused_runs(fused) == 3


def test_a_register_read_into_the_header_and_written_back() -> None:
    def into_header(i: int) -> str:
        return (f"r{i}.read(h.vals.v{i}, cell); h.vals.v{i} = h.vals.v{i} + 1; "
                f"r{i}.write(cell, h.vals.v{i});")

    def keep_own(i: int) -> str:  # the packet's value is kept aside first
        return (f"x = h.vals.v{i}; r{i}.read(h.vals.v{i}, cell); "
                f"h.vals.v{i} = h.vals.v{i} |+| x; r{i}.write(cell, h.vals.v{i});")

    fused, _ = _same(program("int<32>", into_header, keep_own, READ), "int<32>")
    assert _fused_runs(fused) == 3


def test_locals_written_in_branches() -> None:
    def both(i: int) -> str:  # written on both paths, read after the if
        return (f"if (h.ctl.flag == 1) {{ x = h.vals.v{i}; }} else {{ r{i}.read(x, cell); "
                f"x = x + 1; }} r{i}.write(cell, x); h.vals.v{i} = x;")

    def one(i: int) -> str:  # written on one path only, read after the run
        return f"if (h.ctl.flag == 1) {{ r{i}.read(x, cell); h.vals.v{i} = x + 2; }}"

    def nested(i: int) -> str:
        return (f"if (h.ctl.flag == 1) {{ if (h.ctl.pad == 0) {{ x = 1; }} else "
                f"{{ x = h.vals.v{i}; }} }} else {{ x = 3; }} r{i}.write(cell, x);")

    fused, _ = _same(program("int<32>", both, one, nested, tail0=f"h.vals.v{K} = x;"),
                     "int<32>")
    assert _fused_runs(fused) == 3
    fused, _ = _same(program("int<32>", one, tail0=f"h.vals.v{K} = x;"), "int<32>",
                     ops=(0,))
    assert _fused_runs(fused) == 1


def test_a_value_read_before_its_storage_changes_keeps_its_value() -> None:
    def swap(i: int) -> str:  # the register's old value goes into the packet
        return f"r{i}.read(x, cell); r{i}.write(cell, h.vals.v{i}); h.vals.v{i} = x;"

    def keep(i: int) -> str:  # the field's old value goes into the register
        return f"x = h.vals.v{i}; h.vals.v{i} = h.vals.v{i} + 1; r{i}.write(cell, x);"

    fused, _ = _same(program("int<32>", swap, keep, tail0=f"h.vals.v{K} = x;"), "int<32>",
                     ops=(0, 1))
    assert _fused_runs(fused) == 2


def test_two_runs_in_one_header_array() -> None:
    """Fields 0..K-1 and K..2K-1 of one header are one array: each run writes its half
    in place (copying a shared array first), and reads see the other half's writes."""
    fields = " ".join(f"int<32> v{i};" for i in range(2 * K))
    regs = "\n".join(f"    register<int<32>>({SIZE}) r{i};" for i in range(2 * K))
    first = "\n".join(f"r{i}.read(x, cell); h.vals.v{i} = h.vals.v{i} + x;" for i in range(K))
    second = "\n".join(f"h.vals.v{K + i} = h.vals.v{K + i} - h.vals.v{i}; "
                        f"r{K + i}.write(cell, h.vals.v{K + i});" for i in range(K))
    src = f"""
#include <core.p4>
#include <v1model.p4>
header vals_t {{ {fields} }}
struct headers_t {{ vals_t vals; }}
struct meta_t {{ bit<8> unused; }}
parser P(packet_in pk, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {{
    state start {{ pk.extract(h.vals); transition accept; }}
}}
control VC(inout headers_t h, inout meta_t m) {{ apply {{ }} }}
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {{
{regs}
    apply {{
        sm.egress_spec = 1;
        bit<32> cell = (bit<32>)h.vals.v0[3:0];
        int<32> x;
{first}
{second}
    }}
}}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {{ apply {{ }} }}
control CC(inout headers_t h, inout meta_t m) {{ apply {{ }} }}
control D(packet_out pk, in headers_t h) {{ apply {{ pk.emit(h.vals); }} }}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""
    fused, plain, _ = _switches(src)
    assert _fused_runs(fused) == 2
    rng = random.Random(3)
    for n in range(100):
        pkt = bytes(rng.randrange(256) for _ in range(8 * K))
        assert fused.inject(0, pkt) == plain.inject(0, pkt), f"packet {n}"
    for i in range(2 * K):
        for j in range(SIZE):
            assert fused.register_read(f"r{i}", j) == plain.register_read(f"r{i}", j)


NEAR_MISSES: dict[str, tuple[Lane, str]] = {
    # a value carried from lane to lane (a reduction)
    "reduction": (lambda i: f"acc = acc + h.vals.v{i};", f"h.vals.v{K} = acc;"),
    # the index changes inside the lanes
    "moving index": (lambda i: f"r{i}.write(cell, h.vals.v{i}); cell = cell + 1;", ""),
    # lane i writes the register lane i + 1 reads
    "crossed registers": (lambda i: f"r{i}.read(x, cell); r{i + 1}.write(cell, x + 1);", ""),
    # every lane reads and writes one field
    "shared field": (lambda i: f"h.vals.v{K} = h.vals.v{K} + h.vals.v{i};", ""),
    # every lane reads one register
    "shared register": (lambda i: f"r0.read(x, cell); h.vals.v{i} = x;", ""),
    # an if whose condition differs between lanes
    "lane condition": (lambda i: f"if (h.vals.v{i} > 0) {{ r{i}.write(cell, h.vals.v{i}); }}",
                       ""),
    # a local written on one path only and read after the if
    "maybe written": (lambda i: f"if (h.ctl.flag == 1) {{ x = h.vals.v{i}; }} "
                                f"r{i}.write(cell, x);", ""),
    # a running sum written out lane by lane
    "prefix sums": (lambda i: f"x = x + h.vals.v{i}; r{i}.write(cell, x);", ""),
    # a lane reads the field the next lane writes
    "shifted fields": (lambda i: f"h.vals.v{i} = h.vals.v{i + 1} + 1;", ""),
}


@pytest.mark.parametrize("case", sorted(NEAR_MISSES))
def test_near_misses_are_not_fused(case: str) -> None:
    lane, tail = NEAR_MISSES[case]
    fused, _ = _same(program("int<32>", lane, tail0=tail), "int<32>", ops=(0,))
    assert _fused_runs(fused) == 0


def test_a_non_vector_width_is_not_fused() -> None:
    fused, _ = _same(program("bit<24>", REPLACE, ADD, READ), "bit<24>")
    assert _fused_runs(fused) == 0


def test_a_broken_run_is_fused_only_where_it_holds() -> None:
    def swapped(i: int) -> str:  # lanes 2 and 3 swap their fields: lanes 4..7 still fuse
        j = {2: 3, 3: 2}.get(i, i)
        return f"r{i}.read(x, cell); x = x + h.vals.v{j}; r{i}.write(cell, x); h.vals.v{j} = x;"

    fused, _ = _same(program("int<32>", swapped), "int<32>", ops=(0,))
    assert _fused_runs(fused) == 1


def test_fewer_lanes_than_the_minimum_are_not_fused() -> None:
    fused, _ = _same(program("int<32>", ADD, lanes=3), "int<32>", lanes=3)
    assert _fused_runs(fused) == 0


def test_banked_registers_over_the_runtime_api() -> None:
    sw = V1Switch(compile_text(program("int<32>", REPLACE, ADD, READ), "lanes.p4"))
    sw.register_write("r2", 5, -7)
    assert sw.register_read("r2", 5) == -7
    assert isinstance(sw.register_read("r2", 5), int)
    out = sw.inject(0, bytes(12) + b"\x12\x34" + bytes([2, 5, 0, 0]) + bytes(4 * (K + 1)))
    assert int.from_bytes(out[0][1][18 + 8:18 + 12], "big", signed=True) == -7
    sw.register_reset("r2")
    assert sw.register_read("r2", 5) == 0
