"""Choosing the engine, the compiled object's cache, and state that both engines share."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from switch.native.build import compiler

ROOT = Path(__file__).resolve().parents[3]
needs_cc = pytest.mark.skipif(compiler() is None,
                              reason="no C compiler (cc or gcc) for the native engine")

COUNTING = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers_t hdr, inout meta_t m) { apply { } }
control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    register<bit<8>>(4) r;
    counter(4, CounterType.packets_and_bytes) c;
    action set(bit<9> port) { sm.egress_spec = port; }
    table t { key = { hdr.h.a: exact; } actions = { set; NoAction; } default_action = NoAction(); }
    apply {
        bit<8> v;
        r.read(v, (bit<32>)hdr.h.a);
        v = v + hdr.h.b;
        r.write((bit<32>)hdr.h.a, v);
        hdr.h.b = v;
        c.count((bit<32>)hdr.h.a);
        if (!t.apply().hit) { mark_to_drop(sm); }
    }
}
control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def _program(text: str = COUNTING):  # type: ignore[no-untyped-def]
    from switch.frontend import compile_text

    return compile_text(text, "counting.p4")


@needs_cc
def test_native_and_python_share_registers_counters_and_tables(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from switch.v1model import V1Switch

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    sw = V1Switch(_program(), engine="native")
    assert sw.engine == "native"
    sw.table_add("t", [1], "set", [3])
    sw.register_write("r", 1, 10)
    assert sw.inject(0, b"\x01\x05") == [(3, b"\x01\x0f")]  # 10 + 5, written by C
    assert sw.register_read("r", 1) == 15
    assert sw.counter_read("c", 1) == (1, 2)
    lines: list[str] = []
    sw.set_trace(lines.append)  # tracing runs the Python engine, on the same state
    assert sw.engine == "python"
    assert sw.inject(0, b"\x01\x01") == [(3, b"\x01\x10")]
    assert lines and sw.counter_read("c", 1) == (2, 4)
    sw.set_trace(None)
    assert sw.engine == "native"
    sw.table_add("t", [2], "set", [4])  # a table write the next batch sees
    outputs, counts = sw.process_batch([(0, b"\x01\x01"), (0, b"\x02\x07"), (0, b"\x03\x00")])
    assert outputs == [(3, b"\x01\x11"), (4, b"\x02\x07")] and counts == [1, 1, 0]
    assert sw.register_read("r", 1) == 0x11
    sw.register_reset("r")
    sw.counter_reset("c")
    assert sw.inject(0, b"\x01\x02") == [(3, b"\x01\x02")]
    assert sw.counter_read("c", 1) == (1, 2)
    # the shared object is cached under XDG_CACHE_HOME, by a hash of its source
    assert len(list((tmp_path / "ina" / "native").glob("p4_*.so"))) == 1
    V1Switch(_program(), engine="native")
    assert len(list((tmp_path / "ina" / "native").glob("p4_*.so"))) == 1


@needs_cc
def test_a_program_the_native_engine_does_not_run(caplog: pytest.LogCaptureFixture) -> None:
    from switch.engine.runtime import SwitchRuntimeError
    from switch.frontend import compile_file
    from switch.v1model import V1Switch

    path = ROOT / "tests" / "stf" / "v1model" / "clone_e2e.p4"
    program = compile_file(path)
    with caplog.at_level(logging.INFO, logger="switch.v1model"):
        sw = V1Switch(program, engine="auto")
    assert sw.engine == "python"
    assert sw.native_error == f"{path}(45): not supported: extern function clone"
    assert f"runs on the Python engine: the native engine cannot run it: {path}(45): not " \
           "supported: extern function clone" in caplog.text
    with pytest.raises(SwitchRuntimeError, match=r"the native engine cannot run this program: "
                                                 r".*clone_e2e.p4\(45\): not supported: "
                                                 "extern function clone"):
        V1Switch(program, engine="native")
    # a construct found in the code names its place
    loop = compile_file(ROOT / "tests" / "stf" / "control" / "for_loop.p4")
    sw = V1Switch(loop, engine="auto")
    assert sw.engine == "python"
    assert sw.native_error is not None
    assert sw.native_error.startswith(f"{ROOT / 'tests/stf/control/for_loop.p4'}(")
    assert sw.native_error.endswith("not supported: statement For")


def test_without_a_c_compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    from switch.engine.runtime import SwitchRuntimeError
    from switch.v1model import V1Switch

    monkeypatch.setenv("CC", "/nonexistent/cc")
    sw = V1Switch(_program(), engine="auto")
    assert sw.engine == "python"
    assert sw.native_error == "no C compiler found (install gcc, or set CC)"
    assert sw.inject(0, b"\x01\x05") == []  # the table has no entry: dropped
    with pytest.raises(SwitchRuntimeError, match="no C compiler found"):
        V1Switch(_program(), engine="native")
    with pytest.raises(SwitchRuntimeError, match="engine 'fast' is not one of auto, native"):
        V1Switch(_program(), engine="fast")


def test_ina_switch_engine_option(monkeypatch: pytest.MonkeyPatch) -> None:
    from switch.process.options import OptionsError, parse_switch_args

    monkeypatch.delenv("INA_SWITCH_ENGINE", raising=False)
    assert parse_switch_args(["p.p4"]).engine == "auto"
    assert parse_switch_args(["p.p4", "--engine", "python"]).engine == "python"
    assert parse_switch_args(["p.p4", "--engine", "native"]).engine == "native"
    with pytest.raises(OptionsError, match="--engine native and --log-console/--log-file"):
        parse_switch_args(["p.p4", "--engine", "native", "--log-console"])
    with pytest.raises(OptionsError, match="invalid choice: 'c'"):
        parse_switch_args(["p.p4", "--engine", "c"])
    # the default a Mininet run's switches take from their environment
    monkeypatch.setenv("INA_SWITCH_ENGINE", "python")
    assert parse_switch_args(["p.p4"]).engine == "python"
    assert parse_switch_args(["p.p4", "--engine", "native"]).engine == "native"
    monkeypatch.setenv("INA_SWITCH_ENGINE", "native")
    with pytest.raises(OptionsError, match="INA_SWITCH_ENGINE=native and --log-console"):
        parse_switch_args(["p.p4", "--log-file", "x"])
    monkeypatch.setenv("INA_SWITCH_ENGINE", "fast")
    with pytest.raises(OptionsError, match="INA_SWITCH_ENGINE='fast': must be one of auto, "
                                           "native, python"):
        parse_switch_args(["p.p4"])


@needs_cc
def test_ina_bench_engine_on_the_native_engine() -> None:
    import subprocess

    ina = str(ROOT / ".venv" / "bin" / "ina")
    r = subprocess.run([ina, "bench", "engine", "p4/aggregation.p4", "-D", "INA_K=64",
                        "--stf", "tests/p4/aggregation/two_workers_k64.stf", "--engine",
                        "native", "--count", "2000"], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "3 packet(s) from tests/p4/aggregation/two_workers_k64.stf" in r.stdout
    assert "2000 packets in" in r.stdout and "(2000 packets out; " in r.stdout, r.stdout
    r = subprocess.run([ina, "bench", "engine", "tests/stf/v1model/clone_e2e.p4", "--engine",
                        "native"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert "ina bench engine: the native engine cannot run this program: " in r.stderr
    assert "clone_e2e.p4(45): not supported: extern function clone" in r.stderr
    assert "Traceback" not in r.stderr


def _ready_line(program: Path, tmp_path: Path, *extra: str) -> str:
    """The stderr of ``ina switch PROGRAM`` (no ports) up to its ready line."""
    import signal
    import subprocess

    ina = str(ROOT / ".venv" / "bin" / "ina")
    sock = tmp_path / f"{program.stem}.sock"
    proc = subprocess.Popen([ina, "switch", str(program), *extra, "--control-socket",
                             str(sock), "--", "--grpc-server-addr", "127.0.0.1:0"],
                            stderr=subprocess.PIPE, text=True)
    lines = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if " ready: " in line or "error" in line:
                break
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    return "".join(lines)


@needs_cc
def test_ina_switch_says_which_engine_runs_and_why(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("INA_SWITCH_ENGINE", raising=False)
    out = _ready_line(ROOT / "p4" / "ipv4_forward.p4", tmp_path)
    assert out.rstrip().endswith(", native engine"), out
    clone = ROOT / "tests" / "stf" / "v1model" / "clone_e2e.p4"
    out = _ready_line(clone, tmp_path)
    assert f"ina switch: WARNING: {clone} runs on the Python engine: the native engine " \
           f"cannot run it: {clone}(45): not supported: extern function clone" in out, out
    assert out.rstrip().endswith(", python engine"), out
    out = _ready_line(ROOT / "p4" / "ipv4_forward.p4", tmp_path, "--engine", "python")
    assert out.rstrip().endswith(", python engine"), out
