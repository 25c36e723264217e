"""All ranks in one process: a full mesh of socket pairs, one thread per rank.

    from hosts.baselines.local import run_ranks
    sums = run_ranks(4, lambda mesh: ring.run(mesh, inputs[mesh.rank], Settings()))
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from typing import TypeVar

from hosts.baselines.mesh import IDLE_TIMEOUT, SocketMesh

T = TypeVar("T")


def local_meshes(n: int, *, idle_timeout: float = IDLE_TIMEOUT) -> list[SocketMesh]:
    """``n`` meshes, rank i's socket to rank j paired with rank j's socket to rank i."""
    if n < 1:
        raise ValueError(f"local mesh: {n} ranks (at least 1)")
    ends: list[dict[int, socket.socket]] = [{} for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            ends[i][j], ends[j][i] = socket.socketpair()
    return [SocketMesh(r, n, ends[r], idle_timeout=idle_timeout) for r in range(n)]


def run_ranks(n: int, body: Callable[[SocketMesh], T], *,
              idle_timeout: float = IDLE_TIMEOUT) -> list[T]:
    """Run ``body(mesh)`` for ranks 0..n-1 in threads; their results in rank order.
    A rank that fails closes its sockets, so its peers fail too instead of waiting;
    the first failure is raised."""
    meshes = local_meshes(n, idle_timeout=idle_timeout)
    results: list[T | None] = [None] * n
    errors: list[BaseException] = []  # in the order they happened

    def rank(mesh: SocketMesh) -> None:
        try:
            results[mesh.rank] = body(mesh)
        except BaseException as e:  # noqa: B036 - re-raised in the caller's thread
            errors.append(e)
        finally:
            mesh.close()

    threads = [threading.Thread(target=rank, args=(m,), name=f"rank-{m.rank}")
               for m in meshes]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]
    return results  # type: ignore[return-value]
