"""``ina p4c p4/aggregation.p4 --p4runtime-files``: the P4Info has the tables, actions
and parameters the controller is written against (by alias, as controllers name them)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

REPO_ROOT = Path(__file__).resolve().parents[2]
PROGRAM = REPO_ROOT / "p4" / "aggregation.p4"

EXACT = p4info_pb2.MatchField.EXACT
LPM = p4info_pb2.MatchField.LPM


def _ina(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    return subprocess.run([sys.executable, "-m", "ina.cli", *args], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def _compile(program: Path, out: Path, *defines: str) -> p4info_pb2.P4Info:
    txtpb, compiled = out / f"{program.stem}.p4info.txtpb", out / f"{program.stem}.json"
    proc = _ina("p4c", str(program), *defines, "--p4runtime-files", str(txtpb),
                "-o", str(compiled))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert compiled.stat().st_size > 0
    return text_format.Parse(txtpb.read_text(), p4info_pb2.P4Info())


@pytest.fixture(scope="module")
def p4info(tmp_path_factory: pytest.TempPathFactory) -> p4info_pb2.P4Info:
    return _compile(PROGRAM, tmp_path_factory.mktemp("agg"))


def _table(info: p4info_pb2.P4Info, alias: str) -> p4info_pb2.Table:
    found = [t for t in info.tables if t.preamble.alias == alias]
    assert len(found) == 1, f"table {alias}: {len(found)} found"
    return found[0]


def _action_names(info: p4info_pb2.P4Info) -> dict[int, str]:
    return {a.preamble.id: a.preamble.alias for a in info.actions}


def _params(info: p4info_pb2.P4Info, alias: str) -> list[tuple[str, int]]:
    found = [a for a in info.actions if a.preamble.alias == alias]
    assert len(found) == 1, f"action {alias}: {len(found)} found"
    return [(p.name, p.bitwidth) for p in found[0].params]


def _keys(table: p4info_pb2.Table) -> list[tuple[str, int, int]]:
    return [(m.name, m.bitwidth, m.match_type) for m in table.match_fields]


def _actions(info: p4info_pb2.P4Info, table: p4info_pb2.Table) -> tuple[set[str], str]:
    names = _action_names(info)
    return ({names[r.id] for r in table.action_refs},
            names[table.initial_default_action.action_id])


def test_ina_job(p4info: p4info_pb2.P4Info) -> None:
    table = _table(p4info, "ina_job")
    assert table.preamble.name == "InaIngress.ina_job"
    assert _keys(table) == [("hdr.ina.job_id", 16, EXACT),
                            ("standard_metadata.ingress_port", 9, EXACT)]
    assert _actions(p4info, table) == ({"ina_child", "drop"}, "drop")
    assert _params(p4info, "ina_child") == [
        ("child_index", 16), ("fan_in", 16), ("is_root", 1), ("parent_port", 9),
        ("mcast_grp", 16), ("region_base", 32), ("epoch", 32)]


def test_ina_result_rewrite(p4info: p4info_pb2.P4Info) -> None:
    table = _table(p4info, "ina_result_rewrite")
    assert table.preamble.name == "InaEgress.ina_result_rewrite"
    assert _keys(table) == [("standard_metadata.egress_port", 9, EXACT)]
    assert _actions(p4info, table) == ({"set_dst", "NoAction"}, "NoAction")
    assert _params(p4info, "set_dst") == [("dmac", 48), ("dip", 32), ("sip", 32)]


def test_ipv4_lpm_is_that_of_ipv4_forward_plus_ecmp(p4info: p4info_pb2.P4Info,
                                                    tmp_path: Path) -> None:
    table = _table(p4info, "ipv4_lpm")
    assert _keys(table) == [("hdr.ipv4.dst_addr", 32, LPM)]
    assert _actions(p4info, table) == ({"forward", "ecmp_group", "to_cpu", "drop"}, "drop")
    assert _params(p4info, "forward") == [("port", 9), ("dst_mac", 48)]
    assert _params(p4info, "to_cpu") == []
    forward_info = _compile(REPO_ROOT / "p4" / "ipv4_forward.p4", tmp_path)
    other = _table(forward_info, "ipv4_lpm")
    assert _keys(other) == _keys(table)
    assert _actions(forward_info, other) == ({"forward", "drop"}, "drop")
    assert _params(forward_info, "forward") == _params(p4info, "forward")
    assert not [t for t in forward_info.tables if t.preamble.alias == "ecmp_nhop"]


def test_controller_headers(p4info: p4info_pb2.P4Info) -> None:
    """Packet I/O: a PacketIn names the ingress port, a PacketOut the egress port; the
    padding makes each header two bytes."""
    found = {c.preamble.name: [(m.name, m.bitwidth) for m in c.metadata]
             for c in p4info.controller_packet_metadata}
    assert found == {"packet_in": [("ingress_port", 9), ("pad", 7)],
                     "packet_out": [("egress_port", 9), ("pad", 7)]}


def test_ecmp_nhop(p4info: p4info_pb2.P4Info) -> None:
    assert _params(p4info, "ecmp_group") == [("group", 16), ("size", 16)]
    table = _table(p4info, "ecmp_nhop")
    assert table.preamble.name == "InaIngress.ecmp_nhop"
    assert _keys(table) == [("meta.ecmp_group", 16, EXACT), ("meta.ecmp_index", 16, EXACT)]
    assert _actions(p4info, table) == ({"forward", "drop"}, "drop")
    assert table.size == 1024


def test_registers_hold_two_versions_of_every_slot(p4info: p4info_pb2.P4Info) -> None:
    sizes = {r.preamble.alias: r.size for r in p4info.registers}
    lanes = [name for name in sizes if name.startswith("ina_lane_")]
    assert sorted(lanes) == sorted(f"ina_lane_{i}" for i in range(64))
    per_region = {"ina_last_cell", "ina_last_epoch"}  # indexed by a job's region base
    assert set(sizes) == {"ina_epoch", "ina_round", "ina_bitmap", "ina_count",
                          "ina_exponent", *lanes, *per_region}
    assert {sizes[name] for name in set(sizes) - per_region} == {2 * 256}
    assert {sizes[name] for name in per_region} == {256}


def test_k_and_slots_are_defines(tmp_path: Path) -> None:
    info = _compile(PROGRAM, tmp_path, "-D", "INA_K=8", "-D", "INA_SLOTS=16")
    lanes = {r.preamble.alias: r.size for r in info.registers
             if r.preamble.alias.startswith("ina_lane_")}
    assert lanes == {f"ina_lane_{i}": 32 for i in range(8)}


def test_an_unsupported_k_is_a_clear_error() -> None:
    proc = _ina("p4c", str(PROGRAM), "-D", "INA_K=12")
    assert proc.returncode == 1
    assert "INA_K must be 8, 16, 32, 64, 128 or 256" in proc.stderr
    assert "Traceback" not in proc.stderr
