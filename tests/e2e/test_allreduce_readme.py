"""The README's "In-network all-reduce" section runs as written: ``ina run``, ``ina bench
allreduce``, and the by-hand session (the Python script that starts Mininet, the
``ina ctl`` commands, and the commands at the ``mininet>`` prompt, which Mininet's CLI
reads from a script file here, with the file it sources inlined).

Only names change: ``build/`` becomes a temporary directory, the gRPC port 9559 a free
one (also in the topology file), and ``ina run`` gets a temporary ``--runs-dir``."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from readme_sections import blocks, section

from experiments.allreduce_net import need_root
from hosts.inputs import exact_sum, generate
from topologies.netutil import free_tcp_port, mininet_lock

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SECTION = section("In-network all-reduce")
RUN_BLOCK, SCRIPT, CTL_BLOCK, PROMPT_BLOCK = blocks(SECTION)


@pytest.fixture(autouse=True)
def root() -> None:
    why = need_root()
    if why:
        pytest.skip(why)


def _rename(text: str, build: Path, port: int = 9559) -> str:
    text = text.replace("build/", f"{build}/").replace("9559", str(port))
    return text.replace(".venv/bin/", f"{ROOT}/.venv/bin/")


@pytest.mark.parametrize("command", RUN_BLOCK.strip().splitlines())
def test_ina_run_commands(command: str, tmp_path: Path) -> None:
    argv = _rename(command, tmp_path).split() + ["--runs-dir", str(tmp_path / "runs")]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "check PASSED: bit-identical on every worker" in proc.stdout, proc.stdout
    [results] = (tmp_path / "runs").glob("*/results.json")
    [measurement] = json.loads(results.read_text())["measurements"]
    assert measurement["ok"] and measurement["check"]["ok"]


def test_python_api(tmp_path: Path) -> None:
    [call] = re.findall(r"`experiments\.run_allreduce\.(run_allreduce\([^`]*\))`", SECTION)
    from experiments.run_allreduce import run_allreduce

    call = call.replace(")", f", size=1000, runs_dir={str(tmp_path)!r})")
    results = eval(call, {"run_allreduce": run_allreduce})
    assert results["ok"] and results["check"]["ok"] and len(results["workers"]) == 4
    assert Path(results["run_dir"], "results.json").is_file()
    assert Path(results["run_dir"], "net1", "logs", "s1.log").is_file()


def test_bench_allreduce(tmp_path: Path) -> None:
    [command] = re.findall(r"`(\.venv/bin/ina bench allreduce[^`]*)`", SECTION)
    proc = subprocess.run(_rename(command, tmp_path).split(), cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines()
            if re.match(r"\s+4\s+256\s", line)]
    assert [row[3] for row in rows] == ["0%", "5%"], proc.stdout
    assert rows[0][8] == "100%" and rows[0][9] == "0"  # the lossless point resent nothing
    assert re.search(r"results: \S+/results\.json", proc.stdout)


def test_by_hand_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    port = free_tcp_port()
    prompt = tmp_path / "prompt.cli"
    monkeypatch.chdir(ROOT)

    def second_shell_then_prompt(net: Any) -> None:
        for line in _rename(CTL_BLOCK, tmp_path).strip().splitlines():
            proc = subprocess.run(line, shell=True, cwd=ROOT, capture_output=True,
                                  text=True, timeout=120)
            assert proc.returncode == 0, (line, proc.stderr)
            if " topo init " in line:  # the switch listens on the free port
                topo = tmp_path / "star2.json"
                doc = json.loads(topo.read_text())
                doc["switches"][0]["grpc_address"] = f"127.0.0.1:{port}"
                topo.write_text(json.dumps(doc))
        # Mininet's CLI cannot `source` from within a script: inline the sourced file
        lines = [Path(line.split()[1]).read_text() if line.startswith("source ") else line
                 for line in _rename(PROMPT_BLOCK, tmp_path).splitlines(keepends=True)]
        prompt.write_text("".join(lines))
        from mininet.cli import CLI

        with open("/dev/null") as no_input:
            CLI(net, stdin=no_input, script=str(prompt))

    script = _rename(SCRIPT, tmp_path, port).replace("CLI(net)", "run_session(net)")
    with mininet_lock():
        exec(compile(script, "README.md", "exec"), {"run_session": second_shell_then_prompt})

    h1, h2 = tmp_path / "h1.npy", tmp_path / "h2.npy"
    deadline = time.monotonic() + 10
    while not h2.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    a, b = np.load(h1), np.load(h2)
    assert np.array_equal(a.view(np.uint32), b.view(np.uint32))
    exact = exact_sum([generate("normal", 1000, 0, r) for r in range(2)])
    assert np.max(np.abs(a - exact)) < 1e-5
