"""End to end: in-network all-reduce on a Mininet star of 8 hosts around one P4 switch
that runs ``p4/aggregation.p4``, pushed by the controller; every worker is an
``ina agent`` process in its Mininet host (``experiments.allreduce_net``).

One network per module and target serves every test: each test creates its jobs, runs
them and the jobs are deleted again. The built-in switch always runs; BMv2 runs when
``simple_switch_grpc`` and ``p4c-bm2-ss`` are on PATH. Every job is checked
(``experiments.check``): bit-identical results on every worker, within the quantizer's
error bound of the exact float64 sum.
"""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator

import numpy as np
import pytest

from experiments.allreduce_net import AllReduceNet, need_root, target_missing
from experiments.jobs import JobOutcome, run_jobs
from experiments.jobspec import JobSpec

pytestmark = pytest.mark.slow

K = 64
HOSTS = [f"h{i}" for i in range(1, 9)]


@pytest.fixture(scope="module", params=["builtin", "bmv2"])
def net(request: pytest.FixtureRequest,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[AllReduceNet]:
    why = need_root() or target_missing(request.param)
    if why:
        pytest.skip(why)
    work = tmp_path_factory.mktemp(f"allreduce-{request.param}")
    with AllReduceNet("star,8", work, target=request.param, k=K, seed=5) as running:
        yield running


_job_ids = iter(range(1, 1 << 16))


def run(net: AllReduceNet, *jobs: JobSpec) -> list[JobOutcome]:
    out = run_jobs(net, list(jobs), net.work_dir / "agents")
    for o in out:
        assert o.ok, (o.job, o.errors)
        assert o.check is not None and o.check.ok, o.check
    return out


def job(workers: int | list[str], size: int, **kw: object) -> JobSpec:
    hosts = HOSTS[:workers] if isinstance(workers, int) else workers
    return JobSpec(next(_job_ids), tuple(hosts), size, k=K, **kw)  # type: ignore[arg-type]


# ------------------------------------------------------------- workers x lengths

LENGTHS = [1, K - 1, K, K + 1, 10**5]
DISTS = ["normal", "uniform", "wide", "zeros", "normal"]


@pytest.mark.parametrize("workers", [2, 3, 4, 8])
@pytest.mark.parametrize(("size", "dist"), list(zip(LENGTHS, DISTS, strict=True)))
def test_star_workers_and_lengths(net: AllReduceNet, workers: int, size: int,
                                  dist: str) -> None:
    [o] = run(net, job(workers, size, dist=dist, seed=size + workers))
    assert all(s["counters"]["chunks"] == -(-size // K) for s in o.stats)
    assert o.outputs[0].shape == (size,)


def test_a_million_values(net: AllReduceNet) -> None:
    [o] = run(net, job(4, 10**6, seed=3))
    assert o.check is not None and o.check.max_error_over_bound <= 1.0


# ------------------------------------------------------------------ values


def test_wide_dynamic_range(net: AllReduceNet) -> None:
    [o] = run(net, job(8, 20_480, dist="wide", seed=9))
    # the blocks' scales span about 2**-60 .. 2**60, and so do the result's
    block_max = np.abs(o.outputs[0]).reshape(-1, K).max(axis=1)
    assert block_max.max() > 2.0**40 and block_max.min() < 2.0**-40


def test_exact_zeros_stay_zero(net: AllReduceNet) -> None:
    [o] = run(net, job(3, 5_000, dist="zeros", seed=4))
    inputs = o.job.inputs()
    all_zero = np.all([x == 0 for x in inputs], axis=0)
    assert all_zero[:128].all()
    assert np.all(o.outputs[0][all_zero] == 0)


@pytest.mark.parametrize("workers", [3, 8])
def test_integers_are_summed_exactly_with_pow2_scaling(net: AllReduceNet,
                                                       workers: int) -> None:
    [o] = run(net, job(workers, 10_000, dist="ints", scaling="pow2", seed=workers))
    assert o.check is not None and o.check.exact, o.check


# ------------------------------------------------------------------ isolation


def test_two_jobs_at_once(net: AllReduceNet) -> None:
    a = job(HOSTS[:4], 30_000, seed=1)
    b = job(HOSTS[4:], 20_000, dist="uniform", seed=2)
    first, second = run(net, a, b)
    assert first.outputs[0].shape == (30_000,) and second.outputs[0].shape == (20_000,)


ROGUE = textwrap.dedent('''
    import socket, sys, time
    import numpy as np
    from hosts.wire import FLAG_RESULT, HEADER, INA_UDP_PORT
    job, aggregator, seconds = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", INA_UDP_PORT))
    values = np.full(64, 2**30, dtype=">i4").tobytes()
    print("ready", flush=True)
    sent, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        for w in range(128):
            flags = FLAG_RESULT if w % 3 == 0 else 0
            header = HEADER.pack(job, w % 64, (w // 64) & 1, flags, 100, 0, w)
            s.sendto(header + values, (aggregator, INA_UDP_PORT))
            sent += 1
        time.sleep(0.02)
    print(sent, flush=True)
''')


def _rx_packets(net: AllReduceNet, port: int) -> int:
    reply = net.switches()[0].cli("--json", "counters")
    assert reply.returncode == 0, reply.stderr
    [entry] = [p for p in json.loads(reply.stdout)["ports"] if p["port"] == port]
    return int(entry["rx_packets"])


def test_a_host_outside_the_job_changes_nothing(net: AllReduceNet) -> None:
    clean = job(HOSTS[:4], 20_000, seed=8)
    [reference] = run(net, clean)
    attacked = job(HOSTS[:4], 20_000, seed=8)
    net.create_job(attacked.job_id, list(attacked.workers), slots=attacked.window)
    aggregator = net.ctl.jobs.get(attacked.job_id).aggregator["h1"]
    net.delete_job(attacked.job_id)
    before = _rx_packets(net, 8) if net.target == "builtin" else 0
    rogue = net.net.get("h8").popen([sys.executable, "-c", ROGUE, str(attacked.job_id),
                                     aggregator, "3"], text=True)
    try:
        assert rogue.stdout.readline().strip() == "ready"
        [o] = run(net, attacked)
        out, err = rogue.communicate(timeout=30)
        assert rogue.returncode == 0, err
    finally:
        if rogue.poll() is None:
            rogue.kill()
            rogue.wait()
    assert int(out) > 1000
    for mine, theirs in zip(o.outputs, reference.outputs, strict=True):
        assert np.array_equal(mine.view(np.uint32), theirs.view(np.uint32))
    if net.target == "builtin":
        assert _rx_packets(net, 8) - before >= int(out)  # they did reach the switch


# ------------------------------------------------------------------ impairments


@pytest.fixture
def impaired(net: AllReduceNet) -> Iterator[AllReduceNet]:
    """The network, whose impairments are cleared afterwards (the built-in switch
    impairs its ports itself, BMv2 links are impaired in the kernel)."""
    try:
        yield net
    finally:
        net.impair("none")


@pytest.mark.parametrize("loss", [0.01, 0.05])
def test_loss_on_every_switch_port(impaired: AllReduceNet, loss: float) -> None:
    impaired.impair(f"loss={loss},direction=both,seed=21")
    [o] = run(impaired, job(4, 20_000, seed=6))
    assert all(s["counters"]["retransmitted"] > 0 for s in o.stats), o.stats


def test_duplicated_packets(impaired: AllReduceNet) -> None:
    impaired.impair("duplicate=0.05,direction=both,seed=22")
    [o] = run(impaired, job(4, 20_000, seed=7))
    assert o.counter("duplicate_results") > 0, o.stats
    assert all(s["counters"]["results"] == s["counters"]["wire_chunks"] for s in o.stats)
