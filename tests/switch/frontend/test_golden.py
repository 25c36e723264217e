"""Golden programs for the front end.

``golden/ok/*.p4`` must compile; ``golden/errors/*.p4`` (language errors) and
``golden/target_errors/*.p4`` (what BMv2 cannot run, which p4c-bm2-ss rejects) must
fail with exactly the diagnostics in the ``.expected`` file next to each
(``str(CompileError)``, p4c's format). ``test_p4c_differential.py`` checks that
p4c-bm2-ss rejects every one of them too. Paths are given relative to the repository
root, which the tests run from, so that the file names in the diagnostics do not depend
on the checkout location.

To update an expectation after a deliberate change in wording, run
``python tests/switch/frontend/test_golden.py --update`` and review the diff.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
GOLDEN = Path(__file__).resolve().parent / "golden"
OK = sorted((GOLDEN / "ok").glob("*.p4"))
ERRORS = sorted((GOLDEN / "errors").glob("*.p4")) + sorted(
    (GOLDEN / "target_errors").glob("*.p4"))


def _relative(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def _compile_error_text(path: Path) -> str | None:
    from switch.frontend import CompileError, compile_file

    try:
        compile_file(_relative(path))
    except CompileError as e:
        return str(e)
    return None


@pytest.fixture(autouse=True)
def _from_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)


@pytest.mark.parametrize("path", OK, ids=[p.stem for p in OK])
def test_ok_program_compiles(path: Path) -> None:
    from switch.frontend import compile_file

    program = compile_file(_relative(path))
    assert program.arch == "v1model"
    assert set(program.pipeline) == {"p", "vr", "ig", "eg", "ck", "dep"}


@pytest.mark.parametrize("path", ERRORS, ids=[f"{p.parent.name}/{p.stem}" for p in ERRORS])
def test_error_program_reports_expected_diagnostics(path: Path) -> None:
    expected = path.with_suffix(".expected").read_text()
    text = _compile_error_text(path)
    assert text is not None, f"{path.name} compiled without errors"
    assert text.rstrip("\n") == expected.rstrip("\n")


def test_there_are_enough_golden_programs() -> None:
    assert len(OK) >= 8
    assert len(ERRORS) >= 30
    assert len([p for p in ERRORS if p.parent.name == "target_errors"]) >= 15
    for path in ERRORS:
        assert path.with_suffix(".expected").exists(), path.name


def _update() -> None:
    os.chdir(REPO)
    sys.path.insert(0, str(REPO))
    for path in ERRORS:
        text = _compile_error_text(path)
        if text is None:
            print(f"{path.name}: compiled without errors", file=sys.stderr)
            continue
        path.with_suffix(".expected").write_text(text + "\n")
        print(f"{path.name}: updated")


if __name__ == "__main__":
    if "--update" in sys.argv:
        _update()
