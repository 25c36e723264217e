"""The STF runner's switch on BMv2: the ``V1Switch`` methods the runner calls, carried
out on a running ``simple_switch_grpc``.

* Packets go through ``switch.stf.bmv2_packets``: ``inject`` returns once BMv2 is idle
  again, with the outputs of that packet; an output that BMv2 sends later than that (it
  should not happen) is kept for ``drain``.
* Tables, default actions, multicast groups, clone sessions, counters and meters go
  through P4Runtime (``controller.P4RuntimeClient``, by P4Info names).
* Registers go through BMv2's Thrift CLI, since BMv2's P4Runtime server does not
  implement them. Values are returned as the program sees them (signed for ``int<W>``
  registers), as ``V1Switch`` returns them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from p4.v1 import p4runtime_pb2

from controller import values as cv
from controller.entities import CloneSession, MulticastGroup, TableEntry
from controller.errors import P4RuntimeClientError
from controller.p4info_schema import find_by_name
from controller.p4runtime_client import P4RuntimeClient
from switch.engine.runtime import Exact, Lpm, MatchValue, Optional, Range, Ternary
from switch.stf.bmv2_cli import CliError, ThriftCli
from switch.stf.bmv2_packets import BMv2Packets
from switch.stf.bmv2_process import BMv2Process
from switch.stf.entries import EntryError, resolve_name
from switch.stf.p4info_model import P4InfoProgram, RegisterModel
from switch.stf.target import TargetError

_NO_ANSWER = re.compile("")
_REGISTER_VALUE = re.compile(r".*\]=\s*(\d+)", re.DOTALL)


class BMv2Error(TargetError):
    """BMv2 refused a command; the message says which and why."""


def _convert_match(value: MatchValue) -> cv.MatchValue:
    if isinstance(value, Exact):
        return cv.Exact(value.value)
    if isinstance(value, Lpm):
        return cv.Lpm(value.value, value.prefix_len)
    if isinstance(value, Ternary):
        return cv.Ternary(value.value, value.mask)
    if isinstance(value, Range):
        return cv.Range(value.low, value.high)
    assert isinstance(value, Optional)
    return cv.Optional(value.value)


def p4runtime_entry(program: P4InfoProgram, table: str,
                    keys: Mapping[str, MatchValue] | Sequence[MatchValue], action: str,
                    args: Sequence[int], priority: int | None) -> TableEntry:
    """The P4Runtime entry for an entry as the runner gives it to ``table_add``: keys by
    the model's names (or in key order), the action's arguments in parameter order."""
    model = program.tables[table]
    if model.indirect:
        raise BMv2Error(f"table {table} uses an action profile: its entries cannot be "
                        "added from an STF file on BMv2")
    if isinstance(keys, Mapping):
        by_name = {k.name: k for k in model.keys}
        named = [(by_name[name], value) for name, value in keys.items()]
    else:
        named = list(zip(model.keys, keys, strict=True))
    match = {k.name: _convert_match(v) for k, v in named}
    params = dict(zip([n for n, _ in program.actions[action].params], args, strict=True))
    # P4Runtime needs a priority > 0 where BMv2 ranks entries; STF priorities (larger
    # wins, from 0) keep their order one up.
    ranked = any(k.match_kind in ("ternary", "range", "optional") for k in model.keys)
    return TableEntry(table, match, action, params,
                      priority=(priority or 0) + 1 if ranked else 0)


class BMv2Switch:
    """See the module docstring. ``program`` is the P4Info model the runner uses too."""

    def __init__(self, process: BMv2Process, client: P4RuntimeClient,
                 program: P4InfoProgram):
        self.process = process
        self.client = client
        self.program = program
        self.packets = BMv2Packets(process)
        self.cli = ThriftCli(process.thrift_port)
        self._late: list[tuple[int, int, bytes]] = []
        self._entries: dict[str, dict[int, TableEntry]] = {}  # table -> handle -> entry
        self._next_handle: dict[str, int] = {}  # handles count per table, from 0
        self._groups: set[int] = set()
        self._sessions: set[int] = set()
        self._trace: Callable[[str], None] | None = None
        self._log_offset = 0

    # ------------------------------------------------------------------ packets

    def inject(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        """Send one packet into ``port``; the packets it caused, in the order BMv2 sent
        them, once the switch is idle again."""
        number = self.packets.send(port, data)
        self.packets.settle()
        outputs: list[tuple[int, bytes]] = []
        for n, out_port, out_data in self.packets.take():
            if n == number:
                outputs.append((out_port, out_data))
            else:
                self._late.append((n, out_port, out_data))
        self._send_trace()
        return outputs

    def drain(self, patience: float = 0.0) -> list[tuple[int, int, bytes]]:
        """Outputs that came out after ``inject`` returned for their packet, as (packet
        number counted from 0, port, data); waits ``patience`` seconds for more first."""
        self.packets.wait(patience)
        self.packets.settle()
        late, self._late = self._late + self.packets.take(), []
        return late

    # ------------------------------------------------------------------ trace

    def set_trace(self, trace: Callable[[str], None] | None) -> None:
        """Pass BMv2's log lines of each packet to ``trace`` (needs a process started
        with ``debug_log``)."""
        self._trace = trace
        if trace is not None:
            self._log_offset = self._log_size()

    def _log_size(self) -> int:
        try:
            return self.process.log_file.stat().st_size
        except OSError:
            return 0

    def _send_trace(self) -> None:
        if self._trace is None:
            return
        try:
            with self.process.log_file.open("rb") as f:
                f.seek(self._log_offset)
                data = f.read()
        except OSError:
            return
        self._log_offset += len(data)
        for line in data.decode(errors="replace").splitlines():
            _, sep, rest = line.partition("] [cxt ")
            if sep:
                line = rest.split("] ", 1)[-1]
            if line.strip():
                self._trace(line)

    # ------------------------------------------------------------------ P4Runtime

    def _p4rt(self, what: str, fn: Callable[[], object]) -> object:
        try:
            return fn()
        except P4RuntimeClientError as e:
            raise BMv2Error(f"{what}: {e}") from None

    def table_add(self, table: str, keys: Mapping[str, MatchValue] | Sequence[MatchValue],
                  action: str, args: Sequence[int] = (), priority: int | None = None) -> int:
        entry = p4runtime_entry(self.program, table, keys, action, args, priority)
        self._p4rt(f"table {table}", lambda: self.client.insert(entry))
        handle = self._next_handle.get(table, 0)
        self._next_handle[table] = handle + 1
        self._entries.setdefault(table, {})[handle] = entry
        return handle

    def table_set_default(self, table: str, action: str,
                          args: Sequence[int] | Mapping[str, int] = ()) -> None:
        if isinstance(args, Mapping):
            params = dict(args)
        else:
            names = [n for n, _ in self.program.actions[action].params]
            params = dict(zip(names, args, strict=True))
        self._p4rt(f"default action of {table}",
                   lambda: self.client.set_default_action(table, action, params))

    def table_clear(self, table: str) -> None:
        if self.program.tables[table].const:
            return
        entries = self._p4rt(f"table {table}", lambda: self.client.read_table(table))
        assert isinstance(entries, list)
        if entries:
            self._p4rt(f"table {table}", lambda: self.client.delete(*entries))
        self._entries.pop(table, None)

    def mc_group_set(self, gid: int, replicas: Sequence[tuple[int, int]]) -> None:
        group = MulticastGroup(gid, list(replicas))
        if gid in self._groups:
            self._p4rt(f"multicast group {gid}", lambda: self.client.modify(group))
        else:
            self._p4rt(f"multicast group {gid}", lambda: self.client.insert(group))
            self._groups.add(gid)

    def clone_session_set(self, session: int, replicas: Sequence[tuple[int, int]],
                          truncate: int | None = None) -> None:
        clone = CloneSession(session, list(replicas), packet_length_bytes=truncate or 0)
        if session in self._sessions:
            self._p4rt(f"clone session {session}", lambda: self.client.modify(clone))
        else:
            self._p4rt(f"clone session {session}", lambda: self.client.insert(clone))
            self._sessions.add(session)

    def clone_session_delete(self, session: int) -> None:
        if session in self._sessions:
            self._p4rt(f"clone session {session}",
                       lambda: self.client.delete(CloneSession(session)))
            self._sessions.discard(session)

    def counter_read(self, name: str, index: int) -> tuple[int, int]:
        cells = self._p4rt(f"counter {name}", lambda: self.client.read_counter(name, index))
        assert isinstance(cells, dict)
        cell = cells.get(index)
        if cell is None:
            raise BMv2Error(f"counter {name} has no index {index}")
        return cell.packets, cell.bytes

    def counter_write(self, name: str, index: int, packets: int, nbytes: int) -> None:
        ent = p4runtime_pb2.Entity()
        info = self._p4rt(f"counter {name}", lambda: self.client.schema.counter(name))
        ent.counter_entry.counter_id = info.preamble.id  # type: ignore[attr-defined]
        ent.counter_entry.index.index = index
        ent.counter_entry.data.packet_count = packets
        ent.counter_entry.data.byte_count = nbytes
        self._p4rt(f"counter {name}", lambda: self.client.write([("MODIFY", ent)]))

    def direct_counter_read(self, table: str, handle: int) -> tuple[int, int]:
        entry = self._entries.get(table, {}).get(handle)
        if entry is None:
            raise BMv2Error(f"table {table} has no entry with handle {handle}")
        cell = self._p4rt(f"direct counter of {table}",
                          lambda: self.client.read_direct_counter(entry))
        return cell.packets, cell.bytes  # type: ignore[attr-defined]

    def meter_set_rates(self, name: str, index: int, rates: list[tuple[float, int]]) -> None:
        """Rates as BMv2's CLI takes them, per microsecond; P4Runtime's are per second."""
        info = self._p4rt(f"meter {name}", lambda: find_by_name(
            self.client.schema.info.meters, name, "meter", "the P4Info"))
        ent = p4runtime_pb2.Entity()
        ent.meter_entry.meter_id = info.preamble.id  # type: ignore[attr-defined]
        ent.meter_entry.index.index = index
        if rates:
            if len(rates) != 2:
                raise BMv2Error(f"meter {name}: BMv2's meters take two rates "
                                f"(committed and peak), got {len(rates)}")
            (cir, cburst), (pir, pburst) = rates
            config = ent.meter_entry.config
            config.cir, config.cburst = round(cir * 1e6), cburst
            config.pir, config.pburst = round(pir * 1e6), pburst
        self._p4rt(f"meter {name}", lambda: self.client.write([("MODIFY", ent)]))

    # ------------------------------------------------------------------ registers

    def _register(self, name: str) -> RegisterModel:
        try:
            fqn = resolve_name(name, self.program.registers, "register")
        except EntryError as e:
            raise BMv2Error(str(e)) from None
        return self.program.registers[fqn]

    def _cli(self, command: str, answer: re.Pattern[str] = _NO_ANSWER) -> re.Match[str]:
        """Run a CLI command whose whole answer must match ``answer``; anything else
        (``Error: ...``, ``Invalid register operation ...``) is the error's message."""
        try:
            text = self.cli.run(command)
        except CliError as e:
            raise BMv2Error(str(e)) from None
        m = answer.fullmatch(text)
        if m is None:
            raise BMv2Error(f"simple_switch_CLI: {command}: {text or 'no answer'}")
        return m

    def register_read(self, name: str, index: int) -> int:
        reg = self._register(name)
        m = self._cli(f"register_read {reg.fqn} {index}", _REGISTER_VALUE)
        number = int(m.group(1))
        if reg.signed and reg.width and number >> (reg.width - 1):
            number -= 1 << reg.width
        return number

    def register_write(self, name: str, index: int, value: int) -> None:
        reg = self._register(name)
        if value < 0 and reg.width:
            value += 1 << reg.width
        self._cli(f"register_write {reg.fqn} {index} {value}")

    def register_reset(self, name: str) -> None:
        reg = self._register(name)
        self._cli(f"register_reset {reg.fqn}")

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        self.cli.close()
        self.client.close()
        self.packets.close()
