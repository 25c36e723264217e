"""The P4_16 front end: preprocess -> parse -> check -> P4Info ids -> ``Program``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from switch.frontend.diagnostics import CompileError, Diagnostic, Diagnostics
from switch.frontend.program import Program

__all__ = ["CompileError", "Diagnostic", "Program", "compile_file", "compile_text"]


def compile_file(
    path: str | Path,
    include_dirs: Sequence[str | Path] = (),
    defines: Mapping[str, str | None] | None = None,
) -> Program:
    """Compile a P4_16 program; raises CompileError with p4c-style diagnostics."""
    from switch.frontend.preprocess import PreprocessError, preprocess

    try:
        source = preprocess(path, [Path(d) for d in include_dirs], dict(defines or {}))
    except PreprocessError as e:
        raise _as_compile_error(e) from None
    except OSError as e:
        diagnostic = Diagnostic("error", f"cannot read: {e.strerror}", str(path), 0, 0)
        raise CompileError([diagnostic]) from None
    return compile_preprocessed(source, str(path))


def compile_text(
    text: str,
    filename: str = "<input>.p4",
    include_dirs: Sequence[str | Path] = (),
    defines: Mapping[str, str | None] | None = None,
) -> Program:
    """Compile P4 source held in a string (``#include`` is relative to the current
    directory)."""
    from switch.frontend.preprocess import PreprocessError, preprocess_text

    try:
        dirs = [Path(d) for d in include_dirs]
        source = preprocess_text(text, filename, dirs, dict(defines or {}))
    except PreprocessError as e:
        raise _as_compile_error(e) from None
    return compile_preprocessed(source, filename)


def compile_preprocessed(source: object, filename: str) -> Program:
    """Parse and check already-preprocessed source (anything with ``text``,
    ``origin(line)`` and ``source_line(line)``)."""
    from switch.frontend.check import check, check_target_limits
    from switch.frontend.p4info import assign_ids
    from switch.frontend.parser import parse

    diags = Diagnostics(source, filename)  # type: ignore[arg-type]
    tree = parse(source.text, diags)  # type: ignore[attr-defined]
    diags.check()
    program = check(tree, source, diags)
    diags.check()
    assign_ids(program, diags)
    diags.check()
    check_target_limits(program, diags)
    diags.check()
    program.warnings = [d for d in diags.items if d.severity == "warning"]
    return program


def _as_compile_error(e: Exception) -> CompileError:
    file = getattr(e, "file", "<input>")
    line = getattr(e, "line", 0)
    message = getattr(e, "message", str(e))
    return CompileError([Diagnostic("error", message, str(file), int(line or 0), 0)])
