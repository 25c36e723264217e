"""Hosts, switches and links of a network spread over several servers.

The node classes put Mininet Cluster Edition's ``RemoteMixin`` in front of the
project's own (``P4Host``, ``InaSwitch``, ``BMv2Switch``). A node with a
``connection`` (``topologies.cluster.ssh``) runs on that server: its shell and every
process it starts go through the connection's ssh, attached to the node's namespace
with ``mnexec -a`` (the shell's PID there comes from the shell itself, as in
``RemoteMixin``). A node without one is an ordinary node of this machine, whose processes carry the
network's tag all the same (``INA_CLUSTER``, for the guard here).

What a remote switch needs differs from a local one only where a path or an address
is involved: it serves P4Runtime (and BMv2's Thrift) on its server's address, on ports
the server said were free; its control socket and its captures are in the network's
work directory on the server (the captures are fetched back when the network stops);
its log is its ssh session's output, written here. Its ``cli`` (``ina switch-cli``)
and ``control`` run there.

Links between nodes of one server are veth pairs, as always; links between servers are
tunnels that carry Ethernet frames: Mininet's ``RemoteGRELink`` (gretap) or
``VxlanLink`` (VXLAN, UDP port 4789, for kernels without GRE). Either way every link's
interfaces get an MTU of 1450, the room the tunnels leave, so that no host sends a
frame some link cannot carry. ``TC`` variants shape the link as ``TCLink`` does.
"""

from __future__ import annotations

import itertools
import json
import random
import subprocess
from pathlib import Path
from typing import Any

from mininet.examples.cluster import RemoteGRELink, RemoteMixin
from mininet.link import Link, TCIntf
from mininet.node import Node
from mininet.util import quietRun

from topologies.cluster.spec import LOCAL
from topologies.cluster.ssh import TAG_VARIABLE, Connection
from topologies.hosts import P4Host
from topologies.nodes import BMv2Switch, InaSwitch

TUNNEL_MTU = 1450
VXLAN_PORT = 4789


class ClusterNode(RemoteMixin):  # type: ignore[misc]
    """A node on this machine (``connection`` None) or on a remote server.

    ``RemoteMixin``'s own constructor is not used: it would log in through
    ``sudo -u USER ssh`` and register ``ssh SERVER sudo mn -c`` as a cleanup, which
    kills every Mininet network on that server; the connection does both jobs here."""

    def __init__(self, name: str, connection: Connection | None = None,
                 server: str = LOCAL, serverIP: str | None = None, tag: str | None = None,
                 **params: Any) -> None:
        self.connection = connection
        self.local_tag = tag if connection is None else None
        self.server = server if connection is not None else LOCAL
        self.serverIP = connection.address if connection is not None else serverIP
        self.isRemote = connection is not None
        self.user = connection.server.user if connection is not None else None
        self.dest = connection.server.ssh if connection is not None else None
        self.controlPath = None
        self.splitInit = False
        self.sshcmd: list[str] = []
        self.shell, self.pid = None, None
        super(RemoteMixin, self).__init__(name, **params)

    def _popen(self, cmd: Any, sudo: bool = True, tt: bool = True, shared: bool = True,
               **params: Any) -> Any:
        if isinstance(cmd, str):
            cmd = cmd.split()
        if self.connection is None:
            if self.local_tag:  # the mark the guard here knows the network's processes by
                cmd = ["env", f"{TAG_VARIABLE}={self.local_tag}", *cmd]
            return Node._popen(self, cmd, **params)
        params.pop("preexec_fn", None)
        return self.connection.popen(cmd, tty=tt, shared=shared, **params)

    def popen(self, *args: Any, **kwargs: Any) -> Any:
        """A process in the node's namespace (on its server), over an ssh connection of
        its own: stopping it here (its local ssh) ends it there."""
        if self.connection is not None:
            # no -d: a detaching mnexec forks and leaves, and its ssh session with it
            kwargs.setdefault("mncmd", ["mnexec", "-a", str(self.pid)])
            kwargs["tt"] = False
            kwargs["shared"] = False
        return Node.popen(self, *args, **kwargs)

    def rpopen(self, *cmd: Any, **opts: Any) -> Any:
        """A process in the root namespace of the node's server (no terminal)."""
        opts.setdefault("tt", False)
        return super().rpopen(*cmd, **opts)

    @property
    def python(self) -> str:
        """The interpreter that runs the project on the node's server."""
        import sys

        return self.connection.server.python if self.connection is not None else sys.executable

    def remote_path(self, path: Path, sub: str = "") -> str:
        """Where a file named like ``path`` goes on the node's server: ``path`` itself
        here, the network's work directory (``sub`` in it) on a remote server."""
        if self.connection is None:
            return str(path)
        return f"{self.connection.work_dir}/{sub + '/' if sub else ''}{path.name}"


class ClusterP4Host(ClusterNode, P4Host):
    pass


# -------------------------------------------------------------------- switches


class ClusterSwitch(ClusterNode):
    """What differs for a ``P4RuntimeSwitch`` on a remote server."""

    connection: Connection | None
    _captures: list[str] = []

    def start(self, controllers: Any) -> None:
        self._captures = [f"{intf.name}_{way}.pcap" for intf in self.intfList()
                          if intf.name != "lo" for way in ("in", "out")]
        super().start(controllers)  # type: ignore[misc]

    @property
    def grpc_host(self) -> str:
        return self.connection.address if self.connection is not None else "127.0.0.1"

    def free_port(self) -> int:
        if self.connection is None:
            return int(super().free_port())  # type: ignore[misc]
        return self.connection.take_port()

    def pcap_target(self) -> Path:
        if self.connection is None:
            return Path(super().pcap_target())  # type: ignore[misc]
        return Path(f"{self.connection.work_dir}/pcaps")

    def trace_target(self) -> Path:
        if self.connection is None:
            return Path(super().trace_target())  # type: ignore[misc]
        return Path(f"{self.connection.work_dir}/{self.name}.trace")

    def quiet_interfaces(self) -> None:
        if self.connection is None:
            super().quiet_interfaces()  # type: ignore[misc]
            return
        for intf in self.intfList():
            if intf.name == "lo":
                continue
            self.cmd(f"echo 1 > /proc/sys/net/ipv6/conf/{intf.name}/disable_ipv6 2>/dev/null;"
                     f" ethtool --offload {intf.name} rx off tx off sg off tso off gso off "
                     "gro off >/dev/null 2>&1")

    def fetch_captures(self) -> None:
        """Bring the switch's captures from its server into its local capture directory
        (``pcap_dir``); nothing for a local switch."""
        if self.connection is None or not getattr(self, "pcap", False):
            return
        local = getattr(self, "pcap_dir", None) or self.logs / f"{self.name}-pcap"  # type: ignore[attr-defined]
        self.connection.fetch(str(self.pcap_target()), self._captures, Path(local))


class ClusterInaSwitch(ClusterSwitch, InaSwitch):
    @property
    def control_socket(self) -> Path:
        if self.connection is None:
            return Path(InaSwitch.control_socket.fget(self))  # type: ignore[attr-defined]
        return Path(f"{self.connection.work_dir}/{self.name}.sock")

    def executable(self) -> list[str]:
        if self.connection is None:
            return InaSwitch.executable(self)
        return [self.python, "-m", "ina", "switch"]

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        if self.connection is None:
            return InaSwitch.cli(self, *args)
        return self.connection.run([self.python, "-m", "ina", "switch-cli", "--socket",
                                    str(self.control_socket), *args], timeout=30)

    def control(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.connection is None:
            return InaSwitch.control(self, request)
        from switch.process.control import ControlError

        script = ("import json, sys\nfrom switch.process.control import control_request\n"
                  "print(json.dumps(control_request(sys.argv[1], json.loads(sys.argv[2]))))")
        done = self.connection.run([self.python, "-c", script, str(self.control_socket),
                                    json.dumps(request)], timeout=30)
        if done.returncode != 0:
            raise ControlError(f"{self.name} on server {self.connection.name}: "
                               f"{done.stderr.strip().splitlines()[-1:] or done.returncode}")
        return dict(json.loads(done.stdout))


class ClusterBMv2Switch(ClusterSwitch, BMv2Switch):
    pass


CLUSTER_CLASSES: dict[type, type] = {
    P4Host: ClusterP4Host,
    InaSwitch: ClusterInaSwitch,
    BMv2Switch: ClusterBMv2Switch,
}


def cluster_class(cls: type) -> type:
    """The cluster class of a node class (``ValueError`` for one it has none for)."""
    if cls in CLUSTER_CLASSES.values():
        return cls
    try:
        return CLUSTER_CLASSES[cls]
    except KeyError:
        raise ValueError(f"no cluster version of the node class {cls.__name__} (cluster "
                         f"networks run {', '.join(c.__name__ for c in CLUSTER_CLASSES)})"
                         ) from None


# ----------------------------------------------------------------------- links


class GreLink(RemoteGRELink):  # type: ignore[misc]
    """Mininet Cluster Edition's gretap tunnel between servers (veth within one)."""


_vni = itertools.count(random.randrange(1, 16_000_000))


def tunnel_source(node: Any, remote: str) -> str:
    """The address ``node``'s server sends tunnelled frames to ``remote`` from."""
    if node.connection is not None:
        return str(node.connection.address)
    route = quietRun(f"ip route get {remote}")
    return route.split(" src ")[1].split()[0] if " src " in route else ""


class VxlanLink(RemoteGRELink):  # type: ignore[misc]
    """A VXLAN tunnel between servers (veth within one); each link its own VNI."""

    def makeTunnel(self, node1: Any, node2: Any, intfname1: str, intfname2: str,
                   addr1: str | None = None, addr2: str | None = None) -> None:
        assert node1.server != node2.server
        vni = next(_vni) % 16_000_000 + 1
        ip1 = tunnel_source(node1, node2.serverIP)
        ip2 = tunnel_source(node2, node1.serverIP or ip1)
        for node, name, addr, local, remote in ((node1, intfname1, addr1, ip1, ip2),
                                                (node2, intfname2, addr2, ip2, ip1)):
            node.rcmd(f"ip link delete {name}")
            out = node.rcmd(f"ip link add name {name} type vxlan id {vni} local {local} "
                            f"remote {remote} dstport {VXLAN_PORT}")
            if out.strip():
                raise RuntimeError(f"cannot make the VXLAN tunnel {name} on {node} "
                                   f"(server {node.server}): {out.strip()}")
            if addr:
                node.rcmd(f"ip link set {name} address {addr}")
            node.rcmd(f"ip link set dev {name} mtu {TUNNEL_MTU} up")
            if not self.moveIntf(name, node):
                raise RuntimeError(f"cannot move {name} into {node}")


class _Shaped:
    """Shape both interfaces with htb, as ``TCLink`` does."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("cls1", TCIntf)
        kwargs.setdefault("cls2", TCIntf)
        super().__init__(*args, **kwargs)


class GreTCLink(_Shaped, GreLink):
    pass


class VxlanTCLink(_Shaped, VxlanLink):
    pass


LINKS: dict[tuple[str, bool], type[Link]] = {
    ("gre", False): GreLink, ("gre", True): GreTCLink,
    ("vxlan", False): VxlanLink, ("vxlan", True): VxlanTCLink,
}
