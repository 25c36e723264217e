"""The built-in target: the project's front end and its software switch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from switch.stf.target import Loaded, LoadError, describe_crash


class BuiltinTarget:
    name = "builtin"

    def load(self, program: Path, include_dirs: Sequence[str | Path],
             defines: Mapping[str, str | None], *, seed: int, trace: bool) -> Loaded:
        from switch.frontend import CompileError, compile_file

        try:
            compiled = compile_file(program, include_dirs, dict(defines))
        except CompileError as e:
            raise LoadError("compile", str(e)) from None
        warnings = [w.format() for w in compiled.warnings]  # type: ignore[attr-defined]
        return Loaded(compiled, start_switch(compiled, seed), warnings)


def start_switch(compiled: Any, seed: int) -> Any:
    """A ``V1Switch`` for a compiled program; LoadError if the switch cannot take it
    (a construct the engine cannot run is reported as ``ina p4c`` reports it, with its
    position)."""
    from switch.frontend import CompileError
    from switch.v1model import V1Switch
    from switch.v1model.engine_limits import check_engine_limits

    try:
        return V1Switch(compiled, seed=seed)
    except Exception as e:  # the switch cannot take this program
        try:
            check_engine_limits(compiled)
        except CompileError as limits:
            raise LoadError("compile", str(limits)) from None
        raise LoadError("start", f"error: cannot start the switch: {describe_crash(e)}") \
            from None
