"""The commands of the README's "Topologies and aggregation trees" section that need
root, run as processes in Mininet as written (``--runs-dir`` added):

    ina run --topo fattree,4 --algo ina --size 1000000 --check
    ina run --topo leafspine,2,2,2 --size 20000 --check --root s4 --pcap
    ina net linear,2,1                     (driven through its mininet> prompt)
    ina run --topo leafspine,2,2,2 --size 20000 --cli

Each starts (and tears down) its own network, one after another (the Mininet lock).
"""

from __future__ import annotations

import json
import re
import shlex
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from readme_sections import blocks, section

from experiments.allreduce_net import need_root
from experiments.check import check_allreduce
from hosts.inputs import generate
from hosts.quantize import Scaling
from topologies.nodes import ina_command

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SECTION = section("Topologies and aggregation trees")
COMMANDS = [line.removeprefix("sudo .venv/bin/ina ").split()
            for block in blocks(SECTION)
            for line in block.splitlines() if line.startswith("sudo .venv/bin/ina ")]


@pytest.fixture(autouse=True)
def root_needed() -> None:
    why = need_root()
    if why:
        pytest.skip(why)


def readme_command(*head: str) -> list[str]:
    """The README's command that starts with ``head``."""
    [argv] = [c for c in COMMANDS if c[:len(head)] == list(head)]
    return argv


def test_every_root_command_of_the_section_is_tested() -> None:
    assert COMMANDS == [readme_command("run", "--topo", "fattree,4"),
                        readme_command("run", "--topo", "leafspine,2,2,2", "--size", "20000",
                                       "--check"),
                        readme_command("net"),
                        readme_command("run", "--topo", "leafspine,2,2,2", "--size", "20000",
                                       "--cli")]


def ina(*argv: str, timeout: float = 600, stdin: str | None = None
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ina_command(), *argv], capture_output=True, text=True,
                          timeout=timeout, input=stdin, cwd=ROOT)


def only_run_dir(runs: Path) -> Path:
    [run_dir] = list(runs.iterdir())
    return run_dir


def test_fattree_million_values(tmp_path: Path) -> None:
    proc = ina(*readme_command("run", "--topo", "fattree,4"), "--runs-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "all-reduce ina (16 workers, 1000000 float32 values" in proc.stdout
    assert "check PASSED: bit-identical on every worker" in proc.stdout


def pcap_frames(path: Path) -> list[bytes]:
    data = path.read_bytes()
    assert data[:4] == b"\xd4\xc3\xb2\xa1", path  # little-endian pcap
    frames, at = [], 24
    while at < len(data):
        _, _, length, _ = struct.unpack("<IIII", data[at:at + 16])
        frames.append(data[at + 16:at + 16 + length])
        at += 16 + length
    return frames


def aggregation_frames(path: Path) -> int:
    """Frames to or from UDP port 48879 (the aggregation protocol)."""
    return sum(1 for f in pcap_frames(path)
               if len(f) > 42 and f[12:14] == b"\x08\x00" and f[23] == 17
               and 48879 in struct.unpack(">HH", f[34:38]))


def test_run_with_a_root_and_captures(tmp_path: Path) -> None:
    proc = ina(*readme_command("run", "--topo", "leafspine,2,2,2", "--size", "20000",
                               "--check"), "--runs-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run_dir = only_run_dir(tmp_path)
    [record] = json.loads((run_dir / "results.json").read_text())["measurements"]
    assert record["job"]["root"] == "s4" and record["options"]["pcap"] is True
    pcaps = run_dir / "net1" / "pcaps"
    names = sorted(p.name for p in pcaps.iterdir())
    assert names == sorted(f"s{s}-eth{p}_{d}.pcap" for s, ports in
                           ((1, 4), (2, 4), (3, 2), (4, 2)) for p in range(1, ports + 1)
                           for d in ("in", "out"))
    chunks = -(-20000 // 64)
    # s1's uplink to the root s4 (port 4) carried one stream each way; s3 none
    assert aggregation_frames(pcaps / "s1-eth4_out.pcap") >= chunks + 64
    assert aggregation_frames(pcaps / "s1-eth4_in.pcap") >= chunks + 64
    assert aggregation_frames(pcaps / "s3-eth1_in.pcap") == 0
    assert (run_dir / "net1" / "logs" / "s4.log").read_text().startswith("$ ")


def test_net_at_the_prompt(tmp_path: Path) -> None:
    proc = ina(*readme_command("net"), "--runs-dir", str(tmp_path), timeout=300,
               stdin="pingall\nh1 ping -c 1 10.0.0.2\n")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("network linear,2,1 is up: 2 switches (ina switch), 2 hosts")
    assert "*** Results: 0% dropped (2/2 received)" in proc.stderr
    assert "ttl=62" in proc.stderr  # two switches on the way
    assert re.search(r"network linear,2,1 torn down", proc.stdout)


def stop(proc: subprocess.Popen[str]) -> None:
    """End a session that is still running the way a user would (end of input, then
    SIGTERM), so that it tears its network down; SIGKILL only as the last resort."""
    if proc.poll() is not None:
        return
    try:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_run_cli_sets_the_job_up_for_the_prompt(tmp_path: Path) -> None:
    """Up to the prompt, ``ina ctl`` reads the running switches from outside; at the
    prompt, ``source agents.cli`` runs the job."""
    argv = readme_command("run", "--topo", "leafspine,2,2,2", "--size", "20000", "--cli")
    proc = subprocess.Popen([*ina_command(), *argv, "--runs-dir", str(tmp_path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert proc.stdout is not None and proc.stdin is not None
        head = []
        for line in proc.stdout:
            head.append(line)
            if line.startswith("leave with exit"):
                break
        text = "".join(head)
        script = re.search(r"run its agents: source (\S+)", text)
        topo = re.search(r"ina ctl --topo (\S+)", text)
        assert script and topo, text
        assert "  ├── port 1: s1: parent port 3; fan-in 2; slots 0..63" in text
        shown = ina("ctl", "--topo", topo.group(1), "job", "show", "1", timeout=60)
        assert shown.stdout.splitlines()[1] == "  s3: root; fan-in 2; slots 0..63"
        dumped = ina("ctl", "--topo", topo.group(1), "table", "dump", "s3", "ina_job",
                     timeout=60)
        assert dumped.stdout.startswith("InaIngress.ina_job: 2 entries"), dumped.stderr
        proc.stdin.write(f"source {script.group(1)}\nexit\n")
        proc.stdin.flush()
        out, err = proc.communicate(timeout=300)
    finally:
        stop(proc)
    assert proc.returncode == 0, out + err
    assert "network leafspine,2,2,2 torn down" in out
    run_dir = only_run_dir(tmp_path)
    results = [np.load(run_dir / "agents" / f"job1-h{i}.npy") for i in range(1, 5)]
    assert results[0].shape == (20000,)
    assert all(np.array_equal(results[0].view(np.uint32), r.view(np.uint32))
               for r in results[1:])
    # and the right sum: each worker's input, regenerated from its agent's command line
    # in agents.cli, summed in float64, within the quantizer's bound of the result
    agents = [agent_options(line) for line in (run_dir / "agents.cli").read_text().splitlines()
              if " agent " in line]
    assert [a["rank"] for a in agents] == ["0", "1", "2", "3"]
    inputs = [generate(a["dist"], int(a["size"]), int(a["seed"]), int(a["rank"]))
              for a in agents]
    check = check_allreduce(inputs, results, int(agents[0]["k"]), Scaling(agents[0]["scaling"]))
    assert check.ok, check.message


def agent_options(line: str) -> dict[str, str]:
    """``HOST .../ina agent --name value ... [&]`` as {name: value}."""
    argv = shlex.split(line.removesuffix(" &"))
    start = argv.index("agent") + 1
    return {argv[i].removeprefix("--"): argv[i + 1] for i in range(start, len(argv), 2)}
