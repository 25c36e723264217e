"""One rank of a host-based all-reduce over TCP, as ``ina agent --algo NAME`` runs it.

The rank sets up the TCP mesh, reports that it is ready (the caller's start barrier,
e.g. a line on stdin), then meets the other ranks in a barrier over the mesh and
starts the clock when it leaves it: the completion time covers the all-reduce only,
not the connection set-up.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hosts.baselines.collective import Floats, Settings
from hosts.baselines.mesh import Traffic
from hosts.baselines.registry import get_collective
from hosts.baselines.tcp import CONNECT_TIMEOUT, PeerAddress, connect_tcp_mesh


@dataclass
class SessionResult:
    values: Floats
    seconds: float
    traffic: Traffic
    counters: dict[str, Any]


def allreduce_over_tcp(algo: str, values: Floats, rank: int, peers: Sequence[PeerAddress],
                       settings: Settings, *, ready: Callable[[], None] | None = None,
                       connect_timeout: float = CONNECT_TIMEOUT) -> SessionResult:
    """The sum over ``peers`` of every rank's ``values`` (raises ``ValueError`` for bad
    settings, ``ConnectError`` and ``MeshError`` when the network fails)."""
    collective = get_collective(algo)
    settings.check(len(peers))
    mesh = connect_tcp_mesh(rank, peers, timeout=connect_timeout)
    try:
        if ready is not None:
            ready()
        mesh.barrier()
        t0 = time.monotonic()
        reduced = collective.run(mesh, values, settings)
        seconds = time.monotonic() - t0
        counters: dict[str, Any] = {
            **reduced.counters,
            "messages_sent": mesh.traffic.messages_sent,
            "messages_received": mesh.traffic.messages_received,
            "control_bytes_sent": mesh.traffic.control_bytes_sent,
            "control_bytes_received": mesh.traffic.control_bytes_received,
            "connect_retries": mesh.connect_retries,
            "connect_seconds": mesh.connect_seconds,
            "tcp_retransmits": mesh.tcp_retransmits(),
        }
    finally:
        mesh.close()
    return SessionResult(reduced.values.reshape(values.shape), seconds, mesh.traffic,
                         counters)
