"""``ina run``: one all-reduce experiment on a Mininet topology.

    ina run --topo star,4 --algo ina --size 100000 --check [--bw 100] [--loss 0.01]

Prints the completion time, the goodput and (with ``--check``) whether every worker's
result is bit-identical and within the quantization bound of the exact sum; writes
``results.json`` and the switch logs to a new directory under ``--runs-dir``. Exit
status 0 on success, 1 when the run or the check failed, 2 for bad options.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from experiments.algorithms import ALGORITHMS
from experiments.jobspec import TARGETS
from hosts.inputs import DISTRIBUTIONS
from hosts.wire import ALLOWED_K

PROG = "ina run"


def add_run_parser(verbs: Any) -> None:
    """Register ``ina run`` in the ``ina`` verbs."""
    p = verbs.add_parser("run", help="run an all-reduce experiment in Mininet (root)",
                         description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--topo", default="star,4", help="topology spec (default star,4)")
    p.add_argument("--algo", default="ina", choices=sorted(ALGORITHMS),
                   help="all-reduce algorithm (default ina)")
    p.add_argument("--size", type=int, default=100_000, help="values per worker")
    p.add_argument("--dist", default="normal", choices=list(DISTRIBUTIONS),
                   help="input distribution (default normal)")
    p.add_argument("--seed", type=int, default=0, help="input seed (default 0)")
    p.add_argument("--check", action="store_true",
                   help="check the results against the exact sum (exit 1 if wrong)")
    p.add_argument("--bw", type=float, metavar="MBPS", help="link rate in Mbit/s")
    p.add_argument("--loss", type=float, default=0.0, metavar="P",
                   help="drop P of the frames on every switch port, in and out")
    p.add_argument("--duplicate", type=float, default=0.0, metavar="P",
                   help="duplicate P of the frames on every switch port, in and out")
    p.add_argument("--target", default="builtin", choices=TARGETS,
                   help="the switch: builtin (ina switch) or bmv2 (simple_switch_grpc)")
    p.add_argument("--window", type=int, default=64, metavar="S", help="slots per job")
    p.add_argument("--k", type=int, default=64, choices=ALLOWED_K, help="values per packet")
    p.add_argument("--scaling", default="tight", choices=["tight", "pow2"],
                   help="quantizer scaling (pow2 sums integers exactly)")
    p.add_argument("--timeout", type=float, default=100.0, metavar="MS",
                   help="the agents' first retransmission timeout (default 100 ms)")
    p.add_argument("--runs-dir", default="runs", metavar="DIR",
                   help="where run directories go (default runs/)")
    p.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    from controller.errors import P4RuntimeClientError
    from controller.jobs import JobError
    from controller.topology import TopologyError
    from experiments.allreduce_net import RunError
    from experiments.run_allreduce import RunOptions, format_summary, run_allreduce
    from topologies.netutil import StartError
    from topologies.spec import TopoSpecError

    options = RunOptions(topo=args.topo, algo=args.algo, size=args.size, dist=args.dist,
                         seed=args.seed, check=args.check, bw=args.bw, loss=args.loss,
                         duplicate=args.duplicate, target=args.target, window=args.window,
                         k=args.k, scaling=args.scaling, timeout_ms=args.timeout,
                         runs_dir=args.runs_dir)
    try:
        options.validate()
    except RunError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    try:
        results = run_allreduce(options)
    except (RunError, StartError, TopoSpecError, TopologyError, JobError,
            P4RuntimeClientError, OSError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    print(format_summary(results))
    return 0 if results["ok"] else 1
