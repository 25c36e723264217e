"""Packets into and out of a running BMv2, and knowing when BMv2 is done with them.

Packets go through the ``--packet-in`` nanomsg PAIR socket (a message is the type, the
port and the length as native ints, then the bytes). BMv2 works on a packet in several
threads (ingress, egress, transmit) and nothing says "this packet was dropped", so
``settle`` waits until the switch is idle:

* BMv2's event log (``--nanolog``) has shown every packet sent arrive (packet-in
  events), and every pipeline it started has finished;
* every packet-out event has its packet here, and no message is waiting to be read;
* no thread of the BMv2 process is runnable (state R or D in ``/proc``): a packet
  handed from one thread to the next wakes the next one, which stays runnable until
  it has worked, however long the machine makes it wait for a core.

All of it must hold at two polls in a row. Outputs are attributed to the packet that
caused them by the packet id of their packet-out event (BMv2 numbers the packets it
receives from 0, as they are sent here).
"""

from __future__ import annotations

import select
import struct
import time
from pathlib import Path

from switch.stf.bmv2_process import BMv2Process
from switch.stf.nanomsg import PAIR, SUB, NanomsgError, SpSocket
from switch.stf.target import TargetError

POLL_S = 0.005
CALM_POLLS = 2
SETTLE_TIMEOUT_S = 20.0

# bm_sim/event_logger.cpp: type, switch id, context, signature, packet id, copy id,
# then one int (the port, the pipeline id, ...).
_EVENT = struct.Struct("<iQIQQQi")
_PACKET_IN, _PACKET_OUT, _PIPELINE_START, _PIPELINE_DONE = 0, 1, 9, 10
# bm_sim/dev_mgr_packet_in.cpp: type, port, length.
_HEADER = struct.Struct("<iii")
_MSG_PACKET_IN, _MSG_PACKET_OUT = 3, 4


class BMv2PacketError(TargetError):
    """BMv2 stopped, or did not finish with the packets in time."""


def busy_threads(pid: int) -> bool:
    """True if a thread of process ``pid`` is runnable or in an uninterruptible wait."""
    for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # the thread has just ended
            continue
        fields = text.rpartition(")")[2].split()
        if fields and fields[0] in ("R", "D"):
            return True
    return False


class BMv2Packets:
    """The packet and event sockets of one ``BMv2Process`` (see the module docstring)."""

    def __init__(self, process: BMv2Process):
        self.process = process
        self._events = SpSocket(process.event_address, SUB)
        try:
            self._packets = SpSocket(process.packet_address, PAIR)
        except NanomsgError:
            self._events.close()
            raise
        self.sent = 0
        self._packets_in = 0
        self._running: set[tuple[int, int, int]] = set()  # (packet id, copy id, pipeline)
        self._out_ids: list[int] = []  # the packet id of each packet-out event
        self._outputs: list[tuple[int, bytes]] = []  # (port, data) as they came
        self._taken = 0

    def send(self, port: int, data: bytes) -> int:
        """Send a packet into ``port``; returns its number (0 for the first)."""
        try:
            self._packets.send(_HEADER.pack(_MSG_PACKET_IN, port, len(data)) + data)
        except NanomsgError as e:
            raise BMv2PacketError(f"{e}\n{self.process.log_tail()}") from None
        self.sent += 1
        return self.sent - 1

    def take(self) -> list[tuple[int, int, bytes]]:
        """The outputs not taken yet whose packet is known, as (packet number, port,
        data), in the order BMv2 sent them."""
        upto = min(len(self._outputs), len(self._out_ids))
        new = [(self._out_ids[i], *self._outputs[i]) for i in range(self._taken, upto)]
        self._taken = upto
        return new

    def settle(self) -> None:
        """Return once BMv2 is idle (see the module docstring)."""
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        calm = 0
        while True:
            if self._read(POLL_S):
                calm = 0
                continue
            pid = self._pid()
            idle = (self._packets_in >= self.sent and not self._running
                    and len(self._outputs) == len(self._out_ids) and not busy_threads(pid))
            calm = calm + 1 if idle else 0
            if calm >= CALM_POLLS:
                return
            if time.monotonic() > deadline:
                raise BMv2PacketError(
                    f"BMv2 did not finish with the packets within {SETTLE_TIMEOUT_S:g} s "
                    f"({self._packets_in} of {self.sent} received, {len(self._running)} "
                    f"in a pipeline)\n{self.process.log_tail()}")

    def wait(self, seconds: float) -> None:
        """Read what comes for ``seconds``."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            self._read(left)

    def _pid(self) -> int:
        proc = self.process.proc
        if proc is None or proc.poll() is not None:
            raise BMv2PacketError(f"simple_switch_grpc exited\n{self.process.log_tail()}")
        return proc.pid

    def _read(self, timeout: float) -> bool:
        """Handle every message that arrives within ``timeout``; True if any did."""
        got = False
        socks = {self._events.fileno(): self._events, self._packets.fileno(): self._packets}
        while True:
            ready, _, _ = select.select(list(socks), [], [], 0 if got else timeout)
            if not ready:
                return got
            got = True
            for fd in ready:
                try:
                    message = socks[fd].recv()
                except NanomsgError as e:
                    raise BMv2PacketError(f"{e}\n{self.process.log_tail()}") from None
                if socks[fd] is self._events:
                    self._event(message)
                else:
                    self._packet(message)

    def _event(self, message: bytes) -> None:
        if len(message) < _EVENT.size:
            return
        kind, _, _, _, pid, copy, arg = _EVENT.unpack_from(message)
        if kind == _PACKET_IN:
            self._packets_in += 1
        elif kind == _PACKET_OUT:
            self._out_ids.append(pid)
        elif kind == _PIPELINE_START:
            self._running.add((pid, copy, arg))
        elif kind == _PIPELINE_DONE:
            self._running.discard((pid, copy, arg))

    def _packet(self, message: bytes) -> None:
        kind, port, length = _HEADER.unpack_from(message)
        if kind == _MSG_PACKET_OUT:
            self._outputs.append((port, message[_HEADER.size:_HEADER.size + length]))

    def close(self) -> None:
        self._events.close()
        self._packets.close()
