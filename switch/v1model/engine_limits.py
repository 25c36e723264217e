"""What the built-in switch cannot run, reported as a compile error.

The front end accepts what the language allows; a construct the engine cannot run
shows only when the code generator meets it, which is when a switch builds the
pipeline (at start, or when a controller pushes the program). ``ina p4c`` builds the
pipeline once as the switch will, so that such a program fails to compile, with the
construct's position, instead of failing later on the switch.
"""

from __future__ import annotations

from switch.engine.codegen import UnsupportedError
from switch.engine.runtime import SwitchRuntimeError
from switch.frontend.diagnostics import Diagnostics
from switch.frontend.program import Program
from switch.v1model.switch import V1Switch

__all__ = ["check_engine_limits"]


def check_engine_limits(program: Program) -> None:
    """Raise ``CompileError`` (``prog.p4(12): error: unsupported: ...``) when the
    switch cannot run ``program``."""
    diags = Diagnostics(program.source, program.filename)  # type: ignore[arg-type]
    try:
        V1Switch(program)
    except SwitchRuntimeError as e:
        # the switch reports the engine's error as text; the error itself, with the
        # construct's position, is the one it was handling
        cause = e.__cause__ or e.__context__
        if isinstance(cause, UnsupportedError):
            diags.unsupported(cause.pos, cause.what)
        else:
            diags.error(None, e.message)
    except Exception as e:  # noqa: BLE001 - a bug, but still a message, not a traceback
        diags.error(None, f"Compiler Bug: building the pipeline failed: "
                    f"{type(e).__name__}: {e}")
    diags.check()
