"""The host-based all-reduce algorithms with every rank in one process (threads over
socket pairs): sums against numpy's, the same bits on every rank, the reduction order
each schedule promises, and the bytes each rank moves against the algorithm's model."""

from __future__ import annotations

import numpy as np
import pytest

from experiments.check import check_float32_sum
from hosts.baselines.collective import Collective, Reduced, Settings, block_bounds, segments
from hosts.baselines.local import run_ranks
from hosts.baselines.mesh import SocketMesh, Traffic
from hosts.baselines.registry import COLLECTIVES, get_collective
from hosts.inputs import generate

NAMES = list(COLLECTIVES)
WORKERS = [1, 2, 3, 5, 8]
LENGTHS = [0, 1, 7, 1001]
SMALL_SEGMENTS = Settings(segment=64)  # many segments per block even for short tensors


def inputs(dist: str, n: int, size: int, seed: int = 1) -> list[np.ndarray]:
    if size == 0:
        return [np.zeros(0, np.float32) for _ in range(n)]
    return [generate(dist, size, seed, r) for r in range(n)]


def allreduce(collective: Collective, xs: list[np.ndarray], settings: Settings
              ) -> list[tuple[Reduced, Traffic]]:
    def body(mesh: SocketMesh) -> tuple[Reduced, Traffic]:
        return collective.run(mesh, xs[mesh.rank], settings), mesh.traffic

    return run_ranks(len(xs), body, idle_timeout=30)


def same_bits(outs: list[np.ndarray]) -> bool:
    return all(np.array_equal(outs[0].view(np.uint32), o.view(np.uint32)) for o in outs)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n", WORKERS)
@pytest.mark.parametrize("size", LENGTHS)
def test_integer_sums_equal_numpy_and_bytes_match_the_model(name: str, n: int,
                                                            size: int) -> None:
    collective = get_collective(name)
    settings = Settings(segment=64, ps_host=n - 1)  # a server that is not rank 0
    xs = inputs("ints", n, size)
    ranks = allreduce(collective, xs, settings)
    outs = [r.values for r, _ in ranks]
    expected = np.sum(np.array(xs, dtype=np.float64), axis=0).astype(np.float32)
    for out, x in zip(outs, xs, strict=True):
        assert out.dtype == np.float32 and out.shape == x.shape
        assert np.array_equal(out, expected)  # integers this small add exactly
    for rank, (_, traffic) in enumerate(ranks):
        model = collective.volume(n, size, rank, settings)
        assert (traffic.bytes_sent, traffic.bytes_received) == (4 * model.sent,
                                                                4 * model.received)
        assert traffic.control_bytes_sent == 0  # no barrier inside an algorithm


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n", [2, 3, 5, 8])
@pytest.mark.parametrize("dist", ["normal", "wide", "zeros"])
def test_float_sums_are_identical_and_within_the_bound(name: str, n: int, dist: str
                                                        ) -> None:
    xs = inputs(dist, n, 3001, seed=n)
    outs = [r.values for r, _ in allreduce(get_collective(name), xs, SMALL_SEGMENTS)]
    assert same_bits(outs)
    result = check_float32_sum(xs, outs)
    assert result.ok, result.message
    if dist != "wide":
        exact = np.sum(np.array(xs, dtype=np.float64), axis=0)
        assert np.allclose(outs[0], exact, rtol=1e-5, atol=1e-5)


def sequential(xs: list[np.ndarray], order: list[int]) -> np.ndarray:
    acc = xs[order[0]].copy()
    for r in order[1:]:
        acc += xs[r]
    return acc


@pytest.mark.parametrize("n", [3, 5])
def test_the_reduction_order_of_each_schedule(n: int) -> None:
    """ps and ps-sharded add in rank order; the ring adds block b along the ring from
    rank b. Bit for bit, so each element is reduced in exactly one place."""
    xs = inputs("normal", n, 997, seed=9)
    ranked = sequential(xs, list(range(n)))
    for name in ("ps", "ps-sharded"):
        out = allreduce(get_collective(name), xs, SMALL_SEGMENTS)[0][0].values
        assert np.array_equal(out.view(np.uint32), ranked.view(np.uint32)), name
    out = allreduce(get_collective("ring"), xs, SMALL_SEGMENTS)[0][0].values
    bounds = block_bounds(997, n)
    for b in range(n):
        block = slice(bounds[b], bounds[b + 1])
        along = sequential([x[block] for x in xs], [(b + i) % n for i in range(n)])
        assert np.array_equal(out[block].view(np.uint32), along.view(np.uint32)), b


@pytest.mark.parametrize(("name", "n"), [("ring", 8), ("hd", 5), ("ps-sharded", 3)])
def test_a_million_values(name: str, n: int) -> None:
    xs = inputs("normal", n, 10**6, seed=2)
    ranks = allreduce(get_collective(name), xs, Settings())
    outs = [r.values for r, _ in ranks]
    assert same_bits(outs)
    assert check_float32_sum(xs, outs).ok
    size_bytes = 4 * 10**6
    sent = [t.bytes_sent for _, t in ranks]
    if name in ("ring", "ps-sharded"):  # 2(N-1)/N S per rank, up to the odd value
        assert all(abs(s - 2 * (n - 1) / n * size_bytes) <= 8 for s in sent)
    else:  # hd, N = 5 = 4 + 1: ranks 0, 1 take the extra step
        assert sent[0] == size_bytes
        assert sent[1] == size_bytes + 2 * 3 / 4 * size_bytes
        assert sent[2:] == [2 * 3 / 4 * size_bytes] * 3


@pytest.mark.parametrize("n", [2, 4, 6, 8])
def test_the_models_agree_with_the_textbook(n: int) -> None:
    s = 10**5 * n  # divisible by N: no odd values
    p = 1 << (n.bit_length() - 1)
    for rank in range(n):
        ring = get_collective("ring").volume(n, s, rank, Settings())
        assert ring.sent == ring.received == 2 * (n - 1) * s // n
        sharded = get_collective("ps-sharded").volume(n, s, rank, Settings())
        assert sharded.sent == 2 * (n - 1) * s // n
        ps = get_collective("ps").volume(n, s, rank, Settings())
        assert ps.sent == ((n - 1) * s if rank == 0 else s)
        hd = get_collective("hd").volume(n, s, rank, Settings())
        extra = s if rank < 2 * (n - p) else 0
        core = 0 if rank < 2 * (n - p) and rank % 2 == 0 else 2 * (p - 1) * s // p
        assert hd.sent == hd.received == extra + core


def test_counters_say_what_the_schedule_did() -> None:
    xs = inputs("normal", 5, 1000)
    ring = allreduce(get_collective("ring"), xs, Settings(segment=100))
    assert [r.counters["steps"] for r, _ in ring] == [8] * 5
    # 2(N-1) blocks of 200 values, in segments of 100
    assert [t.messages_sent for _, t in ring] == [2 * 4 * 2] * 5
    assert [t.messages_received for _, t in ring] == [2 * 4 * 2] * 5
    ps = allreduce(get_collective("ps"), xs, Settings(segment=100))
    assert [r.counters["steps"] for r, _ in ps] == [2] * 5
    assert [t.messages_sent for _, t in ps] == [4 * 10, 10, 10, 10, 10]
    hd = allreduce(get_collective("hd"), xs, Settings())
    assert [r.counters["extra_steps"] for r, _ in hd] == [2, 2, 0, 0, 0]
    assert [r.counters["steps"] for r, _ in hd] == [0, 4, 4, 4, 4]


def test_input_is_not_changed_and_shape_is_kept() -> None:
    xs = [np.arange(12, dtype=np.float32).reshape(3, 4) + r for r in range(3)]
    before = [x.copy() for x in xs]
    for name in NAMES:
        outs = [r.values.reshape(3, 4) for r, _ in
                allreduce(get_collective(name), xs, SMALL_SEGMENTS)]
        assert np.array_equal(outs[0], sum(before))
        assert all(np.array_equal(x, b) for x, b in zip(xs, before, strict=True))


def test_settings_and_names_are_checked() -> None:
    with pytest.raises(ValueError, match="segment=0 must be a positive number"):
        Settings(segment=0).check(2)
    with pytest.raises(ValueError, match=r"ps_host=2 is not a rank in \[0, 2\)"):
        Settings(ps_host=2).check(2)
    with pytest.raises(ValueError, match="unknown algorithm 'tree'"):
        get_collective("tree")


def test_blocks_and_segments() -> None:
    assert block_bounds(10, 4) == [0, 3, 6, 8, 10]
    assert block_bounds(2, 4) == [0, 1, 2, 2, 2]
    assert segments(5, 12, 3) == [slice(5, 8), slice(8, 11), slice(11, 12)]
    assert segments(4, 4, 3) == []
