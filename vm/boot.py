"""``make vm-test`` and ``make vm-shell``: boot the image ``make vm`` built (``build/vm``)
with qemu, headless.

    python3 -m vm.boot test [-- PYTEST_ARGS...]   the test suite inside; its exit status
    python3 -m vm.boot run -- COMMAND...          a command in the project, as root
    python3 -m vm.boot shell                      a login prompt on the serial console
    python3 -m vm.boot kvm                        whether KVM works here, or why not

Every boot gives the VM the current tree (``vm.tree.pack``, a tar on a second disk): the
guest copies it over the image's copy of the project, runs ``./setup.sh`` there and then
the job (``vm/guest/ina-vm-job``), whose output comes back on the second serial port as
it is written. The disk's writes go to a temporary overlay (qemu's snapshot mode), so the
image never changes and each boot starts from it. Exit status: the job's, or 125 when the
VM could not run it (no KVM, no image, the VM stopped first).
"""

from __future__ import annotations

import argparse
import os
import re
import select
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from vm import kvm, tree

ROOT = Path(__file__).resolve().parents[1]
IMAGE_DIR = ROOT / "build" / "vm"
CONSOLE_LOG = ROOT / "build" / "vm-console.log"
CANNOT_RUN = 125
# The guest's last line, also when the job's output did not end its own line.
MARKER = re.compile(rb"ina-vm: exit status (\d+)\r?$")


class BootError(RuntimeError):
    """The VM cannot run the job; the message says why."""


@dataclass(frozen=True)
class Machine:
    """How the VM is started."""
    image: Path = IMAGE_DIR
    accel: str = "kvm"
    memory: str = "6G"
    cpus: int = 2

    def argv(self, job_disk: Path, append: str = "") -> list[str]:
        for name in ("image.qcow2", "vmlinuz", "initrd.img"):
            if not (self.image / name).exists():
                raise BootError(f"no VM image in {self.image} (its {name} is missing): "
                                "build it with `make vm`")
        qemu = shutil.which("qemu-system-x86_64")
        if qemu is None:
            raise BootError("qemu-system-x86_64 is missing (Debian: apt-get install "
                            "qemu-system-x86)")
        if self.accel == "kvm":
            problem = kvm.problem()
            if problem:
                raise BootError(f"KVM is not usable here: {problem}. `make vm-test "
                                "VM_ACCEL=tcg` (--accel tcg) emulates the processor "
                                "instead, many times slower")
            accel = ["-accel", "kvm", "-cpu", "host"]
        else:
            accel = ["-accel", "tcg", "-cpu", "max"]
        cmdline = "root=/dev/vda rw console=ttyS0 panic=-1 " + append
        return [qemu, "-nodefaults", "-no-user-config", "-no-reboot", "-display", "none",
                "-machine", "q35", *accel, "-smp", str(self.cpus), "-m", self.memory,
                "-kernel", str(self.image / "vmlinuz"),
                "-initrd", str(self.image / "initrd.img"), "-append", cmdline.strip(),
                "-drive", f"file={self.image / 'image.qcow2'},if=virtio,format=qcow2,"
                          "snapshot=on",
                "-drive", f"file={job_disk},if=virtio,format=raw,readonly=on",
                "-nic", "user,model=virtio-net-pci", "-device", "virtio-rng-pci"]


def _console_tail(path: Path, lines: int = 20) -> str:
    try:
        text = path.read_text(errors="replace").replace("\r", "")
    except OSError:
        return "    (no console log)"
    return "\n".join(f"    {line}" for line in text.strip().splitlines()[-lines:])


def run_job(machine: Machine, job: str, console: Path = CONSOLE_LOG,
            timeout: float | None = None) -> int:
    """Boot, run ``job`` (shell commands, in the project, as root) and stream its output to
    stdout; its exit status."""
    console.parent.mkdir(parents=True, exist_ok=True)
    # The job writes to a pipe (vm/guest/ina-vm-job): pytest colours its output when it
    # comes to a terminal here, and Python writes it out as it goes.
    colours = f"export PY_COLORS={int(sys.stdout.isatty())} PYTHONUNBUFFERED=1\n"
    with tempfile.TemporaryDirectory(prefix="ina-vm-") as tmp:
        disk = Path(tmp) / "job.tar"
        tree.pack(ROOT, disk, colours + job)
        argv = machine.argv(disk) + ["-serial", f"file:{console}",
                                     "-chardev", "stdio,id=job,signal=off",
                                     "-serial", "chardev:job"]
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        try:
            status = _stream(proc, timeout)
        except KeyboardInterrupt:
            status = 130
        finally:
            if proc.poll() is None:
                proc.terminate()
            proc.wait()
    if status is None:
        raise BootError(f"the VM stopped before its job ended (qemu exit status "
                        f"{proc.returncode}); the end of its console ({console}):\n"
                        + _console_tail(console))
    return status


def _stream(proc: subprocess.Popen[bytes], timeout: float | None) -> int | None:
    """Copy the job's output to stdout until its exit status line; then give the guest a
    moment to power off."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    deadline = None if timeout is None else time.monotonic() + timeout
    out = sys.stdout.buffer
    line = b""
    while True:
        wait = None if deadline is None else max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            raise BootError(f"the job did not end within {timeout:g} s")
        data = os.read(fd, 65536)
        if not data:
            return None
        out.write(data)
        out.flush()
        *complete, line = (line + data).split(b"\n")
        for text in complete:
            match = MARKER.search(text)
            if match:
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    pass
                return int(match.group(1))


def shell(machine: Machine) -> int:
    """A login prompt on the serial console, in this terminal."""
    size = shutil.get_terminal_size()
    with tempfile.TemporaryDirectory(prefix="ina-vm-") as tmp:
        disk = Path(tmp) / "job.tar"
        tree.pack(ROOT, disk)
        argv = machine.argv(disk, f"quiet loglevel=3 ina.cols={size.columns} "
                                  f"ina.rows={size.lines}")
        print("vm: booting; `sudo poweroff` leaves, or Ctrl-a x at once (what the VM wrote "
              "is discarded)", flush=True)
        return subprocess.call(argv + ["-serial", "mon:stdio"])


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python3 -m vm.boot", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--accel", choices=("kvm", "tcg"), default="kvm",
                        help="kvm (default) or tcg, qemu's emulation of the processor "
                             "(no KVM needed, many times slower)")
    parser.add_argument("--memory", default="6G", help="the VM's memory (default 6G)")
    parser.add_argument("--cpus", type=int, default=2, help="its processors (default 2)")
    parser.add_argument("--image", type=Path, default=IMAGE_DIR,
                        help="the image's directory (default build/vm)")
    parser.add_argument("--console", type=Path, default=CONSOLE_LOG,
                        help="where the VM's console goes (default build/vm-console.log)")
    parser.add_argument("--timeout", type=float, metavar="SECONDS",
                        help="stop the VM when its job takes longer (default: no limit)")
    sub = parser.add_subparsers(dest="command", required=True)
    test = sub.add_parser("test", help="run the test suite (pytest -q ARGS) inside")
    test.add_argument("pytest_args", nargs="*", help="pytest's arguments, after --")
    run = sub.add_parser("run", help="run a command in the project, as root")
    run.add_argument("cmd", nargs="+", help="the command and its arguments, after --")
    sub.add_parser("shell", help="a login prompt on the serial console")
    sub.add_parser("kvm", help="whether KVM works here (exit status 0) or why not")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.command == "kvm":
        problem = kvm.problem()
        print(f"KVM is not usable here: {problem}" if problem else "KVM works (/dev/kvm)")
        return 1 if problem else 0
    machine = Machine(image=args.image, accel=args.accel, memory=args.memory,
                      cpus=args.cpus)
    try:
        if args.command == "shell":
            return shell(machine)
        if args.command == "test":
            job = "exec .venv/bin/pytest -q " + shlex.join(args.pytest_args)
        else:
            job = "exec " + shlex.join(args.cmd)
        return run_job(machine, job, args.console, args.timeout)
    except BootError as e:
        print(f"vm: error: {e}", file=sys.stderr)
        return CANNOT_RUN


if __name__ == "__main__":
    sys.exit(main())
