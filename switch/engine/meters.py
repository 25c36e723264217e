"""Two-rate three-colour meters (RFC 2698), with BMv2's bookkeeping: tokens are
computed from the time since the meter was created, in microseconds; an unconfigured
meter marks everything GREEN."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

GREEN, YELLOW, RED = 0, 1, 2


def now_us() -> int:
    return time.monotonic_ns() // 1000


class Meter:
    __slots__ = ("by_bytes", "rates", "clock", "t0")

    def __init__(self, by_bytes: bool, clock: Callable[[], int] = now_us):
        self.by_bytes = by_bytes
        # each rate: [info_rate per microsecond, burst, tokens, tokens_last, colour],
        # the peak rate first
        self.rates: list[list] = []
        self.clock = clock
        self.t0 = clock()

    def set_rates(self, rates: Sequence[tuple[float, int]]) -> None:
        """``rates`` as BMv2 takes them: [(CIR, CBS), (PIR, PBS)], rates in units
        (bytes or packets) per microsecond. An empty list unconfigures the meter."""
        rs = []
        for i, (rate, burst) in enumerate(rates):
            rs.append([float(rate), int(burst), int(burst), 0, i + 1])
        rs.reverse()
        self.rates = rs
        self.t0 = self.clock()

    def get_rates(self) -> list[tuple[float, int]]:
        return [(r[0], r[1]) for r in reversed(self.rates)]

    def execute(self, length: int) -> int:
        if not self.rates:
            return GREEN
        micros = self.clock() - self.t0
        n = length if self.by_bytes else 1
        for r in self.rates:
            since = int(micros * r[0])
            new = since - r[3]
            r[3] = since
            r[2] = min(r[2] + new, r[1])
            if r[2] < n:
                return r[4]
            r[2] -= n
        return GREEN
