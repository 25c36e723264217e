"""``check_engine_limits`` and ``ina p4c``: a construct the built-in switch cannot run
is a compile error with its position (p4c's format, "unsupported: ..."), not a failure
when a switch builds the pipeline."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from switch.frontend import CompileError, compile_text
from switch.v1model.engine_limits import check_engine_limits

REPO = Path(__file__).resolve().parents[3]

PROGRAM = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> n; varbit<32> v; }
struct vb_t { varbit<32> v; bit<8> n; }
struct headers_t { h_t h; h_t g; }
struct meta_t { }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta,
         inout standard_metadata_t sm) {
    PARSER_LOCALS
    state start {
        pkt.extract(hdr.h, 16);
        pkt.extract(hdr.g, 16);
        transition START_TRANSITION
    }
}
control V(inout headers_t hdr, inout meta_t meta) { apply { } }
void take(in varbit<32> x) { }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        BODY
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def program(body: str = "", parser_locals: str = "", transition: str = "accept;") -> str:
    return (PROGRAM.replace("BODY", body).replace("PARSER_LOCALS", parser_locals)
            .replace("START_TRANSITION", transition))


def limit_error(src: str) -> str:
    prog = compile_text(src, "limits.p4")  # the front end accepts it
    with pytest.raises(CompileError) as info:
        check_engine_limits(prog)
    return str(info.value)


@pytest.mark.parametrize(("body", "parser_locals", "transition", "expected"), [
    ("digest<vb_t>(1, { hdr.h.v, hdr.h.n });", "", "accept;",
     "limits.p4(21): error: unsupported: a varbit value that is not a header field, "
     "a local variable or a parameter\n"
     "        digest<vb_t>(1, { hdr.h.v, hdr.h.n });\n"
     "                        ^"),
    ("take(hdr.h.n == 0 ? hdr.h.v : hdr.g.v);", "", "accept;",
     "limits.p4(21): error: unsupported: a varbit value that is not a header field, "
     "a local variable or a parameter\n"
     "        take(hdr.h.n == 0 ? hdr.h.v : hdr.g.v);\n"
     "             ^"),
    ("", "value_set<tuple<bit<8>, bit<8>>>(4) pairs;",
     "select(hdr.h.n, hdr.g.n) { pairs: accept; default: reject; }",
     "limits.p4(9): error: unsupported: value set pairs of tuple<bit<8>, bit<8>>: its "
     "elements must be bit<W>, a serializable enum or a struct of them\n"
     "    value_set<tuple<bit<8>, bit<8>>>(4) pairs;\n"
     "    ^"),
])
def test_unsupported_construct_is_a_compile_error(body: str, parser_locals: str,
                                                  transition: str, expected: str) -> None:
    assert limit_error(program(body, parser_locals, transition)) == expected


def test_a_program_the_switch_runs_passes() -> None:
    src = program("take(hdr.h.v);")
    check_engine_limits(compile_text(src, "ok.p4"))


def test_ina_p4c_reports_it_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "limits.p4").write_text(program("digest<vb_t>(1, { hdr.h.v, hdr.h.n });"))
    out = tmp_path / "limits.json"
    result = subprocess.run(
        [sys.executable, "-m", "ina", "p4c", "limits.p4", "-o", str(out)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("limits.p4(21): error: unsupported: a varbit value"), \
        result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()


def test_ina_stf_reports_it_as_ina_p4c_does(tmp_path: Path) -> None:
    (tmp_path / "limits.p4").write_text(program("digest<vb_t>(1, { hdr.h.v, hdr.h.n });"))
    (tmp_path / "limits.stf").write_text("packet 0 01 02 03 04 05 06\n")
    result = subprocess.run(
        [sys.executable, "-m", "ina", "stf", "limits.p4", "limits.stf"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 1
    output = result.stdout + result.stderr
    assert "limits.p4(21): error: unsupported: a varbit value" in output, output
    assert "Traceback" not in output and "cannot start the switch" not in output
