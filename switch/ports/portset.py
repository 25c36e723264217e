"""The set of switch ports served by one process.

A :class:`PortSet` owns one raw socket per port, the ports' impairments and pcap files,
and one epoll instance over all sockets. It runs in the caller's thread: there are no
helper threads, so per-port order is simply the order of the code paths, and nothing
spins. Delayed and held frames are released from :meth:`PortSet.receive` (which never
sleeps past the next deadline) or, for loops that do their own ``select``, from
:meth:`PortSet.flush_due` at :meth:`PortSet.next_deadline`.

Typical loop::

    with PortSet([(1, "s1-eth1"), (2, "s1-eth2")], pcap_dir=None) as ports:
        while running:
            for port, frame in ports.receive(timeout=0.1):
                for out_port, out_frame in pipeline(port, frame):
                    ports.send(out_port, out_frame)

pcap files show the wire side of each port: ``<iface>_in.pcap`` every frame read from
the interface (before ingress impairments), ``<iface>_out.pcap`` every frame actually
transmitted (after egress impairments, at the time it left). Timestamps are the times
the port layer read or wrote the frame. Pending records are flushed at least every
``pcap_flush_interval`` seconds and whenever ``receive`` is about to wait.
"""

from __future__ import annotations

import select
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from .counters import MutableCounters, PortCounters
from .errors import PortError
from .impair import NO_IMPAIRMENT, Impairer, ImpairmentConfig
from .pcap import PcapWriter
from .rawsock import DEFAULT_RX_BUFFER, DEFAULT_SOCKET_BUFFER, RawSocket
from .spec import validate_ifname

Frame = bytes | bytearray | memoryview
ImpairmentsArg = ImpairmentConfig | Iterable[tuple[int | None, ImpairmentConfig]] | None

#: Frames read from one socket per wakeup before the next socket gets its turn.
DEFAULT_BATCH_LIMIT = 512
DEFAULT_PCAP_FLUSH_INTERVAL = 0.1


@dataclass(eq=False)
class _Port:
    number: int
    iface: str
    counters: MutableCounters
    config: ImpairmentConfig
    egress: Impairer
    ingress: Impairer
    sock: RawSocket | None = None
    pcap_in: PcapWriter | None = None
    pcap_out: PcapWriter | None = None

    def configure(self, config: ImpairmentConfig) -> None:
        self.config = config
        self.egress.configure(config if config.applies_to("egress") else NO_IMPAIRMENT)
        self.ingress.configure(config if config.applies_to("ingress") else NO_IMPAIRMENT)


def _check_ports(ports: Iterable[tuple[int, str]]) -> list[tuple[int, str]]:
    result: list[tuple[int, str]] = []
    by_number: dict[int, str] = {}
    by_iface: dict[str, int] = {}
    for number, iface in ports:
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            raise PortError(f"port number must be a non-negative integer, got {number!r}")
        problem = validate_ifname(iface) if isinstance(iface, str) else f"{iface!r} is not a name"
        if problem is not None:
            raise PortError(f"port {number}: {problem}")
        if number in by_number:
            raise PortError(f"port {number} is given twice ({by_number[number]} and {iface})")
        if iface in by_iface:
            raise PortError(
                f"interface {iface} is given twice (ports {by_iface[iface]} and {number})"
            )
        by_number[number] = iface
        by_iface[iface] = number
        result.append((number, iface))
    return result


def _resolve_impairments(
    arg: ImpairmentsArg, numbers: Iterable[int]
) -> dict[int, ImpairmentConfig]:
    """Per-port configs from one config for all ports or ``(port | None, config)`` pairs.

    A config for a specific port wins over one for all ports, whatever their order; of
    two configs for the same target the later one wins.
    """
    numbers = list(numbers)
    result = dict.fromkeys(numbers, NO_IMPAIRMENT)
    if arg is None:
        return result
    if isinstance(arg, ImpairmentConfig):
        return dict.fromkeys(numbers, arg)
    specific: dict[int, ImpairmentConfig] = {}
    for port, config in arg:
        if not isinstance(config, ImpairmentConfig):
            raise PortError(f"impairment for port {port} is not an ImpairmentConfig: {config!r}")
        if port is None:
            result = dict.fromkeys(numbers, config)
        elif port not in result:
            raise PortError(f"impairment given for port {port}, which is not a configured port")
        else:
            specific[port] = config
    result.update(specific)
    return result


class PortSet:
    """Switch ports on Linux interfaces, with impairments and optional pcap capture.

    ``ports``: ``(port number, interface name)`` pairs. ``impairments``: one
    :class:`ImpairmentConfig` for every port, or ``(port | None, config)`` pairs as
    returned by :func:`parse_impairment_spec` (None meaning all ports). The constructor
    only validates; :meth:`open` touches the system. Not thread-safe.
    """

    def __init__(
        self,
        ports: Iterable[tuple[int, str]],
        pcap_dir: str | Path | None = None,
        impairments: ImpairmentsArg = None,
        *,
        socket_buffer: int = DEFAULT_SOCKET_BUFFER,
        rx_buffer: int = DEFAULT_RX_BUFFER,
        batch_limit: int = DEFAULT_BATCH_LIMIT,
        pcap_flush_interval: float = DEFAULT_PCAP_FLUSH_INTERVAL,
        ignore_outgoing_sockopt: bool = True,
        rx_ring: bool = True,
    ) -> None:
        pairs = _check_ports(ports)
        configs = _resolve_impairments(impairments, (n for n, _ in pairs))
        self._ports: dict[int, _Port] = {}
        for number, iface in pairs:
            counters = MutableCounters()
            self._ports[number] = _Port(
                number=number,
                iface=iface,
                counters=counters,
                config=NO_IMPAIRMENT,
                egress=Impairer(NO_IMPAIRMENT, f"{number}/egress", counters),
                ingress=Impairer(NO_IMPAIRMENT, f"{number}/ingress", counters),
            )
            self._ports[number].configure(configs[number])
        self._port_list = list(self._ports.values())
        #: every port with an impairer that is not bypassed (and maybe some whose
        #: impairers have become bypassed since): the only ports the deadlines and
        #: ``flush_due`` need to look at
        self._impaired: list[_Port] = []
        self._refresh_impaired()
        self.pcap_dir = Path(pcap_dir) if pcap_dir is not None else None
        self._socket_buffer = socket_buffer
        self._rx_buffer = rx_buffer
        self._batch_limit = batch_limit
        self._pcap_flush_interval = pcap_flush_interval
        self._ignore_outgoing_sockopt = ignore_outgoing_sockopt
        self._rx_ring = rx_ring
        self._epoll: select.epoll | None = None
        self._by_fd: dict[int, _Port] = {}
        self._pcaps: list[PcapWriter] = []
        self._pcap_flush_at: float | None = None

    # ----------------------------------------------------------------- lifecycle

    @property
    def is_open(self) -> bool:
        return self._epoll is not None

    def open(self) -> None:
        """Open every port; on any failure close what was opened and raise PortError."""
        if self._epoll is not None:
            raise PortError("the ports are already open")
        try:
            self._open_all()
        except BaseException:
            self._close_all()
            raise

    def _open_all(self) -> None:
        if self.pcap_dir is not None:
            try:
                self.pcap_dir.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise PortError(
                    f"cannot create pcap directory {self.pcap_dir}: {e.strerror}"
                ) from None
        self._epoll = select.epoll()
        for st in self._port_list:
            st.sock = RawSocket(
                st.iface,
                st.counters,
                socket_buffer=self._socket_buffer,
                rx_buffer=self._rx_buffer,
                ignore_outgoing_sockopt=self._ignore_outgoing_sockopt,
                ring=self._rx_ring,
            )
            fd = st.sock.fileno()
            self._by_fd[fd] = st
            self._epoll.register(fd, select.EPOLLIN)
            if self.pcap_dir is not None:
                st.pcap_in = self._open_pcap(self.pcap_dir / f"{st.iface}_in.pcap")
                st.pcap_out = self._open_pcap(self.pcap_dir / f"{st.iface}_out.pcap")

    def _open_pcap(self, path: Path) -> PcapWriter:
        try:
            writer = PcapWriter(path)
        except OSError as e:
            raise PortError(f"cannot write pcap file {path}: {e.strerror}") from None
        self._pcaps.append(writer)
        return writer

    def close(self) -> None:
        """Close every port. Frames still delayed or held by impairments are discarded."""
        self._close_all()

    def _close_all(self) -> None:
        for st in self._port_list:
            st.egress.discard()
            st.ingress.discard()
            if st.sock is not None:
                st.sock.close()
                st.sock = None
            st.pcap_in = st.pcap_out = None
        for writer in self._pcaps:
            writer.close()
        self._pcaps.clear()
        self._pcap_flush_at = None
        self._by_fd.clear()
        if self._epoll is not None:
            self._epoll.close()
            self._epoll = None

    def __enter__(self) -> PortSet:
        if not self.is_open:
            self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------- lookup

    @property
    def ports(self) -> list[tuple[int, str]]:
        """``(port number, interface)`` pairs in configuration order."""
        return [(st.number, st.iface) for st in self._port_list]

    def iface(self, port: int) -> str:
        return self._port(port).iface

    def __contains__(self, port: object) -> bool:
        return port in self._ports

    def __iter__(self) -> Iterator[int]:
        return iter(self._ports)

    def __len__(self) -> int:
        return len(self._ports)

    def _port(self, port: int) -> _Port:
        try:
            return self._ports[port]
        except (KeyError, TypeError):
            raise PortError(f"no port {port!r}") from None

    def _require_open(self) -> select.epoll:
        if self._epoll is None:
            raise PortError("the ports are not open")
        return self._epoll

    # ----------------------------------------------------------------- event loop integration

    def fileno(self) -> int:
        """An epoll descriptor that is readable whenever any port has frames to read."""
        return self._require_open().fileno()

    def create_fanout(self, program: Sequence[tuple[int, int, int, int]]) -> dict[int, int]:
        """Make each port's socket the first of a fanout group spreading its interface's
        frames with ``program`` (``switch.ports.fanout``); port -> group id."""
        self._require_open()
        groups = {}
        for st in self._port_list:
            assert st.sock is not None
            groups[st.number] = st.sock.create_fanout(program)
        return groups

    def join_fanout(self, groups: dict[int, int]) -> None:
        """Join each port's socket to its interface's fanout group (``create_fanout``
        of another PortSet on the same interfaces)."""
        self._require_open()
        for st in self._port_list:
            assert st.sock is not None
            st.sock.join_fanout(groups[st.number])

    def poll_fds(self) -> list[int]:
        """The ports' socket descriptors, for loops that select on them directly."""
        self._require_open()
        return list(self._by_fd)

    def _refresh_impaired(self) -> None:
        self._impaired = [st for st in self._port_list
                          if not (st.egress.bypass and st.ingress.bypass)]

    def next_deadline(self) -> float | None:
        """When ``flush_due`` next has work (``time.monotonic()`` scale), or None.

        Covers delayed and held frames in both directions and pending pcap records.
        """
        deadline = self._pcap_flush_at
        for st in self._impaired:
            for imp in (st.egress, st.ingress):
                if not imp.bypass:
                    d = imp.next_deadline()
                    if d is not None and (deadline is None or d < deadline):
                        deadline = d
        return deadline

    def flush_due(self, now: float | None = None) -> list[tuple[int, bytes]]:
        """Transmit due egress frames, flush due pcap records, return due ingress frames.

        Only needed by loops that do not call :meth:`receive` (which does this itself);
        the returned frames must be processed like received ones.
        """
        self._require_open()
        if now is None:
            now = time.monotonic()
        out: list[tuple[int, bytes]] = []
        if self._impaired:
            for st in self._impaired:
                if not st.egress.bypass:
                    self._transmit_batch(st, st.egress.due(now))
                if not st.ingress.bypass:
                    number = st.number
                    out.extend((number, frame) for frame in st.ingress.due(now))
            self._refresh_impaired()
        if self._pcap_flush_at is not None and now >= self._pcap_flush_at:
            self.flush_pcaps()
        return out

    def flush_pcaps(self) -> None:
        """Write buffered pcap records to the files now."""
        for writer in self._pcaps:
            writer.flush()
        self._pcap_flush_at = None

    # ----------------------------------------------------------------- data path

    def receive(self, timeout: float | None = None) -> list[tuple[int, bytes]]:
        """Wait up to ``timeout`` seconds (None: no limit) and return received frames.

        Returns ``(port, frame)`` pairs, in arrival order within each port. Every
        readable socket is drained (up to ``batch_limit`` frames each per call). The
        wait ends early at the next impairment deadline, so the result may be empty
        before ``timeout``; ``timeout=0`` never blocks.
        """
        epoll = self._require_open()
        now = time.monotonic()
        wait = self._wait_time(timeout, now)
        if wait != 0 and self._pcap_flush_at is not None:
            self.flush_pcaps()  # about to sleep: let readers see everything so far
            wait = self._wait_time(timeout, now)
        events = epoll.poll(-1 if wait is None else wait)
        now = time.monotonic()
        out: list[tuple[int, bytes]] = []
        if events:
            wall = time.time()
            limit = self._batch_limit
            for fd, _mask in events:
                st = self._by_fd[fd]
                assert st.sock is not None
                frames: list[bytes] = []
                st.sock.recv_batch(frames, limit)
                if not frames:
                    continue
                if st.pcap_in is not None:
                    write = st.pcap_in.write
                    for frame in frames:
                        write(frame, wall)
                    self._pcap_written(now)
                number = st.number
                ingress = st.ingress
                if ingress.bypass:
                    out.extend([(number, frame) for frame in frames])
                else:
                    for frame in frames:
                        out.extend((number, f) for f in ingress.submit(frame, now))
        out.extend(self.flush_due(now))
        return out

    def _wait_time(self, timeout: float | None, now: float) -> float | None:
        if timeout is not None and timeout < 0:
            timeout = 0.0
        deadline = self.next_deadline()
        if deadline is None:
            return timeout
        until = max(0.0, deadline - now)
        return until if timeout is None else min(timeout, until)

    def send(self, port: int, frame: Frame) -> None:
        """Transmit ``frame`` on ``port`` through the port's egress impairments.

        Transmission errors are counted (``drops["tx_error"]``), not raised; an unknown
        port raises :class:`PortError`.
        """
        st = self._port(port)
        if st.sock is None:
            raise PortError("the ports are not open")
        egress = st.egress
        if egress.bypass:
            self._transmit(st, frame)
            return
        data = frame if isinstance(frame, bytes) else bytes(frame)
        for f in egress.submit(data, time.monotonic()):
            self._transmit(st, f)

    def send_batch(self, outputs: Iterable[tuple[int, Frame]]) -> list[tuple[int, Frame]]:
        """Transmit ``(port, frame)`` pairs as ``send`` would one by one, in order within
        each port (each port's frames go through its impairments together); returns
        the pairs whose port is not one of the set's, unsent.

        A frame for a port without egress impairments or capture goes to its socket
        at once; the others are gathered per port first.
        """
        self._require_open()
        by_number = self._ports
        unknown: list[tuple[int, Frame]] = []
        by_port: dict[int, list[Frame]] = {}
        for port, frame in outputs:
            st = by_number.get(port)
            if st is None:
                unknown.append((port, frame))
            elif st.egress.bypass and st.pcap_out is None:
                st.sock.send(frame)  # type: ignore[union-attr]  # open
            else:
                frames = by_port.get(port)
                if frames is None:
                    frames = by_port[port] = []
                frames.append(frame)
        now = 0.0
        for port, frames in by_port.items():
            st = by_number[port]
            egress = st.egress
            if not egress.bypass:
                now = now or time.monotonic()
                released: list[Frame] = []
                for frame in frames:
                    released += egress.submit(frame if isinstance(frame, bytes) else bytes(frame),
                                              now)
                frames = released
            self._transmit_batch(st, frames)
        return unknown

    def _transmit(self, st: _Port, frame: Frame) -> None:
        assert st.sock is not None
        if st.sock.send(frame) and st.pcap_out is not None:
            st.pcap_out.write(frame, time.time())
            if self._pcap_flush_at is None:
                self._pcap_written(time.monotonic())

    def _transmit_batch(self, st: _Port, frames: Sequence[Frame]) -> None:
        if not frames:
            return
        assert st.sock is not None
        sent = st.sock.send_batch(frames)
        if sent and st.pcap_out is not None:
            wall = time.time()
            for frame in sent:
                st.pcap_out.write(frame, wall)
            if self._pcap_flush_at is None:
                self._pcap_written(time.monotonic())

    def _pcap_written(self, now: float) -> None:
        if self._pcap_flush_at is None:
            self._pcap_flush_at = now + self._pcap_flush_interval

    # ----------------------------------------------------------------- configuration, stats

    def set_impairment(self, port: int | None, config: ImpairmentConfig) -> None:
        """Replace the impairments of ``port`` (None: every port) at run time.

        Frames already delayed or held keep their place and release time.
        """
        if not isinstance(config, ImpairmentConfig):
            raise PortError(f"not an ImpairmentConfig: {config!r}")
        targets = self._port_list if port is None else [self._port(port)]
        for st in targets:
            st.configure(config)
        self._refresh_impaired()

    def impairment(self, port: int) -> ImpairmentConfig:
        return self._port(port).config

    def counters(self, port: int) -> PortCounters:
        st = self._port(port)
        if st.sock is not None:
            st.sock.poll_kernel_drops()
        return st.counters.snapshot()

    def all_counters(self) -> dict[int, PortCounters]:
        return {number: self.counters(number) for number in self._ports}
