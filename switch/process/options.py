"""Command-line options of ``ina switch``, as simple_switch_grpc takes them.

Everything before the first ``--`` is a switch option, everything after it a target
option (simple_switch_grpc's ``--grpc-server-addr`` and ``--cpu-port``). Parsing only
validates text; nothing here touches the system. Every problem is an
:class:`OptionsError` whose message names the option and the bad value.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NoReturn

from switch.ports import ImpairmentConfig, SpecError, parse_impairment_spec, parse_port_spec

DEFAULT_GRPC_ADDRESS = "0.0.0.0:9559"  # as simple_switch_grpc
MAX_PORT = 511  # v1model ports are bit<9>
MAX_PIPELINES = 64
ENGINES = ("auto", "native", "python")  # as switch.v1model.switch.ENGINES
ENGINE_VARIABLE = "INA_SWITCH_ENGINE"
TARGET_OPTIONS = ("--grpc-server-addr", "--cpu-port", "--grpc-server-insecure")

#: simple_switch(_grpc) options the built-in switch does not take, with the reason, so
#: that a command line written for BMv2 fails with a clear message
REFUSED_OPTIONS = {
    "--debugger": "the built-in switch has no debugger (--log-console or --log-file trace "
                  "each packet with its P4 source lines)",
    "--use-files": "ports are Linux interfaces only (-i PORT@IFACE); use veth pairs",
    "--packet-in": "ports are Linux interfaces only (-i PORT@IFACE); use veth pairs",
    "--restore-state": "the switch keeps no state across runs",
    "--notifications-addr": "digests and other notifications go to the P4Runtime "
                            "controller's stream only",
}
REFUSED_TARGET_OPTIONS = {
    "--priority-queues": "each port has one queue on the built-in switch",
}


class OptionsError(Exception):
    """A bad command line; the message is shown as is (usage errors exit with 2)."""


class HelpRequested(Exception):  # noqa: N818 - not an error: -h was given
    """``-h``/``--help`` was given; the text is the help to print."""


@dataclass(frozen=True)
class SwitchOptions:
    program: str | None = None
    ports: tuple[tuple[int, str], ...] = ()
    device_id: int = 0
    no_p4: bool = False
    log_console: bool = False
    log_file: str | None = None
    pcap_dir: str | None = None
    thrift_port: int | None = None
    impairments: tuple[tuple[int | None, ImpairmentConfig], ...] = ()
    seed: int | None = None
    control_socket: str = ""
    include_dirs: tuple[str, ...] = ()
    defines: tuple[tuple[str, str | None], ...] = ()
    grpc_address: str = DEFAULT_GRPC_ADDRESS
    cpu_port: int | None = None
    nanolog: str | None = None
    log_flush: bool = False
    pipelines: int = 1
    engine: str = "auto"

    @property
    def tracing(self) -> bool:
        return self.log_console or self.log_file is not None


def default_control_socket(device_id: int) -> str:
    """The control socket of device ``device_id`` when ``--control-socket`` is not given."""
    return f"/tmp/ina-switch-{device_id}.sock"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise OptionsError(message)

    def print_help(self, file: object = None) -> None:
        raise HelpRequested(self.format_help())


def _int(what: str, low: int, high: int | None = None):  # type: ignore[no-untyped-def]
    def convert(text: str) -> int:
        try:
            value = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be an integer, got {text!r}") from None
        if value < low or (high is not None and value > high):
            bound = f"between {low} and {high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"{what} must be {bound}, got {text!r}")
        return value

    convert.__name__ = what  # argparse names the type in some messages
    return convert


def _nanomsg_address(text: str) -> str:
    if not text.startswith(("ipc://", "tcp://")) or text.endswith("//"):
        raise argparse.ArgumentTypeError(
            f"expected a nanomsg address such as ipc:///tmp/bm-0-log.ipc or "
            f"tcp://127.0.0.1:9090, got {text!r}")
    return text


def _refuse(argv: Sequence[str], refused: dict[str, str]) -> None:
    for arg in argv:
        name = arg.partition("=")[0]
        if name in refused:
            raise OptionsError(f"{name} is not supported: {refused[name]}")


def _switch_parser() -> _Parser:
    p = _Parser(
        prog="ina switch",
        description="The built-in P4 switch as a process: a drop-in for simple_switch_grpc.",
        epilog="Target options after '--': --grpc-server-addr HOST:PORT (default "
        f"{DEFAULT_GRPC_ADDRESS}), --cpu-port N (default: no CPU port). Run-time control: "
        "ina switch-cli.",
    )
    p.add_argument("program", nargs="?", metavar="PROGRAM",
                   help="P4_16 source (.p4, compiled on start) or a compiled program "
                        "(JSON from 'ina p4c -o')")
    p.add_argument("-i", "--interface", dest="ports", action="append", default=[],
                   metavar="PORT@IFACE", help="attach IFACE as port PORT (repeatable)")
    p.add_argument("--device-id", type=_int("device id", 0, (1 << 64) - 1), default=0,
                   metavar="N",
                   help="P4Runtime device id (default 0)")
    p.add_argument("--no-p4", action="store_true",
                   help="start without a program; wait for one over P4Runtime")
    p.add_argument("--log-console", action="store_true",
                   help="print each packet's trace with P4 source lines on stdout")
    p.add_argument("--log-file", metavar="FILE", help="write each packet's trace to FILE")
    p.add_argument("--pcap", dest="pcap_dir", metavar="DIR",
                   help="write <iface>_in.pcap and <iface>_out.pcap per port into DIR")
    p.add_argument("--thrift-port", type=_int("thrift port", 0, 65535), metavar="N",
                   help="accepted for compatibility and ignored (there is no Thrift server)")
    p.add_argument("--nanolog", metavar="ADDR", type=_nanomsg_address,
                   help="accepted for compatibility and ignored (no nanomsg event log; "
                        "--log-console or --log-file trace each packet)")
    p.add_argument("--log-flush", action="store_true",
                   help="write the --log-file trace line by line")
    p.add_argument("--dump-packet-data", type=_int("packet data bytes", 0), metavar="N",
                   help="accepted for compatibility and ignored (the trace shows the "
                        "headers field by field)")
    p.add_argument("--impair", action="append", default=[], metavar="SPEC",
                   help="link impairments, PORT|all:loss=0.05,delay=10ms,... (repeatable)")
    p.add_argument("--seed", type=_int("seed", 0), metavar="N",
                   help="seed for the program's random() and for impairments given no seed")
    p.add_argument("--control-socket", metavar="PATH",
                   help="Unix socket for 'ina switch-cli' (default /tmp/ina-switch-<id>.sock)")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="add DIR to the #include search path")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VAL]",
                   help="define a preprocessor macro")
    p.add_argument("--pipelines", type=_int("pipelines", 1, MAX_PIPELINES), default=1,
                   metavar="N",
                   help="run N pipelines, one process each, for a program with a "
                        "@pipeline_key field (default 1)")
    p.add_argument("--engine", choices=ENGINES,
                   help="run the program as compiled C (native) or as Python (python); "
                        "auto: native when the program compiles to C and a C compiler is "
                        f"installed, else python. Default: ${ENGINE_VARIABLE}, else auto. "
                        "Tracing runs the Python engine")
    return p


def _target_parser() -> _Parser:
    p = _Parser(prog="ina switch ... --", add_help=False)
    p.add_argument("--grpc-server-addr", dest="grpc_address", default=DEFAULT_GRPC_ADDRESS,
                   metavar="HOST:PORT")
    p.add_argument("--cpu-port", type=_int("CPU port", 0, MAX_PORT))
    p.add_argument("--grpc-server-insecure", action="store_true")  # the only mode anyway
    return p


def parse_grpc_address(text: str) -> tuple[str, int]:
    """``"0.0.0.0:9559"`` / ``"[::1]:9559"`` -> (host, port)."""
    host, sep, port_text = text.rpartition(":")
    if not sep or not host:
        raise OptionsError(f"--grpc-server-addr: expected HOST:PORT, got {text!r}")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not port_text.isdigit() or int(port_text) > 65535:
        raise OptionsError(f"--grpc-server-addr: bad port {port_text!r} in {text!r}")
    return host, int(port_text)


def _split_target(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    argv = list(argv)
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def _parse_target(argv: list[str]) -> argparse.Namespace:
    _refuse(argv, REFUSED_TARGET_OPTIONS)
    for arg in argv:
        name = arg.partition("=")[0]
        if arg.startswith("-") and name not in TARGET_OPTIONS:
            raise OptionsError(f"unknown target option {name!r} after '--' "
                               f"(supported: {', '.join(TARGET_OPTIONS)})")
    args = _target_parser().parse_args(argv)
    parse_grpc_address(args.grpc_address)
    return args


def _parse_specs(args: argparse.Namespace) -> tuple[list[tuple[int, str]],
                                                     list[tuple[int | None, ImpairmentConfig]]]:
    ports = []
    for text in args.ports:
        try:
            ports.append(parse_port_spec(text))
        except SpecError as e:
            raise OptionsError(f"-i: {e}") from None
    seen: dict[int, str] = {}
    for number, iface in ports:
        if number in seen:
            raise OptionsError(f"-i: port {number} is given twice ({seen[number]} and {iface})")
        if iface in seen.values():
            raise OptionsError(f"-i: interface {iface} is given twice")
        if number > MAX_PORT:
            raise OptionsError(f"-i: port {number} does not fit in bit<9> (0..{MAX_PORT})")
        seen[number] = iface
    impairments = []
    for text in args.impair:
        try:
            port, config = parse_impairment_spec(text)
        except SpecError as e:
            raise OptionsError(f"--impair: {e}") from None
        if port is not None and port not in seen:
            raise OptionsError(f"--impair {text!r}: port {port} is not given with -i")
        impairments.append((port, with_default_seed(config, args.seed)))
    return ports, impairments


def with_default_seed(config: ImpairmentConfig, seed: int | None) -> ImpairmentConfig:
    """``config`` with ``seed`` when the spec gave none (seed 0)."""
    if seed is None or config.seed:
        return config
    return dataclasses.replace(config, seed=seed)


def parse_switch_args(argv: Sequence[str]) -> SwitchOptions:
    """The options of ``ina switch ARGV``; raises OptionsError or HelpRequested."""
    own, target_argv = _split_target(argv)
    _refuse(own, REFUSED_OPTIONS)
    args = _switch_parser().parse_args(own)
    target = _parse_target(target_argv)
    if args.no_p4 and args.program:
        raise OptionsError(f"--no-p4 and a program ({args.program}) exclude each other")
    if not args.no_p4 and not args.program:
        raise OptionsError("a P4 program is required (or --no-p4 to wait for one over "
                           "P4Runtime)")
    ports, impairments = _parse_specs(args)
    if target.cpu_port is not None and any(n == target.cpu_port for n, _ in ports):
        raise OptionsError(f"--cpu-port {target.cpu_port} is also given as an interface port")
    if args.pipelines > 1:
        _check_pipelines(args, target)
    engine = args.engine or _engine_from_environment()
    if engine == "native" and (args.log_console or args.log_file):
        given = "--engine native" if args.engine else f"{ENGINE_VARIABLE}=native"
        raise OptionsError(f"{given} and --log-console/--log-file exclude each other "
                           "(a traced switch runs the Python engine)")
    defines = []
    for item in args.defines:
        name, eq, value = item.partition("=")
        if not name:
            raise OptionsError(f"-D: no macro name in {item!r}")
        defines.append((name, value if eq else None))
    return SwitchOptions(
        program=args.program,
        ports=tuple(ports),
        device_id=args.device_id,
        no_p4=args.no_p4,
        log_console=args.log_console,
        log_file=args.log_file,
        pcap_dir=args.pcap_dir,
        thrift_port=args.thrift_port,
        impairments=tuple(impairments),
        seed=args.seed,
        control_socket=args.control_socket or default_control_socket(args.device_id),
        include_dirs=tuple(args.include_dirs),
        defines=tuple(defines),
        grpc_address=target.grpc_address,
        cpu_port=target.cpu_port,
        nanolog=args.nanolog,
        log_flush=args.log_flush,
        pipelines=args.pipelines,
        engine=engine,
    )


def _engine_from_environment() -> str:
    """``--engine``'s default: ``$INA_SWITCH_ENGINE`` (how a Mininet run, which starts
    its switches with their defaults, chooses), else auto."""
    value = os.environ.get(ENGINE_VARIABLE, "").strip()
    if not value:
        return "auto"
    if value not in ENGINES:
        raise OptionsError(f"{ENGINE_VARIABLE}={value!r}: must be one of {', '.join(ENGINES)}")
    return value


def _check_pipelines(args: argparse.Namespace, target: argparse.Namespace) -> None:
    """What several pipelines do not do (yet): each would need its own share of it."""
    n = args.pipelines
    if args.no_p4:
        raise OptionsError(f"--pipelines {n} needs the program on the command line (a "
                           "program pushed over P4Runtime runs in one pipeline)")
    for given, what in ((args.log_console, "--log-console"), (args.log_file, "--log-file"),
                        (args.pcap_dir, "--pcap"),
                        (target.cpu_port is not None, "--cpu-port")):
        if given:
            raise OptionsError(f"--pipelines {n} and {what} exclude each other (one pipeline "
                               "traces, captures and talks to the controller)")


def switch_help() -> str:
    return _switch_parser().format_help()
