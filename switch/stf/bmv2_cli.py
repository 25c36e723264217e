"""A ``simple_switch_CLI`` session: BMv2's Thrift command line, kept open for the
commands that BMv2's P4Runtime server does not implement (register reads, writes and
resets), as p4c's own STF driver sends them."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import time

PROMPT = b"RuntimeCmd: "
ANSWER_TIMEOUT_S = 30.0


class CliError(Exception):
    """The CLI is missing, did not start, or rejected a command (with its message)."""


class ThriftCli:
    """One ``simple_switch_CLI --thrift-port N`` process; ``run`` sends one command and
    returns what it printed before the next prompt."""

    def __init__(self, thrift_port: int):
        self.thrift_port = thrift_port
        self._proc: subprocess.Popen[bytes] | None = None

    def _start(self) -> subprocess.Popen[bytes]:
        exe = shutil.which("simple_switch_CLI")
        if exe is None:
            raise CliError("register commands on BMv2 need simple_switch_CLI on PATH")
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        proc = subprocess.Popen([exe, "--thrift-port", str(self.thrift_port)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, env=env)
        self._proc = proc
        self._read_answer("simple_switch_CLI did not start")
        return proc

    def run(self, command: str) -> str:
        proc = self._proc or self._start()
        assert proc.stdin is not None
        try:
            proc.stdin.write(command.encode() + b"\n")
            proc.stdin.flush()
        except OSError as e:
            raise CliError(f"simple_switch_CLI: {command}: {e}") from None
        return self._read_answer(f"simple_switch_CLI: {command}").strip()

    def _read_answer(self, what: str) -> str:
        """Everything up to the next prompt."""
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        fd = proc.stdout.fileno()
        data = b""
        deadline = time.monotonic() + ANSWER_TIMEOUT_S
        while not data.endswith(PROMPT):
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(left, 0))
            if not ready:
                raise CliError(f"{what}: no answer within {ANSWER_TIMEOUT_S:g} s")
            chunk = os.read(fd, 65536)
            if not chunk:
                text = data.decode(errors="replace").strip()
                raise CliError(f"{what}: it exited: {text or 'no output'}")
            data += chunk
        return data[: -len(PROMPT)].decode(errors="replace")

    def close(self) -> None:
        if self._proc is None:
            return
        try:
            if self._proc.stdin is not None:
                self._proc.stdin.close()
            self._proc.wait(5)
        except (OSError, subprocess.TimeoutExpired):
            self._proc.kill()
            self._proc.wait()
        self._proc = None
