"""What a place to run STF tests provides: a target compiles the program for its
switch and starts one; the runner then drives that switch through the methods of
``V1Switch`` it uses (``inject``, ``table_add``, ``mc_group_set``, ``register_read``,
...), whichever target it is. The targets are listed in ``switch.stf.targets``."""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol


class TargetError(Exception):
    """The switch refused a command or stopped working; the message says why. The
    runner reports it against the command's line and stops the test."""


class LoadError(Exception):
    """The program could not be compiled (``stage`` "compile") or its switch could not
    be started (``stage`` "start"); ``report`` holds the diagnostics to show."""

    def __init__(self, stage: str, report: str):
        self.stage = stage
        self.report = report
        super().__init__(report)


@dataclass
class Loaded:
    """A running switch with the program loaded. ``program`` is what STF names are
    resolved against (tables, actions, externs); ``close`` stops the switch."""

    program: Any
    switch: Any
    warnings: list[str] = field(default_factory=list)
    close: Callable[[], None] = lambda: None


class StfTarget(Protocol):
    name: str

    def load(self, program: Path, include_dirs: Sequence[str | Path],
             defines: Mapping[str, str | None], *, seed: int, trace: bool) -> Loaded:
        """Compile ``program`` and start a switch running it; raises ``LoadError``."""
        ...


def describe_crash(e: BaseException) -> str:
    """An unexpected exception with the place it was raised, for a report."""
    frames = traceback.extract_tb(e.__traceback__)
    where = ""
    if frames:
        frame = frames[-1]
        where = f" (at {Path(frame.filename).name}:{frame.lineno} in {frame.name})"
    return f"{type(e).__name__}: {e}{where}"
