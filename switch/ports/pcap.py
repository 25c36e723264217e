"""A minimal classic-libpcap writer (LINKTYPE_ETHERNET, microsecond timestamps).

Records are buffered in the file object; the owner calls :meth:`PcapWriter.flush`
regularly so that a reader (tcpdump -r, scapy's rdpcap, Wireshark) sees the packets
while the switch runs. The global header is flushed at once, so even a capture with no
packets yet is a valid file.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

PCAP_MAGIC_USEC = 0xA1B2C3D4
LINKTYPE_ETHERNET = 1
DEFAULT_SNAPLEN = 262144

_GLOBAL_HEADER = struct.Struct("<IHHiIII")  # magic, major, minor, thiszone, sigfigs, snaplen, net
_RECORD_HEADER = struct.Struct("<IIII")  # ts_sec, ts_usec, incl_len, orig_len


class PcapWriter:
    """Writes one pcap file. Not thread-safe."""

    def __init__(
        self,
        path: str | Path,
        *,
        snaplen: int = DEFAULT_SNAPLEN,
        linktype: int = LINKTYPE_ETHERNET,
        buffer_size: int = 1 << 16,
    ) -> None:
        self.path = Path(path)
        self.snaplen = snaplen
        self.packets = 0
        #: True when records were written since the last flush.
        self.dirty = False
        self._f: BinaryIO = open(self.path, "wb", buffering=buffer_size)
        self._f.write(_GLOBAL_HEADER.pack(PCAP_MAGIC_USEC, 2, 4, 0, 0, snaplen, linktype))
        self._f.flush()

    def write(self, frame: bytes | bytearray | memoryview, timestamp: float) -> None:
        """Append one frame captured at ``timestamp`` (seconds since the epoch)."""
        usec_total = int(timestamp * 1_000_000)
        sec, usec = divmod(usec_total, 1_000_000)
        length = len(frame)
        incl = length if length <= self.snaplen else self.snaplen
        f = self._f
        f.write(_RECORD_HEADER.pack(sec, usec, incl, length))
        f.write(frame if incl == length else memoryview(frame)[:incl])
        self.packets += 1
        self.dirty = True

    def flush(self) -> None:
        if self.dirty:
            self._f.flush()
            self.dirty = False

    @property
    def closed(self) -> bool:
        return self._f.closed

    def close(self) -> None:
        if not self._f.closed:
            self._f.flush()
            self._f.close()
        self.dirty = False

    def __enter__(self) -> PcapWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
