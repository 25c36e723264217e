"""A network of p4lang's tutorials' kind: their ``topology.json`` and runtime files.

``ExerciseNet`` starts what the tutorials' ``run_exercise.py`` starts, on the project's
switches: the hosts with their addresses, MACs and commands, one switch per entry
(``ina switch``, or ``simple_switch_grpc`` with ``target="bmv2"``) started with its
program (the switch's ``program``, else the network's), device ids from 0 and gRPC
ports from 50051 in the file's order (as the tutorials number them, so their
controllers find the switches), and every switch that names a runtime file programmed
from it (``controller.runtime_file``: the pipeline wrapped as a ``P4DeviceConfig``, the
entries, groups and sessions). Unlike the project's own networks, no routes, ARP or
jobs are installed: the files say everything. The network holds the Mininet lock while
it runs; ``stop`` tears it down.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from controller.errors import P4RuntimeClientError
from controller.p4runtime_client import P4RuntimeClient
from controller.runtime_file import RuntimeFileError, apply_runtime_file, load_runtime_file
from experiments.allreduce_net import target_missing
from experiments.options import RunError
from topologies.exercise_topo import ExerciseSwitch, ExerciseTopo, ExerciseTopology
from topologies.netutil import is_listening, mininet_lock
from topologies.nodes import BMv2Switch, InaSwitch

GRPC_BASE = 50051  # the tutorials' first switch
ELECTION_ID = (0, 1)  # the tutorials' controllers use 0,1 too


@dataclass
class ExerciseNet:
    topology: ExerciseTopology
    work_dir: Path
    program: Path | None = None  # for switches that name none (run_exercise.py's -j)
    target: str = "builtin"
    pcap: bool = False
    grpc_base: int = GRPC_BASE
    net: Any = None
    applied: dict[str, dict[str, int]] = field(default_factory=dict)
    _stack: ExitStack = field(default_factory=ExitStack)

    def start(self) -> ExerciseNet:
        why = target_missing(self.target)
        if why:
            raise RunError(f"target {self.target}: {why}")
        if self.target != "builtin" and any(link.options.delay_ms
                                            for link in self.topology.links):
            raise RunError(f"{self.topology.path}: link latencies need the built-in switch "
                           "(they are its port impairments; the kernel here has no netem)")
        from mininet.log import setLogLevel
        from mininet.net import Mininet

        setLogLevel("critical")
        logs = self.work_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        capture: dict[str, Any] = ({"pcap": True, "pcap_dir": self.work_dir / "pcaps"}
                                   if self.pcap else {})
        node = InaSwitch if self.target == "builtin" else BMv2Switch
        topo = ExerciseTopo(self.topology, switch_opts=self._switch_opts)
        self._stack.enter_context(mininet_lock())
        self._check_ports()
        self.net = Mininet(topo=topo, controller=None, build=False,
                           switch=partial(node, log_dir=logs, **capture))
        self._stack.callback(self.net.stop)
        try:
            self.net.build()
            self.net.start()
            self._run_host_commands()
            self._apply_runtime_files()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        self._stack.close()

    def __enter__(self) -> ExerciseNet:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _index(self, switch: ExerciseSwitch) -> int:
        return self.topology.switches.index(switch)

    def _switch_opts(self, switch: ExerciseSwitch) -> dict[str, Any]:
        i = self._index(switch)
        return {"program": switch.program or self.program, "device_id": i,
                "grpc_port": self.grpc_base + i, "cpu_port": switch.cpu_port}

    def _check_ports(self) -> None:
        for i, s in enumerate(self.topology.switches):
            port = self.grpc_base + i
            if is_listening("127.0.0.1", port):
                raise RunError(f"{s.name}'s gRPC port {port} is in use (another switch "
                               "listens there)")

    def _run_host_commands(self) -> None:
        for h in self.topology.hosts:
            node = self.net.get(h.name)
            for command in h.commands:
                out = node.cmd(f"{command}; echo __status=$?")
                text, _, status = out.rpartition("__status=")
                if status.strip() != "0":
                    raise RunError(f"{self.topology.path}: host {h.name}: command "
                                   f"{command!r} failed (status {status.strip()}): "
                                   f"{text.strip()}")

    def _apply_runtime_files(self) -> None:
        for s in self.topology.switches:
            if s.runtime_json is None:
                continue
            sw = self.net.get(s.name)
            try:
                rf = load_runtime_file(s.runtime_json)
                with P4RuntimeClient(sw.grpc_address, sw.device_id, ELECTION_ID,
                                     name=s.name) as client:
                    self.applied[s.name] = apply_runtime_file(client, rf)
            except (RuntimeFileError, P4RuntimeClientError) as e:
                raise RunError(f"{s.name}: {e}") from None

    def describe(self) -> list[str]:
        """One line per switch: where its P4Runtime server is and what it runs."""
        lines = []
        for s in self.topology.switches:
            sw = self.net.get(s.name)
            runtime = (f"programmed from {s.runtime_json}" if s.runtime_json is not None
                       else "no runtime file")
            lines.append(f"  {s.name}: P4Runtime on {sw.grpc_address}, device "
                         f"{sw.device_id}; {runtime}")
        return lines
