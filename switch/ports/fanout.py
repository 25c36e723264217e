"""PACKET_FANOUT groups: the kernel spreads one interface's received frames over the
sockets of several processes, each a pipeline of the switch.

The group's mode is PACKET_FANOUT_CBPF: a classic BPF program, run by the kernel on
every frame, returns the index of the socket that gets it (modulo the number of
sockets). ``steering_program`` assembles it from a ``Steering`` rule
(``switch.v1model.partition``): when the frame meets the rule's conditions, the value
of its key field, else 0. So every frame with one key goes to one socket, and every
frame of another protocol to the first socket of the group (the one that created it).

The first socket creates the group with a unique id the kernel chooses
(PACKET_FANOUT_FLAG_UNIQUEID) and sets the program; ``fanout_id`` reads the id, and the
other sockets join with it. A socket joins after it is bound to its interface.
"""

from __future__ import annotations

import ctypes
import socket
import struct
from collections.abc import Sequence
from typing import Protocol

SOL_PACKET = 263
PACKET_FANOUT = 18
PACKET_FANOUT_DATA = 22
PACKET_FANOUT_CBPF = 6
PACKET_FANOUT_FLAG_UNIQUEID = 0x2000

# classic BPF opcodes (linux/filter.h)
BPF_LD_W_ABS = 0x20
BPF_LD_H_ABS = 0x28
BPF_LD_B_ABS = 0x30
BPF_ALU_RSH_K = 0x74
BPF_ALU_AND_K = 0x54
BPF_JEQ_K = 0x15
BPF_RET_A = 0x16
BPF_RET_K = 0x06

#: loads at SKF_LL_OFF + n read byte n of the frame: where the kernel runs a fanout
#: program, plain offsets count from the network header (after Ethernet's)
SKF_LL_OFF = -0x200000

Instruction = tuple[int, int, int, int]  # code, jt, jf, k


class FrameFieldLike(Protocol):
    """A field of a frame (``switch.v1model.partition.FrameField``)."""

    @property
    def offset(self) -> int:  # in bits from the frame's start
        ...

    @property
    def width(self) -> int:
        ...


class SteeringLike(Protocol):
    """A steering rule (``switch.v1model.partition.Steering``)."""

    @property
    def conditions(self) -> Sequence[tuple[FrameFieldLike, int, int]]:
        ...

    @property
    def key(self) -> FrameFieldLike:
        ...


def _load(f: FrameFieldLike) -> list[Instruction]:
    """Instructions that leave the field's value in the accumulator."""
    first, last = f.offset // 8, (f.offset + f.width - 1) // 8
    span = last - first + 1
    if span > 4:
        raise ValueError(f"a field of {f.width} bits at bit {f.offset} spans {span} bytes")
    size = 1 if span == 1 else 2 if span == 2 else 4
    code = {1: BPF_LD_B_ABS, 2: BPF_LD_H_ABS, 4: BPF_LD_W_ABS}[size]
    out: list[Instruction] = [(code, 0, 0, (SKF_LL_OFF + first) & 0xFFFFFFFF)]
    shift = size * 8 - (f.offset - first * 8) - f.width
    if shift:
        out.append((BPF_ALU_RSH_K, 0, 0, shift))
    if f.width < size * 8:
        out.append((BPF_ALU_AND_K, 0, 0, (1 << f.width) - 1))
    return out


def steering_program(rule: SteeringLike) -> list[Instruction]:
    """The classic BPF program of a steering rule (see the module's docstring). A frame
    too short for a load ends the program, which then returns 0."""
    body: list[list[Instruction]] = []
    for f, mask, value in rule.conditions:
        check = _load(f)
        if mask != (1 << f.width) - 1:
            check.append((BPF_ALU_AND_K, 0, 0, mask))
        check.append((BPF_JEQ_K, 0, 255, value))  # jf patched below: to the last "ret 0"
        body.append(check)
    key = _load(rule.key) + [(BPF_RET_A, 0, 0, 0)]
    out: list[Instruction] = [i for check in body for i in check] + key
    fail = len(out)
    out.append((BPF_RET_K, 0, 0, 0))
    for n, (code, jt, _, k) in enumerate(out):
        if code == BPF_JEQ_K:
            out[n] = (code, jt, fail - n - 1, k)
    if any(i[2] > 255 for i in out):
        raise ValueError("the steering program is too long for classic BPF jumps")
    return out


def _fprog(program: Sequence[Instruction]) -> tuple[bytes, ctypes.Array[ctypes.c_char]]:
    """A ``struct sock_fprog`` for ``program`` and the buffer it points to (keep the
    buffer alive while the kernel reads it)."""
    filters = b"".join(struct.pack("HBBI", *i) for i in program)
    buf = ctypes.create_string_buffer(filters, len(filters))
    return struct.pack("HL", len(program), ctypes.addressof(buf)), buf


def create_group(sock: socket.socket, program: Sequence[Instruction]) -> int:
    """Make ``sock`` (bound) the first member of a new CBPF fanout group running
    ``program``; returns the group's id."""
    sock.setsockopt(SOL_PACKET, PACKET_FANOUT,
                    (PACKET_FANOUT_CBPF | PACKET_FANOUT_FLAG_UNIQUEID) << 16)
    fprog, buf = _fprog(program)
    sock.setsockopt(SOL_PACKET, PACKET_FANOUT_DATA, fprog)
    del buf
    return fanout_id(sock)


def join_group(sock: socket.socket, group: int) -> None:
    """Add ``sock`` (bound to the group's interface) to fanout group ``group``."""
    sock.setsockopt(SOL_PACKET, PACKET_FANOUT, group | (PACKET_FANOUT_CBPF << 16))


def fanout_id(sock: socket.socket) -> int:
    """The id of the fanout group ``sock`` belongs to."""
    value = struct.unpack("I", sock.getsockopt(SOL_PACKET, PACKET_FANOUT, 4))[0]
    return int(value & 0xFFFF)
