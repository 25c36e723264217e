"""``ina p4c`` against ``p4c-bm2-ss``, the reference: every program of ``p4/`` (with the
defines it is built with), every ``.p4`` under ``tests/`` (the golden programs, the
STF programs, the bad programs of ``golden/target_errors``) and the programs of
``test_bmv2_limits.py`` (the shapes on either side of each BMv2 limit, among them the
operators p4c folds around calls with side effects) are compiled by both. Either both
accept it and write the same P4Info (compared as parsed messages: ids, names, aliases,
annotations, match fields, action parameters, externs, ...), or both reject it. Where a
program's outcome is known (``test_bmv2_limits.py`` says it; golden ``ok`` programs
compile, ``target_errors`` ones do not), p4c-bm2-ss must give that outcome too, so that
each stays a valid test of its shape.

The few programs on which p4c itself is wrong are listed in ``KNOWN_DIFFERENCES`` with
the reason (the README lists them too); the test checks that each difference is still
there, so that a fixed p4c shows up as a failure to update the list.

Skipped when ``p4c-bm2-ss`` is not on PATH. Both compilers run in two processes; the
270 compilations take some 100 CPU-seconds, 3 to 10 minutes on a two-core machine busy
with other work (so the test is marked slow); nothing is written in the repository.
``test_p4c_samples.py`` runs the same comparison over p4c's own samples.
"""

from __future__ import annotations

import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
for _p in (str(REPO), str(HERE)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import test_bmv2_limits as limits  # noqa: E402
from p4c_compare import P4C, Outcome, compile_both, difference  # noqa: E402

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
    "tests/stf/extern/register_typedef.p4":
        "p4c-bm2-ss crashes (Compiler Bug: expected Type_Specialized) on a register "
        "declared through a typedef that the program uses (and leaves an unused one out "
        "of the P4Info)",
    "tests/switch/frontend/golden/errors/default_dots_too_many.p4":
        "p4c accepts more values than fields before '...' and drops the extra ones "
        "(p4lang/p4c issue 5265)",
}
GOLDEN = "tests/switch/frontend/golden/"
LIMITS = "tests/switch/frontend/test_bmv2_limits.py"


@dataclass(frozen=True)
class Case:
    path: str  # relative to the repository root, or LIMITS::name for an inline program
    defines: tuple[str, ...] = ()
    source: str | None = None  # the text of an inline program
    expect: bool | None = None  # compiles (True) or not (False), where that is known

    @property
    def id(self) -> str:
        return " ".join([self.path, *(f"-D{d}" for d in self.defines)])


def _cases() -> list[Case]:
    programs = [p for p in sorted((REPO / "p4").rglob("*.p4")) if "include" not in p.parts]
    programs += sorted((REPO / "tests").rglob("*.p4"))
    cases = []
    for p in programs:
        rel = p.relative_to(REPO).as_posix()
        expect = (True if rel.startswith(GOLDEN + "ok/")
                  else False if rel.startswith(GOLDEN + "target_errors/") else None)
        cases += [Case(rel, d, expect=expect) for d in DEFINES.get(rel, [()])]
    cases += [Case(f"{LIMITS}::{name}", source=text, expect=True)
              for name, text in limits.ACCEPTED.items()]
    cases += [Case(f"{LIMITS}::{name}", source=limits.rejected_program(name), expect=False)
              for name in limits.REJECTED]
    cases += [Case(f"{LIMITS}::{body}", source=limits.program(body, limits.TABLE),
                   expect=False)
              for body, _ in limits.NEIGHBOURS]
    return cases


CASES = _cases()


def _compile(case: Case) -> Outcome:
    """Run in a worker process: both compilers on one program, from the repository
    root (so that file names in messages are relative), an inline one from a
    temporary directory."""
    if case.source is None:
        return compile_both(case.path, REPO, case.defines)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "test.p4").write_text(case.source)
        return compile_both("test.p4", Path(tmp))


def _cost(case: Case) -> tuple[int, int]:
    """Longest first, so that the two workers finish together: aggregation.p4 with a
    large INA_K takes p4c-bm2-ss seconds, most programs a fraction of one."""
    k = next((int(d.split("=")[1]) for d in case.defines if d.startswith("INA_K=")), 0)
    size = len(case.source) if case.source is not None else (REPO / case.path).stat().st_size
    return (-k, -size)


@pytest.fixture(scope="module")
def outcomes() -> dict[Case, Outcome]:
    order = sorted(CASES, key=_cost)
    with ProcessPoolExecutor(max_workers=2) as pool:
        return dict(zip(order, pool.map(_compile, order), strict=True))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_ina_p4c_agrees_with_p4c_bm2_ss(case: Case, outcomes: dict[Case, Outcome]) -> None:
    out = outcomes[case]
    known = KNOWN_DIFFERENCES.get(case.path)
    if known is not None:
        assert out.p4c_ok != out.ina_ok, f"{case.id}: the listed difference is gone ({known})"
        return
    if case.expect is not None:
        assert out.p4c_ok == case.expect, (
            f"{case.id}: p4c-bm2-ss {'rejects' if case.expect else 'compiles'} it, "
            f"a test that says it {'compiles' if case.expect else 'does not'}:\n"
            f"{out.p4c_errors}")
    diff = difference(case.id, out)
    if diff is not None:
        pytest.fail(diff)


def test_the_programs_cover_p4_and_the_bad_programs() -> None:
    paths = {c.path for c in CASES}
    assert "p4/aggregation.p4" in paths and "p4/ipv4_forward.p4" in paths
    bad = [p for p in paths if p.startswith(GOLDEN + "target_errors/")]
    assert len(bad) >= 15
    assert len([c for c in CASES if c.source is not None]) >= 30
    assert set(KNOWN_DIFFERENCES) <= paths
