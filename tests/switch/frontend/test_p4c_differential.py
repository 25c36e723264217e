"""``ina p4c`` against ``p4c-bm2-ss``, the reference: every program of ``p4/`` (with the
defines it is built with) and every ``.p4`` under ``tests/`` (the golden programs, the
STF programs, the bad programs of ``golden/target_errors``) is compiled by both. Either
both accept it and write the same P4Info (compared as parsed messages: ids, names,
aliases, annotations, match fields, action parameters, externs, ...), or both reject it.

The few programs on which p4c itself is wrong are listed in ``KNOWN_DIFFERENCES`` with
the reason (the README lists them too); the test checks that each difference is still
there, so that a fixed p4c shows up as a failure to update the list.

Skipped when ``p4c-bm2-ss`` is not on PATH. Both compilers run in two processes; the
220 compilations take 70 CPU-seconds, 90 to 210 s on a two-core machine busy with other
work (so the test is marked slow); nothing is written in the repository.
"""

from __future__ import annotations

import difflib
import shutil
import subprocess
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

REPO = Path(__file__).resolve().parents[3]
P4C = shutil.which("p4c-bm2-ss")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(P4C is None, reason="p4c-bm2-ss is not on PATH")]

# Defines a program of p4/ is built with (each tuple is one build); others take none.
DEFINES: dict[str, list[tuple[str, ...]]] = {
    "p4/aggregation.p4": [(f"INA_K={k}",) for k in (8, 16, 32, 64, 128, 256)],
}

# Programs on which p4c-bm2-ss is wrong, and what it does instead.
KNOWN_DIFFERENCES: dict[str, str] = {
    "tests/stf/control/emit_list.p4":
        "p4c-bm2-ss crashes (Compiler Bug in ExpandEmit) on emit of a list of headers",
    "tests/stf/parser/union_stack_next.p4":
        "p4c-bm2-ss crashes (SIGSEGV) on extract into the next element of a stack of "
        "header unions",
    "tests/switch/frontend/golden/errors/default_dots_too_many.p4":
        "p4c accepts more values than fields before '...' and drops the extra ones "
        "(p4lang/p4c issue 5265)",
}


@dataclass(frozen=True)
class Case:
    path: str  # relative to the repository root
    defines: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return " ".join([self.path, *(f"-D{d}" for d in self.defines)])


@dataclass(frozen=True)
class Outcome:
    p4c_ok: bool
    p4c_errors: str
    p4c_p4info: str
    ina_ok: bool
    ina_errors: str
    ina_p4info: str


def _cases() -> list[Case]:
    programs = [p for p in sorted((REPO / "p4").rglob("*.p4")) if "include" not in p.parts]
    programs += sorted((REPO / "tests").rglob("*.p4"))
    cases = []
    for p in programs:
        rel = p.relative_to(REPO).as_posix()
        cases += [Case(rel, d) for d in DEFINES.get(rel, [()])]
    return cases


CASES = _cases()


def _compile_both(case: Case) -> Outcome:
    """Run in a worker process: both compilers on one program, from the repository root
    (so that file names in messages are relative)."""
    from switch.frontend import CompileError, compile_file
    from switch.frontend.p4info import p4info_text

    with tempfile.TemporaryDirectory() as tmp:
        p4info = Path(tmp) / "p4info.txtpb"
        cmd = [str(P4C), case.path, *(f"-D{d}" for d in case.defines),
               "-o", str(Path(tmp) / "out.json"), "--p4runtime-files", str(p4info)]
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
        p4c_ok = proc.returncode == 0
        p4c_text = p4info.read_text() if p4c_ok and p4info.exists() else ""
    defines: dict[str, str | None] = {}
    for d in case.defines:
        name, _, value = d.partition("=")
        defines[name] = value
    try:
        program = compile_file(REPO / case.path, defines=defines)
    except CompileError as e:
        return Outcome(p4c_ok, proc.stderr, p4c_text, False, str(e), "")
    return Outcome(p4c_ok, proc.stderr, p4c_text, True, "", p4info_text(program))


def _cost(case: Case) -> tuple[int, int]:
    """Longest first, so that the two workers finish together: aggregation.p4 with a
    large INA_K takes p4c-bm2-ss seconds, most programs a fraction of one."""
    k = next((int(d.split("=")[1]) for d in case.defines if d.startswith("INA_K=")), 0)
    return (-k, -(REPO / case.path).stat().st_size)


@pytest.fixture(scope="module")
def outcomes() -> dict[Case, Outcome]:
    order = sorted(CASES, key=_cost)
    with ProcessPoolExecutor(max_workers=2) as pool:
        return dict(zip(order, pool.map(_compile_both, order), strict=True))


def _errors_of(text: str) -> str:
    lines = [line for line in text.splitlines() if "warning" not in line]
    return "\n".join(lines[:12])


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_ina_p4c_agrees_with_p4c_bm2_ss(case: Case, outcomes: dict[Case, Outcome]) -> None:
    out = outcomes[case]
    known = KNOWN_DIFFERENCES.get(case.path)
    if known is not None:
        assert out.p4c_ok != out.ina_ok, f"{case.id}: the listed difference is gone ({known})"
        return
    if out.p4c_ok and not out.ina_ok:
        pytest.fail(f"{case.id}: p4c-bm2-ss compiles it, ina p4c rejects it:\n"
                    f"{out.ina_errors}")
    if out.ina_ok and not out.p4c_ok:
        pytest.fail(f"{case.id}: ina p4c compiles it, p4c-bm2-ss rejects it:\n"
                    f"{_errors_of(out.p4c_errors)}")
    if not out.p4c_ok:
        return
    want = text_format.Parse(out.p4c_p4info, p4info_pb2.P4Info())
    got = text_format.Parse(out.ina_p4info, p4info_pb2.P4Info())
    if want != got:
        diff = difflib.unified_diff(text_format.MessageToString(want).splitlines(),
                                    text_format.MessageToString(got).splitlines(),
                                    "p4c-bm2-ss", "ina p4c", lineterm="", n=2)
        pytest.fail(f"{case.id}: the P4Info differs:\n" + "\n".join(list(diff)[:60]))


def test_the_programs_cover_p4_and_the_bad_programs() -> None:
    paths = {c.path for c in CASES}
    assert "p4/aggregation.p4" in paths and "p4/ipv4_forward.p4" in paths
    bad = [p for p in paths if p.startswith("tests/switch/frontend/golden/target_errors/")]
    assert len(bad) >= 15
    assert set(KNOWN_DIFFERENCES) <= paths
