"""The ``ina`` command line as a user runs it: exit codes, outputs, error texts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from switch.frontend.artifact import load_artifact

ROOT = Path(__file__).resolve().parents[2]
FORWARD = ROOT / "p4" / "ipv4_forward.p4"


def ina(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ina", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_p4c_writes_p4info_and_artifact(tmp_path: Path) -> None:
    p4info = tmp_path / "out" / "forward.p4info.txtpb"
    artifact = tmp_path / "out" / "forward.json"
    result = ina("p4c", str(FORWARD), "--p4runtime-files", str(p4info), "-o", str(artifact))
    assert result.returncode == 0, result.stderr
    text = p4info.read_text()
    assert 'name: "ForwardIngress.ipv4_lpm"' in text
    assert 'name: "ForwardIngress.forward"' in text
    assert "match_type: LPM" in text
    program = load_artifact(artifact.read_text())
    assert "ForwardIngress.ipv4_lpm" in program.tables


def test_p4c_reports_errors_like_p4c(tmp_path: Path) -> None:
    bad = tmp_path / "bad.p4"
    bad.write_text("#include <core.p4>\nconst bit<8> X = Y;\n")
    result = ina("p4c", "bad.p4", cwd=tmp_path)
    assert result.returncode == 1
    assert "bad.p4(2): error:" in result.stderr
    assert "Y" in result.stderr
    assert "Traceback" not in result.stderr


def test_p4c_missing_include_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "inc.p4"
    bad.write_text("\n#include \"nothere.p4\"\n")
    result = ina("p4c", "inc.p4", cwd=tmp_path)
    assert result.returncode == 1
    assert "inc.p4(2)" in result.stderr
    assert "nothere.p4" in result.stderr


MINIMAL = """#include <core.p4>
#include <v1model.p4>
#ifndef WIDTH
#error WIDTH is required
#endif
header h_t { bit<WIDTH> f; }
struct hs_t { h_t h; }
struct m_t {}
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.h); transition accept; }
}
control C(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { s.egress_spec = 1; } }
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.h); } }
V1Switch(P(), C(), I(), E(), C(), D()) main;
"""


def test_p4c_defines_reach_the_program(tmp_path: Path) -> None:
    (tmp_path / "d.p4").write_text(MINIMAL)
    result = ina("p4c", "d.p4", cwd=tmp_path)
    assert result.returncode == 1
    assert "d.p4(4)" in result.stderr and "WIDTH is required" in result.stderr
    assert ina("p4c", "d.p4", "-D", "WIDTH=8", cwd=tmp_path).returncode == 0


def test_bad_artifact_is_a_clear_error() -> None:
    from switch.frontend import CompileError

    with pytest.raises(CompileError, match="not a compiled program"):
        load_artifact("{}")



def test_output_into_a_pipe_that_closes_early_is_no_traceback(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``ina ... | head``: the reader goes away; ina stops quietly with status 0."""
    import os

    from ina.cli import main

    read_end, write_end = os.pipe()
    os.close(read_end)
    with os.fdopen(write_end, "w", buffering=1) as closed_pipe:
        monkeypatch.setattr("sys.stdout", closed_pipe)
        assert main(["topo", "show", "star,2"]) == 0


def test_p4c_takes_the_options_of_p4c_bm2_ss_and_p4c(tmp_path: Path) -> None:
    """The tutorials' Makefile passes --p4v 16; p4c's scripts --target and --arch; the
    p4c driver takes -o as a directory."""
    result = ina("p4c", "--p4v", "16", "--std", "p4-16", "--target", "bmv2", "--arch",
                 "v1model", str(FORWARD), "-o", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "ForwardIngress.ipv4_lpm" in load_artifact(
        (tmp_path / "ipv4_forward.json").read_text()).tables


@pytest.mark.parametrize("option, message", [
    (["--p4v", "14"], "--p4v 14: only P4_16 is supported (--p4v 16); P4_14 programs are not"),
    (["--std", "p4-14"], "--std p4-14: only P4_16 is supported"),
    (["--arch", "psa"], "--arch psa: the only architecture is v1model"),
    (["--target", "tofino"], "--target tofino: the only target is bmv2"),
    (["--emit-externs"], "--emit-externs: extern types a program declares itself are not "
                         "supported"),
])
def test_p4c_refuses_what_it_cannot_do(option: list[str], message: str) -> None:
    result = ina("p4c", *option, str(FORWARD))
    assert result.returncode == 2
    assert result.stderr.startswith(f"ina p4c: error: {message}")
    assert "Traceback" not in result.stderr
