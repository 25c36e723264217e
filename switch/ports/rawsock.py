"""One AF_PACKET raw socket bound to one Linux interface.

Details that matter for a switch port:

- The socket is created with protocol 0 (it receives nothing) and only then bound to
  the interface with ETH_P_ALL. Created with ETH_P_ALL directly it would briefly receive
  the frames of every interface on the machine and hand them to the wrong port.
- The interface is put in promiscuous mode with PACKET_ADD_MEMBERSHIP/PACKET_MR_PROMISC.
  The membership belongs to the socket, so the kernel undoes it when the socket closes,
  also when the process dies; the admin state of the interface is never touched.
- Only frames arriving on the interface are switch ingress. A packet socket also sees
  the interface's outgoing frames (PACKET_OUTGOING): the kernel already skips the ones
  the socket sent itself, but not those of other local senders on the same interface
  (the kernel's IPv6 neighbour discovery, a second switch instance, packet injectors).
  PACKET_IGNORE_OUTGOING (Linux 4.20+) drops all outgoing frames in the kernel; without
  it each frame's address is read and outgoing ones are skipped. The address path costs
  an extra ioctl per frame in CPython, so it is only used when the option is missing.
- The receive and send buffers are enlarged with SO_RCVBUFFORCE/SO_SNDBUFFORCE (root
  may exceed net.core.rmem_max), so a burst waits in the kernel instead of being dropped
  while the switch is busy. Drops that still happen are read from PACKET_STATISTICS.
- VLAN tags: on veth and on NICs with VLAN offload the kernel may strip the 802.1Q tag
  and report it out of band (PACKET_AUXDATA), so a tagged frame can arrive untagged.
  The port layer does not restore tags yet; VLAN-tagged traffic is not supported.
- Offloads: with GSO/GRO enabled on an interface the kernel can hand over frames larger
  than the MTU; they are received whole (up to the receive buffer size) but sending
  them on through a port with a normal MTU fails (counted as ``tx_error``). Topologies
  should switch TSO/GSO/GRO off on the hosts' interfaces.
- Right after an interface comes up, until the kernel's link watcher has attached its
  queueing discipline (operstate "up"), the kernel accepts frames and discards them
  silently; they count as transmitted. Start traffic only once the links are up.
- Received frames come through a PACKET_MMAP ring (``ring.py``) when the kernel
  provides one: no system call per frame. Its slots are sized for the interface's MTU
  when the port opens, so a larger frame (a GSO frame, or any frame after the MTU was
  raised) is dropped as ``rx_oversize``; such a frame could not be sent on through a
  port of that MTU anyway. The ring holds 4096 frames (with the default socket buffer
  and MTU) however small they are. ``ring=False`` (or a kernel without rings) uses one
  ``recv`` per frame, into the receive buffer.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import socket
import struct
from collections.abc import Sequence

from . import fanout
from .counters import (
    DROP_RX_OVERFLOW,
    DROP_RX_OVERSIZE,
    DROP_RX_TRUNCATED,
    DROP_TX_ERROR,
    ERROR_RX,
    MutableCounters,
)
from .errors import PortError
from .ring import (
    BLOCK,
    DEFAULT_SLOT,
    PKTTYPE_AT,
    RX_DATA_AT,
    SLOT_HEADER,
    STATUS,
    TP_STATUS_USER,
    RingError,
    RxRing,
)

log = logging.getLogger(__name__)

# Linux constants that the socket module does not export on every build.
SOL_PACKET = 263
PACKET_ADD_MEMBERSHIP = 1
PACKET_STATISTICS = 6
PACKET_IGNORE_OUTGOING = 23
PACKET_MR_PROMISC = 1
PACKET_OUTGOING = 4
ETH_P_ALL = 0x0003
SO_SNDBUFFORCE = 32
SO_RCVBUFFORCE = 33

ETH_HEADER_LEN = 14

#: Default receive buffer: large enough for a 64 KiB GSO frame with room to spare.
DEFAULT_RX_BUFFER = 256 * 1024
#: Default socket buffers (the kernel doubles the value for its bookkeeping).
DEFAULT_SOCKET_BUFFER = 8 * 1024 * 1024
#: How long a send may block when the device queue is full before it counts as tx_error.
SEND_TIMEOUT_S = 0.05
SIOCGIFMTU = 0x8921
VLAN_HEADER_LEN = 4

Frame = bytes | bytearray | memoryview


def _set_buffer(sock: socket.socket, force_opt: int, opt: int, size: int) -> None:
    try:
        sock.setsockopt(socket.SOL_SOCKET, force_opt, size)
    except OSError:
        # Without CAP_NET_ADMIN the plain option applies, capped at net.core.[rw]mem_max.
        sock.setsockopt(socket.SOL_SOCKET, opt, size)


class RawSocket:
    """A promiscuous AF_PACKET socket on ``iface``; counts into ``counters``.

    Construction opens the socket; errors are :class:`PortError` with a clear message.
    ``ignore_outgoing_sockopt=False`` forces the per-frame address check (for tests);
    ``ring=False`` one ``recv`` per received frame.
    """

    def __init__(
        self,
        iface: str,
        counters: MutableCounters,
        *,
        socket_buffer: int = DEFAULT_SOCKET_BUFFER,
        rx_buffer: int = DEFAULT_RX_BUFFER,
        ignore_outgoing_sockopt: bool = True,
        ring: bool = True,
    ) -> None:
        self.iface = iface
        self.counters = counters
        self._logged_errnos: set[int] = set()
        self._ring: RxRing | None = None
        try:
            self.ifindex = socket.if_nametoindex(iface)
        except OSError:
            raise PortError(f"interface {iface} does not exist") from None
        try:
            sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        except PermissionError:
            raise PortError(
                f"permission denied opening a raw socket on {iface}: "
                "run as root or give the process CAP_NET_RAW"
            ) from None
        except OSError as e:
            raise PortError(f"cannot open a raw socket on {iface}: {e.strerror}") from None
        try:
            self._setup(sock, socket_buffer, ignore_outgoing_sockopt, ring)
        except OSError as e:
            if self._ring is not None:
                self._ring.close()
            sock.close()
            if e.errno in (errno.ENODEV, errno.ENXIO):
                raise PortError(f"interface {iface} does not exist") from None
            if e.errno in (errno.EPERM, errno.EACCES):
                raise PortError(
                    f"permission denied setting up {iface}: run as root or give the "
                    "process CAP_NET_RAW and CAP_NET_ADMIN"
                ) from None
            raise PortError(f"cannot set up interface {iface}: {e.strerror}") from None
        self._sock = sock
        self._buf = bytearray(rx_buffer)
        self._view = memoryview(self._buf)
        self.closed = False

    @classmethod
    def adopt(
        cls,
        sock: socket.socket,
        iface: str,
        counters: MutableCounters,
        *,
        rx_buffer: int = DEFAULT_RX_BUFFER,
        kernel_ignores_outgoing: bool = True,
    ) -> RawSocket:
        """Wrap an already set-up socket, e.g. one passed over by a privileged helper.

        With ``kernel_ignores_outgoing=False`` the socket must return AF_PACKET addresses.
        """
        self = cls.__new__(cls)
        self.iface = iface
        self.counters = counters
        self._logged_errnos = set()
        self.ifindex = 0
        self.kernel_ignores_outgoing = kernel_ignores_outgoing
        self._ring = None
        self._sock = sock
        self._buf = bytearray(rx_buffer)
        self._view = memoryview(self._buf)
        self.closed = False
        return self

    def _setup(self, sock: socket.socket, socket_buffer: int, ignore_outgoing: bool,
               ring: bool) -> None:
        _set_buffer(sock, SO_RCVBUFFORCE, socket.SO_RCVBUF, socket_buffer)
        _set_buffer(sock, SO_SNDBUFFORCE, socket.SO_SNDBUF, socket_buffer)
        sock.setsockopt(
            socket.SOL_SOCKET,
            socket.SO_SNDTIMEO,
            struct.pack("ll", int(SEND_TIMEOUT_S), int(SEND_TIMEOUT_S % 1 * 1_000_000)),
        )
        self.kernel_ignores_outgoing = False
        if ignore_outgoing:
            try:
                sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
                self.kernel_ignores_outgoing = True
            except OSError:
                pass
        if ring:
            ifreq = fcntl.ioctl(sock.fileno(), SIOCGIFMTU,
                                struct.pack("16si20x", self.iface.encode(), 0))
            mtu = struct.unpack_from("i", ifreq, 16)[0]
            # the smallest power-of-two slot that holds a frame of the MTU (and a tag)
            slot = DEFAULT_SLOT
            while slot - RX_DATA_AT < mtu + ETH_HEADER_LEN + VLAN_HEADER_LEN and slot < BLOCK:
                slot *= 2
            try:
                self._ring = RxRing(sock, max(64, socket_buffer // slot), slot)
            except RingError as e:
                log.info("%s: %s; using one recv per frame", self.iface, e.strerror)
        mreq = struct.pack("iHH8s", self.ifindex, PACKET_MR_PROMISC, 0, b"")
        sock.setsockopt(SOL_PACKET, PACKET_ADD_MEMBERSHIP, mreq)
        # Python converts the protocol to network byte order for AF_PACKET addresses.
        sock.bind((self.iface, ETH_P_ALL))

    def fileno(self) -> int:
        return self._sock.fileno()

    def create_fanout(self, program: Sequence[tuple[int, int, int, int]]) -> int:
        """Make this socket the first of a new PACKET_FANOUT group that spreads the
        interface's frames with the classic BPF ``program`` (``fanout``); the group's
        id, for other sockets on the interface to ``join_fanout``."""
        try:
            return fanout.create_group(self._sock, program)
        except OSError as e:
            raise PortError(f"{self.iface}: cannot create a fanout group: {e.strerror}"
                            ) from None

    def join_fanout(self, group: int) -> None:
        try:
            fanout.join_group(self._sock, group)
        except OSError as e:
            raise PortError(f"{self.iface}: cannot join fanout group {group}: {e.strerror}"
                            ) from None

    def recv_batch(self, out: list[bytes], limit: int) -> int:
        """Append up to ``limit`` received frames to ``out`` without blocking.

        Returns how many recv calls were made (including frames skipped as drops), so a
        caller can tell whether the socket may still have data (``== limit``).
        """
        if self._ring is not None:
            return self._recv_ring(out, limit)
        c = self.counters
        buf = self._buf
        view = self._view
        size = len(buf)
        flags = socket.MSG_DONTWAIT | socket.MSG_TRUNC
        check_outgoing = not self.kernel_ignores_outgoing
        recv_into = self._sock.recv_into
        recvfrom_into = self._sock.recvfrom_into
        calls = 0
        while calls < limit:
            try:
                if check_outgoing:
                    n, addr = recvfrom_into(buf, size, flags)
                    if addr[2] == PACKET_OUTGOING:
                        continue
                else:
                    n = recv_into(buf, size, flags)
            except BlockingIOError:
                break
            except OSError as e:
                c.errors[ERROR_RX] += 1
                self._log_error("receive", e)
                break
            finally:
                calls += 1
            # With MSG_TRUNC the kernel reports the frame's full length.
            if n > size:
                c.drops[DROP_RX_OVERSIZE] += 1
                continue
            if n < ETH_HEADER_LEN:
                c.drops[DROP_RX_TRUNCATED] += 1
                continue
            c.rx_packets += 1
            c.rx_bytes += n
            out.append(view[:n].tobytes())
        return calls

    def _recv_ring(self, out: list[bytes], limit: int) -> int:
        """``recv_batch`` from the receive ring: the frames taken (kept or dropped)."""
        rx = self._ring
        assert rx is not None
        c = self.counters
        ring = rx.map
        slot = rx.slot
        slots = rx.slots
        i = rx.next
        largest = min(len(self._buf), rx.capacity)
        check_outgoing = not self.kernel_ignores_outgoing
        header = SLOT_HEADER.unpack_from
        release = STATUS.pack_into
        append = out.append
        taken = kept = kept_bytes = 0
        while taken < limit:
            off = i * slot
            status, length, snaplen, mac = header(ring, off)
            if not status & TP_STATUS_USER:
                break
            taken += 1
            if ETH_HEADER_LEN <= length <= largest and snaplen >= length and not (
                    check_outgoing and ring[off + PKTTYPE_AT] == PACKET_OUTGOING):
                kept += 1
                kept_bytes += length
                start = off + mac
                append(ring[start:start + length])
            elif check_outgoing and ring[off + PKTTYPE_AT] == PACKET_OUTGOING:
                pass
            elif length > largest or snaplen < length:
                c.drops[DROP_RX_OVERSIZE] += 1
            else:
                c.drops[DROP_RX_TRUNCATED] += 1
            release(ring, off, 0)
            i = i + 1 if i + 1 < slots else 0
        rx.next = i
        c.rx_packets += kept
        c.rx_bytes += kept_bytes
        if not taken:
            # woken without a frame: the socket reports an error (the link went down)
            try:
                self._sock.recv_into(self._buf, 1, socket.MSG_DONTWAIT)
            except BlockingIOError:
                pass
            except OSError as e:
                c.errors[ERROR_RX] += 1
                self._log_error("receive", e)
        return taken

    def send_batch(self, frames: Sequence[Frame]) -> list[Frame]:
        """Transmit frames in order; returns those the kernel accepted (the others are
        counted as ``tx_error``)."""
        return [f for f in frames if self.send(f)]

    def send(self, frame: Frame) -> bool:
        """Transmit one frame; on failure count a ``tx_error`` and return False."""
        try:
            n = self._sock.send(frame)
        except OSError as e:
            self.counters.drops[DROP_TX_ERROR] += 1
            self._log_error("send", e)
            return False
        self.counters.tx_packets += 1
        self.counters.tx_bytes += n
        return True

    def poll_kernel_drops(self) -> None:
        """Add the kernel's receive-queue drops since the last call to the counters."""
        if self.closed:
            return
        try:
            raw = self._sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8)
        except OSError:
            return
        _packets, drops = struct.unpack("II", raw)
        if drops:
            self.counters.drops[DROP_RX_OVERFLOW] += drops

    def _log_error(self, what: str, e: OSError) -> None:
        # One log line per port, direction and errno: a down link must not flood the log.
        key = (e.errno or 0) * 2 + (what == "send")
        if key not in self._logged_errnos:
            self._logged_errnos.add(key)
            log.warning("%s on %s failed: %s (further such errors only counted)",
                        what, self.iface, e.strerror or e)

    def close(self) -> None:
        if not self.closed:
            self.poll_kernel_drops()
            self.closed = True
            self._view.release()
            if self._ring is not None:
                self._ring.close()
            self._sock.close()
