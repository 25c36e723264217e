"""The workers through the real ``p4/aggregation.p4`` on the built-in engine, in
process: worker i behind port i + 1, frames built and checked by ``hosts.frame``."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from switch_model import Impairments, Network, run_workers

from hosts.frame import Endpoints, build_frame, ipv4_bytes, mac_bytes, parse_frame
from hosts.protocol import AllReduceRun, WorkerSettings
from hosts.wire import FLAG_NACK, FLAG_RESULT, HEADER_SIZE, INA_UDP_PORT
from switch.engine.runtime import Exact
from switch.frontend import compile_file
from switch.frontend.program import Program
from switch.v1model import V1Switch

ROOT = Path(__file__).resolve().parents[2]
K = 16
AGG_IP = "10.0.0.254"
SWITCH_MAC = "02:00:00:00:00:fe"
GROUP = 1
EPOCH = 1  # the job's epoch (every cell starts at epoch 0: empty)
SETTINGS = WorkerSettings(k=K, window=8, timeout=1e-3, min_timeout=1e-4, max_timeout=8e-3)


def worker_mac(i: int) -> str:
    return f"00:00:00:00:01:{i + 1:02x}"


def worker_ip(i: int) -> str:
    return f"10.0.1.{i + 1}"


@pytest.fixture(scope="module")
def program() -> Program:
    return compile_file(ROOT / "p4" / "aggregation.p4", defines={"INA_K": str(K)})


class P4Star:
    """``V1Switch`` running aggregation.p4 as the root of one job, speaking UDP
    payloads to the simulated network and checking every frame it sends."""

    def __init__(self, program: Program, job: int, n: int, region_base: int = 0) -> None:
        self.sw = V1Switch(program)
        self.n = n
        ports = list(range(1, n + 1))
        for i, port in enumerate(ports):
            self.sw.table_add("ina_job", [Exact(job), Exact(port)], "ina_child",
                              [i, n, 1, 0, GROUP, region_base, EPOCH])
            self.sw.table_add("ina_result_rewrite", [Exact(port)], "set_dst",
                              [int.from_bytes(mac_bytes(worker_mac(i)), "big"),
                               int.from_bytes(ipv4_bytes(worker_ip(i)), "big"),
                               int.from_bytes(ipv4_bytes(AGG_IP), "big")])
        self.sw.mc_group_set(GROUP, [(p, 0) for p in ports])
        self.up = {p: Endpoints.make(worker_mac(p - 1), SWITCH_MAC, worker_ip(p - 1), AGG_IP)
                   for p in ports}
        self.results = 0
        self.nacks = 0  # NACKs alone and on RESULTs

    def process(self, port: int, payload: bytes) -> list[tuple[int, bytes]]:
        out = []
        for out_port, frame in self.sw.inject(port, build_frame(self.up[port], payload)):
            f = parse_frame(frame)
            assert f is not None and f.ip_checksum_ok
            i = out_port - 1
            assert (f.dst_mac, f.dst_ip) == (mac_bytes(worker_mac(i)), ipv4_bytes(worker_ip(i)))
            assert (f.src_mac, f.src_ip) == (mac_bytes(SWITCH_MAC), ipv4_bytes(AGG_IP))
            assert (f.src_port, f.dst_port) == (INA_UDP_PORT, INA_UDP_PORT)
            check_answer(f.payload)
            self.results += bool(f.payload[5] & FLAG_RESULT)
            self.nacks += bool(f.payload[5] & FLAG_NACK)
            out.append((out_port, f.payload))
        return out


def check_answer(payload: bytes) -> None:
    """What a worker gets: a RESULT (with its values), or a NACK alone (the header)."""
    flags = payload[5]
    assert flags & (FLAG_RESULT | FLAG_NACK)
    assert (len(payload) == HEADER_SIZE) == (not flags & FLAG_RESULT)


def run(program: Program, n: int, length: int, impair: Impairments, seed: int,
        settings: WorkerSettings = SETTINGS) -> P4Star:
    rng = np.random.default_rng(seed)
    xs = [(rng.standard_normal(length) * 10.0 ** rng.integers(-5, 5)).astype(np.float32)
          for _ in range(n)]
    star = P4Star(program, 7, n, region_base=3)
    net = Network([star], {(0, i + 1): (("w", i), 0) for i in range(n)},  # type: ignore[list-item]
                  impair, seed=seed)
    base = 0
    for _ in range(2):  # two all-reduces: the slot versions carry on
        runs = [AllReduceRun(x, 7, n, settings, base=base) for x in xs]
        run_workers(net, runs)
        results = [r.result() for r in runs]
        for r in results:
            assert r.tobytes() == results[0].tobytes()
        exact = np.array([math.fsum(c) for c in np.array(xs, dtype=np.float64).T])
        bound = np.repeat(runs[0].quantizer.error_bound(runs[0].agreed), settings.k)[:length]
        rounding = np.spacing(np.abs(exact + bound).astype(np.float32))
        assert np.all(np.abs(results[0] - exact) <= bound + rounding)
        base = runs[0].end
        if impair.loss:
            assert sum(r.stats.retransmitted for r in runs) > 0
    assert star.results > 0
    return star


def test_workers_through_aggregation_p4(program: Program) -> None:
    star = run(program, 3, 10 * K + 3, Impairments(), seed=1)
    assert star.nacks == 0


def test_workers_through_aggregation_p4_with_loss(program: Program) -> None:
    star = run(program, 4, 40 * K, Impairments(loss=0.05, duplicate=0.02, jitter=30e-6,
                                               reorder=0.03, hold=20e-6), seed=2)
    assert star.nacks > 0  # the program's NACKs reach the workers, and they use them


def test_the_largest_k_through_aggregation_p4() -> None:
    """INA_K = 256: 1078-byte frames, still below a 1500-byte MTU."""
    big = compile_file(ROOT / "p4" / "aggregation.p4", defines={"INA_K": "256"})
    settings = WorkerSettings(k=256, window=4, timeout=1e-3, min_timeout=1e-4,
                              max_timeout=8e-3)
    run(big, 3, 9 * 256 + 5, Impairments(loss=0.05), seed=3, settings=settings)


class P4Node:
    """``V1Switch`` running aggregation.p4 at any place in a tree: ``workers`` maps
    its worker ports to worker numbers; other ports lead to switches."""

    def __init__(self, program: Program, job: int, rows: dict[int, list[int]],
                 workers: dict[int, int]) -> None:
        self.sw = V1Switch(program)
        self.workers = workers
        children = [p for p, args in rows.items() if not (args[2] == 0 and p == args[3])]
        for port, args in rows.items():
            self.sw.table_add("ina_job", [Exact(job), Exact(port)], "ina_child",
                              [*args, EPOCH])
        for port, i in workers.items():
            self.sw.table_add("ina_result_rewrite", [Exact(port)], "set_dst",
                              [int.from_bytes(mac_bytes(worker_mac(i)), "big"),
                               int.from_bytes(ipv4_bytes(worker_ip(i)), "big"),
                               int.from_bytes(ipv4_bytes(AGG_IP), "big")])
        self.sw.mc_group_set(GROUP, [(p, 0) for p in children])
        self.link = Endpoints.make(1, 2, "10.9.0.1", AGG_IP)

    def process(self, port: int, payload: bytes) -> list[tuple[int, bytes]]:
        i = self.workers.get(port)
        ep = self.link if i is None else Endpoints.make(worker_mac(i), SWITCH_MAC,
                                                        worker_ip(i), AGG_IP)
        out = []
        for out_port, frame in self.sw.inject(port, build_frame(ep, payload)):
            f = parse_frame(frame)
            assert f is not None and f.ip_checksum_ok
            if out_port in self.workers:
                assert f.dst_ip == ipv4_bytes(worker_ip(self.workers[out_port]))
                check_answer(f.payload)
            out.append((out_port, f.payload))
        return out


def test_workers_through_a_tree_of_aggregation_p4_switches(program: Program) -> None:
    """Root switch 0; leaf switches 1 and 2 (parent on port 9) with 2 and 3 workers."""
    job, parent = 4, 9
    leaves = [2, 3]
    root = P4Node(program, job, {j + 1: [j, len(leaves), 1, 0, GROUP, 0]
                                 for j in range(len(leaves))}, {})
    nodes: list[P4Node] = [root]
    links: dict[tuple[int, int], tuple[tuple[str, int], int]] = {}
    w = 0
    for j, count in enumerate(leaves):
        s = len(nodes)
        rows = {c + 1: [c, count, 0, parent, GROUP, 5] for c in range(count)}
        rows[parent] = [0, count, 0, parent, GROUP, 5]
        nodes.append(P4Node(program, job, rows, {c + 1: w + c for c in range(count)}))
        links[(0, j + 1)] = (("s", s), parent)
        links[(s, parent)] = (("s", 0), j + 1)
        for c in range(count):
            links[(s, c + 1)] = (("w", w + c), 0)
        w += count
    net = Network(nodes, links, Impairments(loss=0.03, duplicate=0.02, jitter=30e-6),  # type: ignore[arg-type]
                  seed=4, up_ports={(s, parent) for s in (1, 2)})
    rng = np.random.default_rng(4)
    xs = [rng.standard_normal(12 * K).astype(np.float32) for _ in range(w)]
    runs = [AllReduceRun(x, job, w, SETTINGS) for x in xs]
    run_workers(net, runs)
    results = [r.result() for r in runs]
    for r in results:
        assert r.tobytes() == results[0].tobytes()
    exact = np.sum(np.array(xs, dtype=np.float64), axis=0)
    bound = np.repeat(runs[0].quantizer.error_bound(runs[0].agreed), K)
    rounding = np.spacing(np.abs(exact + bound).astype(np.float32))
    assert np.all(np.abs(results[0] - exact) <= bound + rounding)
    assert sum(r.stats.retransmitted for r in runs) > 0
