"""Run directories: every run writes its parameters, the machine and the git revision
next to its results, so a result file is self-describing (as pyperf does)."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS_VERSION = 1


def git_revision(root: Path = ROOT) -> str:
    """The checked-out commit, with ``-dirty`` when the work tree has changes;
    ``unknown`` outside a git checkout."""
    try:
        rev = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True,
                               timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return rev + ("-dirty" if dirty else "")


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    return {
        "hostname": platform.node(),
        "system": f"{platform.system()} {platform.release()}",
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }


@dataclass
class RunDir:
    """One run's directory: ``results.json`` plus whatever logs the run leaves."""

    path: Path

    @classmethod
    def create(cls, base: Path | str, name: str) -> RunDir:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        path = Path(base) / f"{stamp}-{name}"
        n = 1
        while path.exists():
            n += 1
            path = Path(base) / f"{stamp}-{name}-{n}"
        path.mkdir(parents=True)
        return cls(path)

    def sub(self, name: str) -> Path:
        p = self.path / name
        p.mkdir(parents=True, exist_ok=True)
        return p

    def write_results(self, parameters: dict[str, Any], results: dict[str, Any]) -> Path:
        doc = {
            "version": RESULTS_VERSION,
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "git_revision": git_revision(),
            "machine": machine(),
            "parameters": parameters,
            "results": results,
        }
        out = self.path / "results.json"
        out.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
        return out
