"""The control-socket commands of ``ina switch`` (protocol: :mod:`switch.process.control`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from switch.ports import PortSet, SpecError, parse_impairment_spec
from switch.ports.impair import NO_IMPAIRMENT
from switch.process.dataplane import Dataplane
from switch.process.options import SwitchOptions, with_default_seed

NO_IMPAIRMENT_WORDS = ("none", "off", "clear")


class CommandError(Exception):
    """A request that cannot be carried out; the message goes back to the client."""


class SwitchCommands:
    """Answers control requests from the process's ports, data path and options."""

    def __init__(self, options: SwitchOptions, ports: PortSet, dataplane: Dataplane,
                 program_name: Callable[[], str | None]):
        self.options = options
        self.ports = ports
        self.dataplane = dataplane
        self._program_name = program_name
        self._commands: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "ports": self.cmd_ports,
            "counters": self.cmd_counters,
            "impair": self.cmd_impair,
            "impair-show": self.cmd_impair_show,
        }

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        cmd = request["cmd"]
        handler = self._commands.get(cmd)
        if handler is None:
            return {"ok": False, "error": f"unknown command {cmd!r} "
                                          f"(known: {', '.join(self._commands)})"}
        try:
            reply = handler(request)
        except CommandError as e:
            return {"ok": False, "error": str(e)}
        return {"ok": True, **reply}

    def cmd_ports(self, request: dict[str, Any]) -> dict[str, Any]:
        o = self.options
        return {
            "device_id": o.device_id,
            "grpc_address": o.grpc_address,
            "control_socket": o.control_socket,
            "cpu_port": o.cpu_port,
            "program": self._program_name(),
            "ports": self._impairments(),
        }

    def _impairments(self) -> list[dict[str, Any]]:
        out = []
        for number, iface in self.ports.ports:
            config = self.ports.impairment(number)
            out.append({
                "port": number,
                "iface": iface,
                "impairment": "none" if config.is_identity else config.to_spec(),
                "config": dataclasses.asdict(config),
            })
        return out

    def cmd_impair_show(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"ports": self._impairments()}

    def cmd_impair(self, request: dict[str, Any]) -> dict[str, Any]:
        port = request.get("port")
        spec = request.get("spec")
        if not isinstance(spec, str) or not spec.strip():
            raise CommandError('impair needs a "spec" such as "loss=0.05,delay=10ms" or "none"')
        target: int | None
        if port == "all" or port is None:
            target = None
        elif isinstance(port, int) and not isinstance(port, bool) and port in self.ports:
            target = port
        else:
            known = ", ".join(str(n) for n in self.ports) or "none"
            raise CommandError(f"no port {port!r} (ports: {known}; or 'all')")
        if spec.strip().lower() in NO_IMPAIRMENT_WORDS:
            config = NO_IMPAIRMENT
        else:
            try:
                _, config = parse_impairment_spec(f"all:{spec}")
            except SpecError as e:
                raise CommandError(str(e).replace("'all:", "'", 1)) from None
            config = with_default_seed(config, self.options.seed)
        self.ports.set_impairment(target, config)
        return {"ports": self._impairments()}

    def cmd_counters(self, request: dict[str, Any]) -> dict[str, Any]:
        stats = self.dataplane.stats
        rows = []
        for number, iface in self.ports.ports:
            c = self.ports.counters(number)
            drops = dict(c.drops)
            for reason, n in stats.ingress_drops.get(number, {}).items():
                drops[reason] = drops.get(reason, 0) + n
            rows.append({
                "port": number,
                "iface": iface,
                "rx_packets": c.rx_packets,
                "rx_bytes": c.rx_bytes,
                "tx_packets": c.tx_packets,
                "tx_bytes": c.tx_bytes,
                "drops": drops,
                "impaired": dict(c.impaired),
                "errors": dict(c.errors),
            })
        cpu = self.options.cpu_port
        cpu_drops = dict(stats.ingress_drops.get(cpu, {})) if cpu is not None else {}
        return {
            "ports": rows,
            "cpu": {"port": cpu, "packet_in": stats.packet_in, "packet_out": stats.packet_out,
                    "drops": cpu_drops},
            "no_port": {str(p): n for p, n in sorted(stats.no_port.items())},
        }
