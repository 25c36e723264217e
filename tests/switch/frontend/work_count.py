"""The work a call does, counted rather than timed: the lines of Python it executes
and the calls it makes, built-in functions' included (``sys.settrace`` and
``sys.setprofile`` events). The count does not depend on the machine or its load,
so a test can hold how the work grows with the input (linear, not quadratic) where
a timed assertion would flake on a busy machine or pass on a fast one. Work done
inside one built-in call (a ``str`` method's loop) is not seen."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any


def work_done(fn: Callable[[], Any]) -> int:
    """How many Python lines ``fn()`` executes plus how many calls it makes."""
    count = 0

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        count += 1  # a call, then each line of the frame
        return trace

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal count
        if event == "c_call":
            count += 1

    previous = sys.gettrace(), sys.getprofile()
    sys.settrace(trace)
    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.settrace(previous[0])
        sys.setprofile(previous[1])
    return count


def work_steps(work: Callable[[int], int], unit: int) -> tuple[int, int]:
    """``work(unit) - work(0)`` and ``work(2 * unit) - work(unit)``: equal when the
    work is linear in the input, whatever its fixed cost; the second larger when it
    grows faster."""
    w0, w1, w2 = work(0), work(unit), work(2 * unit)
    return w1 - w0, w2 - w1
