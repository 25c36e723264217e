"""A job's tree changes in the middle of an all-reduce: the workers stop, go back to the
first wire chunk some worker lacks and continue on empty cells (``rewind``), or finish
on the hosts (``hosts.fallback``). Either way every worker ends with the bits of a run
that never failed."""

from __future__ import annotations

import numpy as np
import pytest
from switch_model import single_switch

from hosts.baselines.local import run_ranks
from hosts.fallback import finish_on_hosts
from hosts.protocol import AllReduceError, AllReduceRun, WorkerSettings

K = 16
JOB = 3
SETTINGS = WorkerSettings(k=K, window=8)


def inputs(n: int, size: int, seed: int = 1) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(size) * 10.0 ** rng.integers(-3, 3, size)).astype(np.float32)
            for _ in range(n)]


class Star:
    """Workers and one switch model, packets delivered at once; RESULTs to the workers
    in ``muted`` are lost (so the workers' progress differs, as after a fault)."""

    def __init__(self, runs: list[AllReduceRun]) -> None:
        self.runs = runs
        self.switch = single_switch(JOB, len(runs), K)
        self.inbox: list[list[bytes]] = [[] for _ in runs]
        self.muted: set[int] = set()

    def send(self, i: int, payloads: list[bytes]) -> None:
        for p in payloads:
            for port, out in self.switch.process(i + 1, p):
                if port - 1 not in self.muted:
                    self.inbox[port - 1].append(out)

    def start(self) -> None:
        for i, r in enumerate(self.runs):
            self.send(i, r.start(0.0))

    def step(self) -> bool:
        """Every worker handles what it got; False when nothing moved."""
        moved = False
        for i, r in enumerate(self.runs):
            got, self.inbox[i] = self.inbox[i], []
            if got:
                moved = True
                self.send(i, r.on_packets(got, 0.0))
        return moved

    def run(self, steps: int = 1_000_000) -> None:
        for _ in range(steps):
            if not self.step():
                return

    def fail(self) -> int:
        """The switch restarts (its cells empty, in-flight packets lost); every worker
        pauses and the job continues from the least progress."""
        self.inbox = [[] for _ in self.runs]
        self.switch = single_switch(JOB, len(self.runs), K)
        for r in self.runs:
            r.pause()
        return min(r.progress()[0] for r in self.runs)


def reference(xs: list[np.ndarray]) -> list[np.ndarray]:
    runs = [AllReduceRun(x, JOB, len(xs), SETTINGS) for x in xs]
    star = Star(runs)
    star.start()
    star.run()
    assert all(r.done for r in runs)
    return [r.result() for r in runs]


@pytest.mark.parametrize("steps", [0, 1, 3, 20])
def test_a_rewound_job_ends_with_the_bits_of_one_that_never_failed(steps: int) -> None:
    xs = inputs(4, 40 * K + 5)
    expected = reference(xs)
    runs = [AllReduceRun(x, JOB, 4, SETTINGS) for x in xs]
    star = Star(runs)
    star.muted = {1}  # rank 1 falls behind
    star.start()
    for _ in range(steps):
        star.step()
    start = star.fail()
    firsts = [r.progress()[0] for r in runs]
    assert start == min(firsts)
    if steps:
        assert max(firsts) > start  # the others had gone further
    star.muted = set()
    for i, r in enumerate(runs):
        star.send(i, r.rewind(start, 1.0))
    star.run()
    assert all(r.done for r in runs)
    for r, want in zip(runs, expected, strict=True):
        assert r.result().tobytes() == want.tobytes()


def test_a_done_worker_can_go_back_too() -> None:
    xs = inputs(3, 10 * K)
    expected = reference(xs)
    runs = [AllReduceRun(x, JOB, 3, SETTINGS) for x in xs]
    star = Star(runs)
    star.start()
    star.run()
    assert all(r.done for r in runs)
    assert runs[0].progress() == (runs[0].end, runs[0].end)
    star.fail()
    for i, r in enumerate(runs):
        star.send(i, r.rewind(r.end - 3, 1.0))
    star.run()
    assert all(r.done for r in runs)
    assert runs[2].result().tobytes() == expected[2].tobytes()


def test_rewind_refuses_to_skip_chunks_it_lacks() -> None:
    run = AllReduceRun(inputs(1, 4 * K)[0], JOB, 2, SETTINGS)
    run.start(0.0)
    with pytest.raises(AllReduceError, match="cannot continue from wire chunk 5"):
        run.rewind(5, 0.0)


@pytest.mark.parametrize("algo", ["ring", "ps"])
@pytest.mark.parametrize("steps", [0, 2, 30, 1000])
def test_the_hosts_finish_with_the_switch_s_bits(algo: str, steps: int) -> None:
    """From the exponent round (0 steps), the middle, or the end (everything done)."""
    n = 4
    xs = inputs(n, 37 * K + 3, seed=5)
    xs[2][7] = 3e38  # a large exponent in one chunk
    expected = reference(xs)
    runs = [AllReduceRun(x, JOB, n, SETTINGS) for x in xs]
    star = Star(runs)
    star.muted = {3}
    star.start()
    for _ in range(steps):
        star.step()
    start = star.fail()
    stats = run_ranks(n, lambda mesh: finish_on_hosts(runs[mesh.rank], start, mesh, algo,
                                                      segment=100))
    assert {s.start for s in stats} == {start}
    for r, want in zip(runs, expected, strict=True):
        assert r.done
        assert r.result().tobytes() == want.tobytes()
