"""The README's "Past one machine" section on two servers: this machine and a second
one made of a network namespace running sshd (``cluster_helpers.second_server``).

The cluster file is the README's, with the second server's address, the test's key and
VXLAN tunnels (this kernel has no GRE). The section's commands run as written, on
20,000 values: ``ina run`` of a job whose tree spans both servers (``--check``: exact),
``ina net`` driven through its prompt. Then the cleanup: after every run nothing of the
network is left on the second server (its processes, interfaces, tunnels and work
directory) nor on this one (no process with the network's tag), also when ``ina run``
is interrupted (SIGINT, as a Ctrl-C) or killed (SIGKILL) while its agents run; and a
server that cannot run the project is refused before any node starts.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster_helpers import SecondServer, second_server, tagged_processes, wait_for
from readme_sections import blocks, section

from topologies.cluster.spec import ClusterFileError, load_cluster_file
from topologies.netutil import mininet_lock

ROOT = Path(__file__).resolve().parents[2]
SECTION = section("Past one machine: Mininet Cluster Edition")
[FILE] = blocks(SECTION, "toml")
COMMANDS = [line.removeprefix("sudo .venv/bin/ina ").split()
            for text in blocks(SECTION, "") for line in text.splitlines()]
SMALL = "20000"


@pytest.fixture(scope="module")
def there(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecondServer]:
    with second_server(tmp_path_factory.mktemp("second-server")) as server:
        yield server


def readme_cluster(there: SecondServer, path: Path, **changes: str) -> Path:
    """The README's cluster file for the second server (``changes``: server b's keys)."""
    doc = tomllib.loads(FILE)
    b = doc["servers"]["b"]
    text = FILE.replace('tunnel = "gre"', 'tunnel = "vxlan"')
    text = text.replace(f'ssh = "{b["ssh"]}"', f'ssh = "root@{there.address}"')
    text = text.replace(json.dumps(b["ssh_options"]), json.dumps(there.ssh_options))
    for key, value in changes.items():
        text = text.replace("[servers.b]\n", f"[servers.b]\n{key} = {json.dumps(value)}\n")
    path.write_text(text)
    return path


def ina(argv: list[str], cluster: Path, runs: Path, timeout: float = 600,
        stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    argv = [str(cluster) if a == "cluster.toml" else SMALL if a == "100000" else a
            for a in argv]
    return subprocess.run([str(ROOT / ".venv/bin/ina"), *argv, "--runs-dir", str(runs)],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          input=stdin)


def assert_nothing_left(there: SecondServer) -> None:
    """Nothing of a network on the second server, and no process of one anywhere."""
    def clean() -> bool:
        return (not tagged_processes() and not there.processes()
                and there.interfaces() == there.base_interfaces())
    assert wait_for(clean, timeout=20), (tagged_processes(), there.processes(),
                                         there.interfaces())
    assert not list(Path("/tmp/ina-cluster").glob("ina*-[ab]"))  # the work directories


def test_the_section_shows_the_commands_tested() -> None:
    assert [c[:2] for c in COMMANDS] == [["run", "--topo"], ["net", "linear,2,2"]]
    spec = tomllib.loads(FILE)
    assert list(spec["servers"]) == ["a", "b"] and spec["place"] == {"s2": "b"}


def test_the_readme_file_reads(tmp_path: Path) -> None:
    path = tmp_path / "cluster.toml"
    path.write_text(FILE)
    spec = load_cluster_file(path)
    assert [(s.name, s.ssh, s.address) for s in spec.servers] == [
        ("a", None, None), ("b", "root@192.0.2.20", "192.0.2.20")]
    # the mistake the section quotes: a misspelt max_sessions, uncommented
    path.write_text(FILE.replace("# max_sessions = 10", "max_session = 10"))
    with pytest.raises(ClusterFileError) as e:
        load_cluster_file(path)
    [quoted] = re.findall(r"\(`cluster.toml:(\d+: [^`]*)`\)", SECTION.replace("\n", " "))
    assert str(e.value) == f"{path}:{quoted}"


def test_a_job_across_two_servers_is_exact(there: SecondServer, tmp_path: Path) -> None:
    cluster = readme_cluster(there, tmp_path / "cluster.toml")
    proc = ina(COMMANDS[0], cluster, tmp_path / "runs")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [results] = (tmp_path / "runs").glob("*/results.json")
    doc = json.loads(results.read_text())
    assert [m["point"]["algo"] for m in doc["measurements"]] == ["ina", "ring"]
    for m in doc["measurements"]:
        assert m["ok"] and m["check"]["ok"], m["errors"]
        assert m["cluster"]["placement"] == {"s1": "a", "s2": "b", "h1": "a", "h2": "a",
                                             "h3": "b", "h4": "b"}
        # every worker's statistics came back, those of b's hosts from b
        assert [w["host"] for w in m["workers"]] == ["h1", "h2", "h3", "h4"]
        assert all(w["bytes_sent"] > 0 for w in m["workers"])
    ina_point = doc["measurements"][0]
    assert ina_point["check"]["exact"] or ina_point["check"]["max_error_over_bound"] <= 1
    # s2 runs on b: its control socket answered there, and it reduced h3's and h4's
    # chunks (ports 1 and 2) into one stream up to s1 (port 3), through the tunnel
    chunks = -(-int(SMALL) // 64) + 64
    s2 = {p["port"]: p for p in ina_point["switch_counters"]["s2"]["ports"]}
    assert s2[1]["rx_packets"] >= chunks and s2[2]["rx_packets"] >= chunks
    assert s2[3]["tx_packets"] >= chunks
    log = next((tmp_path / "runs").glob("*/net1/logs/s2.log")).read_text()
    assert f"--grpc-server-addr {there.address}:" in log  # P4Runtime on b's address
    assert_nothing_left(there)


@pytest.mark.slow
def test_bmv2_across_two_servers(there: SecondServer, tmp_path: Path) -> None:
    from topologies.nodes import bmv2_missing

    why = bmv2_missing()
    if why:
        pytest.skip(why)
    cluster = readme_cluster(there, tmp_path / "cluster.toml")
    proc = ina(["run", "--topo", "linear,2,2", "--target", "bmv2", "--size", SMALL,
                "--check", "--pcap", "--cluster", "cluster.toml"], cluster, tmp_path / "runs")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "check PASSED: bit-identical on every worker" in proc.stdout
    [net] = (tmp_path / "runs").glob("*/net1")
    log = (net / "logs" / "s2.log").read_text()
    assert f"P4Runtime on {there.address}:" in log  # simple_switch_grpc on b's address
    # b's captures came back: h3's frames into s2, and s2's stream up to s1
    assert (net / "pcaps" / "s2-eth1_in.pcap").stat().st_size > 24
    assert (net / "pcaps" / "s2-eth3_out.pcap").stat().st_size > 24
    assert_nothing_left(there)


def test_net_at_the_prompt(there: SecondServer, tmp_path: Path) -> None:
    cluster = readme_cluster(there, tmp_path / "cluster.toml")
    proc = ina(COMMANDS[1], cluster, tmp_path / "runs", timeout=300,
               stdin="pingall\nh4 ip link show h4-eth0\n")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("network linear,2,2 is up: 2 switches (ina switch), "
                                  "4 hosts")
    assert f"  a (this machine): s1, h1, h2\n  b (root@{there.address}): s2, h3, h4" in (
        proc.stdout)
    assert "*** Results: 0% dropped (12/12 received)" in proc.stderr
    assert "mtu 1450" in proc.stderr  # h4's link, within b, as wide as the tunnel
    assert "network linear,2,2 torn down" in proc.stdout
    assert_nothing_left(there)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_an_interrupted_run_leaves_nothing(there: SecondServer, tmp_path: Path,
                                           sig: signal.Signals) -> None:
    cluster = readme_cluster(there, tmp_path / "cluster.toml")
    run = subprocess.Popen(
        [str(ROOT / ".venv/bin/ina"), "run", "--topo", "linear,2,2", "--size", "3000000",
         "--bw", "5", "--cluster", str(cluster), "--runs-dir", str(tmp_path / "runs")],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_for(lambda: any("hosts.agent_cli" in p for p in tagged_processes()),
                        timeout=600), "the remote agents never started"
        time.sleep(1)
        run.send_signal(sig)
        out, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == (130 if sig == signal.SIGINT else -9), err
    assert_nothing_left(there)
    with mininet_lock():  # once this machine's guard has let go of it
        links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True,
                               text=True).stdout
    assert not re.findall(r"^\d+: (s[12]-eth\d+)", links, re.M)


def test_a_server_that_cannot_run_the_project(there: SecondServer, tmp_path: Path) -> None:
    cluster = readme_cluster(there, tmp_path / "cluster.toml", python="/nonexistent/python")
    proc = ina(["run", "--topo", "linear,2,2", "--size", "1000", "--cluster",
                "cluster.toml"], cluster, tmp_path / "runs", timeout=300)
    assert proc.returncode == 1
    line = FILE.splitlines().index("[servers.b]") + 1
    assert re.search(rf"did not start: {re.escape(str(cluster))}:{line}: /nonexistent/python "
                     rf"cannot run the project there .*\(server b, root@{there.address}\)",
                     proc.stdout), proc.stdout + proc.stderr
    assert_nothing_left(there)
