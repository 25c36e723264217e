"""``ina bench switch`` runs end to end and prints its figures (which are not judged)
and its counts (which are: every frame, chunk and RESULT of a phase comes out)."""

from __future__ import annotations

import re
import shutil

import pytest
from readme_sections import blocks, section
from switchproc_helpers import ina, need_root

pytestmark = pytest.mark.slow


def test_bench_switch_prints_figures() -> None:
    need_root()
    result = ina("bench", "switch", "--count", "3000", timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    # every frame of each phase came out of port 2
    assert re.search(r"latency, one \d+-byte frame at a time \(500 of 500 arrived\): "
                     r"p50 [\d.]+ ms, p90 [\d.]+ ms, p99 [\d.]+ ms, max [\d.]+ ms", out), out
    assert re.search(r"throughput, window of 64 frames: [\d,]+ packets/s \(3000 of 3000 "
                     r"delivered in [\d.]+ s; switch CPU: [\d.]+ us per packet in, \d+% of a "
                     r"core\)", out), out
    assert "burst of 256 back-to-back frames: 256 delivered" in out, out
    assert "switch port 1: rx" in out
    assert "Traceback" not in result.stderr


def test_bench_switch_aggregation_prints_figures_and_results_come_out() -> None:
    need_root()
    result = ina("bench", "switch", "aggregation", "--workers", "3", "--window", "8",
                 "--count", "300", timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "aggregation: job 1, 3 workers on ports 1..3, K=64 values per contribution, " \
        "8 slots" in out, out
    assert re.search(r"latency, one chunk at a time \(200 of 200 chunks complete\): "
                     r"p50 [\d.]+ ms, p90 [\d.]+ ms, p99 [\d.]+ ms, max [\d.]+ ms", out), out
    assert re.search(r"throughput, window of 8 chunks: [\d,]+ contributions/s in, [\d,]+ "
                     r"results/s out \(100 of 100 chunks complete in [\d.]+ s; switch CPU: "
                     r"[\d.]+ us per packet in, \d+% of a core\)", out), out
    assert re.search(r"goodput: [\d.]+ Mbit/s of float32 values reduced", out), out
    assert re.search(r"latency per chunk under load \(100 of 100 chunks complete\): p50", out)
    # every worker got every chunk's RESULT, and each carried the exact sum
    assert "results: 900 RESULTs received, 0 with a wrong sum" in out, out
    assert re.search(r"switch port 3: rx 300, tx 300, drops \d+ p4_drop", out), out
    assert "Traceback" not in result.stderr


def test_bench_switch_aggregation_refuses_a_window_beyond_the_slots() -> None:
    need_root()
    result = ina("bench", "switch", "aggregation", "--window", "300", "--count", "10",
                 timeout=300)
    assert result.returncode == 1
    assert "cannot install the job" in result.stderr and "slots must be in [1, 256]" in \
        result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_bench_switch_refuses_a_program_without_a_route_table(tmp_path) -> None:  # type: ignore[no-untyped-def]
    need_root()
    prog = tmp_path / "plain.p4"
    prog.write_text(
        "#include <core.p4>\n#include <v1model.p4>\n"
        "struct h_t {}\nstruct m_t {}\n"
        "parser P(packet_in p, out h_t h, inout m_t m, inout standard_metadata_t s) {\n"
        "    state start { transition accept; } }\n"
        "control V(inout h_t h, inout m_t m) { apply { } }\n"
        "control I(inout h_t h, inout m_t m, inout standard_metadata_t s) { apply { } }\n"
        "control E(inout h_t h, inout m_t m, inout standard_metadata_t s) { apply { } }\n"
        "control C(inout h_t h, inout m_t m) { apply { } }\n"
        "control D(packet_out p, in h_t h) { apply { } }\n"
        "V1Switch(P(), V(), I(), E(), C(), D()) main;\n")
    result = ina("bench", "switch", str(prog), timeout=300)
    assert result.returncode == 1
    assert "no table with one 32-bit LPM key" in result.stderr


def test_bench_switch_on_both_targets_puts_them_side_by_side() -> None:
    need_root()
    if shutil.which("simple_switch_grpc") is None or shutil.which("p4c-bm2-ss") is None:
        pytest.skip("simple_switch_grpc/p4c-bm2-ss not on PATH")
    result = ina("bench", "switch", "aggregation", "--workers", "2", "--window", "8",
                 "--count", "200", "--target", "ina,bmv2", timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "== ina switch ==" in out and "== BMv2 simple_switch_grpc ==" in out, out
    # both switches summed every chunk exactly
    assert out.count("results: 600 RESULTs received, 0 with a wrong sum") == 2, out
    assert "switch ports: BMv2 does not count them" in out
    table = out[out.index("side by side"):]
    assert "| | ina switch | BMv2 simple_switch_grpc |" in table.replace("|  |", "| |"), table
    assert re.search(r"\| contributions/s in \| [\d,]+ \| [\d,]+ \|", table), table
    assert re.search(r"\| switch CPU per packet in \| [\d.]+ us \| [\d.]+ us \|", table), table
    assert "| came through | 100 of 100 chunks | 100 of 100 chunks |" in table, table


def test_bench_switch_refuses_an_unknown_target() -> None:
    result = ina("bench", "switch", "--target", "ina,tofino", timeout=60)
    assert result.returncode == 2
    assert "--target tofino: must be one of ina, bmv2" in result.stderr
    assert "Traceback" not in result.stderr


def _readme_bench_commands() -> list[list[str]]:
    return [line.split()[1:] for block in blocks(section("Starting the switch by hand"))
            for line in block.splitlines()
            if line.startswith(".venv/bin/ina bench switch ")]


def test_readme_bench_switch_commands_run_as_written() -> None:
    need_root()
    commands = _readme_bench_commands()
    assert [c[2] for c in commands] == ["p4/aggregation.p4", "p4/ipv4_forward.p4",
                                        "p4/aggregation.p4"]
    *commands, both = commands
    assert both[-2:] == ["--target", "ina,bmv2"]
    if shutil.which("simple_switch_grpc") and shutil.which("p4c-bm2-ss"):
        result = ina(*both, "--count", "400", timeout=600)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "| contributions/s in |" in result.stdout, result.stdout
        assert result.stdout.count("with a wrong sum") == 2
    outs = []
    for argv in commands:
        result = ina(*argv, "--count", "2000", timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr
        assert re.search(r"throughput, window of 64 (chunks|frames): [\d,]+ .*switch CPU: "
                         r"[\d.]+ us per packet in", result.stdout), result.stdout
        assert "Traceback" not in result.stderr
        outs.append(result.stdout)
    assert "8 workers on ports 1..8, K=256 values per contribution" in outs[0]
    # every chunk of both phases complete, each of the 8 workers with its RESULT, and
    # every RESULT the exact sum
    chunks = 200 + 2000 // 8
    assert "(200 of 200 chunks complete)" in outs[0], outs[0]
    assert f"({chunks - 200} of {chunks - 200} chunks complete in " in outs[0], outs[0]
    assert f"results: {8 * chunks} RESULTs received, 0 with a wrong sum" in outs[0], outs[0]
    # the router delivered every frame of each phase
    assert "(500 of 500 arrived)" in outs[1], outs[1]
    assert "(2000 of 2000 delivered in " in outs[1], outs[1]
    assert "burst of 256 back-to-back frames: 256 delivered" in outs[1], outs[1]
