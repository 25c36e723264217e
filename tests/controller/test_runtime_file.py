"""Runtime files as p4lang's tutorials write them: read with positions, applied over
P4Runtime (the pipeline as a P4DeviceConfig), and ``ina ctl apply`` from the shell."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from p4runtime_client_helpers import Pipeline, Switch

from controller import CloneSession, MulticastGroup, P4RuntimeClient, Replica, TableEntry
from controller.runtime_file import RuntimeFileError, apply_runtime_file, load_runtime_file
from controller.values import Lpm
from switch.runtime.device_config import program_bytes

ROOT = Path(__file__).resolve().parents[2]
EXERCISE = ROOT / "tests" / "e2e" / "exercise"


def exercise_dir(tmp_path: Path, pipeline: Pipeline) -> Path:
    """The end-to-end test's exercise files, with the forwarding program compiled."""
    work = tmp_path / "exercise"
    shutil.copytree(EXERCISE, work)
    (work / "build").mkdir()
    shutil.copy(pipeline.p4info, work / "build" / "ipv4_forward.p4info.txtpb")
    shutil.copy(pipeline.config, work / "build" / "ipv4_forward.json")
    return work


def test_a_runtime_file_is_read_with_its_entries(tmp_path: Path,
                                                 forward_pipeline: Pipeline) -> None:
    work = exercise_dir(tmp_path, forward_pipeline)
    rf = load_runtime_file(work / "s1-runtime.json")  # files found beside the runtime file
    assert rf.p4info == work / "build" / "ipv4_forward.p4info.txtpb"
    items = [e.item for e in rf.entries]
    assert items[0] == TableEntry("ForwardIngress.ipv4_lpm", {}, "ForwardIngress.drop", {},
                                  is_default=True)
    assert items[1] == TableEntry("ForwardIngress.ipv4_lpm",
                                  {"hdr.ipv4.dst_addr": ("10.0.1.1", 32)},
                                  "ForwardIngress.forward",
                                  {"port": 1, "dst_mac": "08:00:00:00:01:11"})
    assert items[4] == MulticastGroup(1, [Replica(1, 1), Replica(2, 1)])
    assert items[5] == CloneSession(5, [Replica(3, 0)], packet_length_bytes=64)


def test_apply_pushes_a_wrapped_pipeline_and_every_entity(
        tmp_path: Path, forward_pipeline: Pipeline, switch: Switch,
        clients: list[P4RuntimeClient]) -> None:
    work = exercise_dir(tmp_path, forward_pipeline)
    client = P4RuntimeClient(switch.address, device_id=1, election_id=(0, 1))
    clients.append(client)
    client.connect()
    counts = apply_runtime_file(client, load_runtime_file(work / "s1-runtime.json"))
    assert counts == {"default actions": 1, "table entries": 3, "multicast groups": 1,
                      "clone sessions": 1}
    state = switch.server._active
    assert program_bytes(state.device_config) == forward_pipeline.config.read_bytes()
    assert not state.device_config.startswith(b"{")  # it came as a P4DeviceConfig
    routes = {e.match["hdr.ipv4.dst_addr"]: e.params["port"]
              for e in client.read_table("ForwardIngress.ipv4_lpm")}
    assert routes == {Lpm(0x0A000101, 32): 1, Lpm(0x0A000202, 32): 2,
                      Lpm(0x0A000300, 24): 3}
    assert client.read_default_action("ForwardIngress.ipv4_lpm").action == \
        "ForwardIngress.drop"
    assert client.read_multicast_groups() == [MulticastGroup(1, [Replica(1, 1),
                                                                 Replica(2, 1)])]
    assert client.read_clone_sessions()[0].packet_length_bytes == 64


def _write(tmp_path: Path, pipeline: Pipeline, doc: dict[str, object]) -> Path:
    work = exercise_dir(tmp_path, pipeline)
    path = work / "bad-runtime.json"
    path.write_text(json.dumps(doc, indent=1))
    return path


BASE = {"target": "bmv2", "p4info": "build/ipv4_forward.p4info.txtpb",
        "bmv2_json": "build/ipv4_forward.json"}


@pytest.mark.parametrize("extra, message", [
    ({"target": "tofino"}, ":2: target: target 'tofino': expected \"bmv2\""),
    ({"bmv2_json": "build/nothere.json"}, ":4: bmv2_json: build/nothere.json: no such file"),
    ({"tables": []}, "unknown key 'tables'"),
    ({"table_entries": [{"table": "T", "action_params": {}}]},
     ":6: table_entries[0]: missing 'action_name'"),
    ({"table_entries": [{"table": "T", "action_name": "A", "default_action": True,
                         "match": {"f": 1}}]},
     "table_entries[0].match: a default action has no match"),
    ({"multicast_group_entries": [{"multicast_group_id": -1, "replicas": []}]},
     "multicast_group_entries[0].multicast_group_id: multicast_group_id: -1 is not a "
     "non-negative integer"),
    ({"clone_session_entries": [{"clone_session_id": 5}]},
     "clone_session_entries[0]: replicas: expected a list"),
])
def test_bad_runtime_files_say_where(tmp_path: Path, forward_pipeline: Pipeline,
                                     extra: dict[str, object], message: str) -> None:
    path = _write(tmp_path, forward_pipeline, {**BASE, **extra})
    with pytest.raises(RuntimeFileError) as info:
        load_runtime_file(path)
    assert str(info.value).startswith(str(path))
    assert message in str(info.value)


def test_names_the_program_lacks_are_errors_with_the_entry(
        tmp_path: Path, forward_pipeline: Pipeline, switch: Switch,
        clients: list[P4RuntimeClient]) -> None:
    path = _write(tmp_path, forward_pipeline, {**BASE, "table_entries": [
        {"table": "ForwardIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": ["10.0.0.1", 32]},
         "action_name": "ForwardIngress.forward", "action_params": {"port": 1,
                                                                    "dst_mac": 1}}]})
    client = P4RuntimeClient(switch.address, device_id=1, election_id=(0, 1))
    clients.append(client)
    client.connect()
    with pytest.raises(RuntimeFileError, match=r"bad-runtime.json:6: table_entries\[0\]: .*"
                                               r"hdr.ipv4.dstAddr"):
        apply_runtime_file(client, load_runtime_file(path))


def test_ina_ctl_apply_programs_a_running_switch(tmp_path: Path, forward_pipeline: Pipeline,
                                                 make_switch: Callable[[int], Switch]) -> None:
    work = exercise_dir(tmp_path, forward_pipeline)
    sw = make_switch(0)
    result = subprocess.run(
        [sys.executable, "-m", "ina", "ctl", "apply", "s1-runtime.json", "--grpc-addr",
         sw.address, "--device-id", "0"], cwd=work, capture_output=True, text=True,
        timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (f"s1-runtime.json: pipeline set on device 0 at {sw.address}; "
                             "1 default actions, 3 table entries, 1 multicast groups, "
                             "1 clone sessions\n")
    missing = subprocess.run([sys.executable, "-m", "ina", "ctl", "setup"], cwd=work,
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2
    assert missing.stderr == ("ina ctl: error: setup: --topo FILE is required (ina ctl "
                              "--topo FILE setup ...)\n")
