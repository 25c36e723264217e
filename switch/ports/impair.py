"""Link impairments emulated in user space: loss, delay, reordering, duplication.

The machines this runs on have no netem, so the port layer applies impairments itself.
An :class:`Impairer` handles one direction of one port. Each frame goes through, in
this order:

1. loss: dropped with probability ``loss``;
2. duplication: with probability ``duplicate`` a second copy follows right behind it;
3. reordering: with probability ``reorder`` a frame is held back and released right
   after the next frame of the same direction (the two swap places). A held frame that
   no other frame overtakes within :data:`REORDER_MAX_HOLD_S` is released on its own,
   so reordering never turns into loss on a quiet link;
4. delay: frames wait ``delay_ms`` in a FIFO queue.

The queue is FIFO and a frame's deadline is never earlier than the one before it, so
frames leave a port in the order the reordering stage produced, also when the delay
is changed at run time. Nothing here uses threads or clocks: the owner passes ``now``
(``time.monotonic()``) in, asks :meth:`Impairer.next_deadline` when to come back, and
collects released frames with :meth:`Impairer.due`.

Randomness comes from one ``random.Random`` per port and direction, seeded from the
configured seed, the port number and the direction. Runs with the same seed and the
same traffic drop, duplicate and reorder the same frames; two ports configured with
one ``all:...,seed=7`` spec still get independent patterns (identical patterns would
make every worker of an aggregation job lose the same packet index).
"""

from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass

from .counters import DROP_IMPAIRMENT_LOSS, MutableCounters
from .errors import SpecError

DIRECTIONS = ("egress", "ingress", "both")

#: How long a frame picked for reordering waits for a later frame to overtake it.
REORDER_MAX_HOLD_S = 0.010

#: Upper bound for ``delay_ms`` (one minute), to catch unit mistakes such as ``delay=2s``
#: typed as milliseconds by a script.
MAX_DELAY_MS = 60_000.0


def _probability(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SpecError(f"{name} must be a number between 0 and 1, got {value!r}")
    v = float(value)
    if not 0.0 <= v <= 1.0:  # also rejects NaN
        raise SpecError(f"{name} must be between 0 and 1, got {value!r}")
    return v


@dataclass(frozen=True)
class ImpairmentConfig:
    """Impairments of one port (or of every port).

    ``direction`` says where they apply: ``"egress"`` to frames the switch sends,
    ``"ingress"`` to frames it receives (before the pipeline sees them), ``"both"``.
    """

    loss: float = 0.0
    delay_ms: float = 0.0
    reorder: float = 0.0
    duplicate: float = 0.0
    seed: int = 0
    direction: str = "egress"

    def __post_init__(self) -> None:
        object.__setattr__(self, "loss", _probability("loss", self.loss))
        object.__setattr__(self, "reorder", _probability("reorder", self.reorder))
        object.__setattr__(self, "duplicate", _probability("duplicate", self.duplicate))
        d = self.delay_ms
        if isinstance(d, bool) or not isinstance(d, (int, float)):
            raise SpecError(f"delay must be a number of milliseconds, got {d!r}")
        if not math.isfinite(d) or d < 0 or d > MAX_DELAY_MS:
            raise SpecError(f"delay must be between 0 and {MAX_DELAY_MS:g} ms, got {d!r}")
        object.__setattr__(self, "delay_ms", float(d))
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise SpecError(f"seed must be an integer, got {self.seed!r}")
        if self.direction not in DIRECTIONS:
            raise SpecError(
                f"direction must be one of {', '.join(DIRECTIONS)}, got {self.direction!r}"
            )

    @property
    def is_identity(self) -> bool:
        """True when the config changes nothing (the seed and direction do not matter)."""
        return not (self.loss or self.delay_ms or self.reorder or self.duplicate)

    def applies_to(self, direction: str) -> bool:
        """Whether the config acts on ``direction`` (``"egress"`` or ``"ingress"``)."""
        return self.direction == "both" or self.direction == direction

    def to_spec(self) -> str:
        """The ``KEY=VALUE,...`` text that :func:`parse_impairment_spec` reads back."""
        parts = []
        if self.loss:
            parts.append(f"loss={self.loss!r}")
        if self.delay_ms:
            parts.append(f"delay={self.delay_ms!r}ms")
        if self.reorder:
            parts.append(f"reorder={self.reorder!r}")
        if self.duplicate:
            parts.append(f"duplicate={self.duplicate!r}")
        parts.append(f"seed={self.seed}")
        parts.append(f"direction={self.direction}")
        return ",".join(parts)


NO_IMPAIRMENT = ImpairmentConfig()


class Impairer:
    """Applies an :class:`ImpairmentConfig` to the frames of one port in one direction.

    ``stream`` names the port and direction; it is mixed into the random seed.
    Effects are counted in ``counters`` (``drops["impairment_loss"]``,
    ``impaired["duplicated" | "reordered" | "delayed"]``).
    """

    def __init__(self, config: ImpairmentConfig, stream: str, counters: MutableCounters) -> None:
        self._stream = stream
        self._counters = counters
        self._queue: deque[tuple[float, bytes]] = deque()
        self._held: bytes | None = None
        self._held_until = 0.0
        self.config = config
        self._rng = random.Random()
        self._delay_s = 0.0
        #: True when frames can skip the impairer altogether (no effect configured and
        #: nothing pending that a new frame would have to queue behind).
        self.bypass = True
        self.configure(config)

    def configure(self, config: ImpairmentConfig) -> None:
        """Switch to ``config``; frames already delayed or held keep their place.

        The random generator is re-seeded, so the pattern after a change is as
        reproducible as the pattern from the start.
        """
        self.config = config
        self._rng = random.Random(f"{config.seed}/{self._stream}")
        self._delay_s = config.delay_ms / 1000.0
        self._update_bypass()

    def _update_bypass(self) -> None:
        self.bypass = self.config.is_identity and not self._queue and self._held is None

    @property
    def pending(self) -> int:
        """Frames waiting in the delay queue or held for reordering."""
        return len(self._queue) + (self._held is not None)

    def submit(self, frame: bytes, now: float) -> list[bytes]:
        """Feed one frame in; return the frames that leave right now, in order."""
        cfg = self.config
        rng = self._rng
        if cfg.loss and rng.random() < cfg.loss:
            self._counters.drops[DROP_IMPAIRMENT_LOSS] += 1
            return []
        copies = [frame]
        if cfg.duplicate and rng.random() < cfg.duplicate:
            copies.append(frame)
            self._counters.impaired["duplicated"] += 1
        staged: list[bytes] = []
        for copy in copies:
            if self._held is not None:
                staged.append(copy)
                staged.append(self._held)
                self._held = None
                self._counters.impaired["reordered"] += 1
            elif cfg.reorder and rng.random() < cfg.reorder:
                self._held = copy
                self._held_until = now + REORDER_MAX_HOLD_S
            else:
                staged.append(copy)
        out = self._delay(staged, now)
        self._update_bypass()
        return out

    def _delay(self, frames: list[bytes], now: float) -> list[bytes]:
        if not frames or (not self._delay_s and not self._queue):
            return frames
        q = self._queue
        deadline = now + self._delay_s
        if q and q[-1][0] > deadline:
            deadline = q[-1][0]
        for f in frames:
            q.append((deadline, f))
        if self._delay_s:
            self._counters.impaired["delayed"] += len(frames)
        return []

    def due(self, now: float) -> list[bytes]:
        """Release the frames whose time has come, in order."""
        out: list[bytes] = []
        if self._held is not None and now >= self._held_until:
            held, self._held = self._held, None
            out.extend(self._delay([held], now))
        q = self._queue
        while q and q[0][0] <= now:
            out.append(q.popleft()[1])
        self._update_bypass()
        return out

    def next_deadline(self) -> float | None:
        """When :meth:`due` will next release something (``time.monotonic()`` scale)."""
        deadline: float | None = self._queue[0][0] if self._queue else None
        if self._held is not None and (deadline is None or self._held_until < deadline):
            deadline = self._held_until
        return deadline

    def discard(self) -> int:
        """Drop everything pending (on close); return how many frames that was."""
        n = self.pending
        self._queue.clear()
        self._held = None
        self._update_bypass()
        return n
