"""``ina agent --algo ring|ps|ps-sharded|hd``: option errors as one clear line (exit 2),
agent processes on the loopback that end with the same checked sum, the stats contract
every algorithm keeps (including ``ina``), and the start barrier."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from baseline_helpers import loopback_peers

import hosts.transport
from experiments.check import check_float32_sum
from hosts.agent_cli import cmd_agent
from hosts.baselines.collective import Settings
from hosts.baselines.registry import get_collective
from hosts.inputs import generate
from hosts.transport import InMemoryTransport
from hosts.wire import FLAG_RESULT, HEADER_SIZE
from ina.cli import build_parser

AGENT = [sys.executable, "-m", "hosts.agent_cli"]
CONTRACT = {"algo": str, "seconds": float, "bytes_sent": int, "bytes_received": int,
            "counters": dict}


def agent(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*AGENT, *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(("args", "message"), [
    (["--algo", "ring", "--size", "4"], "--algo ring needs --peers"),
    (["--size", "4", "--peers", "127.0.0.1"], "--algo ina needs --job, --aggregator, "
                                              "--workers"),
    (["--job", "1", "--workers", "1", "--aggregator", "10.0.0.254", "--peers", "127.0.0.1",
      "--size", "4"], "--peers is for the host-based algorithms, not --algo ina"),
    (["--algo", "hd", "--peers", "127.0.0.1", "--aggregator", "10.0.0.254", "--size", "4"],
     "--aggregator is for --algo ina, not --algo hd"),
    (["--algo", "ring", "--peers", "127.0.0.1", "--ps-host", "0", "--size", "4"],
     "--ps-host is for --algo ps, not --algo ring"),
    (["--algo", "ps", "--peers", "127.0.0.1,127.0.0.2", "--ps-host", "2", "--size", "4"],
     "--ps-host: ps_host=2 is not a rank in [0, 2)"),
    (["--algo", "ring", "--peers", "127.0.0.1,127.0.0.2", "--rank", "2", "--size", "4"],
     "--rank 2: not a position in --peers (0 to 1)"),
    (["--algo", "ring", "--peers", "127.0.0.1,127.0.0.2", "--workers", "3", "--size", "4"],
     "--workers 3, but --peers lists 2 addresses"),
    (["--algo", "ring", "--peers", "127.0.0.1,h2", "--size", "4"],
     "--peers: peer 1 ('h2'): 'h2' is not an IPv4 address"),
    (["--algo", "ring", "--peers", "127.0.0.1", "--segment", "0", "--size", "4"],
     "--segment: segment=0 must be a positive number of values"),
    (["--algo", "ring", "--peers", "127.0.0.1", "--port", "70000", "--size", "4"],
     "--port 70000: not in [1, 65535]"),
    (["--algo", "ring", "--peers", "127.0.0.1", "--connect-timeout", "0", "--size", "4"],
     "--connect-timeout 0: must be a positive number of seconds"),
    (["--algo", "ring", "--peers", "127.0.0.1", "--size", "0"],
     "generated input: size 0 is not in [1,"),
])
def test_bad_options_are_one_clear_error(args: list[str], message: str) -> None:
    result = agent(*args)
    assert result.returncode == 2, result
    assert f"ina agent: error: {message}" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_a_peer_that_never_comes_fails_with_status_1() -> None:
    peers = ",".join(map(str, loopback_peers(2)))
    result = agent("--algo", "ring", "--peers", peers, "--rank", "1", "--size", "4",
                   "--connect-timeout", "0.5")
    assert result.returncode == 1, result
    assert "ina agent: all-reduce failed: rank 1: cannot connect to rank 0" in result.stderr
    assert "Traceback" not in result.stderr


def check_contract(doc: dict[str, Any], algo: str) -> None:
    for key, kind in CONTRACT.items():
        assert isinstance(doc[key], kind), (key, doc[key])
    assert doc["algo"] == algo and doc["seconds"] > 0


@pytest.mark.parametrize(("algo", "n"), [("ring", 3), ("ps", 3), ("ps-sharded", 2),
                                         ("hd", 3)])
def test_agents_on_the_loopback(tmp_path: Path, algo: str, n: int) -> None:
    """Agent processes, released together through their stdin (as ``ina run`` does)."""
    peers = ",".join(map(str, loopback_peers(n)))
    size, seed = 30_001, 4
    extra = ["--ps-host", "1"] if algo == "ps" else []
    procs = [subprocess.Popen(
        [*AGENT, "--algo", algo, "--peers", peers, "--rank", str(r), "--size", str(size),
         "--seed", str(seed), "--segment", "4096", "--output", str(tmp_path / f"{r}.npy"),
         "--stats", str(tmp_path / f"{r}.json"), "--start-on-stdin", *extra],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for r in range(n)]
    try:
        for p in procs:
            assert p.stdout is not None and p.stdout.readline() == "ready\n"
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        results = [p.communicate(timeout=60) for p in procs]
    finally:
        for p in procs:
            p.kill()
            p.wait()
    for p, (out, err) in zip(procs, results, strict=True):
        assert p.returncode == 0, err
        assert f"ina agent: {algo} rank" in out and "TCP retransmissions" in out
    xs = [generate("normal", size, seed, r) for r in range(n)]
    outs = [np.load(tmp_path / f"{r}.npy") for r in range(n)]
    assert check_float32_sum(xs, outs).ok
    settings = Settings(segment=4096, ps_host=1 if algo == "ps" else 0)
    for r in range(n):
        doc = json.loads((tmp_path / f"{r}.json").read_text())
        check_contract(doc, algo)
        model = get_collective(algo).volume(n, size, r, settings)
        assert (doc["bytes_sent"], doc["bytes_received"]) == (4 * model.sent,
                                                              4 * model.received)
        assert doc["rank"] == r and doc["workers"] == n and doc["size"] == size
        assert doc["counters"]["control_bytes_sent"] == n - 1  # the start barrier
        assert isinstance(doc["counters"]["tcp_retransmits"], int)  # > 0 under loss: e2e


def test_one_rank_needs_no_network(tmp_path: Path) -> None:
    args = build_parser().parse_args(
        ["agent", "--algo", "hd", "--peers", str(loopback_peers(1)[0]), "--size",
         "100", "--dist", "ints", "--output", str(tmp_path / "o.npy"), "--stats",
         str(tmp_path / "s.json")])
    assert cmd_agent(args) == 0
    assert np.array_equal(np.load(tmp_path / "o.npy"), generate("ints", 100, 0, 0))
    doc = json.loads((tmp_path / "s.json").read_text())
    check_contract(doc, "hd")
    assert doc["bytes_sent"] == doc["bytes_received"] == 0


class Reflector(InMemoryTransport):
    """A one-worker job's switch: every contribution comes back as its RESULT."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(lambda p: self.put(p[:5] + bytes([p[5] | FLAG_RESULT]) + p[6:]))


def test_ina_stats_keep_the_contract(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                     ) -> None:
    monkeypatch.setattr(hosts.transport, "UdpTransport", Reflector)
    stats = tmp_path / "stats.json"
    args = build_parser().parse_args(
        ["agent", "--job", "3", "--workers", "1", "--aggregator", "10.0.0.254", "--size",
         "1000", "--k", "64", "--stats", str(stats)])
    assert cmd_agent(args) == 0
    doc = json.loads(stats.read_text())
    check_contract(doc, "ina")
    packet = HEADER_SIZE + 4 * 64
    sent = doc["counters"]["sent"]
    assert doc["bytes_sent"] == sent * packet  # every UDP payload, header included
    assert doc["bytes_received"] == doc["counters"]["results"] * packet
    assert doc["job"] == 3 and doc["rank"] == 0
