"""topology.json as p4lang's tutorials write it: read, checked with positions, and
built as a Mininet topology (no network is started here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from topologies.builder import LinkOptions
from topologies.exercise_topo import (
    ExerciseTopo,
    is_exercise_topology,
    read_exercise_topology,
)
from topologies.family import TopoSpecError

EXERCISE = Path(__file__).resolve().parents[1] / "e2e" / "exercise"


def test_the_end_to_end_exercise_topology() -> None:
    topo = read_exercise_topology(EXERCISE / "topology.json")
    assert [h.name for h in topo.hosts] == ["h1", "h2", "h3"]
    assert topo.hosts[0].ip == "10.0.1.1/24" and topo.hosts[0].mac == "08:00:00:00:01:11"
    assert topo.hosts[0].commands[0] == "route add default gw 10.0.1.10 dev eth0"
    assert [(s.name, s.runtime_json) for s in topo.switches] == [
        ("s1", EXERCISE / "s1-runtime.json"), ("s2", EXERCISE / "s2-runtime.json")]
    links = [(link.a, link.port_a, link.b, link.port_b, link.options) for link in topo.links]
    assert links == [("h1", None, "s1", 1, LinkOptions()),
                     ("h2", None, "s1", 2, LinkOptions(bw=50)),
                     ("s1", 3, "s2", 2, LinkOptions(delay_ms=1.0)),
                     ("h3", None, "s2", 1, LinkOptions())]
    assert is_exercise_topology(EXERCISE / "topology.json")
    assert not is_exercise_topology(Path(__file__).parents[2] / "topologies" / "examples"
                                    / "two_racks.yaml")


def test_the_mininet_topology_names_ports_as_the_file_does() -> None:
    topo = ExerciseTopo(read_exercise_topology(EXERCISE / "topology.json"),
                        switch_opts=lambda s: {"device_id": int(s.name[1:]) - 1})
    info = {(a, b): i for a, b, i in topo.links(withInfo=True)}
    assert info["h1", "s1"]["intfName1"] == "eth0" and info["h1", "s1"]["port2"] == 1
    assert info["s1", "s2"]["port1"] == 3 and info["s1", "s2"]["port2"] == 2
    assert info["h2", "s1"]["bw"] == 50
    assert topo.nodeInfo("s1") == {"isSwitch": True, "device_id": 0,
                                   "impair": ["3:delay=1ms,direction=both"]}
    assert topo.nodeInfo("h2")["ip"] == "10.0.2.2/24"


def write(tmp_path: Path, doc: object) -> Path:
    path = tmp_path / "topology.json"
    path.write_text(json.dumps(doc, indent=1))
    return path


HOSTS = {"h1": {"ip": "10.0.1.1/24", "mac": "08:00:00:00:01:11"}}


@pytest.mark.parametrize("doc, message", [
    ({"hosts": ["h1"]}, "expected an object with hosts"),
    ({"hosts": HOSTS, "switches": {"s1": {}}, "links": [["h1", "s2-p1"]]},
     "links[0]: endpoint 's2-p1': unknown switch 's2' (switches: s1)"),
    ({"hosts": HOSTS, "switches": {"s1": {}}, "links": [["h1", "s1-1"]]},
     "links[0]: endpoint 's1-1': expected a host or sN-pP"),
    ({"hosts": {"h1": {"ip": "10.0.1.1", "mac": "08:00:00:00:01:11"}}, "switches": {"s1": {}},
      "links": [["h1", "s1-p1"]]}, "hosts.h1.ip: ip '10.0.1.1': expected an address with "
                                   "its prefix length"),
    ({"hosts": HOSTS, "switches": {"s1": {"cli_input": "s1-commands.txt"}},
      "links": [["h1", "s1-p1"]]}, "switches.s1.cli_input: cli_input is not supported: a "
                                   "Thrift CLI command file"),
    ({"hosts": HOSTS, "switches": {"s1": {"runtime_json": "nothere.json"}},
      "links": [["h1", "s1-p1"]]}, "switches.s1.runtime_json: nothere.json: no such file"),
    ({"hosts": HOSTS, "switches": {"s1": {}}, "links": [["h1", "s1-p1", "soon"]]},
     "links[0]: latency 'soon': expected milliseconds"),
    ({"hosts": HOSTS, "switches": {"s1": {}}, "links": [["h1", "s1-p1"], ["h1", "s1-p2"]]},
     "links[1]: host h1 is linked twice (links[0] too)"),
    ({"hosts": {**HOSTS, "h2": {"ip": "10.0.2.2/24", "mac": "08:00:00:00:02:22"}},
      "switches": {"s1": {}}, "links": [["h1", "s1-p1"]]}, "hosts.h2: host h2 has no link"),
])
def test_bad_files_say_where(tmp_path: Path, doc: object, message: str) -> None:
    path = write(tmp_path, doc)
    with pytest.raises(TopoSpecError) as info:
        read_exercise_topology(path)
    assert str(info.value).startswith(f"{path}:"), info.value
    assert message in str(info.value)


def test_the_project_s_own_reader_points_to_ina_net_topo() -> None:
    from topologies.topofile import read_topo_file

    with pytest.raises(TopoSpecError, match="a topology.json as p4lang's tutorials write it "
                                            r".*ina net --topo FILE starts it"):
        read_topo_file(EXERCISE / "topology.json")


@pytest.mark.parametrize("argv, message", [
    (["net"], "give a topology spec (ina net star,4) or a tutorials' topology.json"),
    (["net", "star,2", "--topo", "t.json"], "not both"),
    (["net", "star,2", "--program", "p.json"], "--program goes with --topo FILE"),
    (["net", "--topo", "t.json", "--bw", "10"], "--bw and --k do not go with --topo FILE"),
])
def test_ina_net_topo_usage_errors(argv: list[str], message: str,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    from ina.cli import main

    assert main(argv) == 2
    assert message in capsys.readouterr().err
