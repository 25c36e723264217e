"""Progress of a sweep: a bar with the current point and an ETA on a terminal, one
plain line per point otherwise (a log, a pipe, CI).

The ETA weighs the points by what they should cost (the model's time plus a fixed
start-up cost per point), scaled by how long the finished points took per unit of
that weight, so a sweep whose big sizes come last is not promised too early.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

from experiments.sweep import Point

POINT_OVERHEAD_S = 3.0  # agents' start-up, job set-up, the check


def format_duration(seconds: float) -> str:
    seconds = max(int(round(seconds)), 0)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class Progress:
    """Call ``start(point)`` before a point, ``done(point, result_text)`` after it and
    ``note(text)`` for anything else worth a line (a network starting)."""

    def __init__(self, points: list[Point], stream: TextIO | None = None,
                 tty: bool | None = None, estimate: Callable[[Point], float] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream if stream is not None else sys.stdout
        self.tty = self.stream.isatty() if tty is None else tty
        self.clock = clock
        self.total = len(points)
        cost = estimate or (lambda p: 0.0)
        self.weights = {p.index: cost(p) + POINT_OVERHEAD_S for p in points}
        self.remaining = sum(self.weights.values())
        self.done_weight = 0.0
        self.finished = 0
        self.started = clock()
        self.current: Point | None = None
        self._lock = threading.RLock()
        self._closed = threading.Event()
        if self.tty:  # the elapsed time and the ETA move on during a long point
            threading.Thread(target=self._tick, name="progress", daemon=True).start()

    def _tick(self) -> None:
        while not self._closed.wait(1.0):
            with self._lock:
                if not self._closed.is_set():
                    self._draw()

    def eta(self) -> float | None:
        """Seconds left, from the pace of the finished points (None before the first)."""
        if self.done_weight <= 0:
            return None
        return (self.clock() - self.started) / self.done_weight * self.remaining

    def _eta_text(self) -> str:
        eta = self.eta()
        return "ETA --" if eta is None else f"ETA {format_duration(eta)}"

    def _bar(self) -> str:
        width = 20
        filled = int(width * self.finished / self.total) if self.total else width
        elapsed = format_duration(self.clock() - self.started)
        now = f" {self.current.label}" if self.current else ""
        line = (f"[{'#' * filled}{'.' * (width - filled)}] {self.finished}/{self.total}"
                f"{now}  {elapsed} elapsed, {self._eta_text()}")
        columns = shutil.get_terminal_size((100, 24)).columns
        return line[:columns - 1]

    def _clear(self) -> None:
        if self.tty:
            self.stream.write("\r\033[K")

    def _draw(self) -> None:
        if self.tty:
            self.stream.write("\r\033[K" + self._bar())
            self.stream.flush()

    def note(self, text: str) -> None:
        with self._lock:
            self._clear()
            self.stream.write(text + "\n")
            self._draw()
            self.stream.flush()

    def start(self, point: Point) -> None:
        with self._lock:
            self.current = point
            self._draw()

    def done(self, point: Point, result: str) -> None:
        with self._lock:
            self._done(point, result)

    def _done(self, point: Point, result: str) -> None:
        weight = self.weights.pop(point.index, 0.0)
        self.remaining -= weight
        self.done_weight += weight
        self.finished += 1
        self.current = None
        self._clear()
        self.stream.write(f"[{self.finished}/{self.total}] {point.label}: {result}")
        self.stream.write("\n" if self.tty else f"  ({self._eta_text()})\n")
        self._draw()
        self.stream.flush()

    def close(self) -> None:
        with self._lock:
            self._closed.set()
            self._clear()
            self.stream.flush()
