"""``ina p4c`` warns about a register of ``int<W>``: BMv2 reads its values back as
unsigned, where the P4 spec (and the built-in switch) keeps their sign, so a program
that compares or shifts them behaves differently on the two switches (the STF test
``tests/stf/extern/register_signed_read`` shows it on both)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PROGRAM = """#include <core.p4>
#include <v1model.p4>
header h_t {{ bit<8> a; }}
struct H {{ h_t h; }}
struct M {{ }}
typedef int<16> Signed;
parser P(packet_in p, out H h, inout M m, inout standard_metadata_t s) {{
    state start {{ p.extract(h.h); transition accept; }}
}}
control VC(inout H h, inout M m) {{ apply {{ }} }}
control I(inout H h, inout M m, inout standard_metadata_t s) {{
    register<{element}>(4) r;
    apply {{ {element} v; r.read(v, 0); if (v < 0) {{ h.h.a = 1; }} }}
}}
control E(inout H h, inout M m, inout standard_metadata_t s) {{ apply {{ }} }}
control CC(inout H h, inout M m) {{ apply {{ }} }}
control D(packet_out p, in H h) {{ apply {{ p.emit(h.h); }} }}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def p4c(tmp_path: Path, element: str) -> subprocess.CompletedProcess[str]:
    source = tmp_path / "reg.p4"
    source.write_text(PROGRAM.format(element=element))
    return subprocess.run([sys.executable, "-m", "ina", "p4c", str(source), "-o",
                           str(tmp_path / "reg.json")], capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize(("element", "unsigned"), [("int<8>", "bit<8>"),
                                                   ("Signed", "bit<16>")])
def test_a_signed_register_compiles_with_a_warning(tmp_path: Path, element: str,
                                                   unsigned: str) -> None:
    proc = p4c(tmp_path, element)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "reg.json").exists()
    lines = proc.stderr.splitlines()
    assert lines[0] == (
        f"{tmp_path}/reg.p4(12): warning: a register of "
        f"{'int<16>' if element == 'Signed' else element}: BMv2 reads its values back as "
        f"unsigned ({unsigned}), this switch as signed, as the P4 spec says; compare and "
        "shift them as unsigned, or keep them offset, where both must agree")
    assert lines[1:] == [f"    register<{element}>(4) r;",
                         "             " + "^" * len(element)]


def test_an_unsigned_register_compiles_quietly(tmp_path: Path) -> None:
    proc = p4c(tmp_path, "bit<8>")
    assert (proc.returncode, proc.stderr) == (0, "")
