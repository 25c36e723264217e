"""``ina bench engine --stf``: set-up and packets from an STF file."""

from __future__ import annotations

import re
from pathlib import Path

from ina.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_bench_engine_with_stf_setup(capsys, tmp_path: Path) -> None:
    stf = tmp_path / "route.stf"
    stf.write_text(
        "add ipv4_lpm hdr.ipv4.dst_addr:0x0a000100/24 forward(port:3, dst_mac:0x000000000103)\n"
        "packet 1 000000000101 000000000102 0800"
        " 4500001c000100004011f97c 0a000001 0a000107 0009000900080000\n"
    )
    assert main(["bench", "engine", str(ROOT / "p4/ipv4_forward.p4"), "--stf", str(stf),
                 "--count", "300"]) == 0
    out = capsys.readouterr().out
    assert "1 packet(s) from" in out
    assert re.search(r"300 packets in .* \(300 packets out; [\d,]+ packets per CPU-second\)",
                     out), out


def test_bench_engine_stf_errors_are_clear(capsys, tmp_path: Path) -> None:
    stf = tmp_path / "bad.stf"
    stf.write_text("add no_such_table k:1 a()\npacket 1 00\n")
    assert main(["bench", "engine", str(ROOT / "p4/ipv4_forward.p4"), "--stf", str(stf)]) == 1
    err = capsys.readouterr().err
    assert "bad.stf" in err and "the set-up failed" in err and "no_such_table" in err
    assert "Traceback" not in err
