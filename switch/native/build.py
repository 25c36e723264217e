"""Compiling generated C into a shared object, cached by a hash of (source, compiler
version, flags) under ``$XDG_CACHE_HOME/ina/native`` (``~/.cache/ina/native``), and
loading it with ``ctypes``.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

FLAGS = ("-O2", "-shared", "-fPIC", "-std=gnu11", "-fno-strict-aliasing", "-w")


class BuildError(Exception):
    """No C compiler, or the compiler failed (the message says which and why)."""


def compiler() -> str | None:
    """The C compiler to use: ``$CC`` or ``cc``/``gcc`` on the PATH (None: none)."""
    cc = os.environ.get("CC")
    if cc:
        return shutil.which(cc)
    return shutil.which("cc") or shutil.which("gcc")


@functools.lru_cache(maxsize=4)
def _version(cc: str) -> str:
    try:
        out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30,
                             check=False)
    except OSError as e:
        raise BuildError(f"cannot run the C compiler {cc}: {e.strerror}") from None
    return out.stdout.strip()


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ina" / "native"


def build(source: str) -> Path:
    """The shared object of ``source``, compiled now or found in the cache."""
    cc = compiler()
    if cc is None:
        raise BuildError("no C compiler found (install gcc, or set CC)")
    key = hashlib.sha256("\0".join([source, _version(cc), *FLAGS]).encode()).hexdigest()[:32]
    d = cache_dir()
    so = d / f"p4_{key}.so"
    if so.exists():
        return so
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise BuildError(f"cannot create the cache directory {d}: {e.strerror}") from None
    with tempfile.TemporaryDirectory(prefix="ina-native-") as tmp:
        c = Path(tmp) / "p4.c"
        c.write_text(source)
        out = Path(tmp) / "p4.so"
        r = subprocess.run([cc, *FLAGS, "-o", str(out), str(c)], capture_output=True,
                           text=True, timeout=300, check=False)
        if r.returncode != 0:
            first = next((ln for ln in r.stderr.splitlines() if "error" in ln),
                         r.stderr.strip()[:300])
            raise BuildError(f"{cc} failed on the generated C: {first}")
        part = d / f".{so.name}.{os.getpid()}"
        shutil.copyfile(out, part)
        os.replace(part, so)  # atomic: another process may build the same at once
    return so


def load(path: Path) -> ctypes.CDLL:
    return ctypes.CDLL(str(path))


__all__ = ["BuildError", "build", "cache_dir", "compiler", "load"]
