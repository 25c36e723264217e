"""The STF tests of ``p4/aggregation.p4`` (``tests/p4/aggregation/*.stf``).

Each file names its ``-D`` options on a ``# defines:`` line. The tests run with strict
ports: a packet that leaves on any port no ``expect`` line accounts for is a failure,
so "dropped" means that nothing came out anywhere.
"""

from __future__ import annotations

import functools
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gen_aggregation_stf import STF_DIR, render_all

REPO_ROOT = Path(__file__).resolve().parents[2]
PROGRAM = REPO_ROOT / "p4" / "aggregation.p4"
STF_FILES = sorted(STF_DIR.glob("*.stf"))


def defines_of(stf: Path) -> list[str]:
    """The ``-D`` arguments on the file's ``# defines:`` line."""
    for line in stf.read_text().splitlines():
        if line.startswith("# defines:"):
            return shlex.split(line.removeprefix("# defines:"))
    raise AssertionError(f"{stf.name}: no '# defines:' line")


def _as_dict(args: list[str]) -> dict[str, str | None]:
    values = args[1::2]
    assert args[0::2] == ["-D"] * len(values), args
    return {name: (value or None) for name, _, value in (v.partition("=") for v in values)}


@functools.cache
def _compiled(defines: tuple[str, ...]) -> Any:
    from switch.frontend import compile_file

    return compile_file(str(PROGRAM), [], _as_dict(list(defines)))


def _run(stf_path: Path, text: str | None = None) -> Any:
    from switch.stf import parse_stf, parse_stf_file, run_program

    program = _compiled(tuple(defines_of(stf_path)))
    stf = parse_stf_file(stf_path) if text is None else parse_stf(text, str(stf_path))
    return run_program(program, stf, strict_ports=True)


def test_the_scenarios_are_all_there() -> None:
    names = {p.stem for p in STF_FILES}
    assert {"two_workers", "three_workers", "first_writer", "exponent_max",
            "duplicate_incomplete", "retransmit_complete", "isolation", "non_root",
            "result_filter", "ipv4_forwarding", "ecmp", "non_ipv4",
            "two_workers_k64"} <= names


def test_stf_files_are_what_the_generator_writes() -> None:
    on_disk = {p.name: p.read_text() for p in STF_FILES}
    assert on_disk == render_all(), "run: python tests/p4/gen_aggregation_stf.py"


@pytest.mark.parametrize("stf", STF_FILES, ids=lambda p: p.stem)
def test_stf(stf: Path) -> None:
    result = _run(stf)
    assert result.passed, result.report
    assert result.packets_in > 0


def test_a_wrong_sum_is_caught() -> None:
    """The harness does fail: one value of the expected RESULT changed (3 -> 4)."""
    stf = STF_DIR / "two_workers.stf"
    lines = stf.read_text().splitlines()
    expects = [i for i, line in enumerate(lines) if line.startswith("expect 1 ")]
    header_end = 2 * (14 + 20 + 8 + 12)  # the first value, in hex digits
    line = lines[expects[0]]
    start = line.index(" ", len("expect 1")) + 1 + header_end
    assert line[start:start + 8] == "00000003"
    lines[expects[0]] = line[:start] + "00000004" + line[start + 8:]
    result = _run(stf, "\n".join(lines) + "\n")
    assert not result.passed
    assert "port 1" in result.report


def test_ina_stf_cli_runs_the_k64_test() -> None:
    stf = STF_DIR / "two_workers_k64.stf"
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.run(
        [sys.executable, "-m", "ina.cli", "stf", str(PROGRAM), str(stf), *defines_of(stf),
         "--strict-ports"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # every packet of the file went in, every expected one came out
    words = [line.split()[0] for line in stf.read_text().splitlines() if line.strip()]
    assert proc.stdout == (f"PASS {stf}: {words.count('packet')} packet(s) in, "
                           f"{words.count('expect')} out\n"), proc.stdout


def _bmv2_missing() -> str | None:
    from switch.stf.bmv2_target import missing_tools

    return missing_tools()


def _run_on_bmv2(stf: Path) -> Any:
    from switch.stf import run_stf

    return run_stf(PROGRAM, stf, defines=_as_dict(defines_of(stf)), target="bmv2",
                   strict_ports=True)


def test_nack_stf_on_bmv2() -> None:
    """The names, NACKs and rounds on the reference switch (the other files: the slow
    test)."""
    why = _bmv2_missing()
    if why:
        pytest.skip(why)
    for name in ("nack.stf", "nack_non_root.stf", "stale.stf"):
        result = _run_on_bmv2(STF_DIR / name)
        assert result.passed, result.report


@pytest.mark.slow
@pytest.mark.parametrize("stf", STF_FILES, ids=lambda p: p.stem)
def test_stf_on_bmv2(stf: Path) -> None:
    why = _bmv2_missing()
    if why:
        pytest.skip(why)
    result = _run_on_bmv2(stf)
    assert result.passed, result.report
