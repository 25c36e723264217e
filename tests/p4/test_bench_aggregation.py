"""``tests/p4/bench_aggregation.py`` runs: every chunk completes and is delivered."""

from __future__ import annotations

from bench_aggregation import measure


def test_every_chunk_comes_back_to_every_worker() -> None:
    rate, out = measure(k=8, workers=3, slots=4, chunks=20, quiet=True)
    assert out == 3 * 20
    assert rate > 0
