"""Client arbitration: which StreamChannel is the primary controller.

Only the default role exists (a role name in a MasterArbitrationUpdate is UNIMPLEMENTED).
As the P4Runtime specification defines it, the primary is the live controller whose
election id is the highest the server has ever seen: an update with an election id at
least that high makes its controller the primary; a controller without an election id
is a backup forever. When the primary's stream ends (or it lowers its own election id)
the device has no primary until a controller sends an update with an election id at
least as high as the old primary's: no backup with a lower id is promoted, so a stale
controller can never regain write access (PI's server of BMv2 promotes the next one).

Whenever the primary changes, every controller receives a MasterArbitrationUpdate
whose status is OK for the primary and ALREADY_EXISTS for the backups (NOT_FOUND when
there is no primary); otherwise only the controller that sent the update gets one. The
election id in these messages is the primary's, or the highest ever seen when there is
no primary.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from google.rpc import status_pb2
from p4.v1 import p4runtime_pb2

from switch.runtime.errors import (
    StatusCode,
    code_number,
    failed_precondition,
    invalid_argument,
    not_found,
    permission_denied,
    unimplemented,
)

ElectionId = tuple[int, int]


def election_id(msg: object, present: bool) -> ElectionId | None:
    """(high, low) of a ``Uint128`` field, None when the field is unset."""
    if not present:
        return None
    return (msg.high, msg.low)  # type: ignore[attr-defined]


def _fmt(eid: ElectionId | None) -> str:
    if eid is None:
        return "unset"
    high, low = eid
    return str((high << 64) | low)


@dataclass(eq=False)
class Controller:
    """One StreamChannel that sent (or may send) a MasterArbitrationUpdate."""

    send: Callable[[p4runtime_pb2.StreamMessageResponse], None]
    # for packet-ins and digest lists, which may be dropped on congestion
    send_data: Callable[[p4runtime_pb2.StreamMessageResponse], None] | None = None
    peer: str = ""
    device_id: int = 0
    election_id: ElectionId | None = None
    joined: bool = False


class Arbiter:
    def __init__(self, device_id: int):
        self.device_id = device_id
        self._lock = threading.Lock()
        self.controllers: list[Controller] = []
        self.highest: ElectionId | None = None
        self._primary: Controller | None = None

    # ----------------------------------------------------------------- queries

    def primary(self) -> Controller | None:
        with self._lock:
            return self._primary

    def is_primary(self, c: Controller) -> bool:
        with self._lock:
            return self._primary is c

    def check_writer(self, eid: ElectionId | None, what: str = "write") -> None:
        """PERMISSION_DENIED unless ``eid`` is the current primary's election id."""
        with self._lock:
            p = self._primary
        if p is None:
            raise permission_denied(f"{what} refused: there is no primary controller (open a "
                                    "StreamChannel and send a MasterArbitrationUpdate)")
        if eid != p.election_id:
            raise permission_denied(f"{what} refused: election id {_fmt(eid)} is not the "
                                    f"primary's ({_fmt(p.election_id)})")

    # ----------------------------------------------------------------- updates

    def update(self, c: Controller, upd: p4runtime_pb2.MasterArbitrationUpdate) -> None:
        """Handle a MasterArbitrationUpdate; a P4RuntimeError means the stream must be
        terminated with that status."""
        eid = election_id(upd.election_id, upd.HasField("election_id"))
        with self._lock:
            if upd.HasField("role") and (upd.role.name or upd.role.HasField("config")):
                raise unimplemented("only the default role is supported (no role name or "
                                    "role config)")
            if not c.joined and upd.device_id != self.device_id:
                raise not_found(f"unknown device id {upd.device_id} (this server is device "
                                f"{self.device_id})")
            if c.joined and upd.device_id != c.device_id:
                raise failed_precondition(f"the stream is for device {c.device_id}, not "
                                          f"{upd.device_id}")
            if eid is not None and any(o is not c and o.election_id == eid
                                       for o in self.controllers):
                raise invalid_argument(f"election id {_fmt(eid)} is already used by another "
                                       "controller")
            c.device_id = upd.device_id
            c.election_id = eid
            if not c.joined:
                c.joined = True
                self.controllers.append(c)
            if eid is not None and (self.highest is None or eid > self.highest):
                self.highest = eid
            before = self._primary
            self._primary = self._elect()
            if self._primary is not before or before is c:
                self._notify_all()
            else:
                self._notify(c)

    def leave(self, c: Controller) -> None:
        with self._lock:
            if c not in self.controllers:
                return
            self.controllers.remove(c)
            if self._primary is c:
                self._primary = self._elect()
                self._notify_all()

    # ---------------------------------------------------------------- internal

    def _elect(self) -> Controller | None:
        """The live controller holding the highest election id ever seen, if any."""
        if self.highest is None:
            return None
        return next((o for o in self.controllers if o.election_id == self.highest), None)

    def _notify_all(self) -> None:
        for o in self.controllers:
            self._notify(o)

    def _notify(self, c: Controller) -> None:
        p = self._primary
        if p is c:
            code, message = StatusCode.OK, "primary"
        elif p is not None:
            code, message = StatusCode.ALREADY_EXISTS, "backup: another controller is primary"
        else:
            code, message = StatusCode.NOT_FOUND, "backup: there is no primary"
        msg = p4runtime_pb2.StreamMessageResponse()
        arb = msg.arbitration
        arb.device_id = self.device_id
        eid = p.election_id if p is not None else self.highest
        if eid is not None:
            arb.election_id.high, arb.election_id.low = eid
        arb.status.CopyFrom(status_pb2.Status(code=code_number(code), message=message))
        c.send(msg)
