"""Run an STF test against a v1model switch (the built-in one, or BMv2 through
``switch.stf.targets``), with the pass/fail rules of p4c's BMv2 runner
(``backends/bmv2/bmv2stf.py``).

Commands run in file order; ``packet`` injects a packet and records what comes out.
Outputs are checked per port, in order, against that port's ``expect`` lines (wherever
they appear in the file). As in p4c's runner, where each port named by a ``packet`` or
``expect`` line is a pcap-backed interface and every other port goes nowhere:

* on a port named by some ``packet`` or ``expect`` line, the packets that come out must
  be exactly the expected ones, in order (no ``expect`` means no packet);
* ``expect PORT`` without data accepts anything on that port (and overrides any other
  expectation for it);
* packets sent to a port no ``packet``/``expect`` line names are not checked; the report
  lists them in a note, and ``strict_ports`` makes them failures.

``wait`` additionally checks, at that point, that every packet expected by the ``expect``
lines seen so far has come out (p4c's runner, being asynchronous, ignores ``wait``).
A switch that runs on its own (BMv2) may send a packet after ``inject`` returned; such
late packets are collected (``drain``) before every check, waiting up to
``LATE_PATIENCE_S`` for expected packets that have not come out yet.
``register_read REG INDEX VALUE`` and ``check_counter`` are assertions; a failed assertion
is reported and the test goes on. A command the switch rejects ends the test.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from switch.engine.runtime import Exact, Lpm, Optional, Range, SwitchRuntimeError, Ternary
from switch.stf import commands as S
from switch.stf.compare import compare_packet, describe_mismatch, group_nibbles, packet_hex
from switch.stf.entries import EntryError, build_default, build_entry, resolve_name
from switch.stf.parse_stf import StfError, StfFile, parse_stf_file
from switch.stf.target import LoadError, TargetError, describe_crash

# How long to wait for expected packets that an asynchronous switch (BMv2) has not sent
# yet when the test checks its outputs.
LATE_PATIENCE_S = 2.0


@dataclass
class StfResult:
    passed: bool
    report: str
    packets_in: int
    packets_out: int
    stage: str = "run"  # where it ended: "stf" (syntax), "compile", "start" or "run"
    warnings: list[str] = field(default_factory=list)  # the compiler's warnings


class _CommandError(Exception):
    """The current command cannot be carried out; the test stops."""


@dataclass(frozen=True)
class _Output:
    data: bytes
    source_line: int  # the ``packet`` command that caused it


@dataclass
class _Port:
    expects: list[S.Expect] = field(default_factory=list)
    received: list[_Output] = field(default_factory=list)
    any_line: int | None = None  # line of an ``expect PORT`` without data
    compared: int = 0  # expectations compared with an output so far
    missing_reported: set[int] = field(default_factory=set)


_OPS: dict[str, Callable[[int, int], bool]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


class Multicast:
    """BMv2's PRE as ``simple_switch_CLI`` manages it: nodes (a replication id and a
    port set) get handles 0, 1, 2, ... (the lowest free one), groups list nodes in
    association order, and a group replicates to each node's ports in ascending port
    order."""

    def __init__(self) -> None:
        self.groups: dict[int, list[int]] = {}
        self.nodes: dict[int, tuple[int, tuple[int, ...]]] = {}

    def create_group(self, gid: int) -> None:
        if gid in self.groups:
            raise _CommandError(f"multicast group {gid} already exists")
        self.groups[gid] = []

    def destroy_group(self, gid: int) -> None:
        self._group(gid)
        del self.groups[gid]

    def create_node(self, rid: int, ports: Sequence[int]) -> int:
        handle = next(h for h in range(len(self.nodes) + 1) if h not in self.nodes)
        self.nodes[handle] = (rid, tuple(sorted(set(ports))))
        return handle

    def update_node(self, handle: int, ports: Sequence[int]) -> list[int]:
        rid, _ = self._node(handle)
        self.nodes[handle] = (rid, tuple(sorted(set(ports))))
        return [g for g, members in self.groups.items() if handle in members]

    def destroy_node(self, handle: int) -> list[int]:
        self._node(handle)
        del self.nodes[handle]
        touched = [g for g, members in self.groups.items() if handle in members]
        for g in touched:
            self.groups[g].remove(handle)
        return touched

    def associate(self, gid: int, handle: int) -> None:
        members = self._group(gid)
        self._node(handle)
        if handle in members:
            raise _CommandError(f"node {handle} is already in multicast group {gid}")
        members.append(handle)

    def dissociate(self, gid: int, handle: int) -> None:
        members = self._group(gid)
        if handle not in members:
            raise _CommandError(f"node {handle} is not in multicast group {gid}")
        members.remove(handle)

    def replicas(self, gid: int) -> list[tuple[int, int]]:
        """(port, rid) pairs."""
        out: list[tuple[int, int]] = []
        for handle in self._group(gid):
            rid, ports = self.nodes[handle]
            out.extend((port, rid) for port in ports)
        return out

    def _group(self, gid: int) -> list[int]:
        if gid not in self.groups:
            raise _CommandError(f"no multicast group {gid}")
        return self.groups[gid]

    def _node(self, handle: int) -> tuple[int, tuple[int, ...]]:
        if handle not in self.nodes:
            raise _CommandError(f"no multicast node with handle {handle}")
        return self.nodes[handle]


class StfRunner:
    """Runs parsed STF commands against a switch (``V1Switch`` or anything with its
    methods) for a compiled program."""

    def __init__(self, program: Any, switch: Any, filename: str, *, verbose: bool = False,
                 strict_ports: bool = False, trace: bool = False):
        self.program = program
        self.switch = switch
        self.filename = filename
        self.verbose = verbose or trace
        self.packet_trace = trace
        self.strict_ports = strict_ports
        self.failures: list[tuple[int, str]] = []  # (line, report text)
        self.notes: list[str] = []
        self.trace: list[str] = []
        self.ports: dict[int, _Port] = {}
        self.unmentioned: list[tuple[int, _Output]] = []
        self.multicast = Multicast()
        self.mirror_groups: dict[int, int] = {}  # clone session -> multicast group
        self.handles: dict[str, tuple[str, int]] = {}  # STF entry handle -> (table, handle)
        self.packet_lines: list[int] = []  # the line of each packet sent, in order
        self.packets_in = 0
        self.packets_out = 0
        self.stopped = False
        self._handlers: dict[type, Callable[[Any], None]] = {
            S.Packet: self._packet,
            S.Expect: self._expect,
            S.TableAdd: self._add,
            S.SetDefault: self._setdefault,
            S.RemoveAll: self._remove_all,
            S.McMgrpCreate: self._mc_mgrp_create,
            S.McMgrpDestroy: self._mc_mgrp_destroy,
            S.McNodeCreate: self._mc_node_create,
            S.McNodeUpdate: self._mc_node_update,
            S.McNodeDestroy: self._mc_node_destroy,
            S.McNodeAssociate: self._mc_node_associate,
            S.McNodeDissociate: self._mc_node_dissociate,
            S.MirroringAdd: self._mirroring_add,
            S.MirroringAddMc: self._mirroring_add_mc,
            S.MirroringDelete: self._mirroring_delete,
            S.MirroringGet: self._mirroring_get,
            S.RegisterRead: self._register_read,
            S.RegisterWrite: self._register_write,
            S.RegisterReset: self._register_reset,
            S.CounterRead: self._counter_read,
            S.CounterWrite: self._counter_write,
            S.CheckCounter: self._check_counter,
            S.MeterRates: self._meter_rates,
            S.MeterGetRates: self._meter_get_rates,
            S.Wait: self._wait,
            S.NoPacket: lambda cmd: None,
        }

    # ------------------------------------------------------------------ driver

    def run(self, commands: Sequence[S.Command]) -> StfResult:
        for cmd in commands:
            if isinstance(cmd, (S.Packet, S.Expect)):
                self.ports.setdefault(cmd.port, _Port())
        tracing = self.packet_trace and hasattr(self.switch, "set_trace")
        if tracing:
            self.switch.set_trace(lambda text: self.trace.append("      " + text))
        try:
            for cmd in commands:
                if not self._execute(cmd):
                    self.stopped = True
                    break
        finally:
            if tracing:
                self.switch.set_trace(None)
        if not self.stopped:
            self._check(final=True, line=0)
        return self._result()

    def _execute(self, cmd: S.Command) -> bool:
        try:
            self._handlers[type(cmd)](cmd)
        except (_CommandError, EntryError, SwitchRuntimeError, TargetError) as e:
            self._fail(cmd.line, f"{_command_word(cmd)}: {e}")
            return False
        except Exception as e:  # a crash in the switch: report it, do not propagate
            self._fail(cmd.line, f"{_command_word(cmd)}: the switch failed: {describe_crash(e)}")
            if self.verbose:
                self.trace.append(traceback.format_exc().rstrip())
            return False
        return True

    def _fail(self, line: int, message: str, details: Sequence[str] = ()) -> None:
        where = f"{self.filename}({line})" if line else self.filename
        text = f"{where}: error: {message}"
        if details:
            text += "\n" + "\n".join("    " + d for d in details)
        self.failures.append((line, text))

    def _log(self, line: int, message: str) -> None:
        if self.verbose:
            self.trace.append(f"{self.filename}({line}): {message}")

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        fn = getattr(self.switch, method, None)
        if fn is None:
            raise _CommandError(f"not supported by this switch (no {method})")
        return fn(*args, **kwargs)

    # ------------------------------------------------------------------ packets

    def _packet(self, cmd: S.Packet) -> None:
        self._log(cmd.line, f"packet {cmd.port} {packet_hex(cmd.data)}")
        outputs = self.switch.inject(cmd.port, cmd.data)
        self.packets_in += 1
        self.packet_lines.append(cmd.line)
        if self.verbose and not outputs:
            self.trace.append("    -> no output")
        for port, data in outputs:
            self._receive(port, bytes(data), cmd.line)

    def _receive(self, port: int, data: bytes, source_line: int, late: bool = False) -> None:
        out = _Output(data, source_line)
        self.packets_out += 1
        if self.verbose:
            when = f" (late, from the packet at line {source_line})" if late else ""
            self.trace.append(f"    -> port {port}{when}: {packet_hex(out.data)}")
        if port in self.ports:
            self.ports[port].received.append(out)
        else:
            self.unmentioned.append((port, out))

    def _collect_late(self) -> None:
        """Packets an asynchronous switch sent after ``inject`` returned; if expected
        packets are still missing, give them ``LATE_PATIENCE_S`` to come out."""
        drain = getattr(self.switch, "drain", None)
        if drain is None:
            return
        for patience in (0.0, LATE_PATIENCE_S):
            if patience and not self._missing():
                return
            for number, port, data in drain(patience):
                self._receive(port, bytes(data), self.packet_lines[number], late=True)

    def _missing(self) -> bool:
        return any(p.any_line is None and len(p.received) < len(p.expects)
                   for p in self.ports.values())

    def _expect(self, cmd: S.Expect) -> None:
        port = self.ports[cmd.port]
        if cmd.pattern is None:
            port.any_line = cmd.line
        else:
            port.expects.append(cmd)

    def _wait(self, cmd: S.Wait) -> None:
        self._check(final=False, line=cmd.line)

    def _check(self, final: bool, line: int) -> None:
        """Compare what has come out with what is expected; at ``wait`` (not final)
        only missing packets and wrong contents count, since more ``expect`` lines
        may follow."""
        self._collect_late()
        for number in sorted(self.ports):
            port = self.ports[number]
            if port.any_line is not None:
                continue
            self._compare_new(number, port)
            self._report_missing(number, port, final, line)
            if final:
                self._report_extra(number, port)
        if final:
            self._report_unmentioned()
            self._report_ignored_expects()

    def _compare_new(self, number: int, port: _Port) -> None:
        upto = min(len(port.expects), len(port.received))
        for i in range(port.compared, upto):
            exp, out = port.expects[i], port.received[i]
            assert exp.pattern is not None
            mismatch = compare_packet(exp.pattern, exp.exact_length, out.data)
            if mismatch is not None:
                head, lines = describe_mismatch(exp.pattern, exp.exact_length, out.data,
                                                mismatch)
                self._fail(exp.line, f"port {number}: packet #{i + 1} (from the packet at "
                                     f"line {out.source_line}) {head}", lines)
        port.compared = max(port.compared, upto)

    def _report_missing(self, number: int, port: _Port, final: bool, line: int) -> None:
        got = len(port.received)
        for i in range(got, len(port.expects)):
            if i in port.missing_reported:
                continue
            port.missing_reported.add(i)
            exp = port.expects[i]
            assert exp.pattern is not None
            shown = [f"expected: {group_nibbles(exp.pattern)}{' $' if exp.exact_length else ''}"]
            if final:
                self._fail(exp.line, f"port {number}: expected packet #{i + 1} did not come "
                                     f"out ({got} packet(s) on port {number})", shown)
            else:
                self._fail(line, f"wait: port {number}: packet #{i + 1} expected at line "
                                 f"{exp.line} has not come out", shown)

    def _report_extra(self, number: int, port: _Port) -> None:
        for i in range(len(port.expects), len(port.received)):
            out = port.received[i]
            self._fail(out.source_line,
                       f"port {number}: unexpected packet #{i + 1} (expected "
                       f"{len(port.expects)} packet(s) on port {number})",
                       [f"actual: {group_nibbles(packet_hex(out.data))}"])

    def _report_unmentioned(self) -> None:
        for port, out in self.unmentioned:
            text = (f"port {port}: packet from line {out.source_line}: "
                    f"{group_nibbles(packet_hex(out.data))}")
            if self.strict_ports:
                self._fail(out.source_line, f"unexpected packet on unchecked {text}")
            else:
                self.notes.append(f"note: not checked (no packet/expect line names the "
                                  f"port): {text}")

    def _report_ignored_expects(self) -> None:
        for number in sorted(self.ports):
            port = self.ports[number]
            if port.any_line is not None and port.expects:
                self.notes.append(
                    f"{self.filename}({port.any_line}): warning: 'expect {number}' without "
                    f"data accepts anything on port {number}; its other expect lines are "
                    f"not checked")

    # ------------------------------------------------------------------ tables

    def _add(self, cmd: S.TableAdd) -> None:
        entry = build_entry(self.program, cmd)
        handle = self.switch.table_add(entry.table, entry.keys(), entry.action, entry.args,
                                       priority=entry.priority)
        if cmd.handle is not None:
            self.handles[cmd.handle] = (entry.table, handle)
        keys = " ".join(f"{name}:{_show_match(v)}"
                        for name, v in zip(entry.key_names, entry.key_values, strict=True))
        prio = "" if entry.priority is None else f" priority {entry.priority}"
        self._log(cmd.line, f"add {entry.table}{prio} {keys} {_show_call(entry.action, entry.args)}"
                            f" -> handle {handle}")

    def _setdefault(self, cmd: S.SetDefault) -> None:
        default = build_default(self.program, cmd)
        self.switch.table_set_default(default.table, default.action, default.args)
        self._log(cmd.line, f"setdefault {default.table} "
                            f"{_show_call(default.action, default.args)}")

    def _remove_all(self, cmd: S.RemoveAll) -> None:
        for table in self.program.tables:
            self._call("table_clear", table)
        self.handles.clear()

    # ------------------------------------------------------------------ multicast, mirroring

    def _push_group(self, gid: int) -> None:
        replicas = self.multicast.replicas(gid)
        self.switch.mc_group_set(gid, replicas)
        for session, group in self.mirror_groups.items():
            if group == gid:
                self.switch.clone_session_set(session, replicas)

    def _mc_mgrp_create(self, cmd: S.McMgrpCreate) -> None:
        self.multicast.create_group(cmd.group)
        self._push_group(cmd.group)

    def _mc_mgrp_destroy(self, cmd: S.McMgrpDestroy) -> None:
        self.multicast.destroy_group(cmd.group)
        self.switch.mc_group_set(cmd.group, [])

    def _mc_node_create(self, cmd: S.McNodeCreate) -> None:
        handle = self.multicast.create_node(cmd.rid, cmd.ports)
        self._log(cmd.line, f"mc_node_create rid {cmd.rid} ports {list(cmd.ports)} "
                            f"-> node {handle}")

    def _mc_node_update(self, cmd: S.McNodeUpdate) -> None:
        for gid in self.multicast.update_node(cmd.node, cmd.ports):
            self._push_group(gid)

    def _mc_node_destroy(self, cmd: S.McNodeDestroy) -> None:
        for gid in self.multicast.destroy_node(cmd.node):
            self._push_group(gid)

    def _mc_node_associate(self, cmd: S.McNodeAssociate) -> None:
        self.multicast.associate(cmd.group, cmd.node)
        self._push_group(cmd.group)

    def _mc_node_dissociate(self, cmd: S.McNodeDissociate) -> None:
        self.multicast.dissociate(cmd.group, cmd.node)
        self._push_group(cmd.group)

    def _mirroring_add(self, cmd: S.MirroringAdd) -> None:
        self.mirror_groups.pop(cmd.session, None)
        self.switch.clone_session_set(cmd.session, [(cmd.port, 0)])

    def _mirroring_add_mc(self, cmd: S.MirroringAddMc) -> None:
        replicas = self.multicast.replicas(cmd.group)
        self.mirror_groups[cmd.session] = cmd.group
        self.switch.clone_session_set(cmd.session, replicas)

    def _mirroring_delete(self, cmd: S.MirroringDelete) -> None:
        self.mirror_groups.pop(cmd.session, None)
        if hasattr(self.switch, "clone_session_delete"):
            self.switch.clone_session_delete(cmd.session)
        else:
            self.switch.clone_session_set(cmd.session, [])

    def _mirroring_get(self, cmd: S.MirroringGet) -> None:
        getter = getattr(self.switch, "clone_session_get", None)
        value = getter(cmd.session) if getter is not None else "(not readable)"
        self._log(cmd.line, f"mirroring_get {cmd.session}: {value}")

    # ------------------------------------------------------------------ registers, counters

    def _register_read(self, cmd: S.RegisterRead) -> None:
        value = self.switch.register_read(cmd.register, cmd.index)
        self._log(cmd.line, f"register_read {cmd.register}[{cmd.index}] = {value:#x}")
        if cmd.expected is not None and value != cmd.expected:
            self._fail(cmd.line, f"register_read {cmd.register}[{cmd.index}]: expected "
                                 f"{cmd.expected:#x} ({cmd.expected}), got {value:#x} ({value})")

    def _register_write(self, cmd: S.RegisterWrite) -> None:
        self.switch.register_write(cmd.register, cmd.index, cmd.value)

    def _register_reset(self, cmd: S.RegisterReset) -> None:
        self.switch.register_reset(cmd.register)

    def _counter_read(self, cmd: S.CounterRead) -> None:
        packets, nbytes = self.switch.counter_read(cmd.counter, cmd.index)
        self._log(cmd.line, f"counter_read {cmd.counter}[{cmd.index}] = {packets} packets, "
                            f"{nbytes} bytes")

    def _counter_write(self, cmd: S.CounterWrite) -> None:
        self._call("counter_write", cmd.counter, cmd.index, cmd.packets, cmd.bytes)

    def _check_counter(self, cmd: S.CheckCounter) -> None:
        if isinstance(cmd.index, str):
            if cmd.index not in self.handles:
                raise _CommandError(f"no entry was added with handle '{cmd.index}'")
            table, handle = self.handles[cmd.index]
            packets, nbytes = self._call("direct_counter_read", table, handle)
            what = f"{cmd.counter}(entry {cmd.index})"
        else:
            packets, nbytes = self.switch.counter_read(cmd.counter, cmd.index)
            what = f"{cmd.counter}[{cmd.index}]"
        kind = cmd.kind or "packets"
        actual = packets if kind == "packets" else nbytes
        self._log(cmd.line, f"check_counter {what}: {packets} packets, {nbytes} bytes")
        if not _OPS[cmd.op](actual, cmd.value):
            self._fail(cmd.line, f"check_counter {what}: expected {kind} {cmd.op} {cmd.value}, "
                                 f"got {actual}")

    def _meter_rates(self, cmd: S.MeterRates) -> None:
        rates = list(cmd.rates)
        if cmd.index is not None:
            self._call("meter_set_rates", cmd.meter, cmd.index, rates)
            return
        for index in range(self._meter_size(cmd.meter)):
            self._call("meter_set_rates", cmd.meter, index, rates)

    def _meter_size(self, name: str) -> int:
        """The size of an indexed meter array, from the program's extern instances."""
        externs = getattr(self.program, "externs", {})
        meters = [fqn for fqn, inst in externs.items() if inst.extern == "meter"]
        fqn = resolve_name(name, meters, "meter")
        size = externs[fqn].args[0] if externs[fqn].args else None
        if not isinstance(size, int):
            raise _CommandError(f"the size of meter {fqn} is unknown")
        return size

    def _meter_get_rates(self, cmd: S.MeterGetRates) -> None:
        rates = self._call("meter_get_rates", cmd.meter, cmd.index)
        self._log(cmd.line, f"meter_get_rates {cmd.meter}[{cmd.index}] = {rates}")

    # ------------------------------------------------------------------ result

    def _result(self) -> StfResult:
        passed = not self.failures
        lines: list[str] = []
        if self.verbose:
            lines.extend(self.trace)
        lines.extend(text for _, text in sorted(self.failures, key=lambda f: f[0]))
        lines.extend(self.notes)
        counts = f"{self.packets_in} packet(s) in, {self.packets_out} out"
        if passed:
            lines.append(f"PASS {self.filename}: {counts}")
        else:
            stopped = " (stopped at the failing command)" if self.stopped else ""
            lines.append(f"FAIL {self.filename}: {len(self.failures)} error(s){stopped}; {counts}")
        return StfResult(passed, "\n".join(lines), self.packets_in, self.packets_out)


def _show_call(action: str, args: Sequence[int]) -> str:
    return f"{action}({', '.join(f'{a:#x}' for a in args)})"


def _show_match(value: Any) -> str:
    if isinstance(value, Exact):
        return f"{value.value:#x}"
    if isinstance(value, Lpm):
        return f"{value.value:#x}/{value.prefix_len}"
    if isinstance(value, Ternary):
        return f"{value.value:#x}&&&{value.mask:#x}"
    if isinstance(value, Range):
        return f"{value.low:#x}->{value.high:#x}"
    if isinstance(value, Optional):
        return "*" if value.value is None else f"{value.value:#x}"
    return repr(value)


def _command_word(cmd: S.Command) -> str:
    if isinstance(cmd, S.MeterRates):
        return "meter_set_rates" if cmd.index is not None else "meter_array_set_rates"
    names = {S.TableAdd: "add", S.SetDefault: "setdefault", S.RemoveAll: "remove"}
    if type(cmd) in names:
        return names[type(cmd)]
    name = type(cmd).__name__
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


def run_program(program: Any, stf: StfFile, *, switch: Any = None, verbose: bool = False,
                strict_ports: bool = False, seed: int = 0, trace: bool = False) -> StfResult:
    """Run parsed STF commands on ``switch`` (a fresh ``V1Switch`` for ``program`` by
    default). ``verbose`` puts every command and output in the report; ``trace`` also
    the switch's trace of each packet through the pipeline."""
    if switch is None:
        from switch.stf.builtin_target import start_switch

        try:
            switch = start_switch(program, seed)
        except LoadError as e:
            return _load_failure(stf.filename, e)
    runner = StfRunner(program, switch, stf.filename, verbose=verbose,
                       strict_ports=strict_ports, trace=trace)
    return runner.run(stf.commands)


def _load_failure(filename: str, e: LoadError) -> StfResult:
    if e.stage == "compile":
        return StfResult(False, e.report, 0, 0, stage="compile")
    report = f"{filename}: {e.report}\nFAIL {filename}: 1 error(s); 0 packet(s) in, 0 out"
    return StfResult(False, report, 0, 0, stage="start")


def run_stf(program_path: str | Path, stf_path: str | Path, include_dirs: Sequence[str | Path] = (),
            defines: Mapping[str, str | None] | None = None, *, target: str = "builtin",
            verbose: bool = False, strict_ports: bool = False, seed: int = 0,
            trace: bool = False) -> StfResult:
    """Compile ``program_path`` for ``target`` (see ``switch.stf.targets``), then run the
    STF test ``stf_path`` on a fresh switch of that target. STF syntax errors, compile
    errors and a switch that does not start give a failed result whose report holds the
    diagnostics (``stage`` says which)."""
    from switch.stf.targets import get_target

    try:
        stf = parse_stf_file(stf_path)
    except StfError as e:
        return StfResult(False, str(e), 0, 0, stage="stf")
    try:
        loaded = get_target(target).load(Path(program_path), include_dirs, dict(defines or {}),
                                         seed=seed, trace=trace)
    except LoadError as e:
        return _load_failure(stf.filename, e)
    try:
        runner = StfRunner(loaded.program, loaded.switch, stf.filename, verbose=verbose,
                           strict_ports=strict_ports, trace=trace)
        result = runner.run(stf.commands)
    finally:
        loaded.close()
    result.warnings = list(loaded.warnings)
    return result
