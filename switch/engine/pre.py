"""The packet replication engine: multicast groups and clone (mirror) sessions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from switch.engine.runtime import ErrorCode, SwitchRuntimeError

MAX_GROUP = 0xFFFF
MAX_SESSION = 0x7FFF


def _replicas(replicas: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    out = []
    for r in replicas:
        try:
            port, rid = r
        except (TypeError, ValueError):
            raise SwitchRuntimeError(ErrorCode.INVALID_ARGUMENT,
                                     f"replica {r!r} is not a (port, rid) pair") from None
        if not isinstance(port, int) or not isinstance(rid, int) or port < 0 or rid < 0:
            raise SwitchRuntimeError(ErrorCode.INVALID_ARGUMENT, f"bad replica {r!r}")
        out.append((port, rid))
    return out


@dataclass
class CloneSession:
    replicas: list[tuple[int, int]]
    truncate: int | None = None  # bytes kept of each copy; None for the whole packet


class Pre:
    def __init__(self) -> None:
        self.groups: dict[int, list[tuple[int, int]]] = {}
        self.sessions: dict[int, CloneSession] = {}
        self.version = 0  # counts the changes of multicast groups

    def group_set(self, gid: int, replicas: Sequence[tuple[int, int]]) -> None:
        if not isinstance(gid, int) or not 0 < gid <= MAX_GROUP:
            raise SwitchRuntimeError(ErrorCode.INVALID_ARGUMENT,
                                     f"multicast group id {gid!r} not in [1, {MAX_GROUP}]")
        self.groups[gid] = _replicas(replicas)
        self.version += 1

    def group_delete(self, gid: int) -> None:
        if gid not in self.groups:
            raise SwitchRuntimeError(ErrorCode.NOT_FOUND, f"no multicast group {gid}")
        del self.groups[gid]
        self.version += 1

    def replicate(self, gid: int) -> list[tuple[int, int]]:
        return self.groups.get(gid, [])

    def session_set(self, session: int, replicas: Sequence[tuple[int, int]],
                    truncate: int | None = None) -> None:
        if not isinstance(session, int) or not 0 <= session <= MAX_SESSION:
            raise SwitchRuntimeError(ErrorCode.INVALID_ARGUMENT,
                                     f"clone session id {session!r} not in [0, {MAX_SESSION}]")
        if truncate is not None and (not isinstance(truncate, int) or truncate < 0):
            raise SwitchRuntimeError(ErrorCode.INVALID_ARGUMENT, f"bad truncation {truncate!r}")
        self.sessions[session] = CloneSession(_replicas(replicas), truncate or None)

    def session_delete(self, session: int) -> None:
        if session not in self.sessions:
            raise SwitchRuntimeError(ErrorCode.NOT_FOUND, f"no clone session {session}")
        del self.sessions[session]

    def session(self, session: int) -> CloneSession | None:
        return self.sessions.get(session)
