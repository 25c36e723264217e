"""Host agents: in-network all-reduce, and the host-based baselines.

- ``hosts.wire``: the aggregation packet format and its hot-path codec;
  ``hosts.scapy_layer`` the same format as a scapy layer; ``hosts.frame`` the
  Ethernet/IPv4/UDP framing.
- ``hosts.quantize``: float32 blocks <-> int32 with a switch-negotiated exponent.
- ``hosts.protocol``: the worker side of the slot protocol, as a state machine.
- ``hosts.batch``: batches of payloads in one buffer, what a worker receives and
  sends per wake-up; ``hosts.mmsg`` receives and sends them with one system call.
- ``hosts.transport``: UDP socket and in-memory transports.
- ``hosts.worker``: ``Worker`` / ``allreduce`` over a transport.
- ``hosts.control``: the agents' control channel to the controller (pause, resume,
  fallback when the job's tree fails); ``hosts.fallback`` finishes a job on the hosts
  with the switch's arithmetic.
- ``hosts.baselines``: host-based all-reduce over TCP (ring, parameter server,
  sharded parameter server, halving-doubling), the baselines to compare against.
- ``hosts.agent_cli``: ``ina agent``, one worker of any of them as a process.
"""

from hosts.protocol import (
    AllReduceError,
    AllReduceTimeout,
    NonFiniteInputError,
    WorkerSettings,
    WorkerStats,
)
from hosts.quantize import Scaling
from hosts.transport import InMemoryTransport, Transport, UdpTransport
from hosts.worker import AllReduceResult, Worker, allreduce

__all__ = [
    "AllReduceError",
    "AllReduceResult",
    "AllReduceTimeout",
    "InMemoryTransport",
    "NonFiniteInputError",
    "Scaling",
    "Transport",
    "UdpTransport",
    "Worker",
    "WorkerSettings",
    "WorkerStats",
    "allreduce",
]
