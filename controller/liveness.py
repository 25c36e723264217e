"""Liveness probes: how the controller learns that a link, a host's link or a switch
is down, and up again.

- **Links between switches**, LLDP-style: every period the controller sends, by
  P4Runtime packet-out, one frame per link out of one end's port (EtherType 0x88CC,
  to the nearest-bridge LLDP address, naming the sender's device id and port); the
  switch at the other end sends it to the controller (``p4/aggregation.p4`` sends
  LLDP frames to the CPU port), whose packet-in names the port it came in on. Both
  interfaces of a failed link go down, so one direction per link tells.
- **Hosts' links**: an ICMP echo request from the switch's aggregator address to the
  host, sent out of the host's port by packet-out; the host's echo reply comes back
  to the aggregator address, which the controller routes to the CPU port
  (``to_cpu()``).
- **Switches**: the P4Runtime stream of a switch that died ends at once (the
  supervisor watches it; no probe needed).

``Liveness`` is the verdict, without I/O: a watched thing is down once ``misses``
probes in a row went unanswered over at least ``misses`` periods (so a controller
that was busy and sent nothing does not conclude anything), and up again at its first
answer. ``link_probe``, ``echo_probe`` and ``parse_probe`` make and read the frames.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Hashable
from dataclasses import dataclass

LLDP_ETHERTYPE = 0x88CC
LLDP_NEAREST_BRIDGE = bytes.fromhex("0180c200000e")
MAGIC = b"INA-PROBE"
_LINK = struct.Struct("!QHI")  # sender device id, sender port, sequence number
_ECHO_ID = 0x1A4E
MIN_FRAME = 60  # Ethernet's minimum without the FCS


def _mac(text: str) -> bytes:
    return bytes.fromhex(text.replace(":", ""))


def _ip(text: str) -> bytes:
    return bytes(int(x) for x in text.split("."))


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def link_probe(src_mac: str, device_id: int, port: int, seq: int) -> bytes:
    """The frame switch ``device_id`` sends out of ``port`` to its neighbour."""
    frame = (LLDP_NEAREST_BRIDGE + _mac(src_mac) + LLDP_ETHERTYPE.to_bytes(2, "big")
             + MAGIC + _LINK.pack(device_id, port, seq & 0xFFFFFFFF))
    return frame.ljust(MIN_FRAME, b"\0")


def echo_probe(switch_mac: str, host_mac: str, src_ip: str, host_ip: str, seq: int) -> bytes:
    """An ICMP echo request from ``src_ip`` (the switch's aggregator address) to a
    host, as its switch would send it."""
    icmp = struct.pack("!BBHHH", 8, 0, 0, _ECHO_ID, seq & 0xFFFF) + MAGIC
    icmp = icmp[:2] + _checksum(icmp).to_bytes(2, "big") + icmp[4:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(icmp), seq & 0xFFFF, 0x4000, 64, 1,
                     0, _ip(src_ip), _ip(host_ip))
    ip = ip[:10] + _checksum(ip).to_bytes(2, "big") + ip[12:]
    return (_mac(host_mac) + _mac(switch_mac) + b"\x08\x00" + ip + icmp).ljust(MIN_FRAME,
                                                                               b"\0")


@dataclass(frozen=True)
class LinkProbe:
    device_id: int
    port: int
    seq: int


@dataclass(frozen=True)
class EchoReply:
    host_ip: str
    seq: int


def parse_probe(frame: bytes) -> LinkProbe | EchoReply | None:
    """A probe that came back to the controller (a packet-in's payload), or None."""
    if len(frame) < 14:
        return None
    ether_type = int.from_bytes(frame[12:14], "big")
    if ether_type == LLDP_ETHERTYPE:
        body = frame[14:]
        if not body.startswith(MAGIC) or len(body) < len(MAGIC) + _LINK.size:
            return None
        device_id, port, seq = _LINK.unpack_from(body, len(MAGIC))
        return LinkProbe(device_id, port, seq)
    if ether_type != 0x0800 or len(frame) < 34:
        return None
    ihl = (frame[14] & 0x0F) * 4
    if frame[23] != 1 or len(frame) < 14 + ihl + 8:
        return None
    icmp = frame[14 + ihl:]
    kind, _, _, ident, seq = struct.unpack_from("!BBHHH", icmp)
    if kind != 0 or ident != _ECHO_ID or not icmp[8:].startswith(MAGIC):
        return None
    return EchoReply(".".join(str(b) for b in frame[26:30]), seq)


@dataclass
class _Watch:
    sender: str  # the switch that sends the probes
    receiver: str  # the switch whose packet-in brings the answers back
    last_answer: float
    unanswered: int = 0
    unanswered_since: float | None = None  # when the oldest unanswered probe went out
    up: bool = True
    srtt: float | None = None  # the probes' smoothed round-trip time, and its deviation
    rttvar: float = 0.0

    def sample(self, rtt: float) -> None:
        if self.srtt is None:
            self.srtt, self.rttvar = rtt, rtt / 2
        else:
            self.rttvar = 0.75 * self.rttvar + 0.25 * abs(self.srtt - rtt)
            self.srtt = 0.875 * self.srtt + 0.125 * rtt


class Liveness:
    """Verdicts on watched things (any hashable key) from probes sent and answered.

    A probe that does not come back may only be late: a switch that is busy (BMv2
    handles a few thousand packets a second) answers every probe late. So besides
    ``misses`` unanswered probes over ``misses`` periods, a verdict needs evidence that
    the switches at both ends move: a probe sent by the same switch, and one answered
    through the same switch, both sent after the oldest unanswered one, came back. A
    switch with nothing else to show, or that shows nothing for ``patience`` times
    that long, gets the verdict anyway. And a probe that waits in a busy port's queue
    (BMv2's egress queues) comes back later than the others: the wait before a verdict
    is at least the link's own probe round-trip time plus four times its deviation, as
    TCP's retransmission timeout is. The caller may ask for one more agreement
    (``newly_down``'s ``confirm``)."""

    def __init__(self, period: float, misses: int = 3, patience: float = 10.0) -> None:
        if not period > 0 or misses < 1:
            raise ValueError(f"liveness: period {period!r} and misses {misses!r}")
        self.period = period
        self.misses = misses
        self.patience = patience
        self._watches: dict[Hashable, _Watch] = {}
        self._rounds: dict[int, float] = {}  # probe sequence number -> when it went out
        self._sent_ok: dict[str, float] = {}  # switch -> latest answered probe it sent
        self._received_ok: dict[str, float] = {}  # ... it brought back

    def watch(self, key: Hashable, now: float, sender: str = "", receiver: str = "") -> None:
        """Start watching ``key`` afresh (up, as if it had just answered), probed from
        ``sender`` and answered through ``receiver``."""
        self._watches[key] = _Watch(sender, receiver, now)

    def unwatch(self, key: Hashable) -> None:
        self._watches.pop(key, None)

    def watched(self) -> list[Hashable]:
        return list(self._watches)

    def is_up(self, key: Hashable) -> bool:
        w = self._watches.get(key)
        return w is None or w.up

    def sent(self, key: Hashable, seq: int, now: float) -> None:
        w = self._watches.get(key)
        if w is None:
            return
        self._rounds.setdefault(seq, now)
        if len(self._rounds) > 4096:
            self._rounds.pop(next(iter(self._rounds)))
        w.unanswered += 1
        if w.unanswered_since is None:
            w.unanswered_since = now

    def answered(self, key: Hashable, seq: int, now: float) -> bool:
        """Probe ``seq`` of ``key`` came back; True if it was down (it is up again)."""
        w = self._watches.get(key)
        if w is None:
            return False
        went = self._rounds.get(seq, now)
        w.sample(now - went)  # every probe has its own number: no ambiguity
        self._sent_ok[w.sender] = max(self._sent_ok.get(w.sender, went), went)
        self._received_ok[w.receiver] = max(self._received_ok.get(w.receiver, went), went)
        w.last_answer = now
        w.unanswered = 0
        w.unanswered_since = None
        if w.up:
            return False
        w.up = True
        return True

    def newly_down(self, now: float, confirm: Callable[[Hashable], bool] | None = None
                   ) -> list[Hashable]:
        """The keys that are down from now on. ``confirm(key)``, if given, must agree
        too (until the patience runs out): the supervisor asks whether the jobs that
        use ``key`` have stopped moving."""
        out = []
        for key, w in self._watches.items():
            limit = self.misses * self.period
            if w.srtt is not None:
                limit = max(limit, w.srtt + 4 * w.rttvar)
            if not w.up or w.unanswered < self.misses or now - w.last_answer < limit:
                continue
            if now - w.last_answer < self.patience * limit and not (
                    self._evidence(key, w) and (confirm is None or confirm(key))):
                continue
            w.up = False
            out.append(key)
        return out

    def _evidence(self, key: Hashable, w: _Watch) -> bool:
        since = w.unanswered_since or 0.0

        def moves(role: str, switch: str, latest: dict[str, float]) -> bool:
            others = [o for k, o in self._watches.items()
                      if k != key and getattr(o, role) == switch]
            return not others or latest.get(switch, -1.0) > since

        return (moves("sender", w.sender, self._sent_ok)
                and moves("receiver", w.receiver, self._received_ok))
