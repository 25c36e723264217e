"""Topology files (YAML and JSON): what they build, and their errors, each naming the
file, the line and the entry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from topologies.builder import link_impairments
from topologies.graph import validate
from topologies.spec import TopoSpecError, parse_topo_spec

EXAMPLE = """\
# two racks under one spine; the spine links are slower and lossy
defaults: {bw: 100}
hosts: [h1, h2, h3, h4]
switches: [s1, s2, {name: s3, layer: 0}]
links:
  - [h1, s1]
  - [h2, s1]
  - [h3, s2]
  - [h4, s2]
  - [s1, s3, {bw: 50, delay: 2ms, loss: 0.01}]
  - [s2:5, s3]
"""


def write(tmp_path: Path, text: str, name: str = "net.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def links_of(topo: object) -> dict[tuple[str, str], dict[str, object]]:
    return {(a, b): info for a, b, info in topo.links(sort=True, withInfo=True)}  # type: ignore[attr-defined]


def test_the_example_builds(tmp_path: Path) -> None:
    topo = parse_topo_spec(write(tmp_path, EXAMPLE))
    g = validate(topo)
    assert (sorted(topo.hosts()), sorted(topo.switches())) == (
        ["h1", "h2", "h3", "h4"], ["s1", "s2", "s3"])
    assert g.number_of_edges() == 6
    links = links_of(topo)
    assert links["s1", "s3"]["bw"] == 50.0 and links["s1", "s3"]["port1"] == 3
    assert links["s1", "s3"]["impair"] == "loss=0.01,delay=2ms,direction=both"
    assert links["h1", "s1"]["bw"] == 100.0 and "impair" not in links["h1", "s1"]
    # s2:5 as written; s3's ports in link order
    assert (links["s2", "s3"]["port1"], links["s2", "s3"]["port2"]) == (5, 2)
    assert topo.nodeInfo("s3")["layer"] == 0 and "layer" not in topo.nodeInfo("s1")
    assert topo.nodeInfo("h3")["ip"] == "10.0.0.3/24"
    assert link_impairments(topo) == {"s1": {3: "loss=0.01,delay=2ms,direction=both"}}


def test_json_is_the_same_format(tmp_path: Path) -> None:
    data = yaml.safe_load(EXAMPLE)
    path = write(tmp_path, json.dumps(data, indent=2), "net.json")
    assert links_of(parse_topo_spec(path)) == links_of(parse_topo_spec(write(tmp_path,
                                                                             EXAMPLE)))


def test_bw_option_sets_the_links_the_file_leaves_unshaped(tmp_path: Path) -> None:
    text = EXAMPLE.replace("defaults: {bw: 100}\n", "")
    links = links_of(parse_topo_spec(write(tmp_path, text) + ",bw=10"))
    assert links["h1", "s1"]["bw"] == 10.0 and links["s1", "s3"]["bw"] == 50.0
    links = links_of(parse_topo_spec(write(tmp_path, EXAMPLE) + ",bw=10"))
    assert links["h1", "s1"]["bw"] == 100.0  # the file's defaults win


def test_explicit_ports_are_kept_free_for_their_links(tmp_path: Path) -> None:
    text = ("hosts: [h1, h2]\nswitches: [s1, s2]\n"
            "links: [[s1, s2], [h1, s1:1], [h2, s2]]\n")
    links = links_of(parse_topo_spec(write(tmp_path, text)))
    assert links["s1", "s2"]["port1"] == 2 and links["h1", "s1"]["port2"] == 1


@pytest.mark.parametrize(("text", "message"), [
    ("[1, 2]", "net.yaml:1: expected a mapping with hosts, switches and links"),
    ("hosts: [h1]\nswitches: [s1]\nlinks: []\ncolor: red\n",
     r"net.yaml:4: color: unknown key 'color' \(keys: description, defaults, hosts, "
     r"switches, links\)"),
    ("hosts: [h1]\nswitches: [s1]\n", "net.yaml:1: missing 'links'"),
    ("hosts: h1\nswitches: [s1]\nlinks: []\n", 'net.yaml:1: hosts: expected a list, got "h1"'),
    ("hosts: [h1, gpu2]\nswitches: [s1]\nlinks: []\n",
     r'net.yaml:1: hosts\[1\]: "gpu2" is not a host name: hosts are named hN \(h1 .. h253\)'),
    ("hosts: [h1, h300]\nswitches: [s1]\nlinks: []\n",
     r"net.yaml:1: hosts\[1\]: host h300: N must be at most 253"),
    ("hosts: [h1, h1]\nswitches: [s1]\nlinks: []\n",
     r"net.yaml:1: hosts\[1\]: host h1 is listed twice"),
    ("hosts: [h1]\nswitches:\n  - core\nlinks: []\n",
     r'net.yaml:3: switches\[0\]: "core" is not a switch name: switches are named sN, N its '
     "device id"),
    ("hosts: [h1]\nswitches:\n  - {name: s1, layer: -1}\nlinks: []\n",
     r"net.yaml:3: switches\[0\].layer: layer -1: expected a whole number >= 0"),
    ("hosts: [h1]\nswitches: [s1]\nlinks:\n  - [h1, s9]\n",
     r"net.yaml:4: links\[0\]: unknown node 's9' \(hosts: h1; switches: s1\)"),
    ("hosts: [h1]\nswitches: [s1]\nlinks:\n  - [h1]\n",
     r"net.yaml:4: links\[0\]: a link is \[A, B\] or \[A, B, \{bw: .., delay: .., loss: "
     r"..\}\], got \['h1'\]"),
    ("hosts: [h1, h2]\nswitches: [s1]\nlinks:\n  - [h1, h2]\n",
     r"links\[0\]: hosts h1 and h2 are linked directly; a host links to a switch"),
    ("hosts: [h1]\nswitches: [s1]\nlinks:\n  - [s1, s1]\n",
     r"links\[0\]: s1 is linked to itself"),
    ("hosts: [h1]\nswitches: [s1, s2]\nlinks:\n  - [h1, s1]\n  - [h1, s2]\n",
     r"net.yaml:5: links\[1\]: host h1 has a link already \(links\[0\]\); a host has one"),
    ("hosts: [h1]\nswitches: [s1, s2]\nlinks:\n  - [h1, s1:2]\n  - [s1:2, s2]\n",
     r"net.yaml:5: links\[1\]: port s1:2 is used by links\[0\] already"),
    ("hosts: [h1]\nswitches: [s1]\nlinks:\n  - [h1:1, s1]\n",
     r"links\[0\]: endpoint 'h1:1': a host has one interface, no port"),
    ("hosts: [h1]\nswitches: [s1]\nlinks:\n  - [h1, s1:0]\n",
     r"links\[0\]: endpoint 's1:0': the port must be a number in \[1, 510\]"),
    ("hosts: [h1]\nswitches: [s1]\nlinks:\n  - [h1, s1, {bw: 0}]\n",
     r"net.yaml:4: links\[0\]\[2\].bw: bw 0: expected a rate in Mbit/s above 0"),
    ("hosts: [h1]\nswitches: [s1]\nlinks:\n  - [h1, s1, {delay: soon}]\n",
     r'links\[0\]\[2\].delay: delay "soon": expected a time like 2ms, 500us or 0.1s'),
    ("hosts: [h1]\nswitches: [s1]\nlinks:\n  - [h1, s1, {loss: 1}]\n",
     r"links\[0\]\[2\].loss: loss 1: expected a probability in \[0, 1\)"),
    ("hosts: [h1]\nswitches: [s1]\nlinks:\n  - [h1, s1, {jitter: 1ms}]\n",
     r"links\[0\]\[2\].jitter: unknown setting 'jitter' \(settings: bw, delay, loss\)"),
    ("defaults: {bw: fast}\nhosts: [h1]\nswitches: [s1]\nlinks: []\n",
     r'net.yaml:1: defaults.bw: bw "fast": expected a rate in Mbit/s above 0'),
    ("hosts: [h1, h2]\nswitches: [s1, s2]\nlinks:\n  - [h1, s1]\n  - [h2, s2]\n",
     "the network is in 2 pieces: h1, s1 cannot reach h2"),
    ("hosts: [h1, h2]\nswitches: [s1]\nlinks:\n  - [h1, s1]\n",
     "host h2 has 0 links; a host has exactly one, to a switch"),
    ("hosts: [h1\nswitches: [s1]\n", "net.yaml:2: not valid YAML: "),
])
def test_bad_files(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(TopoSpecError, match=f"^topology spec '{path}': {tmp_path}/{message}"
                       if message.startswith("net.yaml") else message):
        parse_topo_spec(path)


def test_bad_json_and_missing_files(tmp_path: Path) -> None:
    path = write(tmp_path, '{"hosts": ["h1"],\n "switches": [s1]}', "net.json")
    with pytest.raises(TopoSpecError, match=r"net.json:2: not valid JSON: Expecting value"):
        parse_topo_spec(path)
    path = write(tmp_path, '{"hosts": ["h1"],\n "switches": ["s1"],\n "links": [["h1", '
                 '"s2"]]}', "net.json")
    with pytest.raises(TopoSpecError, match=r"net.json:3: links\[0\]: unknown node 's2'"):
        parse_topo_spec(path)
    with pytest.raises(TopoSpecError, match=r"none.yaml: cannot read the topology file: No "
                                            "such file or directory"):
        parse_topo_spec(str(tmp_path / "none.yaml"))
    with pytest.raises(TopoSpecError, match="a topology file takes no arguments, got '2'"):
        parse_topo_spec(write(tmp_path, EXAMPLE) + ",2")
