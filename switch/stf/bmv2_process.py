"""One ``simple_switch_grpc`` process for one STF run, alone on the machine.

Each process gets its own directory (its log and its IPC sockets live there) and its
own free gRPC and Thrift ports and device id, so several runs, and any other switch on
the machine, never collide. Packets go through BMv2's ``--packet-in`` nanomsg socket
rather than through interfaces: no root, no veth pairs to name, and packets can be sent
one at a time between control-plane commands. (``--use-files`` reads each port's pcap
file from the start and, with several input ports, waits for a packet on every one of
them before it sends the earliest, so it cannot interleave packets with commands.) The
``--nanolog`` event socket tells when the switch has finished with a packet.
"""

from __future__ import annotations

import random
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 5.0
START_ATTEMPTS = 3
LOG_TAIL_LINES = 20
_BIND_FAILURES = ("Could not bind", "Address already in use", "Failed to bind")


class BMv2StartError(Exception):
    """The switch did not come up; the message ends with the tail of its log."""


def free_tcp_port() -> int:
    """A TCP port nobody listens on now (the kernel's choice of an ephemeral port)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


class BMv2Process:
    """``simple_switch_grpc --no-p4`` with packet I/O over nanomsg (see the module
    docstring). ``debug_log`` turns on BMv2's per-packet log (``log_file``)."""

    def __init__(self, workdir: Path | None = None, *, debug_log: bool = False):
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="ina-bmv2-"))
        self._own_dir = workdir is None
        self.debug_log = debug_log
        self.device_id = random.randrange(1, 1 << 31)
        self.grpc_port = 0
        self.thrift_port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.output = self.workdir / "simple_switch_grpc.out"
        self.log_file = self.workdir / "bmv2.txt"  # --log-file appends ".txt"

    @property
    def grpc_address(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def packet_address(self) -> str:
        return f"ipc://{self.workdir}/packets.ipc"

    @property
    def event_address(self) -> str:
        return f"ipc://{self.workdir}/events.ipc"

    def command(self) -> list[str]:
        cmd = ["simple_switch_grpc", "--no-p4", "--device-id", str(self.device_id),
               "--thrift-port", str(self.thrift_port),
               "--packet-in", self.packet_address, "--nanolog", self.event_address,
               "--notifications-addr", f"ipc://{self.workdir}/notifications.ipc"]
        if self.debug_log:
            cmd += ["--log-file", str(self.log_file.with_suffix("")), "--log-flush",
                    "-L", "debug"]
        return cmd + ["--", "--grpc-server-addr", self.grpc_address]

    def start(self) -> None:
        """Start the switch and wait until it serves P4Runtime; retried with other ports
        when one was taken in the meantime."""
        for attempt in range(START_ATTEMPTS):
            self.grpc_port = free_tcp_port()
            self.thrift_port = free_tcp_port()
            while self.thrift_port == self.grpc_port:
                self.thrift_port = free_tcp_port()
            with self.output.open("wb") as out:
                try:
                    self.proc = subprocess.Popen(self.command(), stdout=out,
                                                 stderr=subprocess.STDOUT,
                                                 stdin=subprocess.DEVNULL, cwd=self.workdir)
                except OSError as e:
                    raise BMv2StartError(f"cannot run simple_switch_grpc: {e.strerror}") \
                        from None
            why = self._wait_ready()
            if why is None:
                return
            self.stop()
            if attempt + 1 == START_ATTEMPTS or not any(m in self.log_tail()
                                                        for m in _BIND_FAILURES):
                raise BMv2StartError(f"simple_switch_grpc did not start: {why}\n"
                                     f"{self.log_tail()}")

    def _wait_ready(self) -> str | None:
        """None once both servers listen, else why not."""
        assert self.proc is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            code = self.proc.poll()
            if code is not None:
                return f"it exited with status {code}"
            if _listening(self.grpc_port) and _listening(self.thrift_port):
                return None
            if time.monotonic() > deadline:
                return f"no P4Runtime server on {self.grpc_address} after {START_TIMEOUT_S:g} s"
            time.sleep(0.005)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        """The last lines of what the switch printed (and of its debug log)."""
        parts = []
        for path in (self.output, self.log_file):
            try:
                text = path.read_text(errors="replace")
            except OSError:
                continue
            tail = text.splitlines()[-lines:]
            if tail:
                parts.append(f"--- {path.name} (last {len(tail)} lines) ---\n" + "\n".join(tail))
        return "\n".join(parts) or "(simple_switch_grpc printed nothing)"

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def remove(self) -> None:
        """Stop the switch and delete its directory (if this object made it)."""
        self.stop()
        if self._own_dir:
            shutil.rmtree(self.workdir, ignore_errors=True)
