"""Conformance suite: P4_16 v1model programs with STF scripts.

Every ``tests/stf/<area>/<name>.stf`` (outside ``negative/``) is paired with
``<name>.p4`` in the same directory and must pass through
``switch.stf.run_stf``.  The expected packets in the STF files were computed
from the P4_16 specification and BMv2 simple_switch semantics, independently
of the implementation under test.

``tests/stf/negative/`` holds deliberately wrong STF scripts (and programs
that must not compile); the runner and the ``ina`` CLI must report those as
failures.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
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


def _positive_stf_files() -> list[Path]:
    return sorted(
        p for p in STF_DIR.rglob("*.stf") if NEGATIVE_DIR not in p.parents
    )


POSITIVE = _positive_stf_files()


def _case_id(path: Path) -> str:
    return path.relative_to(STF_DIR).with_suffix("").as_posix()


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
        _case_id(p) for p in STF_DIR.rglob("*.stf") if not p.with_suffix(".p4").is_file()
    ]
    assert not missing, f"STF files without a .p4 of the same stem: {missing}"


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
    proc = _run_ina("stf", str(base.with_suffix(".p4")), str(base.with_suffix(".stf")))
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"


@pytest.mark.parametrize("name", ["wrong_payload", "missing_packet", "unexpected_packet"])
def test_cli_stf_failing_exits_1(name: str):
    base = NEGATIVE_DIR / name
    proc = _run_ina("stf", str(base.with_suffix(".p4")), str(base.with_suffix(".stf")))
    assert proc.returncode == 1, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    assert (proc.stdout + proc.stderr).strip(), "a failing run must print what differed"
    assert "Traceback" not in proc.stderr, f"the CLI crashed instead of reporting:\n{proc.stderr}"


def test_cli_p4c_accepts_valid_program():
    proc = _run_ina("p4c", str(STF_DIR / "expr" / "casts.p4"))
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"


@pytest.mark.parametrize("name", sorted(INVALID_PROGRAMS))
def test_cli_p4c_rejects_invalid_program(name: str):
    proc = _run_ina("p4c", str(NEGATIVE_DIR / f"{name}.p4"))
    assert proc.returncode == 1, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, f"the CLI crashed instead of reporting:\n{proc.stderr}"
    assert f"{name}.p4" in proc.stdout + proc.stderr, "diagnostics should name the file"
