"""The native engine against the Python engine, packet for packet.

Every STF test (``tests/stf``, ``tests/p4/aggregation``) whose program the native
engine accepts runs on a ``DualSwitch``: each control-plane call and each packet goes
to a switch of each engine, and their outputs (ports and bytes), answers, registers
and counters must be the same throughout; the STF's own expectations must hold too;
then the STF's packets go through again with random bytes changed or cut short. And
random packets (built ones, mutated ones, random bytes) through aggregation.p4 (every
INA_K the tests use, with a job, ECMP and routes) and ipv4_forward.p4.
"""

from __future__ import annotations

import random
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from switch.native.build import compiler

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from dual import DualSwitch, Mismatch  # noqa: E402

pytestmark = pytest.mark.skipif(compiler() is None,
                                reason="no C compiler (cc or gcc) for the native engine")

STF_ROOT = ROOT / "tests" / "stf"
AGG_STF = ROOT / "tests" / "p4" / "aggregation"


def _defines(stf: Path) -> dict[str, str | None]:
    for line in stf.read_text().splitlines():
        if line.startswith("# defines:"):
            args = shlex.split(line.removeprefix("# defines:"))
            return {n: (v or None) for n, _, v in (a.partition("=") for a in args[1::2])}
    return {}


def _cases() -> list[tuple[str, Path, Path]]:
    out = []
    for stf in sorted(STF_ROOT.rglob("*.stf")):
        if "negative" in stf.parts or stf.name.endswith(".bmv2.stf"):
            continue
        out.append((stf.relative_to(STF_ROOT).with_suffix("").as_posix(),
                    stf.with_suffix(".p4"), stf))
    for stf in sorted(AGG_STF.glob("*.stf")):
        out.append((f"aggregation/{stf.stem}", ROOT / "p4" / "aggregation.p4", stf))
    return out


CASES = _cases()
_accepted: dict[tuple[Path, tuple], Any] = {}


def _program(p4: Path, defines: dict[str, str | None]) -> Any:
    from switch.frontend import CompileError, compile_file

    key = (p4, tuple(sorted(defines.items())))
    if key not in _accepted:
        try:
            _accepted[key] = compile_file(p4, defines=defines)
        except CompileError:
            _accepted[key] = None
    return _accepted[key]


def _dual(program: Any) -> DualSwitch | None:
    """Both switches, or None when the native engine does not take the program."""
    from switch.v1model import V1Switch

    if V1Switch(program, engine="auto").engine != "native":
        return None
    return DualSwitch(program)


@pytest.mark.parametrize("case,p4,stf", CASES, ids=[c[0] for c in CASES])
def test_stf_on_both_engines(case: str, p4: Path, stf: Path) -> None:
    from switch.stf import parse_stf_file, run_program

    program = _program(p4, _defines(stf))
    if program is None:
        pytest.skip("the front end rejects the program (a negative test)")
    dual = _dual(program)
    if dual is None:
        return  # the Python engine runs it: tests/stf covers it
    result = run_program(program, parse_stf_file(stf), switch=dual,
                         strict_ports=case.startswith("aggregation/"))
    assert "Mismatch" not in result.report, result.report
    assert result.passed, result.report
    assert dual.packets > 0 or "packet" not in stf.read_text()
    # then the STF's packets with random bytes changed or cut short, on the same state
    rng = random.Random(case)
    sent = list(dual.sent)
    if sent:
        ports = sorted({p for p, _f in sent})
        for f in _mutations([f for _p, f in sent], rng, 30):
            dual.inject(rng.choice(ports), f)


def test_most_stf_programs_run_natively() -> None:
    """The programs the native engine takes: all but those using what it leaves to
    the Python engine (sub-blocks, functions, loops, stacks, unions, clone ...)."""
    from switch.v1model import V1Switch

    natively = total = 0
    for _case, p4, stf in CASES:
        program = _program(p4, _defines(stf))
        if program is None:
            continue
        total += 1
        natively += V1Switch(program, engine="auto").engine == "native"
    assert natively >= 100 and natively / total > 0.65, (natively, total)


# ------------------------------------------------------------------- random packets


def _mutations(frames: list[bytes], rng: random.Random, n: int) -> list[bytes]:
    out = []
    for _ in range(n):
        f = bytearray(rng.choice(frames))
        for _ in range(rng.randint(1, 4)):
            if f:
                f[rng.randrange(len(f))] = rng.randrange(256)
        if rng.random() < 0.3:
            f = f[:rng.randrange(len(f) + 1)]
        out.append(bytes(f))
    out += [bytes(rng.randrange(256) for _ in range(rng.randrange(80))) for _ in range(n // 4)]
    return out


def _agg_frames(k: int, rng: random.Random) -> list[tuple[int, bytes]]:
    sys.path.insert(0, str(ROOT / "tests" / "p4"))
    import struct

    from agg_frames import AGGREGATOR_IP, SWITCH_MAC, ethernet, ipv4, worker

    frames = []
    for chunk in range(6):
        for w in (1, 2, 3):
            h = worker(w)
            flags = rng.choice([0, 0, 0x04, 0x0C, 0x01])
            header = struct.pack("!HHBBbBI", 1, chunk % 3, chunk % 2, flags,
                                 rng.randint(-5, 5), (chunk + 2) % 3, chunk)
            values = struct.pack(f"!{k}i", *(rng.randint(-2**31, 2**31 - 1) for _ in range(k)))
            payload = header + values
            udp = struct.pack("!HHHH", 40000 + w, 48879, 8 + len(payload), 0)
            frame = (ethernet(SWITCH_MAC, h.mac, 0x0800) +
                     ipv4(h.ip, AGGREGATOR_IP, len(udp) + len(payload)) + udp + payload)
            frames.append((w, frame))
    # ordinary IPv4 (UDP and TCP, fragments), LLDP, a packet-out from the CPU port
    for proto in (17, 6):
        body = bytes(rng.randrange(256) for _ in range(24))
        frames.append((1, ethernet(SWITCH_MAC, 0x020000000001, 0x0800) +
                       ipv4(0x0A000001, 0x0A000102, len(body), protocol=proto) + body))
        frames.append((2, ethernet(SWITCH_MAC, 0x020000000002, 0x0800) +
                       ipv4(0x0A000002, 0x0B000001, len(body), protocol=proto,
                            flags_frag=0x2000) + body))
    frames.append((3, ethernet(0x0180C200000E, 0x020000000003, 0x88CC) + bytes(30)))
    frames.append((255, (2 << 7).to_bytes(2, "big") + frames[0][1]))
    return frames


def _setup_aggregation(sw: DualSwitch) -> None:
    for w in (1, 2, 3):
        sw.table_add("ina_job", [1, w], "ina_child", [w - 1, 3, 1, 0, 1, 0, 7])
        sw.table_add("ina_result_rewrite", [w], "set_dst",
                     [0x020000000000 + w, 0x0A000000 + w, 0x0A0000FE])
    sw.mc_group_set(1, [(1, 0), (2, 0), (3, 0)])
    from switch.engine.runtime import Lpm

    sw.table_add("ipv4_lpm", [Lpm(0x0A000100, 24)], "ecmp_group", [5, 2])
    sw.table_add("ipv4_lpm", [Lpm(0x0A000000, 8)], "forward", [4, 0x020000000004])
    sw.table_add("ipv4_lpm", [Lpm(0x0A0000FE, 32)], "to_cpu", [])
    sw.table_add("ecmp_nhop", [5, 0], "forward", [5, 0x020000000005])
    sw.table_add("ecmp_nhop", [5, 1], "forward", [6, 0x020000000006])


@pytest.mark.parametrize("k", [8, 16, 32, 64, 128, 256])
def test_aggregation_random_packets(k: int) -> None:
    from switch.frontend import compile_file

    program = compile_file(ROOT / "p4" / "aggregation.p4",
                           defines={"INA_K": str(k), "INA_SLOTS": "16"})
    sw = DualSwitch(program)
    _setup_aggregation(sw)
    rng = random.Random(k)
    frames = _agg_frames(k, rng)
    for port, f in frames:
        sw.inject(port, f)
    for f in _mutations([f for _p, f in frames], rng, 150):
        sw.inject(rng.choice([1, 2, 3, 4, 255]), f)
    sw.table_delete("ecmp_nhop", 1 + 0)  # a table write between packets
    sw.mc_group_set(1, [(2, 7), (3, 9)])
    for port, f in frames:
        sw.inject(port, f)
    assert sw.packets > 200 and sw.outputs > 30, (sw.packets, sw.outputs)


def test_ipv4_forward_random_packets() -> None:
    from switch.engine.runtime import Lpm
    from switch.frontend import compile_file

    sys.path.insert(0, str(ROOT / "tests" / "p4"))
    from agg_frames import ethernet, ipv4

    sw = DualSwitch(compile_file(ROOT / "p4" / "ipv4_forward.p4"))
    sw.table_add("ipv4_lpm", [Lpm(0x0A000000, 8)], "forward", [2, 0x020000000002])
    sw.table_add("ipv4_lpm", [Lpm(0x0A010000, 16)], "forward", [3, 0x020000000003])
    rng = random.Random(4)
    frames = []
    for opts in (b"", b"\x01\x01\x01\x00", bytes(8), bytes(40)):
        body = bytes(rng.randrange(256) for _ in range(20))
        frames.append(ethernet(0x02, 0x01, 0x0800) +
                      ipv4(0x0B000001, rng.choice([0x0A000001, 0x0A010203, 0x0C000001]),
                           len(body), options=opts) + body)
    for f in frames + _mutations(frames, rng, 200):
        sw.inject(1, f)
    sw.table_set_default("ipv4_lpm", "forward", [7, 0x0707])
    for f in frames:
        sw.inject(1, f)
    assert sw.outputs > 20, sw.outputs


def test_dual_switch_notices_a_difference() -> None:
    """The comparison itself: a native switch whose table lost an entry differs."""
    from switch.engine.runtime import Lpm
    from switch.frontend import compile_file

    sys.path.insert(0, str(ROOT / "tests" / "p4"))
    from agg_frames import ethernet, ipv4

    sw = DualSwitch(compile_file(ROOT / "p4" / "ipv4_forward.p4"))
    sw.table_add("ipv4_lpm", [Lpm(0x0A000000, 8)], "forward", [2, 0x020000000002])
    sw.nat.table_clear("ipv4_lpm")
    frame = ethernet(0x02, 0x01, 0x0800) + ipv4(0x0B000001, 0x0A000001, 4) + bytes(4)
    with pytest.raises(Mismatch, match="python .*native"):
        sw.inject(1, frame)
