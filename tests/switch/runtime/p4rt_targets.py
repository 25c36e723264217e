"""The two P4Runtime targets of the differential test as processes: ``ina switch`` and
BMv2's ``simple_switch_grpc``, each started without ports on its own free gRPC port,
Thrift port, device id and notification socket, so that it cannot collide with any
other switch on the machine."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

REPO = Path(__file__).resolve().parents[3]
BMV2_TOOLS = ("simple_switch_grpc", "p4c-bm2-ss")
START_TIMEOUT_S = 60.0


def bmv2_missing() -> str | None:
    """Why BMv2 cannot run here (None when its switch and compiler are on PATH)."""
    absent = [t for t in BMV2_TOOLS if shutil.which(t) is None]
    return f"{' and '.join(absent)} not on PATH" if absent else None


def free_port() -> int:
    """A TCP port nobody listens on now (the kernel's choice of an ephemeral port)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Target:
    """One running switch: where to reach it and the pipeline to push to it."""

    name: str
    address: str
    device_id: int
    p4info: p4info_pb2.P4Info
    device_config: bytes


def compile_program(target: str, program: Path, out: Path) -> tuple[p4info_pb2.P4Info, bytes]:
    """(P4Info, device config) of ``program`` for ``target``: ``ina p4c`` for the built-in
    switch, ``p4c-bm2-ss`` for BMv2."""
    out.mkdir(parents=True, exist_ok=True)
    info_file, config_file = out / f"{target}.p4info.txtpb", out / f"{target}.json"
    tool = ([sys.executable, "-m", "ina", "p4c"] if target == "ina" else ["p4c-bm2-ss"])
    done = subprocess.run([*tool, "--p4runtime-files", str(info_file), "-o", str(config_file),
                           str(program)], capture_output=True, text=True, cwd=REPO)
    if done.returncode != 0:
        raise RuntimeError(f"{tool[-1]} {program} failed:\n{done.stderr}")
    return (text_format.Parse(info_file.read_text(), p4info_pb2.P4Info()),
            config_file.read_bytes())


def _command(target: str, device_id: int, grpc_port: int, cpu_port: int, work: Path
             ) -> list[str]:
    target_opts = ["--", "--grpc-server-addr", f"127.0.0.1:{grpc_port}",
                   "--cpu-port", str(cpu_port)]
    if target == "ina":
        return [sys.executable, "-m", "ina", "switch", "--no-p4", "--device-id",
                str(device_id), "--control-socket", str(work / "ina.sock"), *target_opts]
    return ["simple_switch_grpc", "--no-p4", "--device-id", str(device_id),
            "--thrift-port", str(free_port()),
            "--notifications-addr", f"ipc://{_notifications(device_id)}", *target_opts]


def _notifications(device_id: int) -> Path:
    """BMv2's notification socket (short: a Unix socket path has at most 107 bytes)."""
    return Path(f"/tmp/bmv2-{device_id}-notifications.ipc")


def _ready(proc: subprocess.Popen[bytes], address: str) -> bool:
    """Wait until ``proc`` serves gRPC on ``address`` (True) or has exited (False)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    with grpc.insecure_channel(address) as channel:
        while proc.poll() is None:
            try:
                grpc.channel_ready_future(channel).result(timeout=0.2)
                return proc.poll() is None  # not some other process's server
            except grpc.FutureTimeoutError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{proc.args} not ready after {START_TIMEOUT_S} s"
                                       ) from None
    return False


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextmanager
def running(target: str, program: Path, work: Path, cpu_port: int,
            attempts: int = 3) -> Iterator[Target]:
    """Start ``target`` ("ina" or "bmv2") without a program, yield how to reach it with
    the compiled ``program``, and stop it (by its own pid) afterwards. A switch that
    exits at start (another process took its port in the meantime) is started again on
    other ports."""
    work.mkdir(parents=True, exist_ok=True)
    p4info, config = compile_program(target, program, work)
    log = work / f"{target}.log"
    for _ in range(attempts):
        grpc_port = free_port()
        device_id = grpc_port  # unique on this machine while the switch holds the port
        with log.open("wb") as out:
            proc = subprocess.Popen(_command(target, device_id, grpc_port, cpu_port, work),
                                    stdout=out, stderr=subprocess.STDOUT, cwd=REPO)
        try:
            address = f"127.0.0.1:{grpc_port}"
            if _ready(proc, address):
                yield Target(target, address, device_id, p4info, config)
                return
        finally:
            _stop(proc)
            _notifications(device_id).unlink(missing_ok=True)
    raise RuntimeError(f"{target} did not start ({attempts} attempts); its log:\n"
                       f"{log.read_text()}")
