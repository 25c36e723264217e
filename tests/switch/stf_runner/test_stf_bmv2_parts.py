"""The pieces of the BMv2 STF target that need no BMv2: the nanomsg client against a
fake peer, the thread-state test, the P4Info model, the P4Runtime entries, and the
errors for missing tools, a program p4c rejects and a switch that does not start (with
stand-in scripts for p4c-bm2-ss and simple_switch_grpc)."""

from __future__ import annotations

import os
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

from controller import values as cv
from switch.engine.runtime import Exact, Lpm, Ternary
from switch.stf import run_stf
from switch.stf.bmv2_packets import busy_threads
from switch.stf.bmv2_switch import BMv2Error, p4runtime_entry
from switch.stf.nanomsg import PAIR, SUB, NanomsgError, SpSocket
from switch.stf.p4info_model import program_from_p4info

FIXTURES = Path(__file__).resolve().parent / "fixtures"

# ---------------------------------------------------------------------------- nanomsg


class FakePeer:
    """A one-connection nanomsg peer that sends its header, then ``script``, and
    records what it receives until the client closes (``received()`` waits for that)."""

    def __init__(self, path: Path, protocol: int, script: list[bytes]):
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(1)
        self.protocol = protocol
        self.script = script
        self.chunks: list[bytes] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.server.accept()
        with conn:
            conn.sendall(b"\0SP\0" + struct.pack(">HH", self.protocol, 0))
            for payload in self.script:
                conn.sendall(b"\x01" + struct.pack(">Q", len(payload)) + payload)
            while chunk := conn.recv(4096):
                self.chunks.append(chunk)

    def received(self) -> bytes:
        self.thread.join(5)
        self.server.close()
        return b"".join(self.chunks)


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A directory with a short path (Unix socket paths are limited to 107 bytes)."""
    d = Path(tempfile.mkdtemp(prefix="ina-nn-"))
    yield d
    shutil.rmtree(d)


def test_pair_handshake_and_messages(short_dir: Path) -> None:
    path = short_dir / "p.ipc"
    peer = FakePeer(path, PAIR, [b"hello", b""])
    sock = SpSocket(f"ipc://{path}", PAIR)
    assert sock.recv() == b"hello"
    assert sock.recv() == b""
    sock.send(b"\x01\x02")
    sock.close()
    assert peer.received() == (b"\0SP\0\x00\x10\x00\x00"
                               + b"\x01" + struct.pack(">Q", 2) + b"\x01\x02")


def test_sub_wants_a_pub_peer(short_dir: Path) -> None:
    path = short_dir / "e.ipc"
    peer = FakePeer(path, PAIR, [])
    with pytest.raises(NanomsgError, match="expected a nanomsg peer of protocol 0x20"):
        SpSocket(f"ipc://{path}", SUB)
    peer.received()


def test_peer_closing_is_an_error(short_dir: Path) -> None:
    path = short_dir / "c.ipc"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)

    def serve() -> None:  # the header, then half a message, then gone
        conn, _ = server.accept()
        conn.sendall(b"\0SP\0\x00\x10\x00\x00" + b"\x01" + struct.pack(">Q", 4) + b"ab")
        conn.recv(8)  # the client's header, so that closing is an orderly end
        conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    sock = SpSocket(f"ipc://{path}", PAIR)
    with pytest.raises(NanomsgError, match="the peer closed the connection"):
        sock.recv()
    sock.close()
    thread.join(5)
    server.close()


def test_nobody_listening(short_dir: Path) -> None:
    with pytest.raises(NanomsgError, match="cannot connect"):
        SpSocket(f"ipc://{short_dir}/none.ipc", PAIR, timeout=0.05)
    with pytest.raises(NanomsgError, match="not an ipc:// address"):
        SpSocket("tcp://127.0.0.1:1", PAIR)


# ---------------------------------------------------------------------------- idleness


def test_busy_threads_sees_a_running_process_and_a_sleeping_one() -> None:
    spinner = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        assert busy_threads(spinner.pid)
        # the sleeper is runnable only while it starts
        assert any(not busy_threads(sleeper.pid) for _ in range(200))
    finally:
        for p in (spinner, sleeper):
            p.kill()
            p.wait()


# ---------------------------------------------------------------------------- P4Info model

P4INFO = """
tables {
  preamble { id: 1 name: "MyIngress.t" alias: "t" }
  match_fields { id: 1 name: "hdr.h.$valid$" bitwidth: 1 match_type: EXACT }
  match_fields { id: 2 name: "hdr.h.a" bitwidth: 8 match_type: TERNARY }
  match_fields { id: 3 name: "hdr.h.b" bitwidth: 16 match_type: LPM }
  action_refs { id: 10 }
  action_refs { id: 11 }
  size: 64
}
tables {
  preamble { id: 2 name: "MyIngress.c" alias: "c" }
  match_fields { id: 1 name: "hdr.h.a" bitwidth: 8 match_type: EXACT }
  action_refs { id: 11 }
  is_const_table: true
}
tables {
  preamble { id: 3 name: "MyIngress.sel" alias: "sel" }
  match_fields { id: 1 name: "hdr.h.a" bitwidth: 8 match_type: EXACT }
  action_refs { id: 10 }
  implementation_id: 99
}
actions { preamble { id: 10 name: "MyIngress.set" alias: "set" }
          params { id: 1 name: "port" bitwidth: 9 }
          params { id: 2 name: "tag" bitwidth: 8 } }
actions { preamble { id: 11 name: "NoAction" alias: "NoAction" } }
meters { preamble { id: 20 name: "MyIngress.m" } spec { unit: PACKETS } size: 4 }
counters { preamble { id: 21 name: "MyIngress.n" } spec { unit: BOTH } size: 8 }
registers { preamble { id: 30 name: "MyIngress.signed" }
            type_spec { bitstring { int { bitwidth: 8 } } } size: 4 }
registers { preamble { id: 31 name: "MyIngress.plain" }
            type_spec { bitstring { bit { bitwidth: 32 } } } size: 2 }
"""


def model():  # type: ignore[no-untyped-def]
    return program_from_p4info(text_format.Parse(P4INFO, p4info_pb2.P4Info()))


def test_model_of_a_p4info() -> None:
    program = model()
    t = program.tables["MyIngress.t"]
    assert [(k.name, k.match_kind, k.width) for k in t.keys] == [
        ("hdr.h.$valid$", "exact", 1), ("hdr.h.a", "ternary", 8), ("hdr.h.b", "lpm", 16)]
    assert t.actions == ["MyIngress.set", "NoAction"]
    assert (t.indirect, t.const) == (False, False)
    assert program.tables["MyIngress.c"].const
    assert program.tables["MyIngress.sel"].indirect
    assert program.actions["MyIngress.set"].params == [("port", 9), ("tag", 8)]
    assert program.externs["MyIngress.m"].extern == "meter"
    assert program.externs["MyIngress.m"].args == [4]
    assert program.externs["MyIngress.n"].args == [8]
    signed, plain = program.registers["MyIngress.signed"], program.registers["MyIngress.plain"]
    assert (signed.width, signed.signed, plain.width, plain.signed) == (8, True, 32, False)


def test_p4runtime_entry_shifts_priorities() -> None:
    program = model()
    entry = p4runtime_entry(program, "MyIngress.t",
                            {"hdr.h.$valid$": Exact(1), "hdr.h.a": Ternary(0x10, 0xF0),
                             "hdr.h.b": Lpm(0x0A00, 8)},
                            "MyIngress.set", (3, 7), 0)
    assert entry.match == {"hdr.h.$valid$": cv.Exact(1), "hdr.h.a": cv.Ternary(0x10, 0xF0),
                           "hdr.h.b": cv.Lpm(0x0A00, 8)}
    assert entry.params == {"port": 3, "tag": 7}
    # STF priorities start at 0, P4Runtime's at 1; no priority at all is the lowest
    assert entry.priority == 1
    assert p4runtime_entry(program, "MyIngress.t", (Exact(0), Ternary(0, 0), Lpm(0, 0)),
                           "NoAction", (), 9).priority == 10
    assert p4runtime_entry(program, "MyIngress.t", (Exact(0), Ternary(0, 0), Lpm(0, 0)),
                           "NoAction", (), None).priority == 1
    assert p4runtime_entry(program, "MyIngress.c", {"hdr.h.a": Exact(2)},
                           "NoAction", (), 5).priority == 0
    with pytest.raises(BMv2Error, match="uses an action profile"):
        p4runtime_entry(program, "MyIngress.sel", {"hdr.h.a": Exact(2)}, "MyIngress.set",
                        (1, 2), None)


# ---------------------------------------------------------------------------- tools


def _fake_tool(directory: Path, name: str, script: str) -> None:
    path = directory / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)


@pytest.fixture
def fake_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH with only stand-ins for the BMv2 tools (and the shell's basics)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    return bin_dir


def test_missing_tools(fake_path: Path) -> None:
    result = run_stf(FIXTURES / "fwd.p4", FIXTURES / "pass.stf", target="bmv2")
    assert (result.passed, result.stage) == (False, "start")
    assert ("error: ina stf --target bmv2 needs simple_switch_grpc and p4c-bm2-ss on PATH "
            "(simple_switch_grpc and p4c-bm2-ss not found)") in result.report
    _fake_tool(fake_path, "p4c-bm2-ss", "exit 0\n")
    result = run_stf(FIXTURES / "fwd.p4", FIXTURES / "pass.stf", target="bmv2")
    assert "(simple_switch_grpc not found)" in result.report


def test_p4c_diagnostics_are_the_report(fake_path: Path) -> None:
    _fake_tool(fake_path, "simple_switch_grpc", "exit 0\n")
    _fake_tool(fake_path, "p4c-bm2-ss",
               'echo "fwd.p4(3): [--Werror=type-error] error: no" >&2\nexit 1\n')
    result = run_stf(FIXTURES / "fwd.p4", FIXTURES / "pass.stf", target="bmv2")
    assert (result.passed, result.stage) == (False, "compile")
    assert result.report == "fwd.p4(3): [--Werror=type-error] error: no"


def test_a_switch_that_does_not_start_shows_its_output(fake_path: Path) -> None:
    # p4c writes an empty P4Info and JSON where it is told to
    _fake_tool(fake_path, "p4c-bm2-ss",
               'while [ $# -gt 1 ]; do case "$1" in --p4runtime-files|-o) : > "$2";; esac; '
               'shift; done\necho "warning: be careful" >&2\n')
    _fake_tool(fake_path, "simple_switch_grpc", 'echo "Error: no such thing" >&2\nexit 3\n')
    result = run_stf(FIXTURES / "fwd.p4", FIXTURES / "pass.stf", target="bmv2")
    assert (result.passed, result.stage) == (False, "start")
    report = result.report
    assert "error: simple_switch_grpc did not start: it exited with status 3" in report
    assert "Error: no such thing" in report
    assert report.endswith("FAIL " + str(FIXTURES / "pass.stf")
                           + ": 1 error(s); 0 packet(s) in, 0 out")


def test_p4c_without_a_p4info(fake_path: Path) -> None:
    _fake_tool(fake_path, "simple_switch_grpc", "exit 0\n")
    _fake_tool(fake_path, "p4c-bm2-ss", "exit 0\n")
    result = run_stf(FIXTURES / "fwd.p4", FIXTURES / "pass.stf", target="bmv2")
    assert (result.passed, result.stage) == (False, "compile")
    assert result.report.startswith("error: p4c-bm2-ss wrote no usable P4Info: ")
