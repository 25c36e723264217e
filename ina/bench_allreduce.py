"""``ina bench allreduce [--bw MBPS] [--size N]``: in-network all-reduce speed.

Runs one all-reduce of ``size`` float32 values per worker on a Mininet star of four
hosts whose links are shaped to ``bw`` Mbit/s (htb), through the built-in switch, and
prints the completion time and the goodput (the tensor's bits over the completion
time) as a fraction of the link rate. Every worker sends and receives the whole
tensor (plus 12 header bytes per 256 value bytes, and Ethernet/IPv4/UDP framing)
over its own link, so the goodput can approach but not exceed the link rate.
Prints figures only; the run directory under ``runs/`` keeps the results. Needs root.
"""

from __future__ import annotations

import sys


def bench_allreduce(bw: float, size: int, runs_dir: str = "runs") -> int:
    from experiments.allreduce_net import RunError
    from experiments.run_allreduce import RunOptions, run_allreduce

    options = RunOptions(topo="star,4", size=size, bw=bw, check=True, runs_dir=runs_dir)
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
          f"{bw:g} Mbit/s, built-in switch")
    print(f"  completion time: {results['completion_s']:.3f} s")
    print(f"  goodput: {results['goodput_mbps']:.2f} Mbit/s = "
          f"{100 * results['goodput_fraction']:.1f}% of the link rate")
    print(f"  retransmissions: {retx}")
    print(f"  results: {results['run_dir']}/results.json")
    return 0
