"""The communicators a training worker all-reduces its gradient with, one for the
whole run: the in-network agent (``hosts.worker.Worker`` over a UDP socket, whose
chunk sequence and RTO estimate carry on from one step's all-reduce to the next) or a
host-based baseline (``hosts.baselines``: one TCP mesh to the other workers, and the
collective's ``run`` every step).

A communicator is called with the flat float32 gradient and returns the sum over all
workers, bit-identical on every worker; ``bytes_sent`` is the payload it has sent so
far (the UDP payloads with their header, or the tensor bytes over TCP), ``counters``
what its transport counted.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float32]


class Communicator(Protocol):
    def __call__(self, values: Floats) -> Floats: ...

    def bytes_sent(self) -> int: ...

    def counters(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


class InNetworkComm:
    """All-reduce through the switch: job ``job_id`` at ``aggregator``."""

    def __init__(self, aggregator: str, job_id: int, workers: int, settings: Any) -> None:
        from hosts.agent_cli import CountingTransport
        from hosts.transport import UdpTransport
        from hosts.worker import Worker

        self.transport = CountingTransport(UdpTransport(aggregator))
        try:
            self.worker = Worker(self.transport, job_id, workers, settings)
        except BaseException:
            self.transport.close()
            raise

    def __call__(self, values: Floats) -> Floats:
        return self.worker.allreduce(values).values

    def bytes_sent(self) -> int:
        return int(self.transport.bytes_sent)

    def counters(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self.worker.stats)

    def close(self) -> None:
        self.transport.close()


class HostComm:
    """A host-based all-reduce (``ring``, ``ps``, ``ps-sharded``, ``hd``) over one TCP
    mesh between the workers, set up once (``connect``) and kept for the run."""

    def __init__(self, algo: str, rank: int, peers: list[str], segment: int,
                 ps_host: int = 0) -> None:
        from hosts.baselines.collective import Settings
        from hosts.baselines.registry import get_collective
        from hosts.baselines.tcp import parse_peers

        self.collective = get_collective(algo)
        self.rank = rank
        self.peers = parse_peers(",".join(peers))
        self.settings = Settings(segment=segment, ps_host=ps_host)
        self.settings.check(len(self.peers))
        self.mesh: Any = None
        self.steps = 0

    def connect(self) -> None:
        """Connect to every peer and meet them in a barrier."""
        from hosts.baselines.tcp import connect_tcp_mesh

        self.mesh = connect_tcp_mesh(self.rank, self.peers)
        self.mesh.barrier()

    def __call__(self, values: Floats) -> Floats:
        if self.mesh is None:
            self.connect()
        reduced = self.collective.run(self.mesh, values, self.settings)
        self.steps += 1
        return reduced.values.reshape(values.shape)

    def bytes_sent(self) -> int:
        return 0 if self.mesh is None else int(self.mesh.traffic.bytes_sent)

    def counters(self) -> dict[str, Any]:
        if self.mesh is None:
            return {}
        t = self.mesh.traffic
        return {"bytes_sent": t.bytes_sent, "bytes_received": t.bytes_received,
                "messages_sent": t.messages_sent, "connect_retries": self.mesh.connect_retries,
                "tcp_retransmits": self.mesh.tcp_retransmits()}

    def close(self) -> None:
        if self.mesh is not None:
            self.mesh.close()
