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
"""

from __future__ import annotations

import errno
import logging
import socket
import struct

from .counters import (
    DROP_RX_OVERFLOW,
    DROP_RX_OVERSIZE,
    DROP_RX_TRUNCATED,
    DROP_TX_ERROR,
    ERROR_RX,
    MutableCounters,
)
from .errors import PortError

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


def _set_buffer(sock: socket.socket, force_opt: int, opt: int, size: int) -> None:
    try:
        sock.setsockopt(socket.SOL_SOCKET, force_opt, size)
    except OSError:
        # Without CAP_NET_ADMIN the plain option applies, capped at net.core.[rw]mem_max.
        sock.setsockopt(socket.SOL_SOCKET, opt, size)


class RawSocket:
    """A promiscuous AF_PACKET socket on ``iface``; counts into ``counters``.

    Construction opens the socket; errors are :class:`PortError` with a clear message.
    ``ignore_outgoing_sockopt=False`` forces the per-frame address check (for tests).
    """

    def __init__(
        self,
        iface: str,
        counters: MutableCounters,
        *,
        socket_buffer: int = DEFAULT_SOCKET_BUFFER,
        rx_buffer: int = DEFAULT_RX_BUFFER,
        ignore_outgoing_sockopt: bool = True,
    ) -> None:
        self.iface = iface
        self.counters = counters
        self._logged_errnos: set[int] = set()
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
            self._setup(sock, socket_buffer, ignore_outgoing_sockopt)
        except OSError as e:
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
        self._sock = sock
        self._buf = bytearray(rx_buffer)
        self._view = memoryview(self._buf)
        self.closed = False
        return self

    def _setup(self, sock: socket.socket, socket_buffer: int, ignore_outgoing: bool) -> None:
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
        mreq = struct.pack("iHH8s", self.ifindex, PACKET_MR_PROMISC, 0, b"")
        sock.setsockopt(SOL_PACKET, PACKET_ADD_MEMBERSHIP, mreq)
        # Python converts the protocol to network byte order for AF_PACKET addresses.
        sock.bind((self.iface, ETH_P_ALL))

    def fileno(self) -> int:
        return self._sock.fileno()

    def recv_batch(self, out: list[bytes], limit: int) -> int:
        """Append up to ``limit`` received frames to ``out`` without blocking.

        Returns how many recv calls were made (including frames skipped as drops), so a
        caller can tell whether the socket may still have data (``== limit``).
        """
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

    def send(self, frame: bytes | bytearray | memoryview) -> bool:
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
            self._sock.close()
