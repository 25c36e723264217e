"""Conformance suite: P4_16 v1model programs with STF scripts.

Every ``tests/stf/<area>/<name>.stf`` (outside ``negative/``) is paired with
``<name>.p4`` in the same directory and must pass through
``switch.stf.run_stf``.  The expected packets in the STF files were computed
from the P4_16 specification and BMv2 simple_switch semantics, independently
of the implementation under test.

``tests/stf/negative/`` holds deliberately wrong STF scripts (and programs
that must not compile); the runner and the ``ina`` CLI must report those as
failures.

Every test also runs on BMv2 (``ina stf --target bmv2``: ``p4c-bm2-ss`` and
``simple_switch_grpc``), skipped when those are not on PATH. Where our switch
follows the P4 spec and BMv2 does not (``KNOWN_DIFFERENCES``, listed in the
README), ``<name>.bmv2.stf`` holds BMv2's expectation, and the spec's
``<name>.stf`` must still fail on BMv2: the day BMv2 agrees, that test says so.
``P4C_REJECTS`` lists the programs ``p4c-bm2-ss`` does not compile, with the
text of its error. The BMv2 runs go two at a time in the background, started by
the first BMv2 test for all the BMv2 tests selected.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

STF_DIR = Path(__file__).resolve().parent
REPO_ROOT = STF_DIR.parents[1]
NEGATIVE_DIR = STF_DIR / "negative"

if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

# STF scripts in negative/ that must FAIL, with the reason they fail.
EXPECTED_FAILURES = {
    "wrong_payload": "an expected byte differs from the output",
    "wrong_port": "the packet leaves on another port than expected",
    "missing_packet": "the program drops the packet that the STF expects",
    "unexpected_packet": "a packet comes out that no expect line accounts for",
    "too_long": "expect ends with $ but the output packet is longer",
    "wrong_register": "register_read asserts a value the register does not hold",
}

# P4 sources in negative/ that must be rejected by the front end.
INVALID_PROGRAMS = {
    "syntax_error": "missing semicolon",
    "type_error": "bit<16> assigned to bit<8> without a cast",
}


# Where our switch follows the P4 spec and p4c-bm2-ss + BMv2 do not: <name>.bmv2.stf
# holds what BMv2 does (the README's "Differences from BMv2" lists them).
KNOWN_DIFFERENCES = {
    "control/assign_lvalue_first": "p4c evaluates the right-hand side before the l-value",
    "expr/varbit_equality": "BMv2 compares varbits without their widths",
    "extern/register_element_types": "BMv2 reads a register<int<W>> value as unsigned",
    "extern/register_signed_read": "BMv2 reads a register<int<W>> value as unsigned",
    "parser/select_nomatch": "a select without a match accepts, without error.NoMatch",
    "table/smallest_priority_wins": "BMv2 refuses control-plane entries in a table "
                                    "with an entries list",
}

# Programs p4c-bm2-ss rejects, with (a piece of) its message: their tests run on the
# built-in switch only, until the programs are rewritten or p4c is fixed.
P4C_REJECTS = {
    "control/emit_list": "Compiler Bug",  # p4c crashes on emit of a list
    "parser/union_stack_next": "Compiler Bug",  # p4c crashes (SIGSEGV)
    "extern/register_typedef": "Compiler Bug",  # a register declared through a typedef
}

BMV2_SUFFIX = ".bmv2.stf"


def _positive_stf_files() -> list[Path]:
    return sorted(
        p for p in STF_DIR.rglob("*.stf")
        if NEGATIVE_DIR not in p.parents and not p.name.endswith(BMV2_SUFFIX)
    )


POSITIVE = _positive_stf_files()


def _case_id(path: Path) -> str:
    return path.relative_to(STF_DIR).with_suffix("").as_posix()


def _program_of(stf: Path) -> Path:
    """``x.p4`` for ``x.stf`` and for ``x.bmv2.stf``."""
    return stf.with_name(stf.name.split(".", 1)[0] + ".p4")


def _run_stf(prog: Path, stf: Path):
    from switch.stf import run_stf

    return run_stf(str(prog), str(stf))


# --------------------------------------------------------------------------
# Suite structure (independent of the implementation).
# --------------------------------------------------------------------------


def test_suite_is_not_empty():
    assert len(POSITIVE) >= 60, f"only {len(POSITIVE)} STF tests found"


def test_every_stf_has_a_program():
    missing = [
        _case_id(p) for p in STF_DIR.rglob("*.stf") if not _program_of(p).is_file()
    ]
    assert not missing, f"STF files without a .p4 of the same stem: {missing}"


def test_bmv2_expectations_are_the_known_differences():
    from switch.stf import parse_stf_file

    found = {_case_id(p).removesuffix(".bmv2") for p in STF_DIR.rglob("*" + BMV2_SUFFIX)}
    assert found == set(KNOWN_DIFFERENCES), found ^ set(KNOWN_DIFFERENCES)
    for case in found:
        parse_stf_file(STF_DIR / f"{case}{BMV2_SUFFIX}")  # raises on a syntax error
    cases = {_case_id(p) for p in POSITIVE}
    assert set(P4C_REJECTS) <= cases, set(P4C_REJECTS) - cases


def test_every_program_has_an_stf():
    orphans = [
        _case_id(p)
        for p in STF_DIR.rglob("*.p4")
        if NEGATIVE_DIR not in p.parents and not p.with_suffix(".stf").is_file()
    ]
    assert not orphans, f"programs without an STF file: {orphans}"


def test_negative_files_are_listed():
    stfs = {p.stem for p in NEGATIVE_DIR.glob("*.stf")}
    assert stfs == set(EXPECTED_FAILURES), stfs ^ set(EXPECTED_FAILURES)
    progs = {p.stem for p in NEGATIVE_DIR.glob("*.p4")}
    assert progs == set(EXPECTED_FAILURES) | set(INVALID_PROGRAMS)


# --------------------------------------------------------------------------
# The conformance tests proper.
# --------------------------------------------------------------------------


@pytest.mark.parametrize("stf", POSITIVE, ids=_case_id)
def test_stf_program(stf: Path):
    prog = stf.with_suffix(".p4")
    result = _run_stf(prog, stf)
    assert result.passed, f"{_case_id(stf)} failed:\n{result.report}"


@pytest.mark.parametrize("name", sorted(EXPECTED_FAILURES))
def test_negative_stf_fails(name: str):
    stf = NEGATIVE_DIR / f"{name}.stf"
    result = _run_stf(stf.with_suffix(".p4"), stf)
    assert not result.passed, (
        f"negative/{name}.stf should fail ({EXPECTED_FAILURES[name]}) but passed:\n"
        f"{result.report}"
    )
    assert isinstance(result.report, str) and result.report.strip(), (
        "a failing run must explain what differed"
    )


# --------------------------------------------------------------------------
# The same tests on BMv2.
# --------------------------------------------------------------------------


def _bmv2_missing() -> str | None:
    from switch.stf.bmv2_target import missing_tools

    return missing_tools()


BMV2_MISSING = _bmv2_missing()
needs_bmv2 = pytest.mark.skipif(BMV2_MISSING is not None, reason=BMV2_MISSING or "")
BMV2_TESTS = ("test_stf_program_bmv2", "test_known_difference_still_differs_on_bmv2",
              "test_negative_stf_fails_on_bmv2")
BMV2_PARALLEL = 2


def _bmv2_job(item: pytest.Item) -> tuple[str, Path]:
    """(test id, STF file) of a selected BMv2 test."""
    params = item.callspec.params  # type: ignore[attr-defined]
    if item.originalname == "test_negative_stf_fails_on_bmv2":  # type: ignore[attr-defined]
        return item.nodeid, NEGATIVE_DIR / f"{params['name']}.stf"
    stf: Path = params["stf"]
    if item.originalname == "test_stf_program_bmv2":  # type: ignore[attr-defined]
        override = stf.with_name(stf.stem + BMV2_SUFFIX)
        return item.nodeid, override if override.is_file() else stf
    return item.nodeid, stf


@pytest.fixture(scope="session")
def bmv2_runs(request: pytest.FixtureRequest) -> Iterator[dict[str, Future]]:
    """The BMv2 run of every selected BMv2 test, BMV2_PARALLEL at a time, by test id."""
    from switch.stf import run_stf

    jobs = [_bmv2_job(item) for item in request.session.items
            if getattr(item, "originalname", "") in BMV2_TESTS]
    with ThreadPoolExecutor(BMV2_PARALLEL) as pool:
        futures = {nodeid: pool.submit(run_stf, _program_of(stf), stf, target="bmv2")
                   for nodeid, stf in jobs}
        yield futures
        for f in futures.values():
            f.cancel()


def _bmv2_result(runs: dict[str, Future], request: pytest.FixtureRequest):
    return runs[request.node.nodeid].result()


# The whole BMv2 pass takes one to two minutes on two shared cores (mostly
# p4c-bm2-ss compiling each program): slow.
@pytest.mark.slow
@needs_bmv2
@pytest.mark.parametrize("stf", POSITIVE, ids=_case_id)
def test_stf_program_bmv2(stf: Path, bmv2_runs: dict[str, Future],
                          request: pytest.FixtureRequest):
    case = _case_id(stf)
    result = _bmv2_result(bmv2_runs, request)
    if case in P4C_REJECTS:
        assert result.stage == "compile", (
            f"p4c-bm2-ss accepts {case} now: take it out of P4C_REJECTS\n{result.report}")
        assert P4C_REJECTS[case] in result.report, result.report
        return
    assert result.passed, f"{case} failed on BMv2:\n{result.report}"


@pytest.mark.slow
@needs_bmv2
@pytest.mark.parametrize("stf", [STF_DIR / f"{c}.stf" for c in sorted(KNOWN_DIFFERENCES)],
                         ids=sorted(KNOWN_DIFFERENCES))
def test_known_difference_still_differs_on_bmv2(stf: Path, bmv2_runs: dict[str, Future],
                                                request: pytest.FixtureRequest):
    """The spec's expectation fails on BMv2, on a packet or a command, not earlier."""
    result = _bmv2_result(bmv2_runs, request)
    assert result.stage == "run", result.report
    assert "the switch failed" not in result.report, result.report
    assert not result.passed, (
        f"BMv2 now passes {_case_id(stf)}.stf: remove {_case_id(stf)}{BMV2_SUFFIX} and "
        f"its entry in KNOWN_DIFFERENCES and in the README")


@pytest.mark.slow
@needs_bmv2
@pytest.mark.parametrize("name", sorted(EXPECTED_FAILURES))
def test_negative_stf_fails_on_bmv2(name: str, bmv2_runs: dict[str, Future],
                                    request: pytest.FixtureRequest):
    result = _bmv2_result(bmv2_runs, request)
    assert result.stage == "run", result.report
    assert not result.passed, (
        f"negative/{name}.stf should fail on BMv2 ({EXPECTED_FAILURES[name]}) but "
        f"passed:\n{result.report}")


@pytest.mark.parametrize("name", sorted(INVALID_PROGRAMS))
def test_invalid_program_raises_compile_error(name: str):
    from switch.frontend import compile_file
    from switch.frontend.diagnostics import CompileError

    with pytest.raises(CompileError):
        compile_file(str(NEGATIVE_DIR / f"{name}.p4"))


# --------------------------------------------------------------------------
# CLI: `ina stf PROG STF` and `ina p4c PROG` exit codes.
# --------------------------------------------------------------------------


def _ina_command() -> list[str]:
    venv_ina = REPO_ROOT / ".venv" / "bin" / "ina"
    if venv_ina.is_file() and os.access(venv_ina, os.X_OK):
        return [str(venv_ina)]
    path_ina = shutil.which("ina")
    if path_ina:
        return [path_ina]
    return [sys.executable, "-m", "ina"]


def _run_ina(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    return subprocess.run(
        _ina_command() + list(args),
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


CLI_PASSING = ["parser/extract_basic", "table/lpm", "v1model/multicast"]


@pytest.mark.parametrize("case", CLI_PASSING)
def test_cli_stf_passing_exits_0(case: str):
    base = STF_DIR / case
    stf = base.with_suffix(".stf")
    proc = _run_ina("stf", str(base.with_suffix(".p4")), str(stf))
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    # every packet of the file went in, every expected one came out
    words = [line.split()[0] for line in stf.read_text().splitlines() if line.strip()]
    assert proc.stdout == (f"PASS {stf}: {words.count('packet')} packet(s) in, "
                           f"{words.count('expect')} out\n"), proc.stdout


@pytest.mark.parametrize("name", ["wrong_payload", "missing_packet", "unexpected_packet"])
def test_cli_stf_failing_exits_1(name: str):
    base = NEGATIVE_DIR / name
    proc = _run_ina("stf", str(base.with_suffix(".p4")), str(base.with_suffix(".stf")))
    assert proc.returncode == 1, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    assert (proc.stdout + proc.stderr).strip(), "a failing run must print what differed"
    assert "Traceback" not in proc.stderr, f"the CLI crashed instead of reporting:\n{proc.stderr}"


def test_cli_p4c_accepts_valid_program(tmp_path: Path):
    from switch.frontend.artifact import load_artifact

    out = tmp_path / "casts.json"
    proc = _run_ina("p4c", str(STF_DIR / "expr" / "casts.p4"), "-o", str(out))
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    assert proc.stderr == ""  # not a warning
    program = load_artifact(out.read_text())
    assert program.pipeline["ig"].decl.name == "MyIngress"


@pytest.mark.parametrize("name", sorted(INVALID_PROGRAMS))
def test_cli_p4c_rejects_invalid_program(name: str):
    proc = _run_ina("p4c", str(NEGATIVE_DIR / f"{name}.p4"))
    assert proc.returncode == 1, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, f"the CLI crashed instead of reporting:\n{proc.stderr}"
    assert f"{name}.p4" in proc.stdout + proc.stderr, "diagnostics should name the file"
