"""The cluster file (``topologies.cluster.spec``), the placement of a topology's nodes
(``topologies.cluster.placement``), the remote command lines (``ssh``) and the guard's
bookkeeping (``guard``): everything about a cluster that runs without a network."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from experiments.options import RunError, RunOptions
from topologies.cluster.guard import switch_interfaces, tagged_processes
from topologies.cluster.placement import PlacementError, place_nodes
from topologies.cluster.spec import ClusterFileError, ClusterSpec, load_cluster_file
from topologies.cluster.ssh import Connection
from topologies.spec import parse_topo_spec

GOOD = """\
tunnel = "vxlan"
placement = "switchbin"

[servers.a]

[servers.b]
ssh = "ops@192.0.2.20"
ssh_options = ["-i", "/keys/id", "-p", "2222"]
python = "/opt/ina/.venv/bin/python"
max_sessions = 20

[place]
h1 = "b"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cluster.toml"
    path.write_text(text)
    return path


def test_a_good_file(tmp_path: Path) -> None:
    spec = load_cluster_file(write(tmp_path, GOOD))
    a, b = spec.servers
    assert (a.name, a.local, a.mininet_name) == ("a", True, "localhost")
    assert (b.name, b.ssh, b.user, b.address) == ("b", "ops@192.0.2.20", "ops", "192.0.2.20")
    assert b.ssh_options == ("-i", "/keys/id", "-p", "2222")
    assert (b.python, b.max_sessions, b.mininet_name) == ("/opt/ina/.venv/bin/python", 20, "b")
    assert (spec.tunnel, spec.placement, spec.place) == ("vxlan", "switchbin", {"h1": "b"})
    assert spec.where("place.h1") == f"{tmp_path / 'cluster.toml'}:13"


def test_defaults(tmp_path: Path) -> None:
    spec = load_cluster_file(write(tmp_path, '[servers.x]\nssh = "10.1.2.3"\n'))
    [x] = spec.servers
    assert (x.user, x.address, x.python, x.max_sessions) == ("root", "10.1.2.3",
                                                             sys.executable, 10)
    assert (spec.tunnel, spec.placement, spec.place) == ("gre", "switchbin", {})


@pytest.mark.parametrize("text, line, message", [
    ('tunel = "gre"\n[servers.a]\n', 1, "tunel: unknown key (keys: tunnel, placement, "
                                        "servers, place)"),
    ('tunnel = "ipip"\n[servers.a]\n', 1, "tunnel: 'ipip' is not one of gre, vxlan"),
    ('placement = 3\n[servers.a]\n', 1, "placement: expected a non-empty string"),
    ('tunnel = "gre"\n', None, "servers: missing: give at least one [servers.NAME] table"),
    ('[servers.a]\n[servers.b]\nsh = "x"\n', 3, "servers.b.sh: unknown key (keys: ssh, "
                                               "address, ssh_options, python, max_sessions)"),
    ('[servers.a]\n[servers.b]\n', 2, "servers a and b both lack ssh: only one server is "
                                      "this machine"),
    ('[servers.a]\npython = "/x/python"\n', 2, "servers.a.python: only a server reached "
                                               "over ssh takes it"),
    ('[servers.b]\nssh = "root@bad host"\n', 2, "servers.b.ssh: 'root@bad host' is not "
                                                "[user@]host"),
    ('[servers.b]\nssh = "h"\naddress = "10.0.0"\n', 3, "servers.b.address: '10.0.0' is "
                                                        "not an IPv4 address"),
    ('[servers.b]\nssh = "10.0.0.9"\nssh_options = "-v"\n', 3,
     "servers.b.ssh_options: expected a list of strings"),
    ('[servers.b]\nssh = "10.0.0.9"\npython = "python3"\n', 3,
     "servers.b.python: 'python3': give the interpreter's absolute path"),
    ('[servers.b]\nssh = "10.0.0.9"\nmax_sessions = 1\n', 3,
     "servers.b.max_sessions: expected a whole number, at least 2"),
    ('[servers.b]\nssh = "10.0.0.9"\n[servers.c]\nssh = "root@10.0.0.9"\n', 4,
     "servers.c.ssh: 10.0.0.9 is server b's address too"),
    ('[servers.localhost]\n', 1, "servers.localhost: 'localhost' is Mininet's name"),
    ('[servers.a]\n[place]\nh1 = "z"\n', 3, "place.h1: no server 'z' (servers: a)"),
    ('[servers.a]\n[place]\nx1 = "a"\n', 3, "place.x1: not a node name"),
    ('[servers.a]\nssh = [1\n', None, "not valid TOML"),
])
def test_bad_files_name_the_line(tmp_path: Path, text: str, line: int | None,
                                 message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ClusterFileError) as e:
        load_cluster_file(path)
    where = f"{path}:{line}: " if line else f"{path}: "
    assert str(e.value).startswith(where), str(e.value)
    assert message in str(e.value)


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ClusterFileError, match="cannot read the cluster file"):
        load_cluster_file(tmp_path / "nope.toml")


# ------------------------------------------------------------------ placement


def cluster(tmp_path: Path, placement: str, place: str = "") -> ClusterSpec:
    text = (f'placement = "{placement}"\n[servers.a]\n[servers.b]\nssh = "10.9.9.2"\n'
            f'[place]\n{place}')
    return load_cluster_file(write(tmp_path, text))


def test_switchbin_keeps_hosts_with_their_switches(tmp_path: Path) -> None:
    topo = parse_topo_spec("linear,3,2")
    placed = place_nodes(topo, cluster(tmp_path, "switchbin"))
    assert placed == {"s1": "a", "s2": "a", "s3": "b", "h1": "a", "h2": "a", "h3": "a",
                      "h4": "a", "h5": "b", "h6": "b"}


def test_explicit_entries_come_first_and_hosts_follow_them(tmp_path: Path) -> None:
    topo = parse_topo_spec("linear,3,1")
    placed = place_nodes(topo, cluster(tmp_path, "switchbin", 's1 = "b"\nh3 = "a"\n'))
    # s1 is b's by the file; s2 and s3 are binned over a and b; h1 follows s1
    assert placed == {"s1": "b", "s2": "a", "s3": "b", "h1": "b", "h2": "a", "h3": "a"}


def test_roundrobin_deals_switches_then_hosts(tmp_path: Path) -> None:
    placed = place_nodes(parse_topo_spec("star,3"), cluster(tmp_path, "roundrobin"))
    assert placed == {"s1": "a", "h1": "b", "h2": "a", "h3": "b"}


def test_explicit_placement_must_place_everything(tmp_path: Path) -> None:
    spec = cluster(tmp_path, "explicit", 's1 = "a"\nh1 = "b"\n')
    with pytest.raises(PlacementError, match=r'cluster.toml:1: placement = "explicit", but '
                                             r"\[place\] does not place h2 of star,2"):
        place_nodes(parse_topo_spec("star,2"), spec)
    placed = place_nodes(parse_topo_spec("star,1"), spec)
    assert placed == {"s1": "a", "h1": "b"}


def test_a_node_the_topology_lacks(tmp_path: Path) -> None:
    spec = cluster(tmp_path, "switchbin", 'h9 = "b"\n')
    with pytest.raises(PlacementError, match=r"cluster.toml:6: place.h9: star,2 has no "
                                             r"node h9 \(nodes: s1, h1, h2\)"):
        place_nodes(parse_topo_spec("star,2"), spec)


def test_ina_run_checks_the_cluster_file_before_anything_starts(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[servers.a]\n[servers.b]\nssh = "10.9.9.2"\nmaxsessions = 3\n')
    with pytest.raises(RunError) as e:
        RunOptions(cluster=str(bad)).validate()
    assert str(e.value) == (f"--cluster {bad}: {bad}:4: servers.b.maxsessions: unknown key "
                            "(keys: ssh, address, ssh_options, python, max_sessions)")
    spec = cluster(tmp_path, "switchbin", 'h5 = "b"\n')
    with pytest.raises(RunError, match=r"--cluster .*cluster.toml: .*cluster.toml:6: "
                                       r"place.h5: star,4 has no node h5"):
        RunOptions(topo="star,4", cluster=str(spec.path)).validate()
    with pytest.raises(RunError, match="--cluster with --loss or --duplicate needs the "
                                       "built-in switch"):
        RunOptions(topo="star,8", target="bmv2", loss=0.01, cluster=str(spec.path)).validate()
    done = subprocess.run([sys.executable, "-m", "ina", "run", "--cluster", str(bad)],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.startswith(f"ina run: error: --cluster {bad}: {bad}:4: ")


# ------------------------------------------------------------------------ ssh


def test_remote_commands(tmp_path: Path) -> None:
    spec = load_cluster_file(write(tmp_path, GOOD))
    conn = Connection(spec.server("b"), "ina42ab", tmp_path / "ctl")
    assert conn.tag == "ina42ab-b" and conn.work_dir == "/tmp/ina-cluster/ina42ab-b"
    line = conn.remote_command(["mnexec", "-a", "7", "echo", "a b", "$HOME"])
    # not root: through sudo; tagged for the guard; ends with its session; quoted
    assert shlex.split(line) == ["sudo", "-n", "-E", "env", "INA_CLUSTER=ina42ab-b",
                                 "setpriv", "--pdeathsig", "TERM", "--", "mnexec", "-a",
                                 "7", "echo", "a b", "$HOME"]
    assert conn.remote_command(["true"], tagged=False, end_with_session=False).split() == [
        "sudo", "-n", "-E", "true"]
    argv = conn.ssh_argv(shared=True, tty=True)
    assert argv[-1] == "ops@192.0.2.20" and "-tt" in argv
    assert argv[argv.index("-i"):argv.index("-i") + 4] == ["-i", "/keys/id", "-p", "2222"]
    assert f"ControlPath={tmp_path / 'ctl' / 'b.ssh'}" in argv
    assert "ControlPath=none" in conn.ssh_argv(shared=False)
    conn.ports = [5000, 5001]
    assert [conn.take_port(), conn.take_port()] == [5000, 5001]


# ---------------------------------------------------------------------- guard


def test_the_guard_finds_the_processes_of_its_tag() -> None:
    tag = f"test{os.getpid()}"
    env = {**os.environ, "INA_CLUSTER": tag}
    mine = subprocess.Popen(["sleep", "30"], env=env)
    other = subprocess.Popen(["sleep", "30"], env={**os.environ, "INA_CLUSTER": tag + "x"})
    try:
        deadline = time.monotonic() + 5
        while mine.pid not in tagged_processes(tag) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert tagged_processes(tag) == [mine.pid]
    finally:
        for p in (mine, other):
            p.kill()
            p.wait()


def test_the_guard_picks_switch_interfaces_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    listing = ("1: lo: <LOOPBACK> mtu 65536\n"
               "5: s1-eth1@if4: <BROADCAST> mtu 1450\n"
               "6: s12-eth3: <BROADCAST> mtu 1450\n"
               "7: s1-eth2@s2-eth1: <BROADCAST> mtu 1450\n"
               "8: s2-eth1@s1-eth2: <BROADCAST> mtu 1450\n"
               "9: eth0: <BROADCAST> mtu 1500\n")
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(
        a, 0, listing, ""))
    assert switch_interfaces(["s1", "s12"]) == ["s1-eth1", "s12-eth3", "s1-eth2"]
    assert switch_interfaces([]) == []
