"""Loopback addresses for TCP tests of the host-based algorithms: a random address in
127.0.0.0/8 and free ports on it, so tests running at the same time do not meet."""

from __future__ import annotations

import random

from hosts.baselines.tcp import PeerAddress
from topologies.netutil import free_tcp_port


def loopback_peers(n: int) -> list[PeerAddress]:
    host = f"127.{random.randrange(1, 255)}.{random.randrange(256)}.{random.randrange(1, 255)}"
    return [PeerAddress(host, free_tcp_port(host)) for _ in range(n)]
