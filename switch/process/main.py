"""``ina switch``: the built-in P4 switch as one process, a drop-in for simple_switch_grpc.

Start-up, in an order that fails fast on cheap mistakes: options; the gRPC address must
be free; the ports' interfaces are opened; the control socket is bound; the program is
compiled (or loaded) and committed; then the P4Runtime server starts listening, which
is the moment the switch is ready (Mininet node classes poll the gRPC port). Every
start-up failure prints one clear message (compile errors as p4c prints them) and
exits with 1; bad options exit with 2.

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
        self.control = ControlServer(o.control_socket, SwitchCommands(
            o, self.ports, self.dataplane, self._program_name))
        try:
            self.control.open()
        except ControlError as e:
            raise StartupError(str(e)) from None
        program = None
        if o.program is not None:
            program = load_program(o.program, o.include_dirs, dict(o.defines))
        self._start_server(program)

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

        return V1Switch(program, seed=self.options.seed or 0, cpu_port=self.options.cpu_port,
                        trace=self.trace)

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
        return (f"ina switch: device {o.device_id} ready: P4Runtime on {o.grpc_address}, "
                f"ports {ports}, CPU port {cpu}, program {program}, "
                f"control socket {o.control_socket}")

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

    def close(self) -> None:
        """Stop serving and release everything; safe after a failed start."""
        if self.server is not None:
            self.server.stop(grace=0.5)
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
    return 0


def main() -> None:
    """``ina-switch-grpc ARGS``: ``ina switch ARGS`` as one executable (BMV2_SWITCH_EXE)."""
    sys.exit(run_switch(sys.argv[1:]))
