"""p4runtime-shell, a real P4Runtime client, driving the ``ina switch`` process.

The switch starts with ``--no-p4`` on two veth pairs and a CPU port; the client (in a
subprocess: p4runtime-shell keeps one global client per process) pushes the pipeline,
writes and reads entries, and exchanges packets with the switch through its ports: it
holds raw sockets on the host ends of the pairs. The program is the one of the
in-process P4Runtime tests (``tests/switch/runtime/p4rt_helpers.py``).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from switchproc_helpers import ROOT, SwitchProc, veth_pairs

pytestmark = pytest.mark.slow

SCRIPT = r'''
import select, socket, sys
import p4runtime_sh.shell as sh
from p4.v1 import p4runtime_pb2

addr, p4info_path, config_path, h1_name, h2_name = sys.argv[1:6]

def host(name):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    s.setsockopt(263, 23, 1)  # PACKET_IGNORE_OUTGOING
    s.bind((name, 3))
    return s

def frames(s, wait=1.0):
    out = []
    while select.select([s], [], [], wait)[0]:
        wait = 0.2
        out.append(s.recv(65536))
    return out

h1, h2 = host(h1_name), host(h2_name)
sh.setup(device_id=4, grpc_addr=addr, election_id=(0, 1),
         config=sh.FwdPipeConfig(p4info_path, config_path), verbose=False)
try:
    te = sh.TableEntry("TestIngress.fwd")(action="TestIngress.forward")
    te.match["hdr.ethernet.dst"] = "00:00:00:00:00:01"
    te.action["port"] = "2"
    te.insert()
    [e] = list(sh.TableEntry("TestIngress.fwd").read())
    assert e.action["port"].value == b"\x02", e
    frame = bytes.fromhex("000000000001" "0000000000aa" "1234") + b"one"
    h1.send(frame)
    assert frames(h2) == [frame]
    print("PASS insert-read-forward")

    te.action["port"] = "1"
    te.modify()
    h2.send(frame)
    assert frames(h1) == [frame]
    print("PASS modify")

    te.delete()
    assert list(sh.TableEntry("TestIngress.fwd").read()) == []
    h1.send(frame)
    assert frames(h2, 0.3) == [] and frames(h1, 0.01) == []
    print("PASS delete")

    sh.MulticastGroupEntry(5).add(1, 1).add(2, 1).insert()
    [g] = list(sh.MulticastGroupEntry(5).read())
    assert sorted(r._msg.egress_port for r in g.replicas) == [1, 2], g
    mc = sh.TableEntry("TestIngress.fwd")(action="TestIngress.set_mcast")
    mc.match["hdr.ethernet.dst"] = "00:00:00:00:00:05"
    mc.action["grp"] = "5"
    mc.insert()
    flood = bytes.fromhex("000000000005" "0000000000aa" "1234") + b"all"
    h1.send(flood)
    assert frames(h1) == [flood] and frames(h2) == [flood]
    print("PASS multicast")

    special = bytes.fromhex("000000000009" "0000000000aa" "4321") + b"reg"
    vs = p4runtime_pb2.Entity()
    [v] = [v for v in sh.client.get_p4info().value_sets
           if v.preamble.name.endswith("special_types")]
    vs.value_set_entry.value_set_id = v.preamble.id
    vs.value_set_entry.members.add().match.add(field_id=1).exact.value = b"\x43\x21"
    sh.client.write_update(sh.p4runtime_pb2.Update(type=sh.p4runtime_pb2.Update.MODIFY,
                                                   entity=vs))
    h1.send(special)
    frames(h2, 0.3)
    reg = p4runtime_pb2.Entity()
    [r] = [r for r in sh.client.get_p4info().registers
           if r.preamble.name == "TestIngress.reg32"]
    reg.register_entry.register_id = r.preamble.id
    reg.register_entry.index.index = 0
    [resp] = list(sh.client.read_one(reg))
    assert resp.entities[0].register_entry.data.bitstring == b"\x01", resp
    print("PASS register")

    route = sh.TableEntry("TestIngress.routes")(action="TestIngress.to_cpu")
    route.match["hdr.ethernet.dst"] = "00:00:00:00:00:0b/48"
    route.insert()
    packet_in = sh.PacketIn()
    ping = bytes.fromhex("00000000000b" "0000000000bb" "1234") + b"ping"
    sh.PacketOut(ping, egress_port="2").send()
    [out] = frames(h2)
    assert out == ping, out
    print("PASS packet-out")
    h2.send(out)  # back into port 2: the route sends it to the CPU
    msgs = list(packet_in.sniff(timeout=1))
    assert len(msgs) == 1, msgs
    assert msgs[0].packet.payload == ping, msgs
    md = {m.metadata_id: m.value for m in msgs[0].packet.metadata}
    assert md[1] == b"\x02", md
    print("PASS packet-in")
finally:
    sh.teardown()

# Attached to the running pipeline, as `ina ctl shell` starts it (no --config): the
# P4Info comes from GetForwardingPipelineConfig.
sh.setup(device_id=4, grpc_addr=addr, election_id=(0, 1), verbose=False)
try:
    [e] = list(sh.TableEntry("TestIngress.fwd").read())
    assert e.action["grp"].value == b"\x05", e
    print("PASS attach")
finally:
    sh.teardown()
print("DONE")
'''


def _test_program() -> str:
    path = ROOT / "tests" / "switch" / "runtime" / "p4rt_helpers.py"
    spec = importlib.util.spec_from_file_location("_p4rt_helpers_for_process", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(module.PROGRAM)


def test_p4runtime_shell_drives_the_switch_process(tmp_path: Path) -> None:
    source = tmp_path / "p4rt_test.p4"
    source.write_text(_test_program())
    p4info, config = tmp_path / "test.p4info.txtpb", tmp_path / "test.json"
    compiled = subprocess.run([sys.executable, "-m", "ina", "p4c", str(source),
                               "--p4runtime-files", str(p4info), "-o", str(config)],
                              capture_output=True, text=True, timeout=120)
    assert compiled.returncode == 0, compiled.stderr
    script = tmp_path / "shell_client.py"
    script.write_text(textwrap.dedent(SCRIPT))
    with veth_pairs(2) as [(a1, b1), (a2, b2)]:
        sw = SwitchProc(tmp_path, ["--no-p4", "-i", f"1@{a1}", "-i", f"2@{a2}",
                                   "--device-id", "4", "--", "--cpu-port", "255"])
        try:
            sw.wait_ready()
            proc = subprocess.run([sys.executable, str(script), sw.address, str(p4info),
                                   str(config), b1, b2],
                                  capture_output=True, text=True, timeout=90)
            counters = sw.cli("counters").stdout
        finally:
            assert sw.stop() == 0, sw.stderr
    out = proc.stdout + proc.stderr
    for step in ("insert-read-forward", "modify", "delete", "multicast", "register",
                 "packet-out", "packet-in", "attach"):
        assert f"PASS {step}" in proc.stdout, out
    assert "DONE" in proc.stdout and proc.returncode == 0, out
    assert "cpu port 255: packet_in 1, packet_out 1" in counters, counters
