"""``ClusterMininet``: one Mininet network over the servers of a cluster file.

A ``MininetCluster`` (Mininet Cluster Edition) whose nodes are the project's hosts and
P4Runtime switches (``topologies.cluster.nodes``), placed before anything starts
(``topologies.cluster.placement``). ``build`` first makes every remote server ready:

1. the ssh master connection (``topologies.cluster.ssh``);
2. the preflight, on the server itself: root, the tools, the kernel's tunnel devices,
   the server's address, free TCP ports for its switches; any problem stops the
   network before a node exists, naming the server and its line in the cluster file;
3. the guard (``topologies.cluster.guard``), which removes what the network leaves on
   the server when the network stops, or when this process dies.

This machine gets a guard too when nodes run here; it holds the Mininet lock (it
inherits the lock file, ``lock``) until it has cleaned up, so that no other network
starts here while the interfaces of a killed one are still being removed.

then builds the network as Mininet does: nodes on their servers, veth pairs within a
server, tunnels between servers. ``stop`` stops it as Mininet does, brings the remote
switches' captures back, and lets every guard clean up (it reports what it removed,
``cleanup``), then closes the connections.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import tempfile
from collections import defaultdict
from functools import partial
from pathlib import Path
from typing import Any

from mininet.examples.cluster import MininetCluster, Placer
from mininet.link import TCLink
from mininet.net import Mininet

from topologies.cluster.nodes import LINKS, ClusterP4Host, cluster_class
from topologies.cluster.placement import place_nodes
from topologies.cluster.spec import LOCAL, ClusterSpec
from topologies.cluster.ssh import Connection, SshError

GUARD = "topologies.cluster.guard"
PORTS_PER_SWITCH = 2  # P4Runtime, and BMv2's Thrift


class ClusterError(RuntimeError):
    """A cluster that cannot run the network; the message names the server and its
    place in the cluster file."""


class ClusterMininet(MininetCluster):  # type: ignore[misc]
    def __init__(self, cluster: ClusterSpec, topo: Any, switch: Any, lock: Any = None,
                 **params: Any) -> None:
        self.cluster = cluster
        self._lock = lock
        self.node_servers = place_nodes(topo, cluster)
        for node, server in self.node_servers.items():
            topo.nodeInfo(node)["server"] = cluster.server(server).mininet_name
        self.tag = f"ina{os.getpid()}{secrets.token_hex(2)}"
        self._control_dir = Path(tempfile.mkdtemp(prefix="ina-ssh-", dir="/tmp"))
        self.ssh: dict[str, Connection] = {
            s.mininet_name: Connection(s, self.tag, self._control_dir) for s in cluster.remote}
        here = [s for s in cluster.servers if s.local]
        self.local_name = here[0].name if here else None
        self.local_tag = f"{self.tag}-{self.local_name}"
        self._guards: dict[str, subprocess.Popen[str]] = {}
        self.cleanup_report: dict[str, Any] = {}
        # MininetCluster's own attributes; its constructor would check the servers
        # with 'sudo -u USER ssh ... sudo true' and make ~/.ssh/mn
        self.servers = [s.mininet_name for s in cluster.servers]
        self.serverIP = {s.mininet_name: s.address for s in cluster.servers}
        self.user = None
        self.connections: dict[Any, Any] = {}
        self.placement = Placer  # every node has its server already
        Mininet.__init__(self, topo=topo, switch=switch, host=ClusterP4Host,
                         link=LINKS[(cluster.tunnel, False)], **params)

    # ------------------------------------------------------------------ nodes

    def _connection(self, params: dict[str, Any]) -> Connection | None:
        params["tag"] = self.local_tag
        return self.ssh.get(params.get("server", LOCAL))

    def addHost(self, name: str, cls: Any = None, **params: Any) -> Any:
        params["connection"] = self._connection(params)
        return Mininet.addHost(self, name, cls=cluster_class(cls or self.host), **params)

    def addSwitch(self, name: str, cls: Any = None, **params: Any) -> Any:
        base = cls or self.switch
        keywords: dict[str, Any] = {}
        if isinstance(base, partial):
            keywords, base = dict(base.keywords), base.func
        params["connection"] = self._connection(params)
        return Mininet.addSwitch(self, name, cls=partial(cluster_class(base), **keywords),
                                 **params)

    def addLink(self, node1: Any, node2: Any, port1: Any = None, port2: Any = None,
                cls: Any = None, **params: Any) -> Any:
        shaped = cls is not None and issubclass(cls, TCLink)
        return Mininet.addLink(self, node1, node2, port1, port2,
                               cls=LINKS[(self.cluster.tunnel, shaped)], **params)

    def server_of(self, node: str) -> str:
        """The cluster file's name of the server ``node`` runs on."""
        return self.node_servers[node]

    # -------------------------------------------------------------- lifecycle

    def build(self) -> None:
        self.open_servers()
        super().build()

    def stop(self) -> None:
        try:
            super().stop()
        finally:
            try:
                for sw in self.switches:
                    fetch = getattr(sw, "fetch_captures", None)
                    if fetch is not None:
                        try:
                            fetch()
                        except (SshError, OSError, subprocess.SubprocessError):
                            pass  # the capture is lost; the cleanup goes on
            finally:
                self.close_servers()

    def open_servers(self) -> None:
        """Connect, preflight and guard every remote server (see the module
        docstring); ``ClusterError`` saying which and why."""
        try:
            for conn in self.ssh.values():
                try:
                    conn.open()
                except SshError as e:
                    raise self._error(conn, str(e)) from None
            for conn in self.ssh.values():
                self._preflight(conn)
            for conn in self.ssh.values():
                self._guard(conn)
            if self.local_name in self.node_servers.values():
                self._local_guard()
        except BaseException:
            self.close_servers()
            raise

    def _error(self, conn: Connection, message: str) -> ClusterError:
        where = self.cluster.where(f"servers.{conn.name}")
        return ClusterError(f"{where}: {message.removeprefix(f'server {conn.name}: ')} "
                            f"(server {conn.name}, {conn.server.ssh})")

    def _switches_on(self, conn: Connection) -> list[str]:
        return [n for n, s in self.node_servers.items()
                if s == conn.name and self.topo.isSwitch(n)]

    def _preflight(self, conn: Connection) -> None:
        switches = self._switches_on(conn)
        argv = [conn.server.python, "-m", GUARD, "preflight", "--tunnel",
                self.cluster.tunnel, "--address", conn.address,
                "--ports", str(PORTS_PER_SWITCH * len(switches))]
        base = self.switch.func if isinstance(self.switch, partial) else self.switch
        if getattr(base, "kind", "") == "simple_switch_grpc":
            argv += ["--need", "simple_switch_grpc"]
        try:
            done = conn.run(argv, timeout=60)
        except SshError as e:
            raise self._error(conn, str(e)) from None
        try:
            reply = json.loads(done.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            reason = (done.stderr or done.stdout).strip().splitlines()[-1:] or [
                f"status {done.returncode}"]
            raise self._error(conn, f"{conn.server.python} cannot run the project there "
                                    f"(python -m {GUARD}: {reason[0]}); install it at the "
                                    "same path or set the server's python") from None
        if reply["problems"]:
            raise self._error(conn, "; ".join(reply["problems"]))
        conn.ports = [int(p) for p in reply["ports"]]

    def _guard(self, conn: Connection) -> None:
        argv = [conn.server.python, "-m", GUARD, "watch", "--tag", conn.tag,
                "--work-dir", conn.work_dir]
        for sw in self._switches_on(conn):
            argv += ["--switch", sw]
        guard = conn.popen(argv, tagged=False, end_with_session=False,
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        self._guards[conn.name] = guard
        assert guard.stdout is not None
        if guard.stdout.readline().strip() != "ready":
            guard.kill()
            _, err = guard.communicate()
            raise self._error(conn, f"its guard did not start: {err.strip()}")

    def _local_guard(self) -> None:
        import sys

        from topologies.cluster.ssh import REMOTE_ROOT

        assert self.local_name is not None
        argv = [sys.executable, "-m", GUARD, "watch", "--tag", self.local_tag,
                "--work-dir", f"{REMOTE_ROOT}/{self.local_tag}"]
        for sw in self.topo.switches():
            if self.node_servers[sw] == self.local_name:
                argv += ["--switch", sw]
        guard = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, start_new_session=True,
                                 pass_fds=(self._lock.fileno(),) if self._lock else ())
        self._guards[self.local_name] = guard
        assert guard.stdout is not None
        if guard.stdout.readline().strip() != "ready":
            guard.kill()
            _, err = guard.communicate()
            raise ClusterError(f"the guard of this machine did not start: {err.strip()}")

    def close_servers(self) -> None:
        """Let every guard clean up, then close the connections."""
        guards, self._guards = self._guards, {}
        for name, guard in guards.items():
            try:
                out, _ = guard.communicate("stop\n", timeout=60)
                lines = out.strip().splitlines()
                self.cleanup_report[name] = json.loads(lines[-1]) if lines else None
            except (subprocess.TimeoutExpired, ValueError, OSError) as e:
                self.cleanup_report[name] = {"error": str(e)}
                guard.kill()
                guard.wait()
        for conn in self.ssh.values():
            conn.close()
        shutil.rmtree(self._control_dir, ignore_errors=True)

    # ------------------------------------------------------------------ files

    def fetch_files(self, files: list[tuple[str, Path]], sub: str = "agents") -> None:
        """Bring files that nodes wrote on remote servers (``remote_path``: the work
        directory's ``sub``) to their local paths; a node here wrote its own."""
        wanted: dict[tuple[str, Path], list[str]] = defaultdict(list)
        for node, local in files:
            server = self.get(node).server
            if server in self.ssh:
                wanted[(server, local.parent)].append(local.name)
        for (server, local_dir), names in wanted.items():
            conn = self.ssh[server]
            conn.fetch(f"{conn.work_dir}/{sub}", names, local_dir)

    def describe(self) -> dict[str, Any]:
        """The cluster and the placement, for a run's results."""
        return {**self.cluster.to_json(), "placement": dict(self.node_servers)}
