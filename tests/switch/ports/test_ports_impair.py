"""The impairment stages on their own, with a hand-driven clock."""

from __future__ import annotations

from switch.ports.counters import MutableCounters
from switch.ports.impair import REORDER_MAX_HOLD_S, Impairer, ImpairmentConfig


def frames(n: int) -> list[bytes]:
    return [i.to_bytes(2, "big") for i in range(n)]


def run(imp: Impairer, items: list[bytes], now: float = 0.0) -> list[bytes]:
    out: list[bytes] = []
    for f in items:
        out += imp.submit(f, now)
    return out


def nums(items: list[bytes]) -> list[int]:
    return [int.from_bytes(f, "big") for f in items]


def test_identity_bypasses() -> None:
    imp = Impairer(ImpairmentConfig(seed=3), "1/egress", MutableCounters())
    assert imp.bypass
    assert run(imp, frames(5)) == frames(5)
    assert imp.next_deadline() is None


def test_loss_is_reproducible_and_per_stream() -> None:
    def dropped(seed: int, stream: str) -> list[int]:
        counters = MutableCounters()
        imp = Impairer(ImpairmentConfig(loss=0.1, seed=seed), stream, counters)
        passed = set(nums(run(imp, frames(5000))))
        lost = [i for i in range(5000) if i not in passed]
        assert counters.drops["impairment_loss"] == len(lost)
        return lost

    first = dropped(7, "1/egress")
    assert first == dropped(7, "1/egress")
    assert 0.085 * 5000 <= len(first) <= 0.115 * 5000
    assert first != dropped(8, "1/egress")
    assert first != dropped(7, "2/egress")


def test_reconfigure_reseeds() -> None:
    imp = Impairer(ImpairmentConfig(loss=0.5, seed=1), "s", MutableCounters())
    a = nums(run(imp, frames(100)))
    imp.configure(ImpairmentConfig(loss=0.5, seed=1))
    assert nums(run(imp, frames(100))) == a


def test_delay_holds_and_keeps_order() -> None:
    counters = MutableCounters()
    imp = Impairer(ImpairmentConfig(delay_ms=10), "s", counters)
    assert run(imp, frames(3), now=100.0) == []
    assert not imp.bypass and imp.pending == 3
    assert imp.next_deadline() == 100.010
    assert imp.due(100.009) == []
    assert imp.due(100.010) == frames(3)
    assert imp.pending == 0 and imp.next_deadline() is None
    assert counters.impaired["delayed"] == 3


def test_shorter_delay_does_not_overtake() -> None:
    imp = Impairer(ImpairmentConfig(delay_ms=50), "s", MutableCounters())
    imp.submit(b"\x00\x01", 0.0)
    imp.configure(ImpairmentConfig())  # no delay any more, but a frame is still queued
    assert not imp.bypass
    assert imp.submit(b"\x00\x02", 0.001) == []  # queues behind the delayed frame
    assert imp.due(0.049) == []
    assert nums(imp.due(0.050)) == [1, 2]
    assert imp.bypass
    assert imp.submit(b"\x00\x03", 0.06) == [b"\x00\x03"]


def test_duplicate_all() -> None:
    counters = MutableCounters()
    imp = Impairer(ImpairmentConfig(duplicate=1.0), "s", counters)
    assert nums(run(imp, frames(3))) == [0, 0, 1, 1, 2, 2]
    assert counters.impaired["duplicated"] == 3


def test_reorder_swaps_adjacent_frames() -> None:
    counters = MutableCounters()
    imp = Impairer(ImpairmentConfig(reorder=1.0), "s", counters)
    out = run(imp, frames(5), now=1.0)
    assert nums(out) == [1, 0, 3, 2]
    assert counters.impaired["reordered"] == 2
    # The last frame has nobody to overtake it: it leaves after the hold time.
    assert imp.next_deadline() == 1.0 + REORDER_MAX_HOLD_S
    assert imp.due(1.0) == []
    assert nums(imp.due(1.0 + REORDER_MAX_HOLD_S)) == [4]
    assert imp.bypass is False  # reorder still configured
    assert imp.pending == 0


def test_reorder_with_delay() -> None:
    imp = Impairer(ImpairmentConfig(reorder=1.0, delay_ms=5), "s", MutableCounters())
    assert run(imp, frames(2), now=0.0) == []
    assert nums(imp.due(0.005)) == [1, 0]


def test_random_reorder_and_duplicate_keep_every_frame() -> None:
    counters = MutableCounters()
    config = ImpairmentConfig(reorder=0.2, duplicate=0.1, seed=11)
    imp = Impairer(config, "s", counters)
    out = nums(run(imp, frames(2000)) + imp.due(10.0))
    assert sorted(set(out)) == list(range(2000))
    assert len(out) == 2000 + counters.impaired["duplicated"]
    assert 100 <= counters.impaired["duplicated"] <= 300
    assert counters.impaired["reordered"] > 100
    # Reordering only ever swaps neighbours: no frame (first copy) moves further.
    displaced = [n for i, n in enumerate(dict.fromkeys(out)) if abs(n - i) > 1]
    assert displaced == []


def test_discard() -> None:
    imp = Impairer(ImpairmentConfig(delay_ms=5, reorder=1.0), "s", MutableCounters())
    run(imp, frames(3))
    assert imp.pending == 3
    assert imp.discard() == 3
    assert imp.pending == 0 and imp.next_deadline() is None
