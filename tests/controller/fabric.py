"""A fabric of in-process P4Runtime servers, one per switch of a topology, that carries
frames from host to host through them: for testing what the controller installs on
several switches without Mininet."""

from __future__ import annotations

from typing import Any

from controller.topology import Topology
from switch.runtime import P4RuntimeServer

Arrival = tuple[str, bytes, list[str]]
"""Where a frame arrived (a host), the frame, and the switches it crossed."""


class Fabric:
    """Starts a server for every switch of ``data`` (a topology's JSON form) and writes
    its address into ``data`` (kept as ``json``). ``send`` carries a frame from a host
    through the switches to the hosts, dropping what leaves the (switch, port) pairs in
    ``lose``."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.servers: dict[str, P4RuntimeServer] = {}
        for sw in data["switches"]:
            server = P4RuntimeServer(device_id=sw["device_id"], address="127.0.0.1:0")
            sw["grpc_address"] = f"127.0.0.1:{server.start()}"
            self.servers[sw["name"]] = server
        self.json = data
        self.topology = Topology.from_json(data)
        self.lose: set[tuple[str, int]] = set()

    def send(self, host: str, frame: bytes) -> list[tuple[str, bytes]]:
        """Every (host, frame) the frame from ``host`` ends as."""
        return [(to, out) for to, out, _ in self.trace(host, frame)]

    def trace(self, host: str, frame: bytes) -> list[Arrival]:
        """``send``, with the switches each copy crossed."""
        where = self.topology.attachment(host)
        return self._through(where.switch, where.port, frame, [])

    def _through(self, switch: str, port: int, frame: bytes, path: list[str]
                 ) -> list[Arrival]:
        out: list[Arrival] = []
        for out_port, out_frame in self.servers[switch].inject(port, frame):
            if (switch, out_port) in self.lose:
                continue
            peer = self.topology.ports[switch][out_port]
            if peer.port is None:
                out.append((peer.node, out_frame, [*path, switch]))
            else:
                out += self._through(peer.node, peer.port, out_frame, [*path, switch])
        return out

    def stop(self) -> None:
        for server in self.servers.values():
            server.stop(grace=0)
