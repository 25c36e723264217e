"""``ina bench allreduce [--bw MBPS] [--size N] [--window S] [--k K]``: all-reduce speed.

Runs one all-reduce of ``size`` float32 values per worker on a Mininet star of four
hosts whose links are shaped to ``bw`` Mbit/s (htb), through the built-in switch, and
prints the completion time and the goodput (the tensor's bits over the completion
time) as a fraction of the link rate. Every worker sends and receives the whole
tensor over its own link, in packets of K values (4 K bytes) with 12 + 42 bytes of
aggregation header and Ethernet/IPv4/UDP framing, so the goodput cannot exceed
4K / (4K + 54) of the link rate (82.6% for K = 64): the "wire maximum" printed.
``window`` is the workers' window (and the job's slots), ``k`` the values per packet.
Prints figures only; the run directory under ``runs/`` keeps the results. Needs root.
"""

from __future__ import annotations

import sys

from hosts.frame import FRAME_OVERHEAD
from hosts.wire import HEADER_SIZE


def wire_fraction(k: int) -> float:
    """The largest goodput over link rate that packets of ``k`` values allow."""
    return 4 * k / (4 * k + HEADER_SIZE + FRAME_OVERHEAD)


def bench_allreduce(bw: float, size: int, runs_dir: str = "runs", *, window: int = 64,
                    k: int = 64) -> int:
    from experiments.allreduce_net import RunError
    from experiments.run_allreduce import RunOptions, run_allreduce

    options = RunOptions(topo="star,4", size=size, bw=bw, check=True, runs_dir=runs_dir,
                         window=window, k=k)
    try:
        options.validate()
        results = run_allreduce(options)
    except (RunError, OSError) as e:
        print(f"ina bench allreduce: error: {e}", file=sys.stderr)
        return 1
    if not results["ok"]:
        print(f"ina bench allreduce: the run failed: {'; '.join(results['errors'])}",
              file=sys.stderr)
        return 1
    retx = sum(w["counters"]["retransmitted"] for w in results["workers"])
    print(f"all-reduce, star of 4 workers, {size} float32 values each, links "
          f"{bw:g} Mbit/s, built-in switch, K={k}, window {window}")
    print(f"  completion time: {results['completion_s']:.3f} s")
    print(f"  goodput: {results['goodput_mbps']:.2f} Mbit/s = "
          f"{100 * results['goodput_fraction']:.1f}% of the link rate "
          f"({100 * results['goodput_fraction'] / wire_fraction(k):.1f}% of the wire "
          f"maximum, {100 * wire_fraction(k):.1f}%)")
    print(f"  retransmissions: {retx}")
    print(f"  results: {results['run_dir']}/results.json")
    return 0
