"""The communicators a training worker all-reduces its gradient with, one for the
whole run: the in-network agent (``hosts.worker.Worker`` over a UDP socket, whose
chunk sequence and RTO estimate carry on from one step's all-reduce to the next) or a
host-based baseline (``hosts.baselines``: one TCP mesh to the other workers, and the
collective's ``run`` every step), or PyTorch's own Gloo all-reduce where PyTorch is
installed (``GlooComm``).

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
    """All-reduce through the switch: job ``job_id`` at ``aggregator`` (UDP port 48879
    both ways unless ``port``/``bind`` say otherwise, as for a switch model on the
    loopback)."""

    def __init__(self, aggregator: str, job_id: int, workers: int, settings: Any, *,
                 port: int | None = None, bind: tuple[str, int] | None = None) -> None:
        from hosts.agent_cli import CountingTransport
        from hosts.transport import UdpTransport
        from hosts.wire import INA_UDP_PORT
        from hosts.worker import Worker

        port = INA_UDP_PORT if port is None else port
        self.transport = CountingTransport(UdpTransport(
            aggregator, port=port, bind=bind or ("0.0.0.0", INA_UDP_PORT)))
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


GLOO_PORT = 48882
"""The TCP port of the rendezvous store on rank 0 for ``gloo`` (the baselines' agents
listen on 48880, the in-network agents on UDP 48879)."""


def interface_tx_bytes(interface: str, proc_net_dev: str = "/proc/net/dev") -> int:
    """Bytes the interface has sent (frames, as the kernel counts them in this network
    namespace); 0 when it is not there."""
    try:
        with open(proc_net_dev) as f:
            for line in f:
                name, sep, rest = line.partition(":")
                if sep and name.strip() == interface:
                    return int(rest.split()[8])
    except OSError:
        pass
    return 0


class GlooComm:
    """PyTorch's own all-reduce: ``torch.distributed`` with the Gloo backend (a ring
    for CPU tensors), written by others, over the same network: rank 0's address in
    ``peers`` (``IP:PORT``) holds the rendezvous store, ``interface`` carries Gloo's
    connections. Gloo does not count
    its payload, so ``bytes_sent`` is the frame bytes the host's interface sent."""

    def __init__(self, rank: int, peers: list[str], interface: str,
                 timeout_s: float = 120.0) -> None:
        import datetime
        import os

        import torch
        import torch.distributed as dist

        torch.set_num_threads(1)
        os.environ["GLOO_SOCKET_IFNAME"] = interface
        self.interface = interface
        self.dist = dist
        self.torch = torch
        host, _, port = peers[0].rpartition(":")
        dist.init_process_group("gloo", init_method=f"tcp://{host}:{port}", rank=rank,
                                world_size=len(peers),
                                timeout=datetime.timedelta(seconds=timeout_s))
        dist.barrier()
        self.tx0 = interface_tx_bytes(interface)

    def __call__(self, values: Floats) -> Floats:
        t = self.torch.from_numpy(np.array(values, dtype=np.float32, copy=True))
        self.dist.all_reduce(t)
        out: Floats = t.numpy()
        return out

    def bytes_sent(self) -> int:
        return interface_tx_bytes(self.interface) - self.tx0

    def counters(self) -> dict[str, Any]:
        return {"interface": self.interface, "interface_tx_bytes": self.bytes_sent(),
                "torch": self.torch.__version__}

    def close(self) -> None:
        if self.dist.is_initialized():
            self.dist.destroy_process_group()


def torch_missing() -> str | None:
    """Why ``gloo`` cannot run here (None when PyTorch is installed)."""
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        return ("needs PyTorch (.venv/bin/pip install torch==2.13.0, the CPU build; or "
                "pip install -e '.[torch]')")
    return None
