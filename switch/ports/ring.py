"""A PACKET_MMAP receive ring (TPACKET_V2) for a port's raw socket.

The kernel writes each received frame into the next slot of a ring that the process
has mapped, so a batch of frames costs no system call per frame: taking a frame is a
look at its slot's status word and one copy. (A plain socket costs one ``recv`` per
frame, and the ``recv`` that finds nothing raises.) Measured on veth, 64-frame
batches of 1078-byte frames: 0.7 us of CPU per received frame against 1.4 us.

Transmit rings (PACKET_TX_RING) were measured too and left out: on veth the kernel's
ring transmit path costs more per frame (2.3 us) than one ``send`` each (1.9 us).

Slot layout (``struct tpacket2_hdr``, 32 bytes, then a ``struct sockaddr_ll``):
``status``, ``len`` (the frame's length on the wire), ``snaplen`` (what the slot
holds), ``mac`` (the frame's offset in the slot), ... A slot belongs to the process
while its status has ``TP_STATUS_USER`` and goes back to the kernel with status 0.
"""

from __future__ import annotations

import mmap
import socket
import struct

SOL_PACKET = 263
PACKET_RX_RING = 5
PACKET_VERSION = 10
TPACKET_V2 = 1

TP_STATUS_USER = 1  # the slot holds a frame for the process

SLOT_HEADER = struct.Struct("=IIIH")  # status, len, snaplen, mac
STATUS = struct.Struct("=I")
PKTTYPE_AT = 32 + 10  # sockaddr_ll.sll_pkttype, right after the header
# A received Ethernet frame starts at TPACKET_ALIGN(52 + 16) - 14 = 66 in its slot.
RX_DATA_AT = 66

#: Slot size: an Ethernet frame of up to 1982 bytes fits (MTU 1500 with room to spare).
DEFAULT_SLOT = 2048
BLOCK = 1 << 16  # bytes per ring block (a multiple of the page size and of the slot)


class RingError(OSError):
    """The ring could not be set up (the caller falls back to a plain socket)."""


class RxRing:
    """A receive ring on an AF_PACKET socket (set up before the socket is bound)."""

    def __init__(self, sock: socket.socket, slots: int, slot: int = DEFAULT_SLOT):
        if BLOCK % slot or slot % 16:
            raise ValueError(f"slot size {slot} must divide {BLOCK} and be a multiple of 16")
        per_block = BLOCK // slot
        blocks = max(1, -(-slots // per_block))
        try:
            sock.setsockopt(SOL_PACKET, PACKET_VERSION, TPACKET_V2)
            sock.setsockopt(SOL_PACKET, PACKET_RX_RING,
                            struct.pack("IIII", BLOCK, blocks, slot, blocks * per_block))
            self.map = mmap.mmap(sock.fileno(), blocks * BLOCK, mmap.MAP_SHARED,
                                 mmap.PROT_READ | mmap.PROT_WRITE)
        except OSError as e:
            raise RingError(e.errno, f"cannot set up a receive ring: {e.strerror}") from None
        self.slot = slot
        self.slots = blocks * per_block
        self.next = 0  # the next slot to look at
        #: the largest frame a slot holds whole
        self.capacity = slot - RX_DATA_AT

    def close(self) -> None:
        self.map.close()
