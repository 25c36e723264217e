"""One program compiled by both ``p4c-bm2-ss`` (the reference) and ``ina p4c``, and how
their outcomes differ: both accept it and write the same P4Info (compared as parsed
messages), or both reject it. Shared by the differential test on our own programs and
the sweep over p4c's samples (``p4c_samples.py``)."""

from __future__ import annotations

import difflib
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

P4C = shutil.which("p4c-bm2-ss")


@dataclass(frozen=True)
class Outcome:
    p4c_ok: bool
    p4c_errors: str
    p4c_p4info: str
    ina_ok: bool
    ina_errors: str
    ina_p4info: str


def compile_both(path: str, cwd: Path, defines: tuple[str, ...] = (),
                 timeout: float = 300) -> Outcome:
    """Both compilers on ``path`` (relative to ``cwd``, where both run, so that file
    names in messages are relative); ``defines`` are ``NAME=VALUE`` strings."""
    from switch.frontend import CompileError, compile_file
    from switch.frontend.p4info import p4info_text

    assert P4C is not None
    with tempfile.TemporaryDirectory() as tmp:
        p4info = Path(tmp) / "p4info.txtpb"
        cmd = [P4C, path, *(f"-D{d}" for d in defines),
               "-o", str(Path(tmp) / "out.json"), "--p4runtime-files", str(p4info)]
        try:
            proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                                  timeout=timeout)
            p4c_ok, p4c_stderr = proc.returncode == 0, proc.stderr
        except subprocess.TimeoutExpired:
            p4c_ok, p4c_stderr = False, f"p4c-bm2-ss took more than {timeout} s"
        p4c_text = p4info.read_text() if p4c_ok and p4info.exists() else ""
    values: dict[str, str | None] = {}
    for d in defines:
        name, _, value = d.partition("=")
        values[name] = value
    try:
        program = compile_file(cwd / path, defines=values)
    except CompileError as e:
        return Outcome(p4c_ok, p4c_stderr, p4c_text, False, str(e), "")
    return Outcome(p4c_ok, p4c_stderr, p4c_text, True, "", p4info_text(program))


def errors_of(text: str, lines: int = 12) -> str:
    """The first lines of a compiler's stderr that are not warnings."""
    kept = [line for line in text.splitlines() if "warning" not in line]
    return "\n".join(kept[:lines])


def difference(name: str, out: Outcome) -> str | None:
    """How the two outcomes differ (None: they agree)."""
    if out.p4c_ok and not out.ina_ok:
        return f"{name}: p4c-bm2-ss compiles it, ina p4c rejects it:\n{out.ina_errors}"
    if out.ina_ok and not out.p4c_ok:
        return (f"{name}: ina p4c compiles it, p4c-bm2-ss rejects it:\n"
                f"{errors_of(out.p4c_errors)}")
    if not out.p4c_ok:
        return None
    want = text_format.Parse(out.p4c_p4info, p4info_pb2.P4Info())
    got = text_format.Parse(out.ina_p4info, p4info_pb2.P4Info())
    if want == got:
        return None
    diff = difflib.unified_diff(text_format.MessageToString(want).splitlines(),
                                text_format.MessageToString(got).splitlines(),
                                "p4c-bm2-ss", "ina p4c", lineterm="", n=2)
    return f"{name}: the P4Info differs:\n" + "\n".join(list(diff)[:60])
