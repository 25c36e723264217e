"""The alpha-beta model, against numbers worked out by hand, the agents' own schedules
and ``ina model``'s output."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from experiments.model import (
    MODELS,
    TCP_EFFICIENCY,
    ModelInput,
    ideal_speedup,
    ina_wire_chunks,
    model_hd,
    model_ina,
    model_ps,
    model_ring,
    predict,
    tcp_exchange,
)

ALPHA = 100e-6


def test_in_network_by_hand() -> None:
    # N=4, S=1e6 values, K=256, window 64, 10 Mbit/s: C = ceil(1e6/256) = 3907 data
    # chunks + 64 exponent-round packets = 3971 frames of 4*256 + 12 + 42 = 1078 bytes
    p = model_ina(ModelInput(4, 1_000_000, 10.0, k=256, window=64, alpha=ALPHA))
    assert p.link_bytes == 3971 * 1078 == 4_280_738
    assert p.seconds == pytest.approx(4_280_738 * 8 / 10e6 + 2 * ALPHA)
    assert p.bytes_sent == [3971 * (1024 + 12)] * 4
    assert p.wire_bytes_sent == [4_280_738] * 4


def test_ring_by_hand() -> None:
    # each host sends 2(N-1)/N * 4e6 = 6e6 bytes: ceil(6e6/1448) = 4144 segments of 66
    # header bytes, and ACKs (one per 2 segments, 66 bytes) for as much coming in
    p = model_ring(ModelInput(4, 1_000_000, 10.0, alpha=ALPHA))
    assert p.link_bytes == 6_000_000 + 4144 * 66 + 2072 * 66 == 6_410_256
    assert p.steps == 6
    # TCP gets TCP_EFFICIENCY of the link's rate
    assert p.seconds == pytest.approx(6 * ALPHA + 6_410_256 * 8 / (TCP_EFFICIENCY * 10e6))
    assert p.bytes_sent == [6_000_000] * 4
    alpha_beta = model_ring(ModelInput(4, 1_000_000, 10.0, alpha=ALPHA, tcp_efficiency=1))
    assert alpha_beta.seconds == pytest.approx(6 * ALPHA + 6_410_256 * 8 / 10e6)


def test_parameter_server_by_hand() -> None:
    # the server sends 3 sums of 4e6 bytes: ceil(12e6/1448) = 8288 segments
    p = model_ps(ModelInput(4, 1_000_000, 10.0, alpha=ALPHA, tcp_efficiency=0.5))
    assert p.link_bytes == 12_000_000 + 8288 * 66 + 4144 * 66
    assert p.seconds == pytest.approx(2 * ALPHA + p.link_bytes * 8 / 5e6)
    assert p.bytes_sent == [12_000_000, 4_000_000, 4_000_000, 4_000_000]
    assert p.to_json()["bytes_sent_per_host"] == 6_000_000
    assert p.to_json()["bytes_sent_max"] == 12_000_000


def test_halving_doubling_with_an_extra_rank() -> None:
    # N=5: a core of 4 does halving-doubling (2 log2 4 = 4 steps, 2*3/4 * 4e6 bytes),
    # rank 4 hands its 4e6 bytes to rank 0 first and gets the result back after
    p = model_hd(ModelInput(5, 1_000_000, 10.0, alpha=ALPHA))
    whole = 4_000_000 + 2763 * 66  # ceil(4e6/1448) = 2763 segments
    assert p.link_bytes == tcp_exchange(6_000_000) + 2 * whole
    assert p.steps == 6
    assert p.bytes_sent == [10_000_000, 6_000_000, 6_000_000, 6_000_000, 4_000_000]
    power_of_two = model_hd(ModelInput(8, 1_000_000, 10.0, alpha=ALPHA))
    assert power_of_two.steps == 6 and power_of_two.bytes_sent == [7_000_000] * 8


def test_one_worker_and_no_rate() -> None:
    for name in ("ring", "ps", "ps-sharded", "hd"):
        p = MODELS[name](ModelInput(1, 1000, 10.0))
        assert p.seconds == 0 and p.bytes_sent == [0.0]
    unshaped = model_ring(ModelInput(4, 1000, None))
    assert unshaped.seconds is None and unshaped.bytes_sent == [6000.0] * 4
    assert predict("nccl", ModelInput(4, 1000, 10.0)) is None


def test_bandwidth_regime_speedup_approaches_the_ideal() -> None:
    # without framing the in-network speedup over ring is 2(N-1)/N; with it, K = 256
    # frames (5% header) against TCP's (7% with ACKs) keep it within a few percent, when
    # TCP gets the whole link; it gets TCP_EFFICIENCY of it here, and the ring as much less
    for n in (2, 4, 8):
        m = ModelInput(n, 10_000_000, 10.0, k=256, tcp_efficiency=1)
        ratio = model_ring(m).seconds / model_ina(m).seconds  # type: ignore[operator]
        assert ratio == pytest.approx(ideal_speedup(n), rel=0.02)
    assert ideal_speedup(4) == 1.5 and ideal_speedup(8) == 1.75
    m = ModelInput(8, 10_000_000, 10.0, k=256)
    ratio = model_ring(m).seconds / model_ina(m).seconds  # type: ignore[operator]
    assert ratio == pytest.approx(ideal_speedup(8) / TCP_EFFICIENCY, rel=0.02)


@pytest.mark.parametrize(("size", "k", "window"), [(1, 64, 64), (1000, 8, 4),
                                                   (100_000, 256, 64), (640, 64, 16)])
def test_in_network_packets_match_the_agents_schedule(size: int, k: int, window: int
                                                      ) -> None:
    from hosts.protocol import AllReduceRun, WorkerSettings

    run = AllReduceRun(np.ones(size, dtype=np.float32), 1, 4,
                       WorkerSettings(k=k, window=window))
    assert ina_wire_chunks(size, k, window) == run.stats.wire_chunks


@pytest.mark.parametrize("name", ["ring", "ps", "ps-sharded", "hd"])
@pytest.mark.parametrize("workers", [2, 3, 4, 5, 8])
def test_host_algorithms_bytes_match_their_schedules(name: str, workers: int) -> None:
    from hosts.baselines.collective import Settings
    from hosts.baselines.registry import COLLECTIVES

    size = 840 * 1000  # divisible by every N here: the schedules' blocks are equal
    model = MODELS[name](ModelInput(workers, size, 10.0))
    volume = [4 * COLLECTIVES[name].volume(workers, size, r, Settings()).sent
              for r in range(workers)]
    assert sorted(model.bytes_sent) == pytest.approx(sorted(volume))


def test_ina_model_prints_the_table() -> None:
    proc = subprocess.run([sys.executable, "-m", "ina", "model", "--workers", "4,8",
                           "--size", "1e6", "--bw", "10", "--k", "256"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "N = 4, S = 1000000 float32 values (4000000 B), B = 10 Mbit/s, K = 256" in out
    ina_line = next(line for line in out.splitlines() if line.startswith("ina "))
    assert ina_line.split()[1:4] == ["3.4248", "9.34", "14.02"]
    # ring's bytes alone: 2(N-1)/N; TCP getting 0.88 of the link makes it 1/0.88 slower
    assert "in-network over ring: 1.70 (2(N-1)/N = 1.50 for the bytes alone)" in out
    assert "in-network over ring: 1.99 (2(N-1)/N = 1.75 for the bytes alone)" in out
    proc = subprocess.run([sys.executable, "-m", "ina", "model", "--workers", "8", "--size",
                           "1e6", "--bw", "10", "--k", "256", "--tcp-efficiency", "1"],
                          capture_output=True, text=True, timeout=60)
    assert "TCP gets 1 of a link" in proc.stdout
    assert "in-network over ring: 1.75 (2(N-1)/N = 1.75" in proc.stdout


@pytest.mark.parametrize(("argv", "message"), [
    (["--workers", "0"], "--workers 0: must be in [1, 4096]"),
    (["--tcp-efficiency", "1.5"], "--tcp-efficiency 1.5: must be in (0, 1]"),
    (["--size", "x"], "--size x: expected a whole number"),
    (["--k", "100"], "--k 100: not one of 8, 16, 32, 64, 128, 256"),
    (["--algo", "ring,nccl"], "--algo nccl: no model"),
    (["--bw", "-1"], "--bw -1: must be positive"),
])
def test_ina_model_errors(argv: list[str], message: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "ina", "model", *argv],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert f"ina model: error: {message}" in proc.stderr
    assert "Traceback" not in proc.stderr
