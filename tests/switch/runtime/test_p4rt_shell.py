"""Interoperability with p4runtime-shell, a real P4Runtime client.

p4runtime-shell keeps one global client per process, so it runs in a subprocess that
prints ``PASS <step>`` lines; the server runs here. Port 2 of the switch is looped back
(what leaves on port 2 comes in again on port 2), so a PacketOut sent to port 2 returns
to the controller as a PacketIn when a route sends it to the CPU.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from p4rt_helpers import CPU_PORT, DEVICE_ID

from switch.runtime import P4RuntimeServer

SCRIPT = r'''
import sys
import p4runtime_sh.shell as sh
from p4.v1 import p4runtime_pb2
from p4runtime_sh.p4runtime import P4RuntimeWriteException

addr, p4info_path, config_path = sys.argv[1:4]
sh.setup(device_id=1, grpc_addr=addr, election_id=(0, 1),
         config=sh.FwdPipeConfig(p4info_path, config_path), verbose=False)
try:
    te = sh.TableEntry("TestIngress.fwd")(action="TestIngress.forward")
    te.match["hdr.ethernet.dst"] = "00:00:00:00:00:01"
    te.action["port"] = "3"
    te.insert()
    [e] = list(sh.TableEntry("TestIngress.fwd").read())
    assert e.match["hdr.ethernet.dst"].exact.value == b"\x01", e
    assert e.action["port"].value == b"\x03", e
    print("PASS insert-read")

    te.action["port"] = "4"
    te.modify()
    [e] = list(sh.TableEntry("TestIngress.fwd").read())
    assert e.action["port"].value == b"\x04", e
    print("PASS modify")

    try:
        te.insert()
        raise AssertionError("duplicate insert succeeded")
    except P4RuntimeWriteException as err:
        [(index, p4err)] = err.errors
        assert index == 0 and p4err.canonical_code == 6, err  # ALREADY_EXISTS
    print("PASS write-error")

    te.delete()
    assert list(sh.TableEntry("TestIngress.fwd").read()) == []
    print("PASS delete")

    acl = sh.TableEntry("TestIngress.acl")(action="NoAction")
    acl.match["sm.ingress_port"] = "1&&&0x1ff"
    acl.match["hdr.ethernet.etype"] = "0x800..0x806"
    acl.priority = 10
    acl.insert()
    [e] = list(sh.TableEntry("TestIngress.acl").read())
    assert e.priority == 10 and e.match["hdr.ethernet.etype"].range.high == b"\x08\x06", e
    print("PASS ternary-range")

    sh.MulticastGroupEntry(5).add(1, 1).add(3, 2).insert()
    [g] = list(sh.MulticastGroupEntry(5).read())
    pairs = [(r._msg.egress_port, r._msg.instance) for r in g.replicas]
    assert pairs == [(1, 1), (3, 2)], g
    print("PASS multicast")

    c = sh.CounterEntry("TestIngress.port_counter")
    c.index = 1
    c.packet_count = 7
    c.modify()
    cells = list(sh.CounterEntry("TestIngress.port_counter").read())
    assert len(cells) == 8 and cells[1].packet_count == 7, cells
    print("PASS counter")

    reg = p4runtime_pb2.Entity()
    # this p4runtime-shell has no register support: raw entity, id from the P4Info
    [r] = [r for r in sh.client.get_p4info().registers
           if r.preamble.name == "TestIngress.reg32"]
    reg.register_entry.register_id = r.preamble.id
    reg.register_entry.index.index = 2
    [resp] = list(sh.client.read_one(reg))
    assert resp.entities[0].register_entry.data.bitstring == b"\x00", resp
    print("PASS register")

    route = sh.TableEntry("TestIngress.routes")(action="TestIngress.to_cpu")
    route.match["hdr.ethernet.dst"] = "00:00:00:00:00:01/48"
    route.insert()
    learn = sh.DigestEntry("learn_t")
    learn.max_list_size = 1
    learn.insert()
    packet_in = sh.PacketIn()
    frame = bytes.fromhex("000000000001" "0000000000bb" "1234") + b"ping"
    sh.PacketOut(frame, egress_port="2").send()
    msgs = list(packet_in.sniff(timeout=1))  # sniff always waits this long
    assert len(msgs) == 1, msgs
    assert msgs[0].packet.payload == frame, msgs
    md = {m.metadata_id: m.value for m in msgs[0].packet.metadata}
    assert md[1] == b"\x02", md  # ingress_port: the looped-back port
    print("PASS packet-out-in")

    digest = sh.client.get_stream_packet("digest", timeout=5)
    assert digest is not None
    members = digest.digest.data[0].struct.members
    assert members[0].bitstring == b"\xbb" and members[1].bitstring == b"\x02", digest
    print("PASS digest")

    m = sh.ActionProfileMember("TestIngress.sel")(member_id=1, action="TestIngress.forward")
    m.action["port"] = "3"
    m.insert()
    g = sh.ActionProfileGroup("TestIngress.sel")(group_id=1)
    g.add(member_id=1)
    g.insert()
    te = sh.TableEntry("TestIngress.ecmp")
    te.match["hdr.ethernet.dst"] = "00:00:00:00:00:09"
    te.group_id = 1
    te.insert()
    [e] = list(sh.TableEntry("TestIngress.ecmp").read())
    assert e.group_id == 1, e
    [rg] = list(sh.ActionProfileGroup("TestIngress.sel").read())
    assert [x.member_id for x in rg.members] == [1], rg
    [rm] = list(sh.ActionProfileMember("TestIngress.sel").read())
    assert rm.member_id == 1, rm
    print("PASS action-profile")
finally:
    sh.teardown()
print("DONE")
'''


def test_p4runtime_shell(tmp_path: Path, compiled) -> None:  # type: ignore[no-untyped-def]
    from switch.frontend.p4info import p4info_text

    p4info_path = tmp_path / "test.p4info.txtpb"
    p4info_path.write_text(p4info_text(compiled.program))
    config_path = tmp_path / "test.json"
    config_path.write_bytes(compiled.device_config)
    script = tmp_path / "shell_client.py"
    script.write_text(textwrap.dedent(SCRIPT))

    server: P4RuntimeServer

    def loopback(port: int, frame: bytes) -> None:
        if port == 2:
            server.inject(2, frame)

    server = P4RuntimeServer(device_id=DEVICE_ID, address="127.0.0.1:0", cpu_port=CPU_PORT,
                             on_output=loopback)
    port = server.start()
    try:
        proc = subprocess.run(
            [sys.executable, str(script), f"127.0.0.1:{port}", str(p4info_path),
             str(config_path)],
            capture_output=True, text=True, timeout=45)
    finally:
        server.stop(grace=0)
    out = proc.stdout + proc.stderr
    for step in ("insert-read", "modify", "write-error", "delete", "ternary-range",
                 "multicast", "counter", "register", "packet-out-in", "digest",
                 "action-profile"):
        assert f"PASS {step}" in proc.stdout, out
    assert "DONE" in proc.stdout and proc.returncode == 0, out
