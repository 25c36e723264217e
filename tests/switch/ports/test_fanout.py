"""PACKET_FANOUT with a steering program: the kernel gives every frame with one key to
one socket (key mod the number of sockets), and frames of other protocols, and frames
too short to hold the key, to the group's first socket (needs root)."""

from __future__ import annotations

import os
import select
import socket
import struct
import subprocess
import time
from pathlib import Path

import pytest

from switch.ports.fanout import BPF_JEQ_K, BPF_RET_A, BPF_RET_K, steering_program
from switch.ports.portset import PortSet
from switch.v1model.partition import FrameField, Steering

# Ethernet type 0x88b5, then a 16-bit key behind a 4-bit field
RULE = Steering("k_t.key", ((FrameField(96, 16), 0xFFFF, 0x88B5),), FrameField(116, 12))


def _frame(key: int, ether_type: int = 0x88B5) -> bytes:
    return bytes(12) + ether_type.to_bytes(2, "big") + struct.pack("!HH", 0xF000 | key, 7) \
        + bytes(40)


def test_the_program() -> None:
    prog = steering_program(RULE)
    assert prog[1] == (BPF_JEQ_K, 0, len(prog) - 3, 0x88B5)  # a miss jumps to "ret 0"
    assert prog[-2] == (BPF_RET_A, 0, 0, 0) and prog[-1] == (BPF_RET_K, 0, 0, 0)
    assert prog[2][3] == (-0x200000 + 14) & 0xFFFFFFFF  # the key's bytes, from the frame


def test_the_kernel_spreads_frames_by_key() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (veth pairs, raw sockets)")
    a, b = f"fan{os.getpid() % 100000}a", f"fan{os.getpid() % 100000}b"
    subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", b], check=True)
    sets: list[PortSet] = []
    try:
        for name in (a, b):
            Path(f"/proc/sys/net/ipv6/conf/{name}/disable_ipv6").write_text("1")
            subprocess.run(["ip", "link", "set", name, "up"], check=True)
        time.sleep(0.2)
        sets = [PortSet([(1, a)]) for _ in range(3)]
        for s in sets:
            s.open()
        groups = sets[0].create_fanout(steering_program(RULE))
        for s in sets[1:]:
            s.join_fanout(groups)
        tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        tx.bind((b, 3))
        for key in range(12):
            tx.send(_frame(key))
        tx.send(_frame(5, ether_type=0x0800))  # another protocol
        tx.send(_frame(5)[:15])  # too short for the key
        tx.close()
        got: list[list[bytes]] = [[] for _ in sets]
        end = time.monotonic() + 3
        while sum(map(len, got)) < 14 and time.monotonic() < end:
            select.select([s.fileno() for s in sets], [], [], 0.1)
            for i, s in enumerate(sets):
                got[i] += [f for _, f in s.receive(timeout=0)]
        keys = [sorted(struct.unpack("!H", f[14:16])[0] & 0xFFF for f in frames
                       if len(f) >= 16 and f[12:14] == b"\x88\xb5") for frames in got]
        assert keys == [[0, 3, 6, 9], [1, 4, 7, 10], [2, 5, 8, 11]]
        assert sum(1 for f in got[0] if f[12:14] == b"\x08\x00") == 1
        assert sum(1 for f in got[0] if len(f) < 16) == 1
    finally:
        for s in sets:
            s.close()
        subprocess.run(["ip", "link", "del", a], capture_output=True)
