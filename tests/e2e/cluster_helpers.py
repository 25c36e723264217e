"""A second server on this machine, for the cluster tests: a network namespace with an
address of its own, reached from this machine through a veth pair, running an sshd
that lets in one key made for the purpose (``second_server``). It shares this
machine's filesystem and processes, but not its network: its interfaces, its root
network namespace and its Mininet nodes are its own, as on another machine.

    with second_server(tmp_path) as there:
        there.cluster_file(tmp_path / "cluster.toml", place={"s2": "there"})

The cluster file names this machine ``here`` and the namespace ``there``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from experiments.allreduce_net import need_root

SSHD = "/usr/sbin/sshd"
TAG_VARIABLE = b"INA_CLUSTER="


def _run(*argv: str) -> str:
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {done.stderr.strip()}")
    return done.stdout


@dataclass
class SecondServer:
    netns: str
    address: str  # the namespace's
    local_address: str  # this machine's end of the veth
    key: Path
    known_hosts: Path

    @property
    def ssh_options(self) -> list[str]:
        return ["-i", str(self.key), "-o", f"UserKnownHostsFile={self.known_hosts}",
                "-o", "StrictHostKeyChecking=yes"]

    def cluster_file(self, path: Path, tunnel: str = "vxlan", placement: str = "switchbin",
                     place: dict[str, str] | None = None, extra: str = "") -> Path:
        lines = [f"tunnel = {json.dumps(tunnel)}", f"placement = {json.dumps(placement)}",
                 "", "[servers.here]", "", "[servers.there]",
                 f"ssh = {json.dumps('root@' + self.address)}",
                 f"ssh_options = {json.dumps(self.ssh_options)}", extra]
        if place:
            lines += ["", "[place]", *(f"{n} = {json.dumps(s)}" for n, s in place.items())]
        path.write_text("\n".join(lines) + "\n")
        return path

    def interfaces(self) -> list[str]:
        """The interfaces of the server's root network namespace."""
        out = _run("ip", "netns", "exec", self.netns, "ip", "-o", "link", "show")
        return sorted(line.split(":")[1].strip().split("@")[0]
                      for line in out.splitlines() if line.count(":") >= 2)

    def base_interfaces(self) -> list[str]:
        return sorted(["lo", self.netns + "b"])

    def processes(self) -> list[str]:
        """The command lines of the processes in the server's root network namespace,
        but its sshd's listener."""
        out = []
        for pid in _run("ip", "netns", "pids", self.netns).split():
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            text = cmd.decode(errors="replace").strip()
            if "[listener]" not in text and not text.startswith(f"{SSHD} -D"):
                out.append(f"{pid}: {text}")
        return out


def tagged_processes() -> list[str]:
    """Processes of this machine (the namespace's too) that a cluster network started
    remotely (their environment has ``INA_CLUSTER=``)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            env = Path(f"/proc/{entry}/environ").read_bytes()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if any(v.startswith(TAG_VARIABLE) for v in env.split(b"\0")):
            out.append(f"{entry}: {cmd.decode(errors='replace').strip()}")
    return out


def wait_for(check: object, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(check) and check():
            return True
        time.sleep(0.2)
    return bool(callable(check) and check())


def missing() -> str | None:
    why = need_root()
    if why:
        return why
    if not os.path.exists(SSHD):
        return f"{SSHD} not installed (openssh-server: ./setup.sh installs it)"
    for tool in ("ssh", "ssh-keygen", "ip"):
        if shutil.which(tool) is None:
            return f"{tool} not installed"
    return None


@contextmanager
def second_server(work: Path) -> Iterator[SecondServer]:
    why = missing()
    if why:
        pytest.skip(why)
    tag = f"inacl{os.getpid() % 100000}"
    octet = os.getpid() % 250 + 1
    local, remote = f"10.213.{octet}.1", f"10.213.{octet}.2"
    keys = work / "ssh"
    keys.mkdir(parents=True, exist_ok=True)
    keys.chmod(0o700)
    for name in ("host_key", "id"):
        (keys / name).unlink(missing_ok=True)
        _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", tag, "-f", str(keys / name))
    shutil.copy(keys / "id.pub", keys / "authorized_keys")
    host_key = (keys / "host_key.pub").read_text().split()
    (keys / "known_hosts").write_text(f"{remote} {host_key[0]} {host_key[1]}\n")
    config = keys / "sshd_config"
    config.write_text("\n".join([
        f"ListenAddress {remote}:22", f"HostKey {keys / 'host_key'}",
        f"AuthorizedKeysFile {keys / 'authorized_keys'}", f"PidFile {keys / 'sshd.pid'}",
        "PermitRootLogin prohibit-password", "PasswordAuthentication no",
        "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no", "UseDNS no",
        "PrintMotd no", "MaxStartups 100:30:200", ""]))
    sshd: subprocess.Popen[bytes] | None = None
    try:
        subprocess.run(["ip", "netns", "del", tag], capture_output=True)
        _run("ip", "netns", "add", tag)
        _run("ip", "link", "add", tag + "a", "type", "veth", "peer", "name", tag + "b",
             "netns", tag)
        _run("ip", "addr", "add", f"{local}/30", "dev", tag + "a")
        _run("ip", "link", "set", tag + "a", "up")
        for argv in (["ip", "addr", "add", f"{remote}/30", "dev", tag + "b"],
                     ["ip", "link", "set", tag + "b", "up"], ["ip", "link", "set", "lo", "up"]):
            _run("ip", "netns", "exec", tag, *argv)
        Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation directory
        sshd = subprocess.Popen(["ip", "netns", "exec", tag, SSHD, "-D", "-f", str(config),
                                 "-E", str(keys / "sshd.log")], stdin=subprocess.DEVNULL)
        server = SecondServer(tag, remote, local, keys / "id", keys / "known_hosts")
        probe = ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5",
                 *server.ssh_options, f"root@{remote}", "true"]
        if not wait_for(lambda: subprocess.run(probe, capture_output=True).returncode == 0):
            log = (keys / "sshd.log").read_text() if (keys / "sshd.log").exists() else ""
            raise RuntimeError(f"the second server's sshd did not let us in: {log}")
        yield server
    finally:
        if sshd is not None:
            sshd.terminate()
            sshd.wait()
        subprocess.run(["ip", "netns", "del", tag], capture_output=True)
        subprocess.run(["ip", "link", "del", tag + "a"], capture_output=True)
