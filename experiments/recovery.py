"""``ina recovery``: the README's recovery table, measured.

Runs every scenario of ``SCENARIOS`` (an ``ina run`` point with one fault, 10 Mbit/s
links, K = 256, the result checked) on each target (the built-in switch, and BMv2
where it is installed, with fewer values: it aggregates a few thousand contributions a
second), all in one run directory, and prints one row per scenario and target: how
long the controller took to detect the fault and by what, how long after that the job
moved again, the wire chunks resent, what it went on with, its completion time against
the model's fault-free one, and its result. ``--publish DIR`` copies the results
(less ``UNPUBLISHED``) and the timeline figure of the first scenario (goodput over
time, the fault marked) into DIR and rewrites the README's block between
``recovery:begin`` and ``recovery:end``.
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FIGURE = "timeline.png"
BEGIN, END = "<!-- recovery:begin -->", "<!-- recovery:end -->"
UNPUBLISHED = ("workers", "monitor")
"""What the published results leave out of every measurement (the run directory keeps
it): every worker's own stats and the fidelity monitor's samples, most of the bytes."""


@dataclass(frozen=True)
class Scenario:
    name: str
    topo: str
    fault: str
    size: int = 1_000_000
    bmv2_size: int | None = 150_000  # None: not on BMv2
    hold_s: float = 10.0


SCENARIOS = [
    Scenario("a link of the job's tree", "leafspine,2,2,2", "link s1-s3 down at 1s"),
    Scenario("the tree's root switch dies", "leafspine,2,2,2", "switch s3 down at 1s"),
    Scenario("the fabric's root dies, 16 workers", "fattree,4", "switch s1 down at 1s",
             size=300_000, bmv2_size=50_000),
    Scenario("the only switch restarts", "star,4", "switch s1 restart at 1s"),
    Scenario("the controller restarts", "star,4", "controller restart at 1s"),
    Scenario("a worker is cut off for good", "star,4", "link h1-s1 down at 1s",
             hold_s=2.0),
]


def run_recovery(targets: list[str], runs_dir: str = "runs",
                 publish: str | None = None) -> int:
    from experiments.allreduce_net import need_root, target_missing
    from experiments.options import RunError, RunOptions
    from experiments.progress import Progress
    from experiments.results import new_document, write_results
    from experiments.run_allreduce import estimate_seconds, run_sweep
    from experiments.rundir import RunDir
    from experiments.sweep import Sweep

    why = need_root()
    if why:
        print(f"ina recovery: {why}; run it as root", file=sys.stderr)
        return 1
    usable = []
    for target in targets:
        missing = target_missing(target)
        if missing:
            print(f"ina recovery: skipping {target}: {missing}", file=sys.stderr)
        else:
            usable.append(target)
    run_dir = RunDir.create(Path(runs_dir).resolve(), "recovery")
    doc = new_document({"name": "recovery", "scenarios": [s.__dict__ for s in SCENARIOS]},
                       ["ina", "recovery", *sys.argv[2:]])
    doc["run_dir"] = str(run_dir.path)
    for target in usable:
        for s in SCENARIOS:
            size = s.size if target == "builtin" else s.bmv2_size
            if size is None:
                continue
            options = RunOptions(topo=s.topo, target=target, size=size, bw=10, k=256,
                                 check=True, faults=(s.fault,), hold_s=s.hold_s,
                                 runs_dir=str(run_dir.path))
            sweep = Sweep(base=options, name=f"{target}-{s.topo.replace(',', '')}")
            print(f"{s.name}: {s.topo}, {s.fault}, {target}", flush=True)
            try:
                outcome = run_sweep(sweep, Progress(sweep.points(), tty=False,
                                                    estimate=estimate_seconds))
            except RunError as e:
                print(f"ina recovery: error: {e}", file=sys.stderr)
                return 1
            [m] = outcome.measurements
            m["index"] = len(doc["measurements"])
            m["scenario"] = s.name
            doc["measurements"].append(m)
            write_results(run_dir.path, doc)
    print()
    print(recovery_table(doc))
    from experiments.plot import _pyplot, plot_goodput_over_time

    plt = _pyplot()
    fig = plot_goodput_over_time(plt, doc["measurements"][:1])
    if fig is not None:
        fig.savefig(run_dir.path / FIGURE, dpi=120)
        plt.close(fig)
        print(f"\nfigure: {run_dir.path / FIGURE}")
    print(f"results: {run_dir.path}/results.json")
    if publish:
        publish_recovery(run_dir.path, Path(publish))
        print(f"published: {publish}/results.json, {publish}/{FIGURE}, README.md")
    return 0 if all(_as_expected(m) for m in doc["measurements"]) else 1


def _as_expected(m: dict[str, Any]) -> bool:
    """A scenario went as it should: exact, or (cut off for good) failed naming the
    partition."""
    faults = m.get("faults") or []
    if any(f.get("job_error") and "split into" in f["job_error"] for f in faults):
        return not m["ok"]
    return bool(m["ok"])


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def recovery_table(doc: dict[str, Any], markdown: bool = False) -> str:
    from experiments.show import format_table
    from experiments.sweep import compact_count

    rows = []
    for m in doc["measurements"]:
        [f] = m.get("faults") or [{}]
        o = m["options"]
        if f.get("job_error"):
            went, result = "failed (partition named)", "no result"
        else:
            went = f.get("algorithm") or ("ina, no change" if m["ok"] else "-")
            if f.get("algorithm") == "ina":
                went = f"ina, root {f['root']}"
            check = m.get("check") or {}
            result = "exact" if check.get("ok") else ("FAILED" if check else "-")
        model = (m.get("model") or {}).get("seconds")
        rows.append([m.get("scenario", "?"), f"{o['topo']}: {f.get('fault', '?')}",
                     o["target"], compact_count(o["size"]), _s(f.get("detection_s")),
                     f.get("detected_by") or "-", _s(f.get("progress_s")),
                     "-" if f.get("chunks_resent") is None else str(f["chunks_resent"]),
                     went, _s(m.get("completion_s")), _s(model), result])
    return format_table(["scenario", "fault", "switch", "values", "detected after (s)",
                         "by", "moving after (s)", "chunks resent", "went on with",
                         "time (s)", "model (s)", "result"], rows, markdown)


def readme_block(doc: dict[str, Any], figure: str) -> str:
    machine = doc["machine"]
    runs = doc["measurements"]
    bound = sum(1 for m in runs if m.get("cpu_bound"))
    busy = (f" {bound} of the {len(runs)} runs were cpu_bound (the fidelity monitor saw "
            "the machine's cores busy): their times describe the emulator as much as the "
            "network." if bound else "")
    return "\n".join([
        BEGIN,
        f"Measured by `ina recovery` on {machine.get('cpus')} cores "
        f"({machine.get('cpu_model') or 'unknown CPU'}), git "
        f"{doc['git_revision'][:12]}, {doc['time'][:10]}; 10 Mbit/s links, K = 256, "
        "probes every 100 ms, windows of 64 chunks on the built-in switch and 16 on BMv2; "
        "detected after: "
        "from the injection; moving after: from the detection; model: the alpha-beta "
        "model's time without the fault." + busy,
        "", recovery_table(doc, markdown=True), "",
        f"![Goodput over time of the first row's run, the fault marked]({figure})",
        END])


def publish_recovery(run_dir: Path, out: Path, readme: Path | None = None) -> None:
    from experiments.results import load_results
    from ina.demo import figure_link, replace_block

    readme = readme or README
    out.mkdir(parents=True, exist_ok=True)
    doc = json.loads((run_dir / "results.json").read_text())
    for m in doc["measurements"]:  # the table's figures and the faults' records stay
        for key in UNPUBLISHED:
            m.pop(key, None)
    (out / "results.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    if (run_dir / FIGURE).exists():
        shutil.copyfile(run_dir / FIGURE, out / FIGURE)
    block = readme_block(load_results(out), figure_link(out / FIGURE, readme))
    readme.write_text(replace_block(readme.read_text(), block, BEGIN, END))


RECOVERY_HELP = (
    "Measure the README's recovery table: every scenario (an ina run point with one "
    "fault, 10 Mbit/s links, K = 256, the result checked) on each target, all in one "
    "run directory; print one row per scenario and target: how long the controller took "
    "to detect the fault and by what, how long after that the job moved again, the wire "
    "chunks resent, what it went on with, its completion time against the model's "
    "fault-free one, and its result.")


def add_recovery_parser(verbs: Any) -> None:
    p = verbs.add_parser("recovery", help="measure the README's recovery table (root)",
                         description=RECOVERY_HELP)
    p.add_argument("--target", default="builtin,bmv2", metavar="T[,T]",
                   help="the switches (default builtin,bmv2: BMv2 where installed)")
    p.add_argument("--runs-dir", default="runs", metavar="DIR",
                   help="where the run directory goes (default runs/)")
    p.add_argument("--publish", metavar="DIR",
                   help="copy the results and the figure into DIR and rewrite the "
                        "README's recovery block from them")
    p.set_defaults(func=cmd_recovery)


def cmd_recovery(args: Any) -> int:
    from experiments.jobspec import TARGETS

    targets = [t.strip() for t in args.target.split(",") if t.strip()]
    bad = [t for t in targets if t not in TARGETS]
    if bad or not targets:
        print(f"ina recovery: error: --target {args.target}: the targets are "
              f"{', '.join(TARGETS)}", file=sys.stderr)
        return 2
    return run_recovery(targets, args.runs_dir, args.publish)
