"""``ina switch-cli``: run-time control of a running ``ina switch`` over its control socket.

::

    ina switch-cli [--device-id N | --socket PATH] [--json] ports
    ina switch-cli ... counters
    ina switch-cli ... impair PORT|all loss=0.05,delay=10ms,...   (or: none)
    ina switch-cli ... impair show

Tables for people, ``--json`` for scripts (the switch's reply as is). Exit status 0 on
success, 1 when the switch refused the command or cannot be reached.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from switch.process.control import ControlError, control_request
from switch.process.options import default_control_socket


def build_request(words: list[str]) -> dict[str, Any]:
    """The control request for the command words; ValueError with a usage text."""
    if not words:
        raise ValueError("a command is required: ports, counters, impair PORT|all SPEC, "
                         "impair show")
    cmd, args = words[0], words[1:]
    if cmd in ("ports", "counters"):
        if args:
            raise ValueError(f"{cmd} takes no arguments, got {' '.join(args)!r}")
        return {"cmd": cmd}
    if cmd == "impair":
        if args == ["show"]:
            return {"cmd": "impair-show"}
        if len(args) != 2:
            raise ValueError("usage: impair PORT|all KEY=VALUE[,KEY=VALUE...] (or none), "
                             "or impair show")
        port_text, spec = args
        port: int | str
        if port_text.lower() == "all":
            port = "all"
        elif port_text.isdigit():
            port = int(port_text)
        else:
            raise ValueError(f"impair: port must be a number or 'all', got {port_text!r}")
        return {"cmd": "impair", "port": port, "spec": spec}
    raise ValueError(f"unknown command {cmd!r} (commands: ports, counters, impair)")


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
             for r in [header, *rows]]
    return "\n".join(lines)


def _reasons(d: dict[str, int]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(d.items())) or "-"


def format_counters(reply: dict[str, Any]) -> str:
    rows = [[str(p["port"]), p["iface"], str(p["rx_packets"]), str(p["rx_bytes"]),
             str(p["tx_packets"]), str(p["tx_bytes"]), str(sum(p["drops"].values())),
             _reasons(p["drops"])] for p in reply["ports"]]
    out = [_table(["port", "iface", "rx_pkts", "rx_bytes", "tx_pkts", "tx_bytes", "drops",
                   "drop_reasons"], rows)]
    cpu = reply["cpu"]
    if cpu["port"] is not None:
        out.append(f"cpu port {cpu['port']}: packet_in {cpu['packet_in']}, packet_out "
                   f"{cpu['packet_out']}, drops {_reasons(cpu['drops'])}")
    if reply["no_port"]:
        sent = ", ".join(f"port {p}: {n}" for p, n in reply["no_port"].items())
        out.append(f"dropped, sent to ports without an interface: {sent}")
    return "\n".join(out)


def format_impairments(reply: dict[str, Any]) -> str:
    rows = [[str(p["port"]), p["iface"], p["impairment"]] for p in reply["ports"]]
    return _table(["port", "iface", "impairment"], rows)


def format_ports(reply: dict[str, Any]) -> str:
    cpu = "none" if reply["cpu_port"] is None else reply["cpu_port"]
    head = (f"device {reply['device_id']}, P4Runtime {reply['grpc_address']}, CPU port {cpu}, "
            f"program {reply['program'] or 'none'}")
    return head + "\n" + format_impairments(reply)


FORMATS = {"counters": format_counters, "impair": format_impairments,
           "impair-show": format_impairments, "ports": format_ports}


def cmd_switch_cli(args: argparse.Namespace) -> int:
    try:
        request = build_request(args.words)
    except ValueError as e:
        print(f"ina switch-cli: error: {e}", file=sys.stderr)
        return 2
    path = args.socket or default_control_socket(args.device_id)
    try:
        reply = control_request(path, request)
    except ControlError as e:
        print(f"ina switch-cli: error: {e}", file=sys.stderr)
        return 1
    if not reply.get("ok"):
        print(f"ina switch-cli: error: {reply.get('error', 'the switch refused the command')}",
              file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(reply, indent=1))
    else:
        print(FORMATS[request["cmd"]](reply))
    return 0


def add_switch_cli_parser(verbs: Any) -> None:
    p = verbs.add_parser("switch-cli", help="run-time control of a running 'ina switch'",
                         description=__doc__.splitlines()[0] if __doc__ else None)
    where = p.add_mutually_exclusive_group()
    where.add_argument("--device-id", type=int, default=0,
                       help="the switch's --device-id (default 0)")
    where.add_argument("--socket", metavar="PATH", help="the switch's --control-socket")
    p.add_argument("--json", action="store_true", help="print the reply as JSON")
    p.add_argument("words", nargs="*", metavar="CMD",
                   help="ports | counters | impair PORT|all SPEC | impair show")
    p.set_defaults(func=cmd_switch_cli)
