"""The tests' VM (``make vm``, ``make vm-test``): the image builds, or the cached one is
reused, boots under KVM and runs an in-network all-reduce in Mininet inside, whose
result every worker gets exactly equal to the float64 sum of the inputs.

Slow: a cold cache builds the image (debootstrap, ./setup.sh in it: several minutes);
a warm one only boots it. Without a KVM that works it skips, unless ``VM_ACCEL=tcg`` (as
for ``make vm-test``) asks for qemu's emulation of the processor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
ACCEL = os.environ.get("VM_ACCEL") or "kvm"
# The job's limit in the VM: qemu's emulation of the processor is about ten times slower.
JOB_SECONDS = 900 if ACCEL == "kvm" else 3600
BEGIN, END = "--- results.json ---", "--- end ---"


def _why_not() -> str | None:
    if Path("/etc/ina-vm").exists():
        return "runs on the host, not inside the tests' VM"
    if os.geteuid() != 0:
        return "needs root (building the VM image: debootstrap, chroot)"
    if ACCEL == "tcg":
        return None
    kvm = subprocess.run([sys.executable, "-m", "vm.boot", "kvm"], cwd=ROOT,
                         capture_output=True, text=True)
    if kvm.returncode != 0:
        return f"needs KVM (or VM_ACCEL=tcg): {kvm.stdout.strip()}"
    return None


def test_allreduce_inside_the_vm(tmp_path: Path) -> None:
    why = _why_not()
    if why:
        pytest.skip(why)
    build = subprocess.run([sys.executable, "-m", "vm.image"], cwd=ROOT, capture_output=True,
                           text=True, timeout=3600)
    assert build.returncode == 0, build.stdout + build.stderr
    job = (".venv/bin/ina run --topo star,2 --size 20000 --dist ints --scaling pow2 --check "
           f"--runs-dir /tmp/runs && echo '{BEGIN}' && cat /tmp/runs/*/results.json && "
           f"echo '{END}'")
    proc = subprocess.run([sys.executable, "-m", "vm.boot", "--accel", ACCEL, "--console",
                           str(tmp_path / "console.log"), "--timeout", str(JOB_SECONDS),
                           "run", "--", "bash", "-c", job],
                          cwd=ROOT, capture_output=True, text=True, timeout=JOB_SECONDS + 300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    assert "check PASSED: bit-identical on every worker" in proc.stdout, proc.stdout
    text = proc.stdout.split(BEGIN, 1)[1].split(END, 1)[0]
    [measurement] = json.loads(text)["measurements"]
    assert measurement["ok"] and measurement["workers_count"] == 2
    check = measurement["check"]
    assert check["ok"] and check["bit_identical"] and check["exact"], check
    assert check["max_error"] == 0.0
    assert json.loads(text)["machine"]["hostname"] == "ina-vm"
    assert proc.stdout.rstrip().endswith("ina-vm: exit status 0")
