"""PortSet on real veth pairs (needs root; skipped otherwise)."""

from __future__ import annotations

import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from ports_helpers import (
    IFF_PROMISC,
    Peer,
    collect,
    drain,
    iface_flags,
    is_test_frame,
    make_frame,
    pump,
    seq_of,
    wait_operational,
)
from scapy.utils import rdpcap

from switch.ports import ImpairmentConfig, PortError, PortSet, parse_impairment_spec
from switch.ports.counters import MutableCounters
from switch.ports.rawsock import RawSocket

MakeVeth = Callable[[], tuple[str, str]]
PeerFactory = Callable[[str], Peer]


# ----------------------------------------------------------------------------- set-up errors


def test_duplicate_port_numbers() -> None:
    with pytest.raises(PortError, match=r"port 1 is given twice \(a1 and a2\)"):
        PortSet([(1, "a1"), (1, "a2")])


def test_duplicate_interfaces() -> None:
    with pytest.raises(PortError, match=r"interface a1 is given twice \(ports 1 and 2\)"):
        PortSet([(1, "a1"), (2, "a1")])


def test_bad_port_values() -> None:
    with pytest.raises(PortError, match="non-negative integer"):
        PortSet([(-1, "a1")])
    with pytest.raises(PortError, match="longer than 15"):
        PortSet([(1, "x" * 16)])


def test_impairment_for_unknown_port() -> None:
    with pytest.raises(PortError, match="port 3, which is not a configured port"):
        PortSet([(1, "a1")], impairments=[parse_impairment_spec("3:loss=0.1")])


def test_specific_impairment_wins_over_all() -> None:
    ports = PortSet(
        [(1, "a1"), (2, "a2")],
        impairments=[
            parse_impairment_spec("2:loss=0.5"),
            parse_impairment_spec("all:delay=1ms"),
        ],
    )
    assert ports.impairment(1) == ImpairmentConfig(delay_ms=1.0)
    assert ports.impairment(2) == ImpairmentConfig(loss=0.5)


def test_not_open_errors() -> None:
    ports = PortSet([(1, "a1")])
    with pytest.raises(PortError, match="not open"):
        ports.send(1, b"x" * 60)
    with pytest.raises(PortError, match="not open"):
        ports.receive(0)
    with pytest.raises(PortError, match="no port 7"):
        ports.send(7, b"x" * 60)


def test_unknown_interface(veth: tuple[str, str]) -> None:
    ports = PortSet([(1, veth[0]), (2, "inatnosuchif")])
    with pytest.raises(PortError) as info:
        ports.open()
    assert str(info.value) == "interface inatnosuchif does not exist"
    # The port that did open was closed again.
    assert not ports.is_open
    assert not iface_flags(veth[0]) & IFF_PROMISC


def test_permission_denied_message(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> socket.socket:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr("switch.ports.rawsock.socket.if_nametoindex", lambda name: 1)
    monkeypatch.setattr("switch.ports.rawsock.socket.socket", refuse)
    with pytest.raises(PortError) as info:
        PortSet([(1, "s1-eth1")]).open()
    assert str(info.value) == (
        "permission denied opening a raw socket on s1-eth1: "
        "run as root or give the process CAP_NET_RAW"
    )


def test_permission_denied_unprivileged(veth: tuple[str, str],
                                        world_readable_ports: Path) -> None:
    if shutil.which("setpriv") is None:
        pytest.skip("needs setpriv")
    code = (
        "import sys\n"
        "from switch.ports import PortSet, PortError\n"
        f"try:\n    PortSet([(1, {veth[0]!r})]).open()\n"
        "except PortError as e:\n    print(e)\n"
    )
    # User 65534 may not enter the checkout (a clone under /root, or in any mode-700
    # directory): it runs the venv's base interpreter, outside the checkout, on a copy
    # of the port layer that it can read (the working directory heads sys.path).
    result = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
         os.path.realpath(sys.executable), "-E", "-s", "-c", code],
        capture_output=True, text=True, timeout=30, cwd=world_readable_ports,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
    )
    assert result.stdout.strip() == (
        f"permission denied opening a raw socket on {veth[0]}: "
        "run as root or give the process CAP_NET_RAW"
    ), result.stderr


@pytest.fixture
def world_readable_ports() -> Iterator[Path]:
    """A directory any user can read, holding a copy of the ``switch.ports`` package
    (which needs nothing beyond the standard library)."""
    import switch.ports

    top = Path(tempfile.mkdtemp(prefix="ina-ports-"))
    try:
        top.chmod(0o755)
        package = Path(switch.ports.__file__).parent
        shutil.copytree(package, top / "switch" / "ports",
                        ignore=shutil.ignore_patterns("__pycache__"))
        (top / "switch" / "__init__.py").write_text("")
        for path in [top, *top.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        yield top
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_bad_pcap_dir(veth: tuple[str, str], tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(PortError, match="cannot create pcap directory"):
        PortSet([(1, veth[0])], pcap_dir=blocker / "sub").open()


# ----------------------------------------------------------------------------- basics


def test_open_close(veth: tuple[str, str]) -> None:
    a, _ = veth
    ports = PortSet([(5, a)])
    assert not ports.is_open
    ports.open()
    try:
        assert ports.is_open
        assert ports.ports == [(5, a)] and 5 in ports and list(ports) == [5]
        assert len(ports.poll_fds()) == 1
        assert iface_flags(a) & IFF_PROMISC
        assert ports.receive(timeout=0) == []
        assert select.select([ports.fileno()], [], [], 0)[0] == []
        with pytest.raises(PortError, match="already open"):
            ports.open()
    finally:
        ports.close()
    assert not ports.is_open
    assert not iface_flags(a) & IFF_PROMISC
    ports.close()  # idempotent
    with ports:  # and it can be opened again
        assert ports.is_open
    assert not ports.is_open


def test_promiscuous_reception(veth: tuple[str, str], peer_factory: PeerFactory) -> None:
    a, b = veth
    peer = peer_factory(b)
    with PortSet([(1, a)]) as ports:
        peer.send(make_frame(42))  # to a MAC address that is not the interface's
        assert select.select([ports.fileno()], [], [], 1.0)[0]  # the epoll fd wakes up
        got = collect(ports, 1)
    assert got == [(1, make_frame(42))]


RX_RING = pytest.mark.parametrize("rx_ring", [True, False], ids=["rx-ring", "recv"])


@RX_RING
@pytest.mark.parametrize("sockopt", [True, False], ids=["ignore-sockopt", "pkttype-check"])
def test_outgoing_frames_not_received(
    veth: tuple[str, str], peer_factory: PeerFactory, sockopt: bool, rx_ring: bool
) -> None:
    """Neither the switch's own frames nor other local traffic sent out of the port."""
    a, b = veth
    peer = peer_factory(b)
    local_sender = peer_factory(a)  # e.g. the kernel's own traffic on the switch side
    with PortSet([(1, a)], ignore_outgoing_sockopt=sockopt, rx_ring=rx_ring) as ports:
        for i in range(10):
            ports.send(1, make_frame(i))
        for i in range(10, 15):
            local_sender.send(make_frame(i))
        assert [seq_of(f) for f in peer.read()] == list(range(15))
        assert drain(ports) == []
        peer.send(make_frame(99))  # reception still works
        assert collect(ports, 1) == [(1, make_frame(99))]
        c = ports.counters(1)
        assert (c.tx_packets, c.tx_bytes) == (10, 640)
        assert c.rx_packets == 1


@RX_RING
def test_burst_of_256_all_received_in_order(
    make_veth: MakeVeth, peer_factory: PeerFactory, rx_ring: bool
) -> None:
    (a1, b1), (a2, b2) = make_veth(), make_veth()
    p1, p2 = peer_factory(b1), peer_factory(b2)
    with PortSet([(1, a1), (2, a2)], rx_ring=rx_ring) as ports:
        for i in range(256):
            p1.send(make_frame(i))
        for i in range(256):
            p2.send(make_frame(1000 + i, size=1514))
        got = collect(ports, 512, timeout=5.0)
        assert [seq_of(f) for p, f in got if p == 1] == list(range(256))
        assert [seq_of(f) for p, f in got if p == 2] == list(range(1000, 1256))
        c1, c2 = ports.counters(1), ports.counters(2)
    assert c1.rx_packets == 256 and c1.rx_bytes == 256 * 64
    assert c2.rx_packets == 256 and c2.rx_bytes == 256 * 1514
    assert c1.drops == {} and c2.drops == {}


def test_forwarding_between_ports(make_veth: MakeVeth, peer_factory: PeerFactory) -> None:
    (a1, b1), (a2, b2) = make_veth(), make_veth()
    p1, p2 = peer_factory(b1), peer_factory(b2)
    with PortSet([(1, a1), (2, a2)]) as ports:
        for i in range(100):
            p1.send(make_frame(i))
        forwarded = 0
        end = time.monotonic() + 3
        while forwarded < 100 and time.monotonic() < end:
            for port, frame in ports.receive(timeout=0.02):
                if is_test_frame(frame):
                    ports.send(3 - port, frame)
                    forwarded += 1
        assert [seq_of(f) for f in p2.read()] == list(range(100))
        assert p1.read(idle=0.01) == []


# ----------------------------------------------------------------------------- counters


@RX_RING
def test_counters_and_drops(veth: tuple[str, str], peer_factory: PeerFactory,
                            rx_ring: bool) -> None:
    a, b = veth
    peer = peer_factory(b)
    with PortSet([(1, a)], rx_buffer=100, rx_ring=rx_ring) as ports:
        peer.send(make_frame(1, size=100))
        peer.send(make_frame(2, size=101))  # larger than the receive buffer
        peer.send(make_frame(3, size=60))
        assert [seq_of(f) for _, f in collect(ports, 2)] == [1, 3]
        ports.send(1, make_frame(4, size=80))
        ports.send(1, make_frame(5, size=3000))  # larger than the 1500-byte MTU
        c = ports.counters(1)
        assert (c.rx_packets, c.rx_bytes) == (2, 160)
        assert (c.tx_packets, c.tx_bytes) == (1, 80)
        assert c.drops == {"rx_oversize": 1, "tx_error": 1}
        assert c.total_drops == 2
        assert ports.all_counters() == {1: c}


def test_frames_larger_than_the_ring_slots_are_dropped(
    veth: tuple[str, str], peer_factory: PeerFactory
) -> None:
    """The receive ring's slots fit the MTU the port opened with; raised later, a
    larger frame does not fit and is dropped (a plain socket would take it)."""
    a, b = veth
    peer = peer_factory(b)
    with PortSet([(1, a)]) as ports:
        for iface in (a, b):
            subprocess.run(["ip", "link", "set", iface, "mtu", "4000"], check=True)
        peer.send(make_frame(1, size=3000))
        peer.send(make_frame(2, size=1514))
        assert [seq_of(f) for _, f in collect(ports, 1)] == [2]
        c = ports.counters(1)
        assert c.drops == {"rx_oversize": 1} and c.rx_packets == 1


def test_send_batch_keeps_each_ports_order(make_veth: MakeVeth,
                                           peer_factory: PeerFactory) -> None:
    (a1, b1), (a2, b2) = make_veth(), make_veth()
    p1, p2 = peer_factory(b1), peer_factory(b2)
    with PortSet([(1, a1), (2, a2)], impairments=[(2, ImpairmentConfig(duplicate=1.0))]) \
            as ports:
        batch = [(1 + i % 2, make_frame(i)) for i in range(20)] + [(1, make_frame(99, 3000))]
        ports.send_batch(batch)
        assert [seq_of(f) for f in p1.read()] == list(range(0, 20, 2))
        assert [seq_of(f) for f in p2.read()] == [i for i in range(1, 20, 2) for _ in (0, 1)]
        c1, c2 = ports.counters(1), ports.counters(2)
        assert (c1.tx_packets, c1.drops) == (10, {"tx_error": 1})
        assert (c2.tx_packets, c2.impaired) == (20, {"duplicated": 10})
        # a port the set does not have: the pair comes back unsent, in order
        assert ports.send_batch([(3, make_frame(0)), (1, make_frame(5)), (4, b"x")]) == \
            [(3, make_frame(0)), (4, b"x")]
        assert [seq_of(f) for f in p1.read()] == [5]


def test_runt_frames_are_dropped() -> None:
    """Frames shorter than an Ethernet header (veth cannot produce them: a socketpair)."""
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    counters = MutableCounters()
    raw = RawSocket.adopt(right, "fake0", counters, rx_buffer=64)
    for size in (13, 14, 0, 64, 65):
        left.send(bytes(size))
    out: list[bytes] = []
    raw.recv_batch(out, limit=100)
    raw.close()
    left.close()
    assert [len(f) for f in out] == [14, 64]
    assert dict(counters.drops) == {"rx_truncated": 2, "rx_oversize": 1}
    assert (counters.rx_packets, counters.rx_bytes) == (2, 78)


def test_send_on_down_link_counts_tx_error(veth: tuple[str, str]) -> None:
    a, _ = veth
    with PortSet([(1, a)]) as ports:
        subprocess.run(["ip", "link", "set", a, "down"], check=True)
        ports.send(1, make_frame(1))
        ports.receive(timeout=0)
        assert ports.counters(1).drops.get("tx_error") == 1


@RX_RING
def test_port_survives_link_down_and_up(veth: tuple[str, str], peer_factory: PeerFactory,
                                        rx_ring: bool) -> None:
    a, b = veth
    peer = peer_factory(b)
    with PortSet([(1, a)], rx_ring=rx_ring) as ports:
        subprocess.run(["ip", "link", "set", a, "down"], check=True)
        assert drain(ports) == []
        assert ports.counters(1).errors == {"rx_error": 1}
        subprocess.run(["ip", "link", "set", a, "up"], check=True)
        wait_operational(a, b)
        peer.send(make_frame(7))
        assert collect(ports, 1) == [(1, make_frame(7))]
        assert ports.counters(1).drops == {}


# ----------------------------------------------------------------------------- impairments


def _lossy_run(a: str, peer: Peer, seed: int, n: int = 5000) -> tuple[set[int], int]:
    config = ImpairmentConfig(loss=0.05, seed=seed)
    received: list[int] = []
    with PortSet([(1, a)], impairments=config) as ports:
        for start in range(0, n, 500):
            for i in range(start, start + 500):
                ports.send(1, make_frame(i))
            received += [seq_of(f) for f in peer.read(idle=0.01)]
        received += [seq_of(f) for f in peer.read()]
        drops = ports.counters(1).drops.get("impairment_loss", 0)
    assert received == sorted(received)
    lost = set(range(n)) - set(received)
    assert len(lost) == drops == n - len(received)
    return lost, drops


def test_loss_is_seeded_and_near_rate(veth: tuple[str, str], peer_factory: PeerFactory) -> None:
    a, b = veth
    peer = peer_factory(b)
    lost, drops = _lossy_run(a, peer, seed=7)
    assert 0.035 * 5000 <= drops <= 0.065 * 5000
    again, _ = _lossy_run(a, peer, seed=7)
    assert again == lost
    other, _ = _lossy_run(a, peer, seed=8)
    assert other != lost


def test_ingress_loss(veth: tuple[str, str], peer_factory: PeerFactory) -> None:
    a, b = veth
    peer = peer_factory(b)
    config = ImpairmentConfig(loss=0.2, seed=1, direction="ingress")

    def run() -> list[int]:
        with PortSet([(1, a)], impairments=config) as ports:
            for i in range(500):
                peer.send(make_frame(i))
            got = [seq_of(f) for _, f in drain(ports)]
            c = ports.counters(1)
            assert c.rx_packets == 500  # the wire delivered all of them
            assert c.drops["impairment_loss"] == 500 - len(got)
            ports.send(1, make_frame(1000))  # egress is not impaired
            assert [seq_of(f) for f in peer.read()] == [1000]
        return got

    first = run()
    assert first == sorted(first) and 60 <= 500 - len(first) <= 140
    assert run() == first


def test_egress_delay(veth: tuple[str, str], peer_factory: PeerFactory) -> None:
    a, b = veth
    peer = peer_factory(b)
    with PortSet([(1, a)], impairments=ImpairmentConfig(delay_ms=30)) as ports:
        t0 = time.monotonic()
        for i in range(20):
            ports.send(1, make_frame(i))
        deadline = ports.next_deadline()
        assert deadline is not None and deadline >= t0 + 0.030
        assert peer.read_now() == []
        got: list[bytes] = []
        arrival = 0.0
        while len(got) < 20 and time.monotonic() < t0 + 2:
            ports.receive(timeout=0.5)  # returns at the deadline, not after 0.5 s
            new = peer.read_now()
            if new and not got:
                arrival = time.monotonic()
            got += new
        assert [seq_of(f) for f in got] == list(range(20))
        assert arrival - t0 >= 0.030
        assert ports.next_deadline() is None
        assert ports.counters(1).impaired["delayed"] == 20


def test_ingress_delay(veth: tuple[str, str], peer_factory: PeerFactory) -> None:
    a, b = veth
    peer = peer_factory(b)
    config = ImpairmentConfig(delay_ms=30, direction="ingress")
    with PortSet([(1, a)], impairments=config) as ports:
        t0 = time.monotonic()
        peer.send(make_frame(1))
        peer.send(make_frame(2))
        got = collect(ports, 2)
        t1 = time.monotonic()
        assert [seq_of(f) for _, f in got] == [1, 2]
        assert t1 - t0 >= 0.030


def test_external_loop_with_next_deadline(veth: tuple[str, str], peer_factory: PeerFactory) -> None:
    """A loop that selects on fileno() itself and calls flush_due at next_deadline()."""
    a, b = veth
    peer = peer_factory(b)
    config = ImpairmentConfig(delay_ms=20, direction="both")
    with PortSet([(1, a)], impairments=config) as ports:
        t0 = time.monotonic()
        ports.send(1, make_frame(1))
        peer.send(make_frame(2))
        received: list[tuple[int, bytes]] = []
        while time.monotonic() < t0 + 2 and not (received and ports.next_deadline() is None):
            deadline = ports.next_deadline()
            wait = 0.5 if deadline is None else max(0.0, deadline - time.monotonic())
            if select.select([ports.fileno()], [], [], wait)[0]:
                received += ports.receive(timeout=0)
            received += ports.flush_due()
        assert time.monotonic() - t0 >= 0.020
        assert [(p, seq_of(f)) for p, f in received if is_test_frame(f)] == [(1, 2)]
        assert [seq_of(f) for f in peer.read()] == [1]


def test_duplication(veth: tuple[str, str], peer_factory: PeerFactory) -> None:
    a, b = veth
    peer = peer_factory(b)
    with PortSet([(1, a)], impairments=ImpairmentConfig(duplicate=1.0)) as ports:
        for i in range(10):
            ports.send(1, make_frame(i))
        assert [seq_of(f) for f in peer.read()] == [i // 2 for i in range(20)]
        c = ports.counters(1)
        assert c.tx_packets == 20 and c.impaired == {"duplicated": 10}
        ports.set_impairment(1, ImpairmentConfig(duplicate=0.3, seed=5))
        for i in range(1000):
            ports.send(1, make_frame(i))
        got = [seq_of(f) for f in pump(ports, peer, 1300, timeout=0.5)]
        extra = len(got) - 1000
        assert sorted(set(got)) == list(range(1000)) and got == sorted(got)
        assert extra == ports.counters(1).impaired["duplicated"] - 10
        assert 230 <= extra <= 370


def test_reordering(veth: tuple[str, str], peer_factory: PeerFactory) -> None:
    a, b = veth
    peer = peer_factory(b)
    with PortSet([(1, a)], impairments=ImpairmentConfig(reorder=1.0)) as ports:
        for i in range(5):
            ports.send(1, make_frame(i))
        # Frame 4 has nobody to swap with; the loop releases it after the hold time.
        got = [seq_of(f) for f in pump(ports, peer, 5)]
        assert got == [1, 0, 3, 2, 4]
        assert ports.counters(1).impaired["reordered"] == 2

        ports.set_impairment(None, ImpairmentConfig(reorder=0.1, seed=3))
        for i in range(1000):
            ports.send(1, make_frame(i))
        got = [seq_of(f) for f in pump(ports, peer, 1000)]
        assert sorted(got) == list(range(1000))
        assert got != sorted(got)
        assert all(abs(seq - pos) <= 1 for pos, seq in enumerate(got))


def test_set_impairment_at_run_time(veth: tuple[str, str], peer_factory: PeerFactory) -> None:
    a, b = veth
    peer = peer_factory(b)
    with PortSet([(1, a)]) as ports:
        ports.set_impairment(1, ImpairmentConfig(loss=1.0))
        for i in range(5):
            ports.send(1, make_frame(i))
        assert peer.read() == []
        ports.set_impairment(None, ImpairmentConfig())
        ports.send(1, make_frame(5))
        assert [seq_of(f) for f in peer.read()] == [5]
        assert ports.counters(1).drops == {"impairment_loss": 5}
        with pytest.raises(PortError, match="no port 2"):
            ports.set_impairment(2, ImpairmentConfig())


# ----------------------------------------------------------------------------- pcap


def test_pcap_capture(veth: tuple[str, str], peer_factory: PeerFactory, tmp_path: Path) -> None:
    a, b = veth
    peer = peer_factory(b)
    pcap_dir = tmp_path / "pcaps"
    config = ImpairmentConfig(loss=1.0, direction="ingress")
    inbound = [make_frame(i, size=60 + i) for i in range(3)]
    outbound = [make_frame(10 + i, size=100) for i in range(2)]
    before = time.time()
    with PortSet([(1, a)], pcap_dir=pcap_dir, impairments=config) as ports:
        for f in inbound:
            peer.send(f)
        assert drain(ports) == []  # all lost by the ingress impairment...
        for f in outbound:
            ports.send(1, f)
        ports.receive(timeout=0.01)  # an idle wait flushes the capture files
        # ...but the wire-side capture has them; readable while the ports are open.
        cap_in = [bytes(p) for p in rdpcap(str(pcap_dir / f"{a}_in.pcap"))]
        cap_out = rdpcap(str(pcap_dir / f"{a}_out.pcap"))
        assert [f for f in cap_in if is_test_frame(f)] == inbound
        assert [bytes(p) for p in cap_out] == outbound
        assert all(before <= float(p.time) <= time.time() for p in cap_out)
    assert [bytes(p) for p in rdpcap(str(pcap_dir / f"{a}_out.pcap"))] == outbound
