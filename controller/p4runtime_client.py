"""A typed P4Runtime client for one switch.

Every client owns its gRPC channel, its StreamChannel and its P4Info, so a controller
can drive many switches from one process (one client per switch)::

    with P4RuntimeClient("127.0.0.1:9559", device_id=1, name="s1") as s1:
        s1.set_pipeline("build/forward.p4info.txtpb", "build/forward.json")
        s1.insert(TableEntry("ipv4_lpm", {"hdr.ipv4.dst_addr": "10.0.1.0/24"},
                             "forward", {"port": 1, "dst_mac": "00:00:00:00:01:01"}))
        for entry in s1.read_table("ipv4_lpm"):
            ...

``connect()`` (or ``with``) opens the channel, sends the arbitration update with the
election id and waits for the answer; the client must become the primary controller
unless ``require_primary=False``. Names follow ``controller.p4info_schema`` and values
``controller.values``. A Write whose updates fail raises ``WriteError`` listing each
failed update with the entity described by names and the switch's own message.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import grpc
from google.rpc import code_pb2, status_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4data_pb2, p4runtime_pb2, p4runtime_pb2_grpc

from controller.entities import (
    CloneSession,
    MulticastGroup,
    TableEntry,
    Writable,
    decode_pre_entry,
    decode_table_entry,
    describe_entity,
    encode_entity,
    encode_table_entry,
)
from controller.errors import (
    ArbitrationError,
    EncodeError,
    NoPipelineError,
    RpcError,
    UpdateFailure,
    WriteError,
)
from controller.p4info_schema import P4InfoSchema, load_p4info
from controller.stream import StreamChannel
from controller.values import Value, decode_int, decode_uint, encode_int, encode_uint, to_uint

UpdateKind = Literal["INSERT", "MODIFY", "DELETE"]
ElectionId = tuple[int, int]
PipelineAction = p4runtime_pb2.SetForwardingPipelineConfigRequest.Action
DETAILS_KEY = "grpc-status-details-bin"
MAX_MESSAGE = 256 * 1024 * 1024
# The per-update errors of a failed batch come back as trailing metadata, which gRPC
# limits to 16 KiB by default: a batch of a few hundred failed updates exceeds that, and
# the call then fails with RESOURCE_EXHAUSTED instead of saying what went wrong.
MAX_METADATA = 64 * 1024 * 1024

RECONNECT_OPTIONS = [("grpc.use_local_subchannel_pool", 1),
                     ("grpc.initial_reconnect_backoff_ms", 100),
                     ("grpc.max_reconnect_backoff_ms", 500)]
"""gRPC shares a connection's retry backoff between all the channels of a process to
the same address, and backs off up to two minutes: a client that tries again to reach a
switch that restarted would wait that long. Each channel keeps its own, short one."""


@dataclass(frozen=True)
class CounterValue:
    packets: int
    bytes: int


@dataclass(frozen=True)
class PacketIn:
    """A packet the switch sent to the controller; ``metadata`` by P4Info name."""

    payload: bytes
    metadata: Mapping[str, int]


def _election(value: int | ElectionId) -> ElectionId:
    if isinstance(value, int):
        return (value >> 64, value & ((1 << 64) - 1))
    return value


def _code_name(number: int) -> str:
    try:
        return code_pb2.Code.Name(number)
    except ValueError:
        return f"code {number}"


class P4RuntimeClient:
    """A P4Runtime client for one device (see the module docstring)."""

    def __init__(self, address: str, device_id: int = 1,
                 election_id: int | ElectionId = (0, 1), *, name: str = "",
                 timeout: float = 10.0, require_primary: bool = True):
        self.address = address
        self.device_id = device_id
        self.election_id = _election(election_id)
        self.name = name or address
        self.timeout = timeout
        self.require_primary = require_primary
        self._channel: grpc.Channel | None = None
        self._stub: p4runtime_pb2_grpc.P4RuntimeStub | None = None
        self._stream: StreamChannel | None = None
        self._schema: P4InfoSchema | None = None

    def __repr__(self) -> str:
        return f"P4RuntimeClient({self.name!r}, {self.address}, device {self.device_id})"

    @property
    def _where(self) -> str:
        label = self.name if self.name == self.address else f"{self.name} ({self.address})"
        return f"switch {label} device {self.device_id}"

    # ---------------------------------------------------------------- lifecycle

    def connect(self, timeout: float | None = None) -> P4RuntimeClient:
        """Open the channel and the StreamChannel and arbitrate (see the module
        docstring); ``timeout`` bounds the wait for the switch to answer."""
        wait = self.timeout if timeout is None else timeout
        self._channel = grpc.insecure_channel(
            self.address, options=[("grpc.max_receive_message_length", MAX_MESSAGE),
                                   ("grpc.max_send_message_length", MAX_MESSAGE),
                                   ("grpc.max_metadata_size", MAX_METADATA),
                                   ("grpc.absolute_max_metadata_size", MAX_METADATA),
                                   *RECONNECT_OPTIONS])
        try:
            grpc.channel_ready_future(self._channel).result(timeout=wait)
        except grpc.FutureTimeoutError:
            self.close()
            raise RpcError(self._where, "UNAVAILABLE",
                           f"no P4Runtime server answered within {wait:g} s") from None
        self._stub = p4runtime_pb2_grpc.P4RuntimeStub(self._channel)
        self._stream = StreamChannel(self._stub)
        try:
            self.arbitrate(wait)
        except ArbitrationError:
            self.close()
            raise
        return self

    def arbitrate(self, timeout: float | None = None) -> bool:
        """Send the arbitration update; True if this client is the primary."""
        stream = self._require_stream()
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = self.device_id
        req.arbitration.election_id.high, req.arbitration.election_id.low = self.election_id
        stream.send(req)
        answer = self._arbitration_answer(stream, self.timeout if timeout is None else timeout)
        primary = answer.status.code == code_pb2.OK
        if not primary and self.require_primary:
            eid = answer.election_id
            raise ArbitrationError(
                f"{self._where}: not the primary controller with election id "
                f"{self.election_id} ({_code_name(answer.status.code)}: "
                f"{answer.status.message or 'no message'}; the switch's election id is "
                f"({eid.high}, {eid.low}))")
        return primary

    def _arbitration_answer(self, stream: StreamChannel, timeout: float
                            ) -> p4runtime_pb2.MasterArbitrationUpdate:
        """The switch's answer; fails early when the switch ends the stream instead."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return stream.arbitration.get(timeout=0.05)
            except queue.Empty:
                pass
            if stream.done.is_set() and stream.arbitration.empty():
                ended = stream.ended
                why = f"{ended.code().name}: {ended.details()}" if ended else "stream closed"
                raise ArbitrationError(f"{self._where}: the switch refused the "
                                       f"arbitration update: {why}")
            if time.monotonic() > deadline:
                raise ArbitrationError(f"{self._where}: no answer to the arbitration "
                                       f"update within {timeout:g} s")

    @property
    def stream_ended(self) -> bool:
        """Whether the StreamChannel is gone (never opened, closed, or ended by the
        switch: a switch whose process died ends it at once)."""
        return self._stream is None or self._stream.done.is_set()

    @property
    def is_primary(self) -> bool:
        return self._stream is not None and self._stream.primary

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        if self._channel is not None:
            self._channel.close()
            self._channel = None
        self._stub = None

    def __enter__(self) -> P4RuntimeClient:
        if self._channel is None:
            self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _require_stub(self) -> p4runtime_pb2_grpc.P4RuntimeStub:
        if self._stub is None:
            raise RpcError(self._where, "FAILED_PRECONDITION", "the client is not connected")
        return self._stub

    def _require_stream(self) -> StreamChannel:
        if self._stream is None:
            raise RpcError(self._where, "FAILED_PRECONDITION", "the client is not connected")
        return self._stream

    def _rpc_error(self, what: str, e: grpc.RpcError) -> RpcError:
        return RpcError(f"{self._where}: {what}", e.code().name, e.details() or "")

    # ----------------------------------------------------------------- pipeline

    @property
    def schema(self) -> P4InfoSchema:
        if self._schema is None:
            raise NoPipelineError(f"{self._where}: no P4Info yet; call set_pipeline(), "
                                  "fetch_pipeline() or use_p4info() first")
        return self._schema

    def use_p4info(self, p4info: p4info_pb2.P4Info | str | Path) -> None:
        """Name things with this P4Info without sending it (the switch runs it already)."""
        info = p4info if isinstance(p4info, p4info_pb2.P4Info) else load_p4info(p4info)
        self._schema = P4InfoSchema(info)

    def set_pipeline(self, p4info: p4info_pb2.P4Info | str | Path,
                     device_config: bytes | str | Path,
                     action: str = "VERIFY_AND_COMMIT", cookie: int | None = None) -> None:
        """SetForwardingPipelineConfig with a P4Info (message or file) and the device
        config (bytes or a file: for the built-in switch the ``ina p4c -o`` artifact)."""
        info = p4info if isinstance(p4info, p4info_pb2.P4Info) else load_p4info(p4info)
        config = (device_config if isinstance(device_config, bytes)
                  else Path(device_config).read_bytes())
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=self.device_id, action=PipelineAction.Value(action))
        req.election_id.high, req.election_id.low = self.election_id
        req.config.p4info.CopyFrom(info)
        req.config.p4_device_config = config
        if cookie is not None:
            req.config.cookie.cookie = cookie
        try:
            self._require_stub().SetForwardingPipelineConfig(req, timeout=max(self.timeout, 60))
        except grpc.RpcError as e:
            raise self._rpc_error("SetForwardingPipelineConfig", e) from None
        self._schema = P4InfoSchema(info)

    def fetch_pipeline(self) -> p4info_pb2.P4Info:
        """The P4Info the switch runs (GetForwardingPipelineConfig); names use it."""
        req = p4runtime_pb2.GetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            response_type=p4runtime_pb2.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE)
        try:
            resp = self._require_stub().GetForwardingPipelineConfig(req, timeout=self.timeout)
        except grpc.RpcError as e:
            raise self._rpc_error("GetForwardingPipelineConfig", e) from None
        if not resp.config.HasField("p4info"):
            raise NoPipelineError(f"{self._where}: the switch has no pipeline yet")
        self._schema = P4InfoSchema(resp.config.p4info)
        return resp.config.p4info

    # -------------------------------------------------------------------- write

    def write(self, updates: Iterable[tuple[UpdateKind, Writable | p4runtime_pb2.Entity]]
              ) -> None:
        """One Write batch; raises ``WriteError`` naming each failed update."""
        req = p4runtime_pb2.WriteRequest(device_id=self.device_id)
        req.election_id.high, req.election_id.low = self.election_id
        for kind, item in updates:
            ent = item if isinstance(item, p4runtime_pb2.Entity) else encode_entity(
                self._schema_for(item), item)
            req.updates.add(type=p4runtime_pb2.Update.Type.Value(kind), entity=ent)
        if not req.updates:
            return
        try:
            self._require_stub().Write(req, timeout=self.timeout)
        except grpc.RpcError as e:
            raise self._write_error(req, e) from None

    def _schema_for(self, item: Writable) -> P4InfoSchema:
        # PRE entries need no P4Info
        return self.schema if isinstance(item, TableEntry) else (
            self._schema or P4InfoSchema(p4info_pb2.P4Info()))

    def insert(self, *items: Writable) -> None:
        self.write(("INSERT", x) for x in items)

    def modify(self, *items: Writable) -> None:
        self.write(("MODIFY", x) for x in items)

    def delete(self, *items: Writable) -> None:
        self.write(("DELETE", x) for x in items)

    def set_default_action(self, table: str, action: str,
                           params: Mapping[str, Value] | None = None) -> None:
        self.modify(TableEntry(table, action=action, params=params or {}, is_default=True))

    def _write_error(self, req: p4runtime_pb2.WriteRequest, e: grpc.RpcError
                     ) -> RpcError | WriteError:
        details = _batch_details(e)
        if details is None:
            return self._rpc_error(f"Write of {len(req.updates)} update(s)", e)
        failures = []
        for i, (update, err) in enumerate(zip(req.updates, details, strict=False)):
            if err.canonical_code == code_pb2.OK:
                continue
            kind = p4runtime_pb2.Update.Type.Name(update.type)
            failures.append(UpdateFailure(i, _code_name(err.canonical_code), err.message,
                                          f"{kind} {describe_entity(self._schema, update.entity)}"))
        return WriteError(f"{self._where}: Write", len(req.updates), failures)

    # --------------------------------------------------------------------- read

    def read(self, *entities: p4runtime_pb2.Entity) -> list[p4runtime_pb2.Entity]:
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id, entities=entities)
        out: list[p4runtime_pb2.Entity] = []
        try:
            for resp in self._require_stub().Read(req, timeout=self.timeout):
                out.extend(resp.entities)
        except grpc.RpcError as e:
            what = "; ".join(describe_entity(self._schema, x) for x in entities)
            raise self._rpc_error(f"Read of {what}", e) from None
        return out

    def read_table(self, table: str | None = None,
                   match: Mapping[str, object] | None = None) -> list[TableEntry]:
        """The entries of one table (all tables when ``table`` is None); ``match``
        narrows the read to the entry with exactly this match."""
        if table is None:
            ent = p4runtime_pb2.Entity()
            ent.table_entry.SetInParent()
        else:
            ent = encode_table_entry(self.schema, TableEntry(table, match or {}),
                                     for_read=True)
        return [decode_table_entry(self.schema, e.table_entry) for e in self.read(ent)]

    def read_default_action(self, table: str) -> TableEntry:
        ent = encode_table_entry(self.schema, TableEntry(table, is_default=True),
                                 for_read=True)
        [got] = self.read(ent)
        return decode_table_entry(self.schema, got.table_entry)

    def read_multicast_groups(self, group_id: int = 0) -> list[MulticastGroup]:
        """One multicast group, or all of them with ``group_id`` 0."""
        ent = p4runtime_pb2.Entity()
        ent.packet_replication_engine_entry.multicast_group_entry.multicast_group_id = \
            group_id
        return [decode_pre_entry(e.packet_replication_engine_entry)  # type: ignore[misc]
                for e in self.read(ent)]

    def read_clone_sessions(self, session_id: int = 0) -> list[CloneSession]:
        ent = p4runtime_pb2.Entity()
        ent.packet_replication_engine_entry.clone_session_entry.session_id = session_id
        return [decode_pre_entry(e.packet_replication_engine_entry)  # type: ignore[misc]
                for e in self.read(ent)]

    def read_counter(self, name: str, index: int | None = None) -> dict[int, CounterValue]:
        """Cells of an indexed counter: all of them, or the one at ``index``."""
        counter = self.schema.counter(name)
        ent = p4runtime_pb2.Entity()
        ent.counter_entry.counter_id = counter.preamble.id
        if index is not None:
            ent.counter_entry.index.index = index
        return {e.counter_entry.index.index: CounterValue(
                    e.counter_entry.data.packet_count, e.counter_entry.data.byte_count)
                for e in self.read(ent)}

    def read_direct_counter(self, entry: TableEntry) -> CounterValue:
        """The direct counter cell of one table entry."""
        ent = p4runtime_pb2.Entity()
        te = encode_table_entry(self.schema, entry, for_read=True).table_entry
        ent.direct_counter_entry.table_entry.CopyFrom(te)
        [got] = self.read(ent)
        data = got.direct_counter_entry.data
        return CounterValue(data.packet_count, data.byte_count)

    def read_register(self, name: str, index: int | None = None) -> dict[int, int]:
        """Cells of a register (bit<W>, int<W> or bool): all, or the one at ``index``."""
        register = self.schema.register(name)
        ent = p4runtime_pb2.Entity()
        ent.register_entry.register_id = register.preamble.id
        if index is not None:
            ent.register_entry.index.index = index
        signed = register.type_spec.bitstring.WhichOneof("type_spec") == "int"
        return {e.register_entry.index.index: _p4data_int(e.register_entry.data, signed,
                                                          register.preamble.name)
                for e in self.read(ent)}

    def write_register(self, name: str, index: int, value: int) -> None:
        register = self.schema.register(name)
        spec = register.type_spec
        ent = p4runtime_pb2.Entity()
        ent.register_entry.register_id = register.preamble.id
        ent.register_entry.index.index = index
        kind = spec.bitstring.WhichOneof("type_spec")
        if spec.WhichOneof("type_spec") == "bool":
            ent.register_entry.data.bool = bool(value)
        elif kind == "int":
            width = spec.bitstring.int.bitwidth
            if not -(1 << (width - 1)) <= value < (1 << (width - 1)):
                raise EncodeError(f"register {register.preamble.name}: value {value} does "
                                  f"not fit in int<{width}>")
            ent.register_entry.data.bitstring = encode_int(value)
        else:
            width = spec.bitstring.bit.bitwidth if kind == "bit" else 0
            number = to_uint(value, width, f"register {register.preamble.name}")
            ent.register_entry.data.bitstring = encode_uint(number)
        self.write([("MODIFY", ent)])

    # ------------------------------------------------------------------ packets

    def packet_out(self, payload: bytes, **metadata: Value) -> None:
        """Send a PacketOut; ``metadata`` are the ``packet_out`` controller header
        fields by name (e.g. ``egress_port=2``)."""
        cpm = self.schema.controller_metadata("packet_out")
        req = p4runtime_pb2.StreamMessageRequest()
        req.packet.payload = payload
        if metadata and cpm is None:
            raise EncodeError(f"{self._where}: the program has no "
                              "@controller_header(\"packet_out\") header for the metadata "
                              f"{', '.join(metadata)}")
        for mname, value in metadata.items():
            info = next((m for m in cpm.metadata if m.name == mname), None)  # type: ignore[union-attr]
            if info is None:
                known = ", ".join(m.name for m in cpm.metadata)  # type: ignore[union-attr]
                raise EncodeError(f"packet_out has no metadata {mname!r}; it has: {known}")
            number = to_uint(value, info.bitwidth, f"packet_out metadata {mname}")
            req.packet.metadata.add(metadata_id=info.id, value=encode_uint(number))
        self._require_stream().send(req)

    def packet_in(self, timeout: float | None = None) -> PacketIn | None:
        """The next PacketIn, or None if none came within ``timeout`` seconds."""
        try:
            msg = self._require_stream().packets.get(timeout=timeout)
        except queue.Empty:
            return None
        cpm = self._schema.controller_metadata("packet_in") if self._schema else None
        names = {m.id: m.name for m in cpm.metadata} if cpm is not None else {}
        return PacketIn(msg.payload, {names.get(m.metadata_id, str(m.metadata_id)):
                                      decode_uint(m.value) for m in msg.metadata})

    def stream_error(self, timeout: float | None = None) -> p4runtime_pb2.StreamError | None:
        """The next StreamError the switch reported (e.g. a rejected PacketOut)."""
        try:
            return self._require_stream().errors.get(timeout=timeout)
        except queue.Empty:
            return None



def _batch_details(e: grpc.RpcError) -> Sequence[p4runtime_pb2.Error] | None:
    """The per-update errors of a failed batch (None if the failure is not per update)."""
    for key, value in e.trailing_metadata() or ():  # type: ignore[attr-defined]
        if key != DETAILS_KEY:
            continue
        status = status_pb2.Status()
        status.ParseFromString(value)
        out = []
        for detail in status.details:
            err = p4runtime_pb2.Error()
            if not detail.Unpack(err):
                return None
            out.append(err)
        return out or None
    return None


def _p4data_int(data: p4data_pb2.P4Data, signed: bool, what: str) -> int:
    kind = data.WhichOneof("data")
    if kind == "bool":
        return int(data.bool)
    if kind == "bitstring":
        return decode_int(data.bitstring) if signed else decode_uint(data.bitstring)
    raise EncodeError(f"register {what}: cannot read a {kind} value as a number")
