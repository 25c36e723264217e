"""``ina switch``: the built-in P4 switch as one process, a drop-in for simple_switch_grpc.

Start-up, in an order that fails fast on cheap mistakes: options; the gRPC address must
be free; the ports' interfaces are opened; the control socket is bound; the program is
compiled (or loaded) and committed; then the P4Runtime server starts listening, which
is the moment the switch is ready (Mininet node classes poll the gRPC port). Every
start-up failure prints one clear message (compile errors as p4c prints them) and
exits with 1; bad options exit with 2.

With ``--pipelines N`` (a program with a ``@pipeline_key`` field), the program's
steering rule becomes each port's PACKET_FANOUT group and N - 1 pipeline processes start
before the server does (``switch.process.pipelines``).

Then the main loop waits on one selector for the ports, the packet-out wakeup and the
control socket, and wakes early for delayed frames (impairments) and pcap flushes.
SIGTERM and SIGINT end the loop: the gRPC server stops, sockets close, pcap files are
flushed, and the exit status is 0.
"""

from __future__ import annotations

import logging
import selectors
import signal
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from switch.ports import PortError, PortSet
from switch.process.commands import SwitchCommands
from switch.process.control import ControlError, ControlServer
from switch.process.dataplane import Dataplane
from switch.process.options import HelpRequested, OptionsError, SwitchOptions, parse_switch_args
from switch.process.pipelines import GroupPorts, GroupStats, PipelineGroup, Pipelines
from switch.process.startup import StartupError, check_address_free, load_program
from switch.process.trace import PacketTrace

log = logging.getLogger("switch.process")

#: Longest sleep of the main loop (it wakes on events anyway; this bounds the reaction
#: to a stop request that arrives while a signal handler cannot run).
MAX_WAIT_S = 0.5


class SwitchProcess:
    """The parts of one running switch; :meth:`start` then :meth:`run`."""

    def __init__(self, options: SwitchOptions):
        self.options = options
        self.stopping = False
        self.ports: PortSet | None = None
        self.control: ControlServer | None = None
        self.server: Any = None
        self.dataplane: Dataplane | None = None
        self.trace: PacketTrace | None = None
        self._log_file: TextIO | None = None
        self.pipelines: Pipelines | None = None
        self.failed = False
        self.commands: SwitchCommands | None = None

    # ----------------------------------------------------------------- start-up

    def start(self) -> None:
        o = self.options
        if o.thrift_port is not None:
            print(f"ina switch: note: --thrift-port {o.thrift_port} is ignored (the built-in "
                  "switch has no Thrift server; use P4Runtime)", file=sys.stderr)
        if o.nanolog is not None:
            print(f"ina switch: note: --nanolog {o.nanolog} is ignored (no nanomsg event "
                  "log; --log-console or --log-file trace each packet)", file=sys.stderr)
        check_address_free(o.grpc_address)
        try:
            self.ports = PortSet(list(o.ports), pcap_dir=o.pcap_dir,
                                 impairments=list(o.impairments))
            self.ports.open()
        except PortError as e:
            raise StartupError(str(e)) from None
        self._open_trace()
        self.dataplane = Dataplane(self.ports, None, o.cpu_port, self.trace)
        self.commands = SwitchCommands(o, self.ports, self.dataplane, self._program_name)
        self.control = ControlServer(o.control_socket, self.commands)
        try:
            self.control.open()
        except ControlError as e:
            raise StartupError(str(e)) from None
        program = None
        if o.program is not None:
            program = load_program(o.program, o.include_dirs, dict(o.defines))
        if o.pipelines > 1:
            self._start_pipelines(program)
        self._start_server(program)

    def _start_pipelines(self, program: Any) -> None:
        """Spread each port's frames by the program's key and start pipelines 1..N-1."""
        from switch.frontend.artifact import dump_artifact
        from switch.ports.fanout import steering_program
        from switch.v1model.partition import ANNOTATION, PartitionError, steering

        o = self.options
        assert self.ports is not None and self.dataplane is not None
        assert self.commands is not None
        try:
            rule = steering(program)
        except PartitionError as e:
            raise StartupError(f"--pipelines {o.pipelines}: {e}") from None
        if rule is None:
            raise StartupError(f"--pipelines {o.pipelines}: {o.program} annotates no header "
                               f"field @{ANNOTATION}, so nothing says its state may be split "
                               "between pipelines: run one pipeline")
        try:
            groups = self.ports.create_fanout(steering_program(rule))
        except PortError as e:
            raise StartupError(str(e)) from None
        setup = {"artifact": dump_artifact(program).encode(), "name": str(o.program),
                 "seed": o.seed or 0, "engine": o.engine, "ports": list(o.ports),
                 "impairments": list(o.impairments), "groups": groups}
        try:
            self.pipelines = Pipelines.start(o.pipelines - 1, setup)
        except Exception as e:  # noqa: BLE001 - any failure of a pipeline's start
            raise StartupError(f"--pipelines {o.pipelines}: {e}") from None
        self.commands.ports = GroupPorts(self.ports, self.pipelines)  # type: ignore[assignment]
        self.commands.dataplane = GroupStats(self.dataplane, self.pipelines)  # type: ignore[assignment]
        log.info("%d pipelines, frames spread by %s", o.pipelines, rule.field)

    def _open_trace(self) -> None:
        o = self.options
        if not o.tracing:
            return
        sinks: list[TextIO] = []
        if o.log_console:
            sinks.append(sys.stdout)
        if o.log_file is not None:
            try:
                self._log_file = open(o.log_file, "w",  # noqa: SIM115
                                      buffering=1 if o.log_flush else 1 << 16)
            except OSError as e:
                raise StartupError(f"cannot write log file {o.log_file}: {e.strerror}"
                                   ) from None
            sinks.append(self._log_file)
        self.trace = PacketTrace(sinks)

    def _make_switch(self, program: Any) -> Any:
        from switch.v1model import V1Switch

        sw = V1Switch(program, seed=self.options.seed or 0, cpu_port=self.options.cpu_port,
                      trace=self.trace, engine=self.options.engine)
        if self.pipelines is None:
            return sw
        if self.server is not None:
            raise ValueError(f"this switch runs {self.options.pipelines} pipelines of the "
                             "program it started with; start it again to run another")
        if "digest" in sw.hooks.used:
            raise ValueError("a program that sends digests runs in one pipeline (the "
                             "controller hears pipeline 0 only)")
        return PipelineGroup(sw, self.pipelines)

    def _start_server(self, program: Any) -> None:
        from switch.runtime import P4RuntimeServer
        from switch.runtime.errors import P4RuntimeError

        o = self.options
        assert self.dataplane is not None
        server = P4RuntimeServer(device_id=o.device_id, address=o.grpc_address,
                                 cpu_port=o.cpu_port, on_pipeline=self._make_switch,
                                 packet_out=self.dataplane.queue_packet_out)
        self.dataplane.server = server
        if program is not None:
            try:
                server.set_pipeline(program)
            except P4RuntimeError as e:
                raise StartupError(f"{o.program}: {e.message}") from None
        try:
            server.start()
        except (OSError, RuntimeError) as e:
            raise StartupError(f"cannot listen on gRPC address {o.grpc_address}: {e}") from None
        self.server = server

    def _program_name(self) -> str | None:
        program = None if self.server is None else self.server.program
        return None if program is None else str(getattr(program, "filename", "<program>"))

    def ready_message(self) -> str:
        o = self.options
        ports = " ".join(f"{n}@{i}" for n, i in o.ports) or "none"
        program = self._program_name() or "none yet (--no-p4)"
        cpu = "none" if o.cpu_port is None else str(o.cpu_port)
        pipes = f", {o.pipelines} pipelines" if o.pipelines > 1 else ""
        sw = None if self.server is None else self.server.switch
        engine = getattr(getattr(sw, "switch", sw), "engine", None)
        on = f", {engine} engine" if engine else ""
        return (f"ina switch: device {o.device_id} ready: P4Runtime on {o.grpc_address}, "
                f"ports {ports}, CPU port {cpu}, program {program}{pipes}, "
                f"control socket {o.control_socket}{on}")

    # ----------------------------------------------------------------- main loop

    def request_stop(self, *_: object) -> None:
        """Signal handler: end the main loop."""
        self.stopping = True
        if self.dataplane is not None:
            self.dataplane.wake()

    def run(self) -> None:
        ports, dataplane, control = self.ports, self.dataplane, self.control
        assert ports is not None and dataplane is not None and control is not None
        with selectors.DefaultSelector() as sel:
            sel.register(ports.fileno(), selectors.EVENT_READ, None)
            sel.register(dataplane.wakeup_fd(), selectors.EVENT_READ, dataplane.on_wakeup)
            control.attach(sel)
            monotonic = time.monotonic
            next_check = monotonic() + MAX_WAIT_S
            while not self.stopping:
                deadline = ports.next_deadline()
                wait = MAX_WAIT_S if deadline is None else \
                    min(MAX_WAIT_S, max(0.0, deadline - monotonic()))
                readable = False
                for key, _ in sel.select(wait):
                    if key.data is None:
                        readable = True
                    else:
                        key.data()
                if readable:
                    dataplane.process(ports.receive(timeout=0))
                elif deadline is not None and monotonic() >= deadline:
                    dataplane.process(ports.flush_due())
                if self.pipelines is not None and monotonic() >= next_check:
                    next_check = monotonic() + MAX_WAIT_S
                    self._check_pipelines()

    def _check_pipelines(self) -> None:
        """A switch whose pipeline process ended stops (and exits with 1)."""
        assert self.pipelines is not None
        worker = self.pipelines.ended()
        if worker is not None:
            log.error("pipeline %d (process %d) ended with status %s; the switch stops",
                      worker.index, worker.proc.pid, worker.proc.returncode)
            self.stopping = True
            self.failed = True

    def close(self) -> None:
        """Stop serving and release everything; safe after a failed start."""
        if self.server is not None:
            self.server.stop(grace=0.5)
        if self.pipelines is not None:
            self.pipelines.stop()
        if self.control is not None:
            self.control.close()
        if self.ports is not None:
            self.ports.close()  # flushes and closes the pcap files
        if self.trace is not None:
            self.trace.close()
        if self._log_file is not None:
            self._log_file.close()
        if self.dataplane is not None:
            self.dataplane.close()


def run_switch(argv: Sequence[str]) -> int:
    """``ina switch ARGV``; returns the exit status."""
    try:
        options = parse_switch_args(argv)
    except HelpRequested as h:
        print(h, end="")
        return 0
    except OptionsError as e:
        print(f"ina switch: error: {e}\n(see 'ina switch --help')", file=sys.stderr)
        return 2
    logging.basicConfig(stream=sys.stderr, format="ina switch: %(levelname)s: %(message)s",
                        level=logging.INFO if options.tracing else logging.WARNING)
    process = SwitchProcess(options)
    signal.signal(signal.SIGTERM, process.request_stop)
    signal.signal(signal.SIGINT, process.request_stop)
    try:
        try:
            process.start()
        except StartupError as e:
            print(str(e) if e.verbatim else f"ina switch: error: {e}", file=sys.stderr)
            return 1
        print(process.ready_message(), file=sys.stderr, flush=True)
        process.run()
    finally:
        process.close()
    print(f"ina switch: device {options.device_id} stopped", file=sys.stderr, flush=True)
    return 1 if process.failed else 0


def main() -> None:
    """``ina-switch-grpc ARGS``: ``ina switch ARGS`` as one executable (BMV2_SWITCH_EXE)."""
    sys.exit(run_switch(sys.argv[1:]))
