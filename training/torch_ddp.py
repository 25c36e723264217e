"""PyTorch's DistributedDataParallel with its gradient buckets all-reduced by one of
``ina train``'s communicators (``training.comm``): the in-network agent through the
switch, or a host-based baseline, instead of DDP's own process-group all-reduce.

    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("gloo", ...)   # DDP's set-up (the parameter broadcast)
    model = DDP(net)
    register_comm_hook(model, InNetworkComm(aggregator, job_id, world_size, settings),
                       world_size)

Each bucket's flat float32 gradient goes to the communicator, whose sum, divided by the
world size as DDP's default hook divides it, comes back as a completed future. Every
rank must register the same communicator kind: the all-reduces happen in bucket order,
the same on every rank, so the in-network job's chunk sequence stays in step. PyTorch is
optional: this module imports it, nothing else in ``training`` does. (Its annotations
are evaluated, not postponed: DDP checks the hook's against ``dist.GradBucket``.)
"""

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

from training.comm import Communicator


@dataclass
class CommHookState:
    comm: Communicator
    world_size: int
    buckets: int = 0  # all-reduced so far


def allreduce_hook(state: CommHookState, bucket: dist.GradBucket
                   ) -> torch.futures.Future[torch.Tensor]:
    """DDP's communication hook: the bucket's mean over the ranks, by ``state.comm``."""
    buffer = bucket.buffer()
    values = buffer.detach().cpu().numpy().astype(np.float32, copy=False).reshape(-1)
    mean = state.comm(values) / np.float32(state.world_size)
    out = torch.from_numpy(mean).reshape(buffer.shape).to(dtype=buffer.dtype,
                                                          device=buffer.device)
    state.buckets += 1
    future: torch.futures.Future[torch.Tensor] = torch.futures.Future()
    future.set_result(out)
    return future


def register_comm_hook(model: Any, comm: Communicator, world_size: int) -> CommHookState:
    """Make ``model`` (a ``DistributedDataParallel``) all-reduce through ``comm``."""
    state = CommHookState(comm, world_size)
    model.register_comm_hook(state, allreduce_hook)
    return state
