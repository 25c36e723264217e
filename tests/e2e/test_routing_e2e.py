"""``ina run --routing shortest`` as a user runs it, on ``leafspine,2,2,2`` (leaves s1:
h1, h2 and s2: h3, h4; spines s3, s4 on the leaves' ports 3 and 4). The command starts
its own network, so no other network may be up meanwhile (the Mininet lock): this
module has no network fixture.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from experiments.allreduce_net import need_root
from topologies.nodes import ina_command

pytestmark = pytest.mark.slow


def test_ina_run_routing_shortest_keeps_one_spine(tmp_path: Path) -> None:
    """``ina run --routing shortest``: the sharded parameter server's flows between the
    leaves (every host talks to every host) all take s1's lowest uplink, port 3; the
    other spine carries nothing from s1."""
    why = need_root()
    if why:
        pytest.skip(why)
    proc = subprocess.run([*ina_command(), "run", "--topo", "leafspine,2,2,2", "--algo",
                           "ps-sharded", "--size", "100000", "--routing", "shortest",
                           "--check", "--runs-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "one shortest path per host" in proc.stdout
    [run_dir] = list(tmp_path.iterdir())
    [m] = json.loads((run_dir / "results.json").read_text())["measurements"]
    assert m["options"]["routing"] == "shortest" and m["check"]["ok"]
    ports = {p["port"]: p for p in m["switch_counters"]["s1"]["ports"]}
    # h1 and h2 each send 2 x 1/4 of 400 kB to h3 and h4 (200 kB a host) across s1
    assert ports[3]["tx_bytes"] > 2 * 200_000
    assert ports[4]["tx_bytes"] == 0
