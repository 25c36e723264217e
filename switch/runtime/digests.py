"""Digest lists: buffering, de-duplication and acknowledgements (P4Runtime DigestEntry).

Digest messages the data plane produces are buffered per digest until
``max_list_size`` distinct messages are waiting or the oldest has waited
``max_timeout_ns`` (0: send at once). A message equal to one waiting in the buffer, or
to one sent in a list that was neither acknowledged nor older than ``ack_timeout_ns``,
is dropped. Digests that no DigestEntry enabled are dropped. A ``max_list_size`` of 0
("no limit") means ``MAX_LIST_SIZE``, as the spec lets a server choose: the buffer of a
digest with a long ``max_timeout_ns`` cannot grow without bound.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from p4.v1 import p4runtime_pb2

Values = tuple[int, ...]

MAX_LIST_SIZE = 1000  # digest messages per list when the config says 0 (no limit)


@dataclass
class _Buffer:
    items: list[Values] = field(default_factory=list)
    first_ns: int = 0


@dataclass
class _Sent:
    values: set[Values]
    sent_ns: int


class DigestBatcher:
    def __init__(self) -> None:
        self._buffers: dict[int, _Buffer] = {}
        self._sent: dict[int, dict[int, _Sent]] = {}  # digest id -> list id -> sent list
        self._list_ids: dict[int, itertools.count] = {}

    def reset(self) -> None:
        self._buffers.clear()
        self._sent.clear()

    def pending(self) -> bool:
        return any(b.items for b in self._buffers.values()) or any(self._sent.values())

    def offer(self, digest_id: int, values: Values, now_ns: int) -> None:
        buf = self._buffers.setdefault(digest_id, _Buffer())
        if values in buf.items:
            return
        if any(values in s.values for s in self._sent.get(digest_id, {}).values()):
            return
        if not buf.items:
            buf.first_ns = now_ns
        buf.items.append(values)

    def ack(self, digest_id: int, list_id: int) -> bool:
        """Forget an acknowledged list; False if no such list is outstanding."""
        return self._sent.get(digest_id, {}).pop(list_id, None) is not None

    def due(self, configs: Mapping[int, p4runtime_pb2.DigestEntry.Config], now_ns: int
            ) -> list[tuple[int, int, list[Values]]]:
        """The lists to send now, as (digest id, list id, messages); forgets expired
        unacknowledged lists and buffers of digests that are no longer enabled."""
        for did in [d for d in self._buffers if d not in configs]:
            del self._buffers[did]
        for did, sent in self._sent.items():
            timeout = configs[did].ack_timeout_ns if did in configs else 0
            for lid in [lid for lid, s in sent.items() if now_ns - s.sent_ns >= timeout]:
                del sent[lid]
        out = []
        for did, buf in self._buffers.items():
            config = configs[did]
            limit = config.max_list_size or MAX_LIST_SIZE
            while buf.items and (len(buf.items) >= limit
                                 or now_ns - buf.first_ns >= config.max_timeout_ns):
                chunk = buf.items[:limit]
                del buf.items[:len(chunk)]
                buf.first_ns = now_ns
                lid = next(self._list_ids.setdefault(did, itertools.count(1)))
                if config.ack_timeout_ns:
                    self._sent.setdefault(did, {})[lid] = _Sent(set(chunk), now_ns)
                out.append((did, lid, chunk))
        return out


def now_ns() -> int:
    return time.monotonic_ns()
