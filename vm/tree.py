"""The project's files as the VM gets them: in a git checkout, what git tracks and the
untracked files it does not ignore (a fresh clone plus the edits not yet committed);
elsewhere, every file but the virtualenv, ``build/``, ``runs/`` and caches."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

LEFT_OUT = {".git", ".venv", "build", "runs", "__pycache__", ".pytest_cache", ".mypy_cache",
            ".ruff_cache"}


def project_files(root: Path) -> list[str]:
    """The files' paths relative to ``root``, sorted."""
    if (root / ".git").exists() and shutil.which("git"):
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], capture_output=True, check=True).stdout
        names = {name for name in out.decode().split("\0") if name}
        # A tracked file deleted in the work tree is not part of the tree.
        return sorted(n for n in names if (root / n).is_file() or (root / n).is_symlink())
    found = []
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in LEFT_OUT and not d.endswith(".egg-info")]
        found += [str((Path(top) / f).relative_to(root)) for f in files]
    return sorted(found)


def copy_project(root: Path, dest: Path) -> None:
    """Copy the project's files into ``dest`` (modes kept, symbolic links as links)."""
    for name in project_files(root):
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, target, follow_symlinks=False)


def pack(root: Path, out: Path, job: str | None = None) -> None:
    """The tar the VM reads at boot (``vm/guest/ina-vm-job``): ``project/`` with the
    project's files and, when given, ``job.sh``, the shell commands to run in it."""

    def as_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info

    with tarfile.open(out, "w", format=tarfile.GNU_FORMAT) as tar:
        for name in project_files(root):
            tar.add(root / name, arcname=f"project/{name}", recursive=False, filter=as_root)
        if job is not None:
            data = job.encode()
            info = as_root(tarfile.TarInfo("job.sh"))
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
