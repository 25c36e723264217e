"""The data path of ``ina switch``: frames from the ports through the switch and out.

Everything runs in the process's main thread (the port layer is not thread-safe); the
only data-path work that starts elsewhere is a PacketOut, which a gRPC thread queues
here and announces on an eventfd that the main loop watches.

A batch of received frames is injected under the P4Runtime server's lock (so a Write
batch is atomic with respect to packets, as the server promises), then the outputs are
transmitted: to a port's interface, to the controller as a PacketIn for the CPU port,
or dropped and counted when the egress port has no interface (BMv2 drops those too).
A frame the switch cannot process is counted and logged once per kind of failure; the
switch goes on with the next frame.
"""

from __future__ import annotations

import logging
import os
import queue
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from switch.ports import PortSet
from switch.process.trace import PacketTrace

log = logging.getLogger("switch.process")

# Drop reasons the data path adds to the port layer's (per ingress port).
DROP_P4 = "p4_drop"  # the program dropped the packet (no copy left the switch)
DROP_NO_PIPELINE = "no_pipeline"  # no program yet (--no-p4 before SetForwardingPipelineConfig)
DROP_PIPELINE_ERROR = "pipeline_error"  # the switch failed on the packet (a bug; logged)


@dataclass
class DataplaneStats:
    """Counters of the data path, next to the port layer's own."""

    #: ingress port -> drop reason -> packets
    ingress_drops: defaultdict[int, Counter[str]] = field(
        default_factory=lambda: defaultdict(Counter))
    #: egress port without an interface -> packets sent there and dropped
    no_port: Counter[int] = field(default_factory=Counter)
    packet_in: int = 0
    packet_out: int = 0

    def as_json(self) -> dict[str, Any]:
        return {
            "ingress_drops": {str(p): dict(c) for p, c in sorted(self.ingress_drops.items())},
            "no_port": {str(p): n for p, n in sorted(self.no_port.items())},
            "packet_in": self.packet_in,
            "packet_out": self.packet_out,
        }


class Dataplane:
    """Moves frames between a :class:`PortSet` and a P4Runtime server's switch."""

    def __init__(self, ports: PortSet, server: Any, cpu_port: int | None,
                 trace: PacketTrace | None = None):
        self.ports = ports
        self.server = server
        self.cpu_port = cpu_port
        self.trace = trace
        self.stats = DataplaneStats()
        self._packet_outs: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self._wakeup = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        self._failures_logged: set[str] = set()

    # ------------------------------------------------------------ cross-thread input

    def wakeup_fd(self) -> int:
        """Readable when packet-outs are queued or :meth:`wake` was called."""
        return self._wakeup

    def wake(self) -> None:
        """Make the main loop's wait end (safe from any thread and signal handlers)."""
        try:
            os.eventfd_write(self._wakeup, 1)
        except OSError:
            pass  # closed during shutdown

    def queue_packet_out(self, frame: bytes) -> None:
        """The server's packet-out hook: ``frame`` (controller header included) is
        injected on the CPU port by the main loop."""
        self._packet_outs.put(frame)
        self.wake()

    def on_wakeup(self) -> None:
        """Called by the main loop when the wakeup fd is readable."""
        try:
            os.eventfd_read(self._wakeup)
        except BlockingIOError:
            pass
        frames = []
        while True:
            try:
                frames.append(self._packet_outs.get_nowait())
            except queue.Empty:
                break
        if frames and self.cpu_port is not None:
            self.stats.packet_out += len(frames)
            cpu = self.cpu_port
            self.process([(cpu, f) for f in frames], what="packet-out")

    # ------------------------------------------------------------------ the data path

    def process(self, frames: list[tuple[int, bytes]], what: str = "packet") -> None:
        """Run received frames through the switch and transmit what comes out."""
        if not frames:
            return
        server = self.server
        trace = self.trace
        drops = self.stats.ingress_drops
        outputs: list[tuple[int, bytes]] = []
        dropped: list[int] = []  # the ingress port of every packet the program dropped
        with server.lock:
            sw = server.switch
            if sw is None:
                for port, _ in frames:
                    drops[port][DROP_NO_PIPELINE] += 1
                return
            if trace is None and getattr(sw, "engine", "python") == "native":
                # one call for the whole batch; the native engine does not fail
                outputs, counts = sw.process_batch(frames)
                dropped = [port for (port, _f), n in zip(frames, counts, strict=True) if not n]
            else:
                self._inject_each(sw, frames, what, outputs, dropped)
            digests = bool(getattr(sw, "digests", None))
        if dropped:
            for port, n in Counter(dropped).items():
                drops[port][DROP_P4] += n
        if digests:
            server.poll_digests()
        self._transmit(outputs)
        if trace is not None:
            trace.flush()

    def _inject_each(self, sw: Any, frames: list[tuple[int, bytes]], what: str,
                     outputs: list[tuple[int, bytes]], dropped: list[int]) -> None:
        """The frames one by one (the Python engine), tracing each when asked."""
        trace = self.trace
        with sw.batch() as inject:
            for port, frame in frames:
                if trace is not None:
                    trace.start_packet(port, what)
                try:
                    out = inject(port, frame)
                except Exception as e:  # noqa: BLE001 - one bad packet must not stop it
                    self._failed(port, frame, e)
                    continue
                if out:
                    outputs += out
                else:
                    dropped.append(port)

    def _transmit(self, outputs: list[tuple[int, bytes]]) -> None:
        cpu = self.cpu_port
        for port, frame in self.ports.send_batch(outputs):
            if port == cpu:
                self.stats.packet_in += 1
                self.server.packet_in(frame)
            else:
                self.stats.no_port[port] += 1

    def _failed(self, port: int, frame: bytes, e: Exception) -> None:
        self.stats.ingress_drops[port][DROP_PIPELINE_ERROR] += 1
        if self.trace is not None:
            self.trace.note(f"switch error: {type(e).__name__}: {e}: packet dropped")
        kind = f"{type(e).__name__}: {e}"
        if kind not in self._failures_logged and len(self._failures_logged) < 20:
            self._failures_logged.add(kind)
            log.error("a %d-byte frame from port %d made the switch fail (%s); the frame is "
                      "dropped and further such failures are only counted: %s",
                      len(frame), port, kind, frame[:64].hex(), exc_info=True)

    def close(self) -> None:
        try:
            os.close(self._wakeup)
        except OSError:
            pass
