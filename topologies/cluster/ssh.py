"""One remote server's ssh: the commands a network runs there.

``Connection`` opens a master connection (OpenSSH's ControlMaster) that the short
commands and the nodes' shells share, so each costs a channel rather than a new ssh
handshake; once ``max_sessions - 1`` sessions are open on it (sshd's MaxSessions),
further ones get a connection of their own. A process that must end when it is stopped
here (a switch, an agent: ``shared=False``) gets a connection of its own too: closing
it ends the sshd process whose death signals the command (below), where a channel of
a shared connection would leave it running. Every remote command

- runs with ``INA_CLUSTER=<tag>`` in its environment (the tag names the network and
  the server), so that the server's guard (``topologies.cluster.guard``) can find and
  end every process the network started there;
- runs under ``setpriv --pdeathsig TERM``: it ends when its ssh session does;
- runs through ``sudo -n -E`` when the ssh user is not root.

The local ssh processes end with this process (the parent-death signal again), each
in a session of its own so that a Ctrl-C at the terminal reaches ``ina`` (which tears
the network down in order), not them.
"""

from __future__ import annotations

import io
import shlex
import shutil
import subprocess
import tarfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from topologies.cluster.guard import TAG_VARIABLE
from topologies.cluster.spec import Server

REMOTE_ROOT = "/tmp/ina-cluster"
"""Where a network's files go on a remote server: ``REMOTE_ROOT/<tag>/``."""
CONNECT_TIMEOUT = 20.0


class SshError(RuntimeError):
    """A remote server cannot be reached or did not do what it was asked; the message
    names the server."""


def local_end_with_parent(argv: list[str], signal: str = "KILL") -> list[str]:
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", signal, "--", *argv] if setpriv else argv


class Connection:
    """The ssh of one remote ``server`` for the network tagged ``tag``; ``control_dir``
    holds the master connection's socket (a short local path)."""

    def __init__(self, server: Server, tag: str, control_dir: Path) -> None:
        assert server.ssh is not None, "a remote server"
        self.server = server
        self.tag = f"{tag}-{server.name}"
        self.control_path = control_dir / f"{server.name}.ssh"
        self.work_dir = f"{REMOTE_ROOT}/{self.tag}"
        self.master: subprocess.Popen[bytes] | None = None
        self._shared: list[subprocess.Popen[Any]] = []
        self.ports: list[int] = []  # free TCP ports on the server, for its switches

    @property
    def name(self) -> str:
        return self.server.name

    @property
    def address(self) -> str:
        assert self.server.address is not None
        return self.server.address

    def take_port(self) -> int:
        """A TCP port that was free on the server's address (``ports``)."""
        if not self.ports:
            raise SshError(f"server {self.name}: no free TCP port left of those it gave")
        return self.ports.pop(0)

    # ------------------------------------------------------------------- ssh

    def ssh_argv(self, shared: bool, tty: bool = False) -> list[str]:
        argv = ["ssh", "-q", "-o", "BatchMode=yes", "-o", "ServerAliveInterval=5",
                "-o", "ServerAliveCountMax=4", "-o", f"ConnectTimeout={CONNECT_TIMEOUT:g}",
                *self.server.ssh_options,
                "-o", f"ControlPath={self.control_path if shared else 'none'}",
                "-tt" if tty else "-T"]
        assert self.server.ssh is not None
        return [*argv, self.server.ssh]

    def remote_command(self, argv: Sequence[str], tagged: bool = True,
                       end_with_session: bool = True) -> str:
        """The command line the server's shell runs for ``argv``."""
        words: list[str] = []
        if self.server.user != "root":
            words += ["sudo", "-n", "-E"]
        if tagged:
            words += ["env", f"{TAG_VARIABLE}={self.tag}"]
        if end_with_session:
            words += ["setpriv", "--pdeathsig", "TERM", "--"]
        return shlex.join([*words, *argv])

    def _share(self) -> bool:
        if self.master is None or self.master.poll() is not None:
            return False
        self._shared = [p for p in self._shared if p.poll() is None]
        return len(self._shared) < self.server.max_sessions - 1

    def popen(self, argv: Sequence[str], tty: bool = False, tagged: bool = True,
              end_with_session: bool = True, shared: bool = True,
              **params: Any) -> subprocess.Popen[Any]:
        """Start ``argv`` on the server (``subprocess.Popen``'s parameters apply to the
        local ssh: its stdin, stdout and stderr are the remote command's); over the
        shared connection if ``shared`` and it has room."""
        shared = shared and self._share()
        local = self.ssh_argv(shared, tty) + [self.remote_command(argv, tagged,
                                                                  end_with_session)]
        params.setdefault("start_new_session", True)
        proc: subprocess.Popen[Any] = subprocess.Popen(local_end_with_parent(local), **params)
        if shared:
            self._shared.append(proc)
        return proc

    def run(self, argv: Sequence[str], timeout: float = 60.0, input: str | None = None,
            tagged: bool = True) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` on the server and wait for it (text output)."""
        proc = self.popen(argv, tagged=tagged, stdin=subprocess.PIPE if input is not None
                          else subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise SshError(f"server {self.name}: {shlex.join(argv)} did not finish within "
                           f"{timeout:g} s") from None
        return subprocess.CompletedProcess(list(argv), proc.returncode, out, err)

    def check(self, argv: Sequence[str], timeout: float = 60.0) -> str:
        """``run``, and its output; ``SshError`` quoting its errors when it fails."""
        done = self.run(argv, timeout)
        if done.returncode != 0:
            raise SshError(f"server {self.name}: {shlex.join(argv)} failed (status "
                           f"{done.returncode}): {(done.stderr or done.stdout).strip()}")
        return done.stdout

    # ---------------------------------------------------------------- master

    def open(self) -> None:
        """Open the master connection; ``SshError`` with ssh's own reason when the
        server cannot be reached."""
        self.control_path.parent.mkdir(parents=True, exist_ok=True)
        self.control_path.unlink(missing_ok=True)
        assert self.server.ssh is not None
        argv = ["ssh", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT:g}",
                "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=4",
                *self.server.ssh_options, "-o", "ControlMaster=yes",
                "-o", "ControlPersist=no", "-o", f"ControlPath={self.control_path}",
                "-N", self.server.ssh]
        self.master = subprocess.Popen(local_end_with_parent(argv), stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                       start_new_session=True)
        deadline = time.monotonic() + CONNECT_TIMEOUT + 5
        while not self.control_path.exists():
            code = self.master.poll()
            if code is not None:
                assert self.master.stderr is not None
                reason = self.master.stderr.read().decode(errors="replace").strip()
                self.master = None
                raise SshError(f"server {self.name}: ssh {self.server.ssh} failed: "
                               f"{reason or f'status {code}'}")
            if time.monotonic() > deadline:
                self.close()
                raise SshError(f"server {self.name}: ssh {self.server.ssh} did not connect "
                               f"within {CONNECT_TIMEOUT:g} s")
            time.sleep(0.05)

    def close(self) -> None:
        """Close the master connection (its sessions end with it)."""
        master, self.master = self.master, None
        if master is not None and master.poll() is None:
            master.terminate()
            try:
                master.wait(timeout=5)
            except subprocess.TimeoutExpired:
                master.kill()
                master.wait()
        self.control_path.unlink(missing_ok=True)

    # ----------------------------------------------------------------- files

    def fetch(self, remote_dir: str, names: Sequence[str], local_dir: Path,
              remove: bool = True) -> list[str]:
        """Copy the files ``names`` of ``remote_dir`` into ``local_dir`` (removing them
        on the server); the names that were there."""
        if not names:
            return []
        script = ("cd \"$1\" 2>/dev/null || exit 0; shift; set -- $(ls -d -- \"$@\" "
                  "2>/dev/null); [ $# -eq 0 ] && exit 0; tar -cf - " +
                  ("--remove-files " if remove else "") + "-- \"$@\"")
        proc = self.popen(["sh", "-c", script, "fetch", remote_dir, *names],
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
        out, err = proc.communicate(timeout=300)
        if proc.returncode != 0:
            raise SshError(f"server {self.name}: cannot fetch {', '.join(names)} from "
                           f"{remote_dir}: {err.decode(errors='replace').strip()}")
        if not out:
            return []
        local_dir.mkdir(parents=True, exist_ok=True)
        got = []
        with tarfile.open(fileobj=io.BytesIO(out), mode="r:") as tar:
            for member in tar.getmembers():
                target = (local_dir / member.name).resolve()
                if not target.is_relative_to(local_dir.resolve()):
                    continue  # nothing outside local_dir
                if member.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                elif member.isfile():
                    data = tar.extractfile(member)
                    if data is None:
                        continue
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data.read())
                    got.append(member.name)
        return got
