"""The model at any size and on any topology: ``experiments.model_topology`` (the
graph, the tree, paths and link loads), the model's use of it (``experiments.model``)
and ``ina model --topo``, ``--validate`` and ``--plot`` (``experiments.model_report``)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from experiments.model import ModelInput, model_ina, model_ring, predict
from experiments.model_report import (
    format_validation,
    plot_speedup_vs_workers,
    speedup,
    validation_rows,
)
from experiments.model_topology import ALGOS, ShapeError, _from_spec, graph_of, shape_of


def adjacency(g: Any) -> tuple[list[str], dict[str, dict[str, int]]]:
    return g.host_switch, {a: dict(sorted(b.items())) for a, b in sorted(g.links.items())}


@pytest.mark.parametrize("spec", ["star,4", "leafspine,2,2,2", "leafspine,3,2,1", "fattree,4"])
def test_the_scalable_families_are_the_emulators(spec: str) -> None:
    """Built here without the emulator's address limit, the graph is the one
    ``topologies.spec`` builds for ``ina run``."""
    assert adjacency(graph_of(spec)) == adjacency(_from_spec(spec))


def test_shapes_by_hand() -> None:
    star = shape_of("star,1024")
    assert (star.hosts, star.switches, star.tree_depth) == (1024, 1, 1)
    assert star.to_json()["hops"] == dict.fromkeys(ALGOS, 1)
    assert star.to_json()["load"] == dict.fromkeys(ALGOS, 1.0)
    leafspine = shape_of("leafspine,2,2,2")
    assert leafspine.tree_depth == 2  # up to a spine
    assert leafspine.to_json()["hops"] == {"ina": 2, "ring": 3, "ps": 3, "ps-sharded": 3,
                                           "hd": 3}
    fattree = shape_of("fattree,4")
    assert (fattree.hosts, fattree.switches, fattree.tree_depth) == (16, 20, 3)
    assert fattree.hops("ring") == 5  # h4 -> h5: edge, aggregation, core, aggregation, edge
    # ring's few flows between edges never meet; hd's rounds and the all-to-all have
    # enough flows for the hash to put two on one link that could have carried them apart
    assert fattree.load("ring") == fattree.load("ps") == 1.0
    assert 1.1 < fattree.load("ps-sharded") < 1.6 and 1.8 < fattree.load("hd") < 3


def test_hash_collisions_by_hand() -> None:
    """leafspine,2,2,2, halving-doubling among 4: the distance-2 rounds (half the tensor
    each) send h1->h3 and h2->h4 up from the first leaf, h3->h1 and h4->h2 from the
    second, each over one of two spines at random. Only when both leaves split their
    two flows (a chance of 1/4) does no link carry two: the expected busiest link is
    1/4 * 1 + 3/4 * 2 = 1.75. The distance-1 rounds stay in the leaves."""
    shape = shape_of("leafspine,2,2,2")
    assert shape.load("hd") == pytest.approx((2 * 0.5 * 1.75 + 2 * 0.25 * 1) / 1.5, rel=0.05)
    assert shape.load("ring") == 1.0  # h2->h3 and h4->h1 leave by different leaves


def test_an_oversubscribed_core_by_hand() -> None:
    """Four leaves of four hosts on one spine: a leaf's uplink carries what its four
    hosts send to the twelve others, 48 units, where a host link carries 15."""
    shape = shape_of("leafspine,4,1,4")
    assert shape.load("ps-sharded") == pytest.approx(48 / 15)
    # halving-doubling: its distance-8 and distance-4 rounds cross leaves, four flows on
    # an uplink; the distance-2 and 1 rounds stay in the leaf; weighted by their bytes
    assert shape.load("hd") == pytest.approx(2 * (0.5 * 4 + 0.25 * 4 + 0.125 + 0.0625)
                                             / (2 * 0.9375))
    assert shape.load("ring") == 1.0 and shape.load("ps") == 1.0


def test_a_thousand_workers() -> None:
    shape = shape_of("fattree,16")
    assert (shape.hosts, shape.switches, shape.tree_depth) == (1024, 320, 3)
    assert shape.load("ps-sharded") == pytest.approx(1.0)


@pytest.mark.parametrize("spec, message", [
    ("fattree,3", "a fat-tree's K is even"),
    ("star,5000", "5000 hosts; the model takes at most 4096"),
    ("leafspine,2,2", "leafspine takes L,S,H"),
    ("star,0", "at least 1"),
    ("ring,3", "unknown topology 'ring'"),
])
def test_bad_topologies(spec: str, message: str) -> None:
    with pytest.raises(ShapeError, match=message):
        shape_of(spec)


def test_a_star_shape_changes_nothing() -> None:
    plain = ModelInput(8, 1_000_000, 10, k=256)
    shaped = replace(plain, shape=shape_of("star,8"))
    for algo in ("ina", "ring", "ps", "ps-sharded", "hd"):
        a, b = predict(algo, plain), predict(algo, shaped)
        assert a and b and a.seconds == pytest.approx(b.seconds, rel=1e-12)


def test_deeper_trees_and_longer_paths_add_latency() -> None:
    m = ModelInput(16, 1_000_000, 10, k=256, shape=shape_of("fattree,4"))
    star = replace(m, shape=shape_of("star,16"))
    ring, ring_star = model_ring(m), model_ring(star)
    assert ring.seconds and ring_star.seconds
    assert ring.seconds - ring_star.seconds == pytest.approx(30 * 4 * m.hop)
    ina, ina_star = model_ina(m), model_ina(star)
    assert ina.seconds and ina_star.seconds
    frame = 4 * 256 + 54
    assert ina.seconds - ina_star.seconds == pytest.approx(4 * (m.hop + frame * 8 / 10e6))


def test_a_small_window_binds_on_a_fast_network() -> None:
    """100 Gbit/s, 1 us per hop: a chunk's round trip in a fat-tree exceeds what a window
    of 8 chunks takes to send, so the window sets the pace."""
    m = ModelInput(16, 1_000_000, 100_000, k=256, window=8, alpha=2e-6, hop=1e-6,
                   shape=shape_of("fattree,4"))
    p = model_ina(m)
    frame = (4 * 256 + 54) * 8 / 100e9
    rtt = 2 * 2e-6 + 2 * 3 * frame + 2 * 2 * 1e-6
    assert rtt / 8 > frame
    packets = 3907 + 8
    assert p.seconds == pytest.approx(packets * rtt / 8 + 2 * 2e-6 + 4 * (1e-6 + frame))


def test_ina_model_on_topologies() -> None:
    proc = subprocess.run([sys.executable, "-m", "ina", "model", "--topo", "fattree,16",
                           "--topo", "leafspine,2,2,2", "--size", "1e6", "--bw", "10",
                           "--k", "256", "--hop", "20"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("fattree,16: 320 switches, the in-network tree 3 links "
                                  "deep, hop = 20 us; N = 1024, S = 1000000")
    assert "\nleafspine,2,2,2: 4 switches, the in-network tree 2 links deep" in proc.stdout


@pytest.mark.parametrize("argv, message", [
    (["--topo", "fattree,5"], "--topo fattree,5: topology 'fattree,5': a fat-tree's K"),
    (["--hop", "-1"], "--hop -1: must not be negative"),
    (["--plot", "x"], "--plot: give the link rate (--bw)"),
    (["--validate"], "--validate: give the runs to compare with (--measured RUN_DIR)"),
    (["--workers", "5000"], "--workers 5000: must be in [1, 4096]"),
])
def test_ina_model_errors(argv: list[str], message: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "ina", "model", *argv], capture_output=True,
                          text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"ina model: error: {message}"), proc.stderr


# --------------------------------------------------------- against the runs


def measurement(topo: str, algo: str, seconds: float, cpu_bound: bool = False,
                bw: float = 10, size: int = 1_000_000) -> dict[str, Any]:
    options = {"topo": topo, "algo": algo, "size": size, "bw": bw, "k": 256, "window": 64,
               "loss": 0.0, "duplicate": 0.0}
    return {"options": options, "ok": True, "completion_s": seconds, "cpu_bound": cpu_bound}


def test_validation_against_runs(tmp_path: Path) -> None:
    m = ModelInput(4, 1_000_000, 10, k=256, shape=shape_of("star,4"))
    ina, ring = predict("ina", m), predict("ring", m)
    assert ina and ring and ina.seconds and ring.seconds
    doc = {"measurements": [
        measurement("star,4", "ina", ina.seconds * 1.02),
        measurement("star,4", "ina", ina.seconds * 1.04),
        measurement("star,4", "ring", ring.seconds * 1.3),
        measurement("star,4", "hd", 9.0, cpu_bound=True),
        {**measurement("star,4", "ps", 1.0), "options": {
            **measurement("star,4", "ps", 1.0)["options"], "loss": 0.01}},  # no loss model
    ]}
    rows = validation_rows([doc])
    assert [(r.algo, r.runs, r.faithful_runs) for r in rows] == [("ina", 2, 2),
                                                                 ("ring", 1, 1),
                                                                 ("hd", 1, 0)]
    assert [r.cpu_bound for r in rows] == [False, False, True]
    assert rows[0].ratio == pytest.approx(1.03) and rows[0].within
    assert rows[1].ratio == pytest.approx(1.3) and not rows[1].within
    text = format_validation(rows)
    assert text.endswith("1 of 2 faithful points within 15% of the model; outside: "
                         "star,4 ring (1.30)")
    assert "cpu_bound" in text.splitlines()[3]
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "results.json").write_text(json.dumps(doc))
    written = plot_speedup_vs_workers(tmp_path / "plots", 1_000_000, 10, 256, 64, [doc])
    assert [p.name for p in written] == ["speedup_vs_workers.png", "speedup_vs_workers.svg"]
    svg = written[1].read_text()
    assert "emulated, star" in svg and "model, fattree" in svg


def test_the_speedup_grows_past_two_at_a_thousand_workers() -> None:
    """Ring's 2(N-1) steps cost latency the in-network job does not pay."""
    assert speedup("star,1024", 1_000_000, 10, 256, 64) > 2.0
    assert speedup("fattree,16", 1_000_000, 10, 256, 64) > speedup("star,1024", 1_000_000,
                                                                   10, 256, 64)
