"""``ina agent``: errors as one clear line, and a run against an in-memory switch that
writes the result and the stats files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import hosts.transport
from hosts.agent_cli import cmd_agent
from hosts.inputs import generate
from hosts.transport import InMemoryTransport
from hosts.wire import FLAG_RESULT
from ina.cli import build_parser


def agent(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ina", "agent", *args], capture_output=True,
                          text=True, timeout=60)


BASE = ["--job", "1", "--workers", "2", "--aggregator", "10.0.0.254"]


@pytest.mark.parametrize(("args", "message"), [
    (["--input", "/nonexistent/x.npy"], "--input /nonexistent/x.npy: cannot read a .npy"),
    (["--size", "0"], "generated input: size 0 is not in [1,"),
    (["--size", "10", "--window", "0"], "worker settings: window=0 is not in [1, 65535]"),
    (["--size", "10", "--max-gather", "-1"], "--max-gather -1: must be between 0 and 1000 ms"),
])
def test_bad_input_is_one_clear_error(args: list[str], message: str) -> None:
    result = agent(*BASE, *args)
    assert result.returncode == 2, result
    assert f"ina agent: error: {message}" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_bad_aggregator_and_job(tmp_path: Path) -> None:
    result = agent("--job", "1", "--workers", "2", "--aggregator", "switch", "--size", "4")
    assert result.returncode == 2
    assert "aggregator address 'switch' is not an IPv4 address" in result.stderr
    result = agent("--job", "1", "--workers", "99", "--aggregator", "127.0.0.1",
                   "--size", "4")
    assert result.returncode == 2 and "num_workers=99 is not in [1, 32]" in result.stderr


def test_float64_input_is_refused(tmp_path: Path) -> None:
    np.save(tmp_path / "x.npy", np.zeros(4))
    result = agent(*BASE, "--input", str(tmp_path / "x.npy"))
    assert result.returncode == 2
    assert "expected float32 values, got float64" in result.stderr


class Reflector(InMemoryTransport):
    """A one-worker job's switch: every contribution comes back as its RESULT."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(lambda p: self.put(p[:5] + bytes([p[5] | FLAG_RESULT]) + p[6:]))


def test_agent_writes_result_and_stats(tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hosts.transport, "UdpTransport", Reflector)
    out, stats = tmp_path / "out.npy", tmp_path / "stats.json"
    args = build_parser().parse_args(
        ["agent", "--job", "3", "--workers", "1", "--aggregator", "10.0.0.254", "--size",
         "1000", "--seed", "4", "--rank", "2", "--dist", "ints", "--scaling", "pow2",
         "--output", str(out), "--stats", str(stats)])
    assert cmd_agent(args) == 0
    assert np.array_equal(np.load(out), generate("ints", 1000, 4, 2))  # exact for N=1
    doc = json.loads(stats.read_text())
    assert doc["job"] == 3 and doc["size"] == 1000 and doc["seconds"] > 0
    assert doc["counters"]["chunks"] == 16 and doc["counters"]["retransmitted"] == 0
    assert doc["goodput_mbps"] > 0 and doc["settings"]["scaling"] == "pow2"
