"""Whether KVM can run the VM here: not only whether ``/dev/kvm`` opens and creates a
virtual machine, but whether a guest's code runs at the processor's speed.

A nested ``/dev/kvm`` without hardware virtualization underneath (one that emulates the
guest's privileged code instruction by instruction) creates VMs like a real one, then
takes minutes to boot a kernel, or stops on an instruction its emulator lacks. So the
probe runs a tiny guest: a real-mode loop of ``LOOPS`` iterations that ends in ``hlt``,
which hardware virtualization runs in milliseconds."""

from __future__ import annotations

import ctypes
import fcntl
import mmap
import os
import signal
import struct
from types import FrameType

LOOPS = 10_000_000
# A real processor runs the loop in about 10 ms; an emulator takes seconds, and the
# probe stops it after SLOWEST.
SLOWEST = 1.0

KVM_GET_API_VERSION = 0xAE00
KVM_CREATE_VM = 0xAE01
KVM_GET_VCPU_MMAP_SIZE = 0xAE04
KVM_CREATE_VCPU = 0xAE41
KVM_SET_USER_MEMORY_REGION = 0x4020AE46
KVM_RUN = 0xAE80
KVM_GET_REGS = 0x8090AE81
KVM_SET_REGS = 0x4090AE82
KVM_GET_SREGS = 0x8138AE83
KVM_SET_SREGS = 0x4138AE84
KVM_EXIT_HLT = 5
KVM_EXIT_INTERNAL_ERROR = 17
EXIT_REASONS = {0: "unknown", 2: "I/O", 6: "MMIO", 8: "shutdown", 9: "failed entry",
                KVM_EXIT_INTERNAL_ERROR: "internal error"}

CODE_ADDRESS = 0x1000
# 16-bit real mode: mov ecx, LOOPS; again: dec ecx; jnz again; hlt
CODE = b"\x66\xb9" + struct.pack("<I", LOOPS) + b"\x66\x49\x75\xfc\xf4"


def problem() -> str | None:
    """Why KVM cannot run the VM here, or None when it can."""
    try:
        kvm = os.open("/dev/kvm", os.O_RDWR | os.O_CLOEXEC)
    except OSError as e:
        return f"/dev/kvm: {e.strerror}"
    fds = [kvm]
    try:
        version = fcntl.ioctl(kvm, KVM_GET_API_VERSION, 0)
        if version != 12:
            return f"/dev/kvm speaks KVM API version {version}, not 12"
        try:
            vm = fcntl.ioctl(kvm, KVM_CREATE_VM, 0)
        except OSError as e:
            return f"/dev/kvm cannot create a virtual machine: {e.strerror}"
        fds.append(vm)
        return _run_probe(kvm, vm, fds)
    except OSError as e:
        return f"/dev/kvm cannot run a guest: {e.strerror}"
    finally:
        for fd in fds:
            os.close(fd)


def _run_probe(kvm: int, vm: int, fds: list[int]) -> str | None:
    memory = mmap.mmap(-1, 0x10000)
    memory[CODE_ADDRESS:CODE_ADDRESS + len(CODE)] = CODE
    address = ctypes.addressof(ctypes.c_char.from_buffer(memory))
    region = struct.pack("<IIQQQ", 0, 0, 0, len(memory), address)
    fcntl.ioctl(vm, KVM_SET_USER_MEMORY_REGION, region)
    vcpu = fcntl.ioctl(vm, KVM_CREATE_VCPU, 0)
    fds.append(vcpu)
    run = mmap.mmap(vcpu, fcntl.ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0))
    sregs = bytearray(fcntl.ioctl(vcpu, KVM_GET_SREGS, bytes(312)))
    struct.pack_into("<Q", sregs, 0, 0)  # cs.base
    struct.pack_into("<H", sregs, 12, 0)  # cs.selector
    fcntl.ioctl(vcpu, KVM_SET_SREGS, bytes(sregs))
    regs = bytearray(fcntl.ioctl(vcpu, KVM_GET_REGS, bytes(144)))
    struct.pack_into("<QQ", regs, 16 * 8, CODE_ADDRESS, 0x2)  # rip, rflags
    fcntl.ioctl(vcpu, KVM_SET_REGS, bytes(regs))
    try:
        with _alarm(SLOWEST):
            fcntl.ioctl(vcpu, KVM_RUN, 0)
    except _TooSlow:
        return (f"/dev/kvm runs guest code far slower than the processor does: a loop of "
                f"{LOOPS:,} iterations, about 0.01 s with hardware virtualization, had not "
                f"ended after {SLOWEST:g} s (a /dev/kvm that emulates its guests)")
    finally:
        reason = struct.unpack_from("<I", run, 8)[0]
        run.close()
    if reason != KVM_EXIT_HLT:
        return (f"a guest's first instructions stopped with KVM exit "
                f"{EXIT_REASONS.get(reason, reason)} instead of running")
    return None


class _TooSlow(Exception):
    pass


class _alarm:
    """Interrupt the calling (main) thread's system call after ``seconds``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def __enter__(self) -> None:
        self.previous = signal.signal(signal.SIGALRM, self._ring)
        signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __exit__(self, *exc: object) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self.previous)

    @staticmethod
    def _ring(signum: int, frame: FrameType | None) -> None:
        raise _TooSlow
