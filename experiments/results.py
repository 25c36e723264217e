"""A run directory's results: ``results.json`` (everything) and ``results.csv`` (a flat
row per measurement for spreadsheets and pandas).

``results.json`` (version 2)::

    {"version": 2, "kind": "allreduce", "time": ..., "git_revision": ..., "machine": {...},
     "versions": {"python": ..., "numpy": ..., "mininet": ..., "kernel": ..., ...},
     "command": [...], "sweep": {...}, "ok": true,
     "measurements": [{"point": {"topo", "algo", "size", "bw", "loss", "repeat"},
                       "options": {...}, "ok", "errors", "workers_count",
                       "completion_s", "goodput_mbps", "bytes_sent_per_host", ...,
                       "model": {...}, "monitor": {...}, "cpu_bound", ...}, ...]}

``kind`` is ``allreduce`` for ``ina run`` and ``train`` for ``ina train``, whose
measurements are training runs (``experiments.train_results`` lists their fields and
CSV columns; a document without ``kind`` is ``allreduce``).

The runner writes both files after every point, so an interrupted sweep keeps what it
measured. ``ina show`` and ``ina plot`` only read them (``load_results``).
"""

from __future__ import annotations

import csv
import importlib.metadata
import json
import platform
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from experiments.rundir import git_revision, machine

RESULTS_VERSION = 2
RESULTS_JSON = "results.json"
RESULTS_CSV = "results.csv"
PACKAGES = ("ina-emulator", "numpy", "scapy", "grpcio", "p4runtime", "lark", "scikit-learn",
            "torch")
TOOLS = {"simple_switch_grpc": ["--version"], "p4c-bm2-ss": ["--version"], "tc": ["-V"]}


class ResultsError(ValueError):
    """A run directory that cannot be read; the message says which file and why."""


def _tool_version(name: str, args: list[str]) -> str | None:
    if shutil.which(name) is None:
        return None
    try:
        proc = subprocess.run([name, *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = (proc.stdout or proc.stderr).strip().splitlines()
    return lines[-1].strip() if lines else None


def software_versions() -> dict[str, str | None]:
    """The versions that shaped the figures: Python packages, Mininet, the kernel
    (htb) and, where installed, BMv2, p4c and iproute2."""
    out: dict[str, str | None] = {"python": platform.python_version(),
                                  "kernel": platform.release()}
    for pkg in PACKAGES:
        try:
            out[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            out[pkg] = None
    try:
        from mininet.net import VERSION

        out["mininet"] = str(VERSION)
    except ImportError:
        out["mininet"] = None
    for tool, args in TOOLS.items():
        out[tool] = _tool_version(tool, args)
    return out


def new_document(sweep: dict[str, Any], command: list[str], kind: str = "allreduce"
                 ) -> dict[str, Any]:
    return {
        "version": RESULTS_VERSION,
        "kind": kind,
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "git_revision": git_revision(),
        "machine": machine(),
        "versions": software_versions(),
        "command": command,
        "sweep": sweep,
        "ok": True,
        "measurements": [],
    }


# --------------------------------------------------------------------- CSV

CSV_COLUMNS: dict[str, Any] = {
    "index": lambda m: m["index"],
    "topo": lambda m: m["point"]["topo"],
    "workers": lambda m: m.get("workers_count"),
    "algo": lambda m: m["point"]["algo"],
    "size": lambda m: m["point"]["size"],
    "bytes": lambda m: 4 * m["point"]["size"],
    "bw_mbps": lambda m: m["point"]["bw"],
    "loss": lambda m: m["point"]["loss"],
    "repeat": lambda m: m["point"]["repeat"],
    "target": lambda m: m["options"]["target"],
    "k": lambda m: m["options"]["k"],
    "jobs": lambda m: len(m.get("jobs") or []),  # several: seconds until the last ended
    "ok": lambda m: m["ok"],
    "error": lambda m: "; ".join(m["errors"]),
    "seconds": lambda m: m.get("completion_s"),
    "goodput_mbps": lambda m: m.get("goodput_mbps"),
    "algbw_mbps": lambda m: m.get("algbw_mbps"),
    "busbw_mbps": lambda m: m.get("busbw_mbps"),
    "bytes_sent_per_host": lambda m: m.get("bytes_sent_per_host"),
    "bytes_received_per_host": lambda m: m.get("bytes_received_per_host"),
    "wire_bytes_sent_per_host": lambda m: m.get("wire_bytes_sent_per_host"),
    "model_seconds": lambda m: (m.get("model") or {}).get("seconds"),
    "model_bytes_sent_per_host": lambda m: (m.get("model") or {}).get("bytes_sent_per_host"),
    "model_wire_bytes_sent_per_host":
        lambda m: (m.get("model") or {}).get("wire_bytes_sent_per_host"),
    "cpu_bound": lambda m: m.get("cpu_bound"),
    "switch_cpu_mean": lambda m: _cpu(m, "switch"),
    "agent_cpu_mean": lambda m: _cpu(m, "agent"),
    "machine_cpu_mean": lambda m: (m.get("monitor") or {}).get("machine_cpu_mean"),
    "busiest_link_utilization":
        lambda m: (m.get("monitor") or {}).get("busiest_link_utilization"),
}


def _cpu(m: dict[str, Any], role: str) -> float | None:
    """The highest mean CPU use (cores) among the processes of ``role``."""
    procs = [p["cpu_mean"] for p in (m.get("monitor") or {}).get("processes", [])
             if p["role"] == role]
    return max(procs) if procs else None


def csv_rows(doc: dict[str, Any], columns: dict[str, Any] | None = None
             ) -> list[dict[str, Any]]:
    columns = CSV_COLUMNS if columns is None else columns
    return [{name: get(m) for name, get in columns.items()} for m in doc["measurements"]]


def write_results(run_dir: Path, doc: dict[str, Any]) -> None:
    """``results.json`` and ``results.csv`` in ``run_dir`` (replaced whole)."""
    doc["ok"] = all(m["ok"] for m in doc["measurements"])
    tmp = run_dir / (RESULTS_JSON + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    tmp.replace(run_dir / RESULTS_JSON)
    columns = CSV_COLUMNS
    if doc.get("kind") == "train":
        from experiments.train_results import TRAIN_CSV_COLUMNS as columns
    with open(run_dir / RESULTS_CSV, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(columns))
        writer.writeheader()
        writer.writerows(csv_rows(doc, columns))


def load_results(run_dir: str | Path) -> dict[str, Any]:
    """The results document of a run directory (or of a ``results.json`` path)."""
    path = Path(run_dir)
    if path.is_dir():
        path = path / RESULTS_JSON
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such file (is {run_dir} a run directory of "
                           f"'ina run'?)") from None
    except OSError as e:
        raise ResultsError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ResultsError(f"{path}: not JSON: {e}") from None
    if not isinstance(doc, dict) or doc.get("version") != RESULTS_VERSION:
        found = doc.get("version") if isinstance(doc, dict) else None
        raise ResultsError(f"{path}: results version {found}, expected {RESULTS_VERSION} "
                           f"(written by another version of 'ina run')")
    if not isinstance(doc.get("measurements"), list):
        raise ResultsError(f"{path}: no list of measurements")
    return doc
