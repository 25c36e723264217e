"""Which server runs which node of a topology, decided before anything starts.

The cluster file's ``[place]`` entries come first; the policy places the rest with
Mininet Cluster Edition's placers: ``switchbin`` bins the switches evenly over the
servers in the file's order (``SwitchBinPlacer.bin``) and puts every host on its
switch's server, so only links between switches cross servers; ``roundrobin`` deals
the nodes out in turn (``RoundRobinPlacer``), switches first, then hosts.
"""

from __future__ import annotations

from typing import Any

from mininet.examples.cluster import RoundRobinPlacer, SwitchBinPlacer

from topologies.cluster.spec import ClusterSpec


class PlacementError(ValueError):
    """A topology the cluster cannot place; the message says which node and why."""


def _natural(names: Any) -> list[str]:
    from controller.topology import sorted_names

    return sorted_names(names)


def place_nodes(topo: Any, cluster: ClusterSpec) -> dict[str, str]:
    """node -> server name, for every host and switch of the (declared) ``topo``."""
    switches, hosts = _natural(topo.switches()), _natural(topo.hosts())
    problem = cluster.check_nodes(switches + hosts, getattr(topo, "spec", "") or "the topology")
    if problem:
        raise PlacementError(problem)
    placed = {node: server for node, server in cluster.place.items()}
    servers = [s.name for s in cluster.servers]
    free_switches = [s for s in switches if s not in placed]
    free_hosts = [h for h in hosts if h not in placed]
    if cluster.placement == "switchbin":
        placed.update(SwitchBinPlacer.bin(free_switches, servers))
        for host in free_hosts:
            switch = host_switch(topo, host)
            if switch is None:
                raise PlacementError(f"host {host} has no switch to be placed with; "
                                     f"place it in [place] ({cluster.path})")
            placed[host] = placed[switch]
    elif cluster.placement == "roundrobin":
        placer = RoundRobinPlacer(servers=servers)
        for node in free_switches + free_hosts:
            placed[node] = placer.place(node)
    return {node: placed[node] for node in switches + hosts}


def host_switch(topo: Any, host: str) -> str | None:
    """The switch ``host`` links to (None for a host without one)."""
    for a, b in topo.links(sort=True):
        if a == host and topo.isSwitch(b):
            return str(b)
        if b == host and topo.isSwitch(a):
            return str(a)
    return None


def format_placement(placement: dict[str, str], cluster: ClusterSpec) -> list[str]:
    """One line per server: what runs there."""
    lines = []
    for s in cluster.servers:
        nodes = [n for n, server in placement.items() if server == s.name]
        where = "this machine" if s.local else s.ssh
        lines.append(f"  {s.name} ({where}): {', '.join(nodes) if nodes else 'nothing'}")
    return lines
