"""``ina demo``: a short in-network all-reduce on the built-in switch.

Four Mininet hosts around one ``ina switch`` running ``p4/aggregation.p4``: the
controller pushes the program, installs routes, static ARP and one job; each host runs
an ``ina agent`` that all-reduces 100,000 float32 values through the switch; the demo
checks every result against the exact sum and prints the figures. The run directory
(``runs/`` in the working directory) keeps ``results.json`` and the switch log.
Needs root (Mininet).
"""

from __future__ import annotations

import sys

DEMO_SIZE = 100_000


def run_demo(runs_dir: str = "runs") -> int:
    from experiments.allreduce_net import RunError, need_root
    from experiments.run_allreduce import RunOptions, format_summary, run_allreduce

    why = need_root()
    if why:
        print(f"ina demo: {why}; run it as root (sudo make demo)", file=sys.stderr)
        return 1
    options = RunOptions(topo="star,4", size=DEMO_SIZE, dist="normal", check=True,
                         runs_dir=runs_dir)
    print("ina demo: in-network all-reduce on a Mininet star of 4 hosts around the "
          "built-in switch (p4/aggregation.p4)", flush=True)
    try:
        results = run_allreduce(options)
    except (RunError, OSError) as e:
        print(f"ina demo: error: {e}", file=sys.stderr)
        return 1
    print(format_summary(results))
    counters = results["switch_counters"].get("s1")
    if counters:
        rx = sum(p["rx_packets"] for p in counters["ports"])
        tx = sum(p["tx_packets"] for p in counters["ports"])
        print(f"  switch s1: {rx} packets in, {tx} packets out")
    return 0 if results["ok"] else 1
