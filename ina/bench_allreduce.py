"""``ina bench allreduce``: in-network all-reduce speed under loss, as a table.

    ina bench allreduce [--topo SPEC ...] [--k K,K] [--loss P,P] [--bw MBPS,MBPS]
                        [--size N] [--window S] [--repeat R] [--runs-dir DIR]

Runs one all-reduce of ``size`` float32 values per worker for every combination of
the topologies (default ``star,4`` and ``star,8``: N = 4 and 8 workers), the values
per packet (default K = 64 and 256), the loss rates (default 0, 1% and 5% on every
switch port, both directions) and the link rates (default 20 Mbit/s: Mininet links
shaped with htb), through the built-in switch, with the results checked, and prints
one line per point (needs root). The columns:

* completion time and goodput (the tensor's bits over the completion time), as Mbit/s,
  as a share of the link rate and of the wire maximum: every worker sends and receives
  the whole tensor over its own link in packets of K values (4 K bytes) with 12 + 42
  bytes of aggregation header and Ethernet/IPv4/UDP framing, so the goodput cannot
  exceed 4K / (4K + 54) of the link rate (82.6% for K = 64, 95.0% for K = 256);
* the goodput as a share of the lossless point's of the same N, K and link rate;
* the packets the workers sent again, as a share of all they sent, and why: NACKs,
  fetches (a RESULT named a lost one) and timeouts (``hosts.protocol``);
* the agents' CPU time per wire chunk (the mean over workers of their process time
  during the all-reduce over the packets they sent once);
* ``cpu_bound`` when the fidelity monitor saw a saturated CPU (``experiments.monitor``):
  the figure measures the emulator then, not the network.

Every K is one sweep (one run directory under ``runs_dir``, one Mininet network per
topology); the points of one network run back to back.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from hosts.frame import FRAME_OVERHEAD
from hosts.wire import HEADER_SIZE

DEFAULT_TOPOS = ("star,4", "star,8")
DEFAULT_KS = ("64", "256")
DEFAULT_LOSSES = ("0", "0.01", "0.05")
DEFAULT_BWS = ("20",)
DEFAULT_SIZE = 300_000
PROG = "ina bench allreduce"


def wire_fraction(k: int) -> float:
    """The largest goodput over link rate that packets of ``k`` values allow."""
    return 4 * k / (4 * k + HEADER_SIZE + FRAME_OVERHEAD)


@dataclass(frozen=True)
class BenchRequest:
    """The command line, as given (lists as comma-separated text)."""

    topos: Sequence[str] = DEFAULT_TOPOS
    ks: Sequence[str] = DEFAULT_KS
    losses: Sequence[str] = DEFAULT_LOSSES
    bws: Sequence[str] = DEFAULT_BWS
    size: int | str = DEFAULT_SIZE
    window: int | str = 64
    repeat: int | str = 1
    runs_dir: str = "runs"


def split(values: Sequence[str]) -> list[str]:
    return [item for value in values for item in str(value).split(",")]


def build_sweeps(request: BenchRequest) -> list[Any]:
    """One validated ``experiments.sweep.Sweep`` per K; ``RunError`` names the first
    bad option."""
    from experiments.sweep import Setting, build_sweep

    common = {"topo": Setting(list(request.topos), "--topo"),
              "loss": Setting(split(request.losses), "--loss"),
              "bw": Setting(split(request.bws), "--bw"),
              "size": Setting(request.size, "--size"),
              "window": Setting(request.window, "--window"),
              "check": Setting(True, "--check"),
              "runs_dir": Setting(request.runs_dir, "--runs-dir"),
              "repeat": Setting(request.repeat, "--repeat")}
    sweeps = []
    for k in dict.fromkeys(split(request.ks)):
        sweep = build_sweep({**common, "k": Setting(k, "--k")}, name="bench")
        sweeps.append(replace(sweep, name=f"bench-k{sweep.base.k}"))
    return sweeps


# ------------------------------------------------------------------- the table


def _counters(m: dict[str, Any]) -> dict[str, float]:
    """The workers' counters summed (``cpu_seconds`` too)."""
    out: dict[str, float] = {}
    for w in m["workers"]:
        for name, value in (w.get("counters") or {}).items():
            if isinstance(value, int | float) and name not in ("srtt", "rto"):
                out[name] = out.get(name, 0) + value
    return out


def _key(o: dict[str, Any]) -> tuple[Any, ...]:
    return o["topo"], o["k"], o["bw"], o["size"]


def _lossless(measurements: list[dict[str, Any]]) -> dict[tuple[Any, ...], float]:
    """(topology, K, link rate, size) -> the mean goodput of its lossless points."""
    seen: dict[tuple[Any, ...], list[float]] = {}
    for m in measurements:
        o = m["options"]
        if o["loss"] == 0 and m["ok"] and m["goodput_mbps"]:
            seen.setdefault(_key(o), []).append(m["goodput_mbps"])
    return {key: sum(v) / len(v) for key, v in seen.items()}


HEADER = (f"{'N':>3} {'K':>4} {'link':>5} {'loss':>5} {'time s':>8} {'Mbit/s':>7} "
          f"{'link':>6} {'wire max':>8} {'lossless':>8} {'resent':>14} "
          f"{'NACK/fetch/timeout':>19} {'agent CPU':>11}")


def format_row(m: dict[str, Any], lossless: dict[tuple[Any, ...], float]) -> str:
    o = m["options"]
    lead = f"{m['workers_count'] or '?':>3} {o['k']:>4} {o['bw']:>5g} {o['loss']:>5.0%}"
    if not m["ok"] or m["completion_s"] is None:
        return f"{lead}  FAILED: {'; '.join(m['errors']) or 'no result'}"
    c = _counters(m)
    sent = c.get("sent", 0)
    resent = c.get("retransmitted", 0)
    share = f"{100 * resent / sent:.2f}%" if sent else "-"
    base = lossless.get(_key(o))
    of_lossless = f"{100 * m['goodput_mbps'] / base:.0f}%" if base else "-"
    link = m["goodput_fraction"]
    link_text = f"{100 * link:.1f}%" if link is not None else "-"
    wire_text = f"{100 * link / wire_fraction(o['k']):.1f}%" if link is not None else "-"
    once = sent - resent
    cpu = f"{1e6 * c['cpu_seconds'] / once:.0f} us/chunk" if once and "cpu_seconds" in c \
        else "-"
    why = f"{c.get('nacks', 0):.0f}/{c.get('fetches', 0):.0f}/{c.get('timeouts', 0):.0f}"
    line = (f"{lead} {m['completion_s']:>8.3f} {m['goodput_mbps']:>7.2f} {link_text:>6} "
            f"{wire_text:>8} {of_lossless:>8} {f'{resent:.0f} ({share})':>14} {why:>19} "
            f"{cpu:>11}")
    return line + ("  cpu_bound" if m["cpu_bound"] else "")


def format_table(measurements: list[dict[str, Any]], request: BenchRequest) -> str:
    first = measurements[0]["options"] if measurements else {}
    lines = [f"in-network all-reduce, built-in switch, {first.get('size', request.size)} "
             f"float32 values per worker, window {first.get('window', request.window)}; "
             f"links in Mbit/s, loss on every switch port in both directions", HEADER]
    lossless = _lossless(measurements)
    order = sorted(measurements, key=lambda m: (m["workers_count"] or 0, m["options"]["k"],
                                                m["options"]["bw"], m["options"]["loss"],
                                                m["index"]))
    lines += [format_row(m, lossless) for m in order]
    return "\n".join(lines)


# ------------------------------------------------------------------------ run


def bench_allreduce(request: BenchRequest, *, runner: Callable[..., Any] | None = None,
                    progress: bool = True,
                    command: Sequence[str] = ("ina", "bench", "allreduce")) -> int:
    """Run the benchmark and print its table; exit status 0, or 1 (bad option, a
    point that failed). ``runner``: ``run_sweep``'s network runner (tests);
    ``command``: the command line the results record."""
    from experiments.options import RunError
    from experiments.progress import Progress
    from experiments.run_allreduce import estimate_seconds, run_sweep

    try:
        sweeps = build_sweeps(request)
    except RunError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    measurements: list[dict[str, Any]] = []
    run_dirs = []
    ok = True
    for sweep in sweeps:
        points = sweep.points()
        bar = Progress(points, estimate=estimate_seconds) if progress else None
        try:
            outcome = run_sweep(sweep, bar, command=list(command),
                                runner=runner)  # type: ignore[arg-type]
        except RunError as e:
            print(f"{PROG}: error: {e}", file=sys.stderr)
            return 1
        measurements += outcome.measurements
        run_dirs.append(str(outcome.run_dir))
        ok = ok and outcome.ok
    print()
    print(format_table(measurements, request))
    print(f"results: {', '.join(f'{d}/results.json' for d in run_dirs)}")
    return 0 if ok else 1
