"""``ina bench allreduce``: its options reach the sweeps, bad ones are clear errors, and
the table says what the measurements say (a stand-in network without root; the real
one in the slow test)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from experiments.allreduce_net import need_root
from experiments.run_allreduce import base_record
from experiments.rundir import RunDir
from experiments.sweep import Point
from ina.bench_allreduce import BenchRequest, bench_allreduce, build_sweeps, wire_fraction

ROOT = Path(__file__).resolve().parents[2]


def ina(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ina", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def test_wire_fraction_is_values_over_values_headers_and_framing() -> None:
    assert wire_fraction(64) == pytest.approx(256 / 310)
    assert wire_fraction(8) == pytest.approx(32 / 86)


@pytest.mark.parametrize(("option", "message"), [
    (["--k", "64,7"], "--k 7: not one of 8, 16, 32, 64, 128, 256"),
    (["--window", "0"], "--window 0: must be in [1, 256]"),
    (["--bw", "20,0"], "--bw 0: must be in (0, 10000] Mbit/s"),
    (["--loss", "0,1.5"], "--loss 1.5: must be in [0, 1)"),
    (["--topo", "ring,3"], "--topo ring,3: unknown topology 'ring'"),
    (["--repeat", "0"], "--repeat 0: must be in [1, 1000]"),
])
def test_bad_options_are_named(option: list[str], message: str) -> None:
    result = ina("bench", "allreduce", *option)
    assert result.returncode == 1
    assert f"ina bench allreduce: error: {message}" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_the_default_set_is_n_4_and_8_k_64_and_256_three_loss_rates() -> None:
    sweeps = build_sweeps(BenchRequest())
    points = [p.options for s in sweeps for p in s.points()]
    assert sorted({(o.topo, o.k, o.loss) for o in points}) == sorted(
        (t, k, loss) for t in ("star,4", "star,8") for k in (64, 256)
        for loss in (0.0, 0.01, 0.05))
    assert len(points) == 12 and {(o.bw, o.size, o.check) for o in points} == {
        (20.0, 300_000, True)}
    one = build_sweeps(BenchRequest(topos=("star,8",), ks=("256",), losses=("0,0.05",),
                                    bws=("10",), size="1e5", window=32, repeat=2))
    [sweep] = one
    assert [(p.options.topo, p.options.k, p.options.loss, p.options.bw, p.options.size,
             p.options.window, p.repeat) for p in sweep.points()] == [
        ("star,8", 256, loss, 10.0, 100_000, 32, rep) for loss in (0.0, 0.05)
        for rep in (0, 1)]


class StandIn:
    """A network that answers at once: goodput falls with the loss rate, every worker
    resends 1% of what it sent per 1% of loss, CPU 20 us per packet."""

    needs_root = False

    def __init__(self, key: tuple[Any, ...], work_dir: Path, run_dir: RunDir) -> None:
        pass

    def stop(self) -> None:
        pass

    def run(self, point: Point) -> dict[str, Any]:
        o = point.options
        n = o.workers
        record = base_record(point)
        seconds = 1.0 + 4 * o.loss + (0.5 if n == 8 else 0.0)
        record.update(ok=True, workers_count=n, completion_s=seconds,
                      goodput_mbps=o.size * 32 / seconds / 1e6,
                      goodput_fraction=o.size * 32 / seconds / 1e6 / o.bw,
                      cpu_bound=n == 8 and o.k == 64)
        sent = 1000
        resent = round(sent * o.loss)
        counters = {"sent": sent + resent, "retransmitted": resent, "nacks": resent // 2,
                    "fetches": resent - resent // 2, "timeouts": 0,
                    "cpu_seconds": 20e-6 * sent, "srtt": 0.01, "rto": 0.02}
        record["workers"] = [{"host": f"h{i}", "counters": counters} for i in range(n)]
        return record


def test_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    request = BenchRequest(losses=("0,0.05",), ks=("64",), runs_dir=str(tmp_path), size=1000)
    assert bench_allreduce(request, runner=StandIn, progress=False) == 0  # type: ignore[arg-type]
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "1000 float32 values per worker, window 64" in out
    rows = [line.split()[:2] + line.split()[3:] for line in lines
            if re.match(r"\s+[48] ", line)]
    assert {line.split()[2] for line in lines if re.match(r"\s+[48] ", line)} == {"20"}
    assert [r[:3] for r in rows] == [["4", "64", "0%"], ["4", "64", "5%"],
                                     ["8", "64", "0%"], ["8", "64", "5%"]]
    assert rows[1][3:8] == ["1.200", "0.03", "0.1%", "0.2%", "83%"]  # 1.0 s / 1.2 s
    assert rows[3][7] == "88%" and rows[2][7] == "100%"  # 1.5 s / 1.7 s
    assert rows[1][8:10] == ["200", "(4.76%)"] and rows[1][10] == "100/100/0"  # 4 workers
    assert rows[0][8:11] == ["0", "(0.00%)", "0/0/0"]
    assert "20 us/chunk" in lines[3] and lines[-2].endswith("cpu_bound")
    [results] = re.findall(r"results: (\S+)", out)
    assert json.loads(Path(results).read_text())["measurements"][0]["ok"]


def test_the_results_record_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    import experiments.run_allreduce
    from ina.cli import main

    monkeypatch.setattr(experiments.run_allreduce, "NetworkRunner", StandIn)
    argv = ["bench", "allreduce", "--topo", "star,4", "--k", "64", "--loss", "0",
            "--size", "1000", "--runs-dir", str(tmp_path)]
    assert main(argv) == 0
    [results] = re.findall(r"results: (\S+)", capsys.readouterr().out)
    assert json.loads(Path(results).read_text())["command"] == ["ina", *argv]


def test_a_failed_point_is_a_row_and_exit_status_1(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    class Failing(StandIn):
        def run(self, point: Point) -> dict[str, Any]:
            record = super().run(point)
            if point.options.loss:
                record.update(ok=False, errors=["h2: exit status 1: all-reduce failed"])
            return record

    request = BenchRequest(topos=("star,4",), ks=("256",), losses=("0,0.01",),
                           runs_dir=str(tmp_path), size=1000)
    assert bench_allreduce(request, runner=Failing, progress=False) == 1  # type: ignore[arg-type]
    out = capsys.readouterr().out
    assert re.search(r"4  256    20    1%  FAILED: h2: exit status 1: all-reduce failed", out)


@pytest.mark.slow
def test_a_small_benchmark_in_mininet(tmp_path: Path) -> None:
    why = need_root()
    if why:
        pytest.skip(why)
    result = ina("bench", "allreduce", "--topo", "star,4", "--k", "16", "--loss", "0,0.05",
                 "--bw", "50", "--size", "5000", "--window", "8",
                 "--runs-dir", str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5000 float32 values per worker, window 8" in result.stdout
    rows = [line.split() for line in result.stdout.splitlines()
            if re.match(r"\s+4\s+16 ", line)]
    assert [r[2:4] for r in rows] == [["50", "0%"], ["50", "5%"]] and rows[0][8] == "100%"
    assert rows[0][9] == "0"  # no loss, nothing resent
    [results] = tmp_path.glob("*/results.json")
    doc = json.loads(results.read_text())
    assert [m["options"]["loss"] for m in doc["measurements"]] == [0.0, 0.05]
    assert all(m["ok"] and m["check"]["ok"] for m in doc["measurements"])
