"""Helpers for the Mininet end-to-end tests: the network's description and UDP streams
between hosts, counted."""

from __future__ import annotations

import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller import P4RuntimeClient
from topologies.nodes import InaSwitch

LOSSY_PORT = 3  # the port that loses LOSS of the frames it sends
LOSS = 0.05


@dataclass
class StarNet:
    net: Any
    switch: InaSwitch
    client: P4RuntimeClient
    log_dir: Path

RECEIVER = textwrap.dedent('''
    import socket, sys
    port, idle = int(sys.argv[1]), float(sys.argv[2])
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind(("0.0.0.0", port))
    print("ready", flush=True)
    s.settimeout(30)  # the first datagram
    seen = set()
    count = 0
    try:
        while True:
            data = s.recv(2048)
            count += 1
            seen.add(int.from_bytes(data[:4], "big"))
            s.settimeout(idle)
    except socket.timeout:
        pass
    print(count, len(seen), flush=True)
''')

SENDER = textwrap.dedent('''
    import socket, sys, time
    dst, port, count, rate, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \\
        float(sys.argv[4]), int(sys.argv[5])
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    start = time.monotonic()
    for i in range(count):
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        s.sendto(i.to_bytes(4, "big") + bytes(size - 4), (dst, port))
    print("sent", count, flush=True)
''')


@dataclass(frozen=True)
class StreamResult:
    sent: int
    received: int  # datagrams, duplicates included
    distinct: int  # distinct sequence numbers

    @property
    def loss(self) -> float:
        return 1 - self.distinct / self.sent


def udp_stream(src: Any, dst: Any, count: int, rate: float = 2000.0, size: int = 64,
               port: int = 5001, idle: float = 1.0) -> StreamResult:
    """Send ``count`` numbered datagrams from host ``src`` to host ``dst`` at ``rate``
    per second and count what arrives (the receiver stops after ``idle`` quiet seconds)."""
    receiver = dst.popen([sys.executable, "-c", RECEIVER, str(port), str(idle)], text=True)
    try:
        assert receiver.stdout.readline().strip() == "ready"
        sender = src.popen([sys.executable, "-c", SENDER, dst.IP(), str(port), str(count),
                            str(rate), str(size)], text=True)
        out, err = sender.communicate(timeout=60)
        assert sender.returncode == 0, err
        out, err = receiver.communicate(timeout=60)
        assert receiver.returncode == 0, err
    finally:
        if receiver.poll() is None:
            receiver.kill()
            receiver.wait()
    received, distinct = (int(x) for x in out.split())
    return StreamResult(count, received, distinct)
