"""A P4 switch on veth pairs for tests: any program, on the built-in switch or BMv2, a
P4Runtime client that has pushed the program, and frames sent and expected on its
ports from raw sockets on the pairs' far ends (as PTF does).

    with veth_switch("prog.p4", ports=2) as sw:
        sw.client.insert(TableEntry("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": "10.0.2.0/24"},
                                    "MyIngress.forward", {"port": 2}))
        sw.send(1, frame)
        sw.expect(2, expected_frame)
        sw.expect_nothing()

The ``ina_switch`` fixture of the pytest plugin (``ina.pytest_plugin``) makes these.
Needs root (veth pairs, raw sockets).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.p4runtime_client import P4RuntimeClient

ETH_P_ALL = 3
SOL_PACKET = 263
PACKET_IGNORE_OUTGOING = 23
TARGETS = ("builtin", "bmv2")


class SwitchStartError(Exception):
    """The switch or its program could not be started; the message says why."""


def _frame_bytes(frame: Any) -> bytes:
    return bytes(frame)


def describe_frame(frame: bytes) -> str:
    """A frame as Scapy summarises it, with its length."""
    from scapy.layers.l2 import Ether

    return f"{Ether(frame).summary()} ({len(frame)} bytes)"


@dataclass
class VethSwitch:
    """A running switch (see the module docstring). Port P is the switch's end of
    ``pairs[P - 1]``; the frames of port P are sent and received on its far end."""

    target: str
    program: str
    address: str
    device_id: int
    pairs: list[tuple[str, str]]
    client: P4RuntimeClient
    p4info: Path  # the compiled program the client pushed
    config: Path
    log: Path
    _sockets: dict[int, socket.socket] = field(default_factory=dict)

    @property
    def ports(self) -> list[int]:
        return list(range(1, len(self.pairs) + 1))

    def _socket(self, port: int) -> socket.socket:
        if port not in self.ports:
            raise ValueError(f"port {port}: the switch has ports {self.ports}")
        if port not in self._sockets:
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
            s.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
            s.bind((self.pairs[port - 1][1], ETH_P_ALL))
            self._sockets[port] = s
        return self._sockets[port]

    def open_ports(self) -> None:
        """Listen on every port (before the first frame is sent)."""
        for port in self.ports:
            self._socket(port)

    def send(self, port: int, frame: Any) -> None:
        """Send ``frame`` (bytes or a Scapy packet) into the switch's port ``port``."""
        self._socket(port).send(_frame_bytes(frame))

    def receive(self, port: int, timeout: float = 2.0) -> bytes | None:
        """The next frame the switch sends out of ``port``, or None within ``timeout``."""
        s = self._socket(port)
        readable, _, _ = select.select([s], [], [], timeout)
        return s.recv(65535) if readable else None

    def expect(self, port: int, frame: Any, timeout: float = 2.0) -> bytes:
        """The next frame out of ``port`` must be ``frame``; AssertionError otherwise,
        showing both."""
        want = _frame_bytes(frame)
        got = self.receive(port, timeout)
        if got is None:
            raise AssertionError(f"port {port}: no frame within {timeout:g} s; expected "
                                 f"{describe_frame(want)}")
        if got != want:
            raise AssertionError(f"port {port}: got {describe_frame(got)}\n  expected "
                                 f"{describe_frame(want)}\n  got      {got.hex()}\n"
                                 f"  expected {want.hex()}")
        return got

    def expect_nothing(self, timeout: float = 0.5, ports: Sequence[int] | None = None
                       ) -> None:
        """No frame comes out of ``ports`` (default: all) within ``timeout``."""
        sockets = {self._socket(p): p for p in (ports or self.ports)}
        readable, _, _ = select.select(list(sockets), [], [], timeout)
        if readable:
            s = readable[0]
            raise AssertionError(f"port {sockets[s]}: unexpected frame "
                                 f"{describe_frame(s.recv(65535))}")

    def close(self) -> None:
        for s in self._sockets.values():
            s.close()
        self._sockets.clear()


def compile_program(program: str | Path, target: str, out_dir: Path,
                    defines: Mapping[str, str] | None = None) -> tuple[Path, Path]:
    """The P4Info and the device config of a P4 source for ``target`` (``ina p4c`` or
    ``p4c-bm2-ss``); a compiled program (``.json``) needs its P4Info beside it as
    ``NAME.p4info.txtpb``."""
    from topologies.nodes import ina_command

    program = Path(program)
    out_dir.mkdir(parents=True, exist_ok=True)
    if program.suffix == ".json":
        p4info = program.with_name(program.stem + ".p4info.txtpb")
        if not p4info.is_file():
            raise SwitchStartError(f"{program}: its P4Info {p4info} is missing")
        return p4info, program
    p4info, config = out_dir / f"{program.stem}.p4info.txtpb", out_dir / f"{program.stem}.json"
    flags = [f"-D{k}={v}" for k, v in (defines or {}).items()]
    compiler = [*ina_command(), "p4c"] if target == "builtin" else ["p4c-bm2-ss"]
    argv = [*compiler, *flags, "--p4runtime-files", str(p4info), "-o", str(config),
            str(program)]
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SwitchStartError(f"{' '.join(argv)} failed (status {proc.returncode}):\n"
                               f"{(proc.stderr or proc.stdout).strip()}")
    return p4info, config


def missing(target: str) -> str | None:
    """Why a switch of ``target`` cannot run here (None when it can)."""
    from topologies.nodes import bmv2_missing

    if target not in TARGETS:
        return f"unknown target {target!r} (targets: {', '.join(TARGETS)})"
    if os.geteuid() != 0:
        return "needs root (veth pairs and raw sockets)"
    return bmv2_missing() if target == "bmv2" else None


@contextlib.contextmanager
def veth_switch(program: str | Path, ports: int = 2, target: str = "builtin",
                device_id: int = 1, defines: Mapping[str, str] | None = None,
                cpu_port: int | None = None, work_dir: Path | None = None
                ) -> Iterator[VethSwitch]:
    """Start a switch of ``target`` with ``program`` (P4 source, or a compiled program
    with its P4Info beside it) on ``ports`` throw-away veth pairs; the client is the
    primary and has pushed the program. Everything is removed on exit."""
    from switch.ports.bench import veth_pairs
    from topologies.netutil import StartError, free_tcp_port, wait_listening
    from topologies.nodes import end_with_parent, ina_command

    why = missing(target)
    if why:
        raise SwitchStartError(why)
    with contextlib.ExitStack() as stack:
        work = work_dir or Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="ina-test-switch-")))
        p4info, config = compile_program(program, target, work / "build", defines)
        pairs = stack.enter_context(veth_pairs(ports))
        grpc = free_tcp_port()
        attach = [a for i, (sw, _) in enumerate(pairs) for a in ("-i", f"{i + 1}@{sw}")]
        if target == "builtin":
            argv = [*ina_command(), "switch", "--no-p4", *attach, "--device-id",
                    str(device_id), "--control-socket", str(work / "control.sock")]
        else:
            argv = ["simple_switch_grpc", "--no-p4", *attach, "--device-id", str(device_id),
                    "--thrift-port", str(free_tcp_port())]
        argv += ["--", "--grpc-server-addr", f"127.0.0.1:{grpc}"]
        if cpu_port is not None:
            argv += ["--cpu-port", str(cpu_port)]
        log = work / "switch.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(end_with_parent(argv), stdout=out,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        stack.callback(_stop, proc)
        try:
            wait_listening(proc, "127.0.0.1", grpc, 60.0, f"{target} switch", log)
        except StartError as e:
            raise SwitchStartError(str(e)) from None
        client = stack.enter_context(P4RuntimeClient(f"127.0.0.1:{grpc}", device_id))
        client.set_pipeline(p4info, config)
        sw = VethSwitch(target, str(program), f"127.0.0.1:{grpc}", device_id, list(pairs),
                        client, p4info, config, log)
        stack.callback(sw.close)
        sw.open_ports()
        yield sw


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
