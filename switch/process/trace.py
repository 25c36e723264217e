"""Per-packet traces for ``--log-console`` and ``--log-file``, as BMv2's console log.

The switch's trace callback hands over one line per event (parser states, table hits
and misses with the entry, actions, drops, egress ports), most with their P4 source
position ``file.p4(line)``. :class:`PacketTrace` numbers the packets, prefixes each
line with the wall-clock time and the packet number and buffers the lines; the data
plane flushes after each batch, so a reader sees a packet's trace right after the
switch handled it without one write per line.
"""

from __future__ import annotations

import time
from typing import TextIO


class PacketTrace:
    """Writes trace lines to any number of text streams (stdout, a log file)."""

    def __init__(self, sinks: list[TextIO]):
        self._sinks = sinks
        self._lines: list[str] = []
        self._packet = 0
        self._prefix = ""

    def start_packet(self, port: int, what: str = "packet") -> None:
        """Begin the trace of the next packet (``what`` says where it came from)."""
        self._packet += 1
        now = time.time()
        stamp = time.strftime("%H:%M:%S", time.localtime(now)) + f".{int(now % 1 * 1e6):06d}"
        self._prefix = f"[{stamp}] [pkt {self._packet}] "
        self._lines.append(f"{self._prefix}{what} received on port {port}")

    def __call__(self, line: str) -> None:
        self._lines.append(self._prefix + line)

    def note(self, line: str) -> None:
        """A line that belongs to the current packet but comes from the process."""
        self._lines.append(self._prefix + line)

    def flush(self) -> None:
        if not self._lines:
            return
        text = "\n".join(self._lines) + "\n"
        self._lines.clear()
        for sink in self._sinks:
            try:
                sink.write(text)
                sink.flush()
            except (OSError, ValueError):
                pass  # a closed stdout (the reader went away) must not stop the switch

    def close(self) -> None:
        self.flush()
