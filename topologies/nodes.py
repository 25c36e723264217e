"""Mininet switch node classes that run a P4Runtime switch process.

``InaSwitch`` runs the built-in switch (``ina switch``), ``BMv2Switch`` runs BMv2's
``simple_switch_grpc``; both take the same parameters and the same command line shape::

    PROGRAM -i 1@s1-eth1 -i 2@s1-eth2 ... --device-id N [--log-file F] [--pcap DIR]
        -- --grpc-server-addr 127.0.0.1:PORT --cpu-port C

With ``pcap`` the switch writes ``<iface>_in.pcap`` and ``<iface>_out.pcap`` per port
into ``pcap_dir`` (default ``<log_dir>/<name>-pcap``; the names do not collide, so
switches may share one directory).

``program`` is optional: without it the switch starts with ``--no-p4`` and waits for a
pipeline over P4Runtime (``compile()`` gives the P4Info and device config to push).
The device id defaults to the last number in the switch's name (s3 -> 3) and the gRPC port to
a free one; ``grpc_address`` is where a controller connects. Each switch writes its
output to ``<log_dir>/<name>.log``; ``log_dir`` defaults to one directory per run under
``/tmp/ina-mininet``.

Mininet starts every switch (``start`` launches the process) and then calls
``batchStartup``, which waits until each gRPC port listens; outside Mininet call
``start([])`` and then ``wait_ready()``. ``stop`` sends SIGTERM (SIGKILL after
``stop_timeout`` s) before deleting the interfaces.

Use them with ``functools.partial`` to pass parameters::

    net = Mininet(StarTopo(2), switch=partial(InaSwitch, program="build/fwd.json"),
                  controller=None)
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mininet.node import Switch

from topologies.netutil import StartError, free_tcp_port, log_tail, wait_listening

LOG_ROOT = Path("/tmp/ina-mininet")
MAX_SOCKET_PATH = 100  # bytes; AF_UNIX paths hold 107
_run_dir: Path | None = None


def run_log_dir() -> Path:
    """This process's log directory (one per run, created on first use)."""
    global _run_dir
    if _run_dir is None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        _run_dir = LOG_ROOT / f"{stamp}-{os.getpid()}"
        _run_dir.mkdir(parents=True, exist_ok=True)
    return _run_dir


@dataclass(frozen=True)
class CompiledProgram:
    """What SetForwardingPipelineConfig needs: the P4Info and the device config."""

    p4info: Path
    device_config: Path


def ina_command() -> list[str]:
    """The ``ina`` command of this installation (the virtualenv's script if present)."""
    script = Path(sys.executable).with_name("ina")
    if script.exists():
        return [str(script)]
    found = shutil.which("ina")
    return [found] if found else [sys.executable, "-m", "ina"]


class P4RuntimeSwitch(Switch):  # type: ignore[misc]
    """Shared launching, readiness and shutdown of a P4Runtime switch process."""

    kind = "P4Runtime switch"

    def __init__(self, name: str, program: str | Path | None = None,
                 device_id: int | None = None, grpc_port: int | None = None,
                 cpu_port: int | None = None, log_dir: str | Path | None = None,
                 pcap: bool = False, pcap_dir: str | Path | None = None, trace: bool = False,
                 extra_args: Sequence[str] = (), ready_timeout: float = 60.0,
                 stop_timeout: float = 5.0, **params: Any):
        super().__init__(name, **params)
        self.program = Path(program) if program is not None else None
        self.device_id = device_id if device_id is not None else _number_in(name)
        self.grpc_port = grpc_port
        self.cpu_port = cpu_port
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.pcap = pcap
        self.pcap_dir = Path(pcap_dir) if pcap_dir is not None else None
        self.trace = trace
        self.extra_args = list(extra_args)
        self.ready_timeout = ready_timeout
        self.stop_timeout = stop_timeout
        self.process: subprocess.Popen[bytes] | None = None

    # -------------------------------------------------------------- command line

    @property
    def logs(self) -> Path:
        if self.log_dir is None:
            self.log_dir = run_log_dir()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        return self.log_dir

    @property
    def log_file(self) -> Path:
        return self.logs / f"{self.name}.log"

    @property
    def grpc_host(self) -> str:
        """The address the switch serves P4Runtime on (and a controller reaches it at)."""
        return "127.0.0.1"

    @property
    def grpc_address(self) -> str:
        if self.grpc_port is None:
            raise StartError(f"{self.name}: not started, no gRPC port yet")
        return f"{self.grpc_host}:{self.grpc_port}"

    def free_port(self) -> int:
        """A TCP port free on ``grpc_host`` for one of the switch's servers."""
        return free_tcp_port()

    def pcap_target(self) -> Path:
        """The directory the switch process writes its captures into."""
        pcap_dir = self.pcap_dir or self.logs / f"{self.name}-pcap"
        pcap_dir.mkdir(parents=True, exist_ok=True)
        return pcap_dir

    def trace_target(self) -> Path:
        """The switch process's ``--log-file`` (with ``trace``)."""
        return self.logs / f"{self.name}.trace"

    def port_args(self) -> list[str]:
        return [arg for port, intf in sorted(self.intfs.items()) if intf.name != "lo"
                for arg in ("-i", f"{port}@{intf.name}")]

    def executable(self) -> list[str]:
        raise NotImplementedError

    def program_args(self) -> list[str]:
        return [str(self.program)] if self.program is not None else ["--no-p4"]

    def command(self) -> list[str]:
        argv = [*self.executable(), *self.program_args(), *self.port_args(),
                "--device-id", str(self.device_id)]
        if self.trace:
            argv += ["--log-file", str(self.trace_target())]
        if self.pcap:
            argv += ["--pcap", str(self.pcap_target())]
        argv += self.extra_args
        argv += ["--", "--grpc-server-addr", self.grpc_address]
        if self.cpu_port is not None:
            argv += ["--cpu-port", str(self.cpu_port)]
        return argv

    # ---------------------------------------------------------------- lifecycle

    def start(self, controllers: Sequence[Any]) -> None:
        """Launch the process (``wait_ready`` waits for its gRPC port)."""
        if self.process is not None and self.process.poll() is None:
            return
        if self.grpc_port is None:
            self.grpc_port = self.free_port()
        self.quiet_interfaces()
        argv = self.command()
        with open(self.log_file, "ab") as log:
            log.write(f"$ {' '.join(argv)}\n".encode())
            log.flush()
            self.process = self.popen(end_with_parent(argv), stdout=log,
                                      stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def quiet_interfaces(self) -> None:
        """IPv6 and offloads off on the switch's interfaces (see ``topologies.hosts``)."""
        for intf in self.intfList():
            if intf.name == "lo":
                continue
            knob = Path(f"/proc/sys/net/ipv6/conf/{intf.name}/disable_ipv6")
            if knob.exists():
                knob.write_text("1")
            self.cmd(f"ethtool --offload {intf.name} rx off tx off sg off tso off gso off "
                     "gro off >/dev/null 2>&1")

    def wait_ready(self) -> None:
        if self.process is None:
            raise StartError(f"{self.name}: start() was not called")
        wait_listening(self.process, self.grpc_host, self.grpc_port or 0, self.ready_timeout,
                       f"{self.kind} {self.name}", self.log_file)

    @classmethod
    def batchStartup(cls, switches: Sequence[P4RuntimeSwitch]) -> Sequence[P4RuntimeSwitch]:
        for s in switches:
            s.wait_ready()
        return switches

    def stop(self, deleteIntfs: bool = True) -> None:
        proc = self.process
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=self.stop_timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        super().stop(deleteIntfs)

    @property
    def exit_status(self) -> int | None:
        return None if self.process is None else self.process.poll()

    def log_text(self) -> str:
        return log_tail(self.log_file, lines=10_000)

    # ------------------------------------------------------------------ compile

    def compile(self, program: str | Path, out_dir: str | Path | None = None
                ) -> CompiledProgram:
        raise NotImplementedError


def end_with_parent(argv: list[str]) -> list[str]:
    """``argv`` run so that it gets SIGTERM when the process that started it dies (the
    parent-death signal, set by util-linux's ``setpriv`` before it execs ``argv``): a
    network whose starter is killed outright leaves no switch behind to hold ports and
    take CPU from later runs. The starter is the thread that calls ``start`` (networks
    are started from the main thread). Without ``setpriv``, ``argv`` as it is.

    Not a ``preexec_fn``: that makes Python fork rather than vfork, and a fork runs
    gRPC's fork handlers in the child, whose poller can abort it before the exec."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "TERM", "--", *argv] if setpriv else argv


def _number_in(name: str) -> int:
    found = re.findall(r"\d+", name)
    if not found:
        raise ValueError(f"switch {name!r}: give a device_id (the name has no number)")
    return int(found[-1])


def _run_compiler(argv: list[str], what: str) -> None:
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        raise StartError(f"{what} failed (status {proc.returncode}):\n"
                         f"{(proc.stderr or proc.stdout).strip()}")


class InaSwitch(P4RuntimeSwitch):
    """The built-in switch, ``ina switch`` (see the module docstring)."""

    kind = "ina switch"

    def __init__(self, name: str, impair: Sequence[str] = (), seed: int | None = None,
                 control_socket: str | Path | None = None, **params: Any):
        super().__init__(name, **params)
        self.impair = list(impair)
        self.seed = seed
        self._control_socket = Path(control_socket) if control_socket else None

    @property
    def control_socket(self) -> Path:
        """The switch's control socket for ``ina switch-cli`` (default: in the log
        directory, so that switches of different runs never share one; in
        ``LOG_ROOT`` under a digest of that path when it is too long for AF_UNIX)."""
        if self._control_socket is None:
            path = self.logs / f"{self.name}.sock"
            if len(str(path).encode()) > MAX_SOCKET_PATH:
                digest = hashlib.sha1(str(path).encode()).hexdigest()[:16]
                LOG_ROOT.mkdir(parents=True, exist_ok=True)
                path = LOG_ROOT / f"{self.name}-{digest}.sock"
            self._control_socket = path
        return self._control_socket

    def executable(self) -> list[str]:
        return [*ina_command(), "switch"]

    def command(self) -> list[str]:
        argv = super().command()
        extra: list[str] = []
        for spec in self.impair:
            extra += ["--impair", spec]
        if self.seed is not None:
            extra += ["--seed", str(self.seed)]
        extra += ["--control-socket", str(self.control_socket)]
        cut = argv.index("--")
        return argv[:cut] + extra + argv[cut:]

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run ``ina switch-cli`` against this switch (e.g. ``cli("impair", "2",
        "loss=0.05")``)."""
        return subprocess.run([*ina_command(), "switch-cli", "--socket",
                               str(self.control_socket), *args],
                              capture_output=True, text=True, timeout=30)

    def control(self, request: dict[str, Any]) -> dict[str, Any]:
        """One request on the switch's control socket (``switch.process.control``) and
        its reply; ``ControlError`` when the socket cannot be used."""
        from switch.process.control import control_request

        return dict(control_request(str(self.control_socket), request))

    def compile(self, program: str | Path, out_dir: str | Path | None = None
                ) -> CompiledProgram:
        out = Path(out_dir) if out_dir is not None else self.logs
        stem = Path(program).stem
        compiled = CompiledProgram(out / f"{stem}.p4info.txtpb", out / f"{stem}.json")
        _run_compiler([*ina_command(), "p4c", str(program), "--p4runtime-files",
                       str(compiled.p4info), "-o", str(compiled.device_config)],
                      f"ina p4c {program}")
        return compiled


BMV2_TOOLS = ("simple_switch_grpc", "p4c-bm2-ss")


def bmv2_missing() -> str | None:
    """Why BMv2 cannot run here (None when both tools are on PATH)."""
    if all(shutil.which(t) for t in BMV2_TOOLS):
        return None
    return "simple_switch_grpc/p4c-bm2-ss not on PATH"


class BMv2Switch(P4RuntimeSwitch):
    """BMv2's ``simple_switch_grpc`` (see the module docstring)."""

    kind = "simple_switch_grpc"

    def __init__(self, name: str, thrift_port: int | None = None, **params: Any):
        super().__init__(name, **params)
        self.thrift_port = thrift_port

    def executable(self) -> list[str]:
        return ["simple_switch_grpc"]

    def command(self) -> list[str]:
        """Every simple_switch_grpc also serves BMv2's Thrift API (9090 unless told
        otherwise); a second switch on the same port would never serve P4Runtime, so
        each gets a port of its own."""
        argv = super().command()
        cut = argv.index("--")
        return argv[:cut] + ["--thrift-port", str(self.thrift_port)] + argv[cut:]

    def wait_ready(self) -> None:
        """Ready when both its P4Runtime and its Thrift servers listen (BMv2 opens the
        Thrift one a moment after the gRPC one)."""
        super().wait_ready()
        assert self.process is not None
        wait_listening(self.process, self.grpc_host, self.thrift_port or 0, self.ready_timeout,
                       f"{self.kind} {self.name} (Thrift)", self.log_file)

    def start(self, controllers: Sequence[Any]) -> None:
        if self.grpc_port is None:
            self.grpc_port = self.free_port()
        while self.thrift_port is None or self.thrift_port == self.grpc_port:
            self.thrift_port = self.free_port()
        with open(self.log_file, "a") as log:
            log.write(f"# {self.name}: P4Runtime on {self.grpc_address}, Thrift on port "
                      f"{self.thrift_port} (simple_switch_CLI --thrift-port "
                      f"{self.thrift_port})\n")
        super().start(controllers)

    def program_args(self) -> list[str]:
        if self.program is not None and self.program.suffix == ".p4":
            return [str(self.compile(self.program).device_config)]
        return super().program_args()

    def compile(self, program: str | Path, out_dir: str | Path | None = None
                ) -> CompiledProgram:
        out = Path(out_dir) if out_dir is not None else self.logs
        stem = Path(program).stem
        compiled = CompiledProgram(out / f"{stem}.p4info.txtpb", out / f"{stem}.json")
        _run_compiler(["p4c-bm2-ss", "--p4runtime-files", str(compiled.p4info), "-o",
                       str(compiled.device_config), str(program)], f"p4c-bm2-ss {program}")
        return compiled
