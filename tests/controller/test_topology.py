"""The controller's topology model: Mininet and JSON input, JSON output, validation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controller.topology import (
    Attachment,
    Endpoint,
    Host,
    Topology,
    TopologyError,
    default_aggregator_ips,
)
from topologies.star import StarTopo


def leaf_spine() -> dict[str, Any]:
    """Two leaves (h1, h2 on s1; h3 on s2) under one spine s3."""
    return {
        "hosts": [{"name": f"h{i}", "ip": f"10.0.0.{i}", "mac": f"00:00:00:00:00:0{i}"}
                  for i in (1, 2, 3)],
        "switches": [{"name": "s1", "device_id": 1}, {"name": "s2", "device_id": 2},
                     {"name": "s3", "device_id": 3, "grpc_address": "10.1.1.1:50001",
                      "cpu_port": 255}],
        "links": [["h1", "s1:1"], ["h2", "s1:2"], ["h3", "s2:1"],
                  ["s1:3", "s3:1"], ["s2:3", "s3:2"]],
    }


def test_star_from_mininet() -> None:
    topo = Topology.from_mininet(StarTopo(n=4))
    assert list(topo.hosts) == ["h1", "h2", "h3", "h4"]
    assert topo.hosts["h3"] == Host("h3", "10.0.0.3", "00:00:00:00:00:03", 24, "h3-eth0")
    [s1] = topo.switches.values()
    assert (s1.name, s1.device_id, s1.grpc_address) == ("s1", 1, "127.0.0.1:9559")
    assert (s1.mac, s1.aggregator_ip, s1.cpu_port) == ("02:00:00:ff:00:01", "10.0.0.254",
                                                       None)
    assert topo.attachment("h4") == Attachment("s1", 4)
    assert topo.host_ports("s1") == [(1, "h1"), (2, "h2"), (3, "h3"), (4, "h4")]
    assert topo.switch_neighbours("s1") == []


def test_from_mininet_takes_switch_nodes_of_a_running_net() -> None:
    class Node:
        device_id = 7
        grpc_address = "127.0.0.1:40001"
        cpu_port = 510

    class Net:
        def get(self, name: str) -> Node:
            return Node()

    topo = Topology.from_mininet(StarTopo(n=2), Net())
    s1 = topo.switch("s1")
    assert (s1.device_id, s1.grpc_address, s1.cpu_port) == (7, "127.0.0.1:40001", 510)
    assert s1.mac == "02:00:00:ff:00:07"


def test_json_round_trip(tmp_path: Path) -> None:
    topo = Topology.from_json(leaf_spine())
    assert topo.switch("s1").grpc_address == "127.0.0.1:9559"
    assert topo.switch("s2").grpc_address == "127.0.0.1:9560"
    assert [topo.switches[s].aggregator_ip for s in ("s1", "s2", "s3")] == [
        "10.0.0.254", "10.0.0.253", "10.0.0.252"]
    assert topo.switch_neighbours("s3") == [(1, "s1"), (2, "s2")]
    assert topo.ports["s1"][3] == Endpoint("s3", 1)
    path = tmp_path / "topo.json"
    topo.save(path)
    again = Topology.load(path)
    assert again.hosts == topo.hosts and again.switches == topo.switches
    assert again.links == topo.links
    saved = json.loads(path.read_text())
    assert saved["links"][3] == ["s1:3", "s3:1"]
    assert saved["switches"][2] == {"name": "s3", "device_id": 3,
                                    "grpc_address": "10.1.1.1:50001",
                                    "mac": "02:00:00:ff:00:03",
                                    "aggregator_ip": "10.0.0.252", "cpu_port": 255}


def test_aggregator_addresses_skip_taken_ones() -> None:
    hosts = [Host("h1", "10.0.0.254", "00:00:00:00:00:01"),
             Host("h2", "10.0.0.1", "00:00:00:00:00:02")]
    assert default_aggregator_ips(hosts, [1, 2], taken=["10.0.0.253"]) == [
        "10.0.0.252", "10.0.0.251"]
    with pytest.raises(TopologyError, match="no free address left in 10.0.0.0/31"):
        default_aggregator_ips([Host("h1", "10.0.0.1", "00:00:00:00:00:01", 31)], [1])


def _with(change: dict[str, Any]) -> dict[str, Any]:
    data = leaf_spine()
    for key, value in change.items():
        section, _, index_field = key.partition(".")
        if not index_field:
            data[section] = value
            continue
        index, _, fld = index_field.partition(".")
        if value is None:
            del data[section][int(index)][fld]
        else:
            data[section][int(index)][fld] = value
    return data


@pytest.mark.parametrize(("change", "message"), [
    ({"hosts.0.ip": "10.0.0.300"},
     r"hosts\[0\] \(h1\): field 'ip': \"10.0.0.300\" is not an IPv4 address"),
    ({"hosts.0.ip": "10.0.0.1/24"}, r"hosts\[0\] \(h1\): field 'ip': .* \(without prefix"),
    ({"hosts.1.mac": "00:00:00:00:02"},
     r"hosts\[1\] \(h2\): field 'mac': \"00:00:00:00:02\" is not a MAC address"),
    ({"hosts.1.mac": None}, r"hosts\[1\]: missing field 'mac'"),
    ({"hosts.0.colour": "red"}, r"hosts\[0\]: unknown field 'colour'"),
    ({"hosts.0.name": "h 1"}, r"hosts\[0\]: field 'name': \"h 1\" is not a node name"),
    ({"switches.0.device_id": "one"},
     r"switches\[0\] \(s1\): field 'device_id': \"one\" is not an integer"),
    ({"switches.1.grpc_address": "localhost"},
     r"switches\[1\] \(s2\): field 'grpc_address': \"localhost\" is not HOST:PORT"),
    ({"links": [["h1", "s1:1"], ["h2", "s1:1"], ["h3", "s2:1"]]},
     r"links\[1\] \(h2 - s1:1\): port s1:1 is already linked to h1"),
    ({"links": [["h1", "s1"]]}, r"links\[0\] \(h1 - s1\): switch endpoint 's1' needs a port"),
    ({"links": [["h1", "s1:x"]]}, r"links\[0\]: endpoint 's1:x': the port must be a number"),
    ({"links": [["h1", "s9:1"]]}, r"links\[0\] \(h1 - s9:1\): unknown node 's9'"),
    ({"links": [["h1", "h2"]]}, "a host must link to a switch port, not to another host"),
    ({"links": [["h1", "s1:1"], ["h1", "s2:1"]]}, "host h1 already hangs off s1:1"),
    ({"links": [["h1", "s1:1"], ["h2", "s1:2"]]}, "host h3 has no link to a switch"),
    ({"links": [["h1", "s1:600"]]}, r"port 600 of s1 is not in \[0, 510\]"),
    ({"links": [["h1", "s1:1", "x"]]}, "a link is a pair of endpoints"),
    ({"hosts.1.ip": "10.0.0.1"}, "h2 and h1 have the same IPv4 address 10.0.0.1"),
    ({"switches.1.aggregator_ip": "10.0.0.3"},
     "s2 and h3 have the same IPv4 address 10.0.0.3"),
    ({"switches.1.device_id": 1}, "switches s1 and s2 have the same device_id 1"),
    ({"nodes": []}, "unknown key 'nodes'"),
    ({"hosts": {}}, "hosts must be a list, not dict"),
])
def test_invalid_json_says_what_and_where(tmp_path: Path, change: dict[str, Any],
                                          message: str) -> None:
    path = tmp_path / "topo.json"
    path.write_text(json.dumps(_with(change)))
    with pytest.raises(TopologyError, match=f"^{path}: .*{message}"):
        Topology.load(path)


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(TopologyError, match="missing.json: cannot read the topology file: "
                       "No such file or directory"):
        Topology.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "hosts": [,]\n}')
    with pytest.raises(TopologyError, match=r"bad.json\(2\): not valid JSON: Expecting value"):
        Topology.load(bad)


def test_unknown_names() -> None:
    topo = Topology.from_json(leaf_spine())
    with pytest.raises(TopologyError, match="unknown switch 's9'; switches: s1, s2, s3"):
        topo.switch("s9")
    with pytest.raises(TopologyError, match="unknown host 'h10'; hosts: h1, h2, h3"):
        topo.attachment("h10")
