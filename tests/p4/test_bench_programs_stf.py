"""The STF test of ``p4/bench/switchml_branches.p4`` (``p4/bench/switchml_branches.stf``,
written by ``gen_bench_stf.py``): SwitchML's rounds with the sums the switch must send
back, on the built-in switch with and without lane fusion, and on BMv2."""

from __future__ import annotations

from pathlib import Path

import pytest
from gen_bench_stf import BENCH_STF, render

REPO_ROOT = Path(__file__).resolve().parents[2]
PROGRAM = REPO_ROOT / "p4" / "bench" / "switchml_branches.p4"


def test_stf_file_is_what_the_generator_writes() -> None:
    assert BENCH_STF.read_text() == render(), "run: python tests/p4/gen_bench_stf.py"


@pytest.mark.parametrize("fusion", [True, False], ids=["fused", "plain"])
def test_stf_on_the_builtin_switch(fusion: bool) -> None:
    from switch.frontend import compile_file
    from switch.stf import parse_stf_file, run_program
    from switch.v1model import V1Switch

    program = compile_file(str(PROGRAM))
    sw = V1Switch(program, lane_fusion=fusion)
    assert ("# fused:" in sw.compiled().source) == fusion
    result = run_program(program, parse_stf_file(BENCH_STF), switch=sw, strict_ports=True)
    assert result.passed, result.report
    assert result.packets_in == 80


@pytest.mark.slow
def test_stf_on_bmv2() -> None:
    from switch.stf import run_stf
    from switch.stf.bmv2_target import missing_tools

    why = missing_tools()
    if why:
        pytest.skip(why)
    result = run_stf(PROGRAM, BENCH_STF, target="bmv2", strict_ports=True)
    assert result.passed, result.report
