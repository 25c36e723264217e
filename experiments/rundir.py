"""Run directories, and what makes a result file self-describing (as pyperf's are):
the git revision and the machine it was measured on. ``experiments.results`` writes
the results into them."""

from __future__ import annotations

import os
import platform
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


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


def cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return None


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    return {
        "hostname": platform.node(),
        "system": f"{platform.system()} {platform.release()}",
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "cpu_model": cpu_model(),
        "memory_bytes": memory_bytes(),
        "python": platform.python_version(),
    }


@dataclass
class RunDir:
    """One run's directory: ``results.json``, ``results.csv`` and the run's logs."""

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
