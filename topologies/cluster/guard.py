"""The remote side of a cluster network: ``python -m topologies.cluster.guard``.

    guard preflight --tunnel vxlan --address 192.0.2.20 --ports 4 [--need simple_switch_grpc]
        prints one JSON object: ``problems`` (what keeps the server from running its
        part: not root, a missing tool, a kernel without the tunnel's device type, an
        address that is not the server's) and ``ports`` (free TCP ports on the address,
        for the switches' P4Runtime and Thrift servers).
    guard watch --tag TAG --work-dir DIR [--switch s2 ...]
        creates the network's work directory on the server, prints ``ready`` and waits:
        when a ``stop`` line or the end of its input comes (the network was torn down,
        or the process that started it died and its ssh session with it), it ends
        every process whose environment has ``INA_CLUSTER=TAG`` (SIGTERM, SIGKILL after
        3 s), deletes the interfaces of the named switches (``s2-eth1``, ...: the
        switch ends of veth pairs and tunnels, which outlive the processes), removes
        the work directory and prints what it did as one JSON object.

It runs as root, with nothing but the standard library and ``ip``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from topologies.netutil import delete_interfaces, interfaces

TAG_VARIABLE = "INA_CLUSTER"
TOOLS = ("mnexec", "setpriv", "ip", "tar", "ethtool", "tc")
TERM_GRACE = 3.0


# ----------------------------------------------------------------- preflight


def tunnel_problem(tunnel: str) -> str | None:
    """Why this kernel cannot make the tunnel's devices (None when it can)."""
    name = f"inapf{os.getpid() % 100000}"
    if tunnel == "vxlan":
        args = ["type", "vxlan", "id", str(1 + os.getpid() % 16_000_000), "dstport", "4789"]
    else:
        args = ["type", "gretap", "remote", "192.0.2.1", "key", "1"]
    done = subprocess.run(["ip", "link", "add", "name", name, *args], capture_output=True,
                          text=True)
    if done.returncode != 0:
        return (f"this kernel cannot make {tunnel} tunnels (ip link add ... type "
                f"{args[1]}: {done.stderr.strip()})")
    subprocess.run(["ip", "link", "del", name], capture_output=True)
    return None


def own_addresses() -> list[str]:
    done = subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True)
    return re.findall(r"\binet (\d+\.\d+\.\d+\.\d+)/", done.stdout)


def free_ports(address: str, count: int) -> list[int]:
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((address, 0))
            sockets.append(s)
        return [int(s.getsockname()[1]) for s in sockets]
    finally:
        for s in sockets:
            s.close()


def preflight(args: argparse.Namespace) -> int:
    problems = []
    if os.geteuid() != 0:
        problems.append("not root (the ssh user needs root, or sudo without a password)")
    missing = [t for t in (*TOOLS, *args.need) if shutil.which(t) is None]
    if missing:
        problems.append(f"missing on PATH: {', '.join(missing)}")
    if shutil.which("ip") is not None:
        problem = tunnel_problem(args.tunnel)
        if problem:
            problems.append(problem)
        addresses = own_addresses()
        if args.address not in addresses:
            problems.append(f"{args.address} is not one of its addresses "
                            f"({', '.join(addresses) or 'none'})")
    ports: list[int] = []
    if not problems and args.ports:
        try:
            ports = free_ports(args.address, args.ports)
        except OSError as e:
            problems.append(f"cannot bind TCP ports on {args.address}: {e.strerror or e}")
    print(json.dumps({"problems": problems, "ports": ports}), flush=True)
    return 0


# --------------------------------------------------------------------- watch


def tagged_processes(tag: str) -> list[int]:
    """Every process whose environment has ``INA_CLUSTER=tag`` (but this one)."""
    wanted = f"{TAG_VARIABLE}={tag}".encode()
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if wanted in env:
            out.append(int(entry))
    return out


def end_processes(tag: str) -> int:
    pids = tagged_processes(tag)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    deadline = time.monotonic() + TERM_GRACE
    while time.monotonic() < deadline and tagged_processes(tag):
        time.sleep(0.1)
    for pid in tagged_processes(tag):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return len(pids)


def switch_interfaces(switches: list[str]) -> list[str]:
    if not switches:
        return []
    pattern = re.compile(rf"^(?:{'|'.join(map(re.escape, switches))})-eth\d+$")
    return [n for n in interfaces() if pattern.match(n)]


def clean(tag: str, work_dir: Path, switches: list[str]) -> dict[str, object]:
    killed = end_processes(tag)
    deleted = delete_interfaces(switch_interfaces(switches))
    shutil.rmtree(work_dir, ignore_errors=True)
    return {"processes": killed, "interfaces": deleted, "work_dir_removed":
            not work_dir.exists()}


def watch(args: argparse.Namespace) -> int:
    for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_IGN)  # the cleanup must run to the end
    work_dir = Path(args.work_dir)
    for sub in ("", "agents", "pcaps"):
        (work_dir / sub).mkdir(parents=True, exist_ok=True)
    _say("ready")
    for line in sys.stdin:
        if line.strip() == "stop":
            break
    _say(json.dumps(clean(args.tag, work_dir, args.switch)))
    return 0


def _say(text: str) -> None:
    try:
        print(text, flush=True)
    except OSError:
        pass  # nobody listens any more: the cleanup is what matters


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m topologies.cluster.guard")
    verbs = parser.add_subparsers(dest="verb", required=True)
    p = verbs.add_parser("preflight")
    p.add_argument("--tunnel", required=True, choices=("gre", "vxlan"))
    p.add_argument("--address", required=True)
    p.add_argument("--ports", type=int, default=0)
    p.add_argument("--need", action="append", default=[])
    p.set_defaults(func=preflight)
    p = verbs.add_parser("watch")
    p.add_argument("--tag", required=True)
    p.add_argument("--work-dir", required=True)
    p.add_argument("--switch", action="append", default=[])
    p.set_defaults(func=watch)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
