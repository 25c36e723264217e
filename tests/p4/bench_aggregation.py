"""Contributions per second through ``p4/aggregation.p4`` on the engine (no I/O), with a
real job installed: N workers on ports 1..N of a root switch send chunks in turn
(chunk c in slot c mod S, version (c div S) mod 2), so every N-th packet completes a
slot and is multicast as N RESULTs.

    python tests/p4/bench_aggregation.py [K ...]

(2 and 8 workers, 4000 chunks each.)

(``ina bench engine`` injects one packet with no table entries, which measures only the
parse and the ina_job miss of this program.)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from agg_frames import AGGREGATOR_IP, Agg, contribution, worker

PROGRAM = Path(__file__).resolve().parents[2] / "p4" / "aggregation.p4"


def build_switch(k: int, workers: int, slots: int) -> Any:
    """A switch running the program with job 1 on ports 1..workers."""
    from switch.engine.runtime import Exact
    from switch.frontend import compile_file
    from switch.v1model import V1Switch

    sw = V1Switch(compile_file(str(PROGRAM), [], {"INA_K": str(k), "INA_SLOTS": str(slots)}))
    for i in range(workers):
        sw.table_add("ina_job", [Exact(1), Exact(i + 1)], "ina_child",
                     [i, workers, 1, 0, 1, 0, 1])
        w = worker(i + 1)
        sw.table_add("ina_result_rewrite", [Exact(w.port)], "set_dst", [w.mac, w.ip, AGGREGATOR_IP])
    sw.mc_group_set(1, [(i + 1, 0) for i in range(workers)])
    return sw


def measure(k: int = 64, workers: int = 2, slots: int = 256, chunks: int = 10000,
            *, quiet: bool = False) -> tuple[float, int]:
    """Inject ``chunks`` chunks from every worker; returns (contributions/s, packets out)."""
    sw = build_switch(k, workers, slots)
    frames = []
    for c in range(chunks):
        values = [(c * 7 + lane) % 1000 for lane in range(k)]
        for i in range(workers):
            agg = Agg(1, c % slots, (c // slots) % 2, c, values)
            frames.append((i + 1, contribution(worker(i + 1), agg)))
    inject = sw.inject
    out = 0
    start, cpu = time.perf_counter(), time.process_time()
    for port, frame in frames:
        out += len(inject(port, frame))
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    rate = len(frames) / elapsed if elapsed > 0 else float("inf")
    if not quiet:
        # on a busy machine the CPU-time rate is the steadier figure
        print(f"K={k:2d}, {workers} workers: {len(frames)} contributions in {elapsed:.2f} s: "
              f"{rate:,.0f} contributions/s ({len(frames) / cpu if cpu > 0 else 0:,.0f} per "
              f"CPU-second), {out} RESULTs out")
    return rate, out


def main(argv: list[str]) -> int:
    for k in [int(a) for a in argv] or [8, 64]:
        for workers in (2, 8):
            measure(k, workers, chunks=4000)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
