"""A minimal P4Runtime client: enough to drive ``ina switch`` in its benchmark and tests.

One stream channel (arbitration as primary, PacketIns into a queue), the pipeline RPCs,
Write and Read, and table entries built from P4 *names*. Values are encoded as
P4Runtime's canonical bytestrings. The project's controller has its own, complete
client; this one exists so the switch can be exercised without it.
"""

from __future__ import annotations

import queue
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import grpc
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

#: A match value: ("exact", v), ("lpm", v, prefix_len), ("ternary", v, mask).
Match = tuple[Any, ...]


def wait_for_port(address: str, timeout: float = 30.0) -> bool:
    """Poll until something accepts TCP connections on ``host:port``."""
    host, _, port = address.rpartition(":")
    host = host.strip("[]")
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with socket.create_connection((host, int(port)), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def encode(value: int) -> bytes:
    """The canonical bytestring of a non-negative integer (no leading zero bytes)."""
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def _by_name(items: Any, name: str) -> Any:
    for x in items:
        if x.preamble.name == name or x.preamble.name.endswith("." + name):
            return x
    raise KeyError(f"no {name!r} in the P4Info")


def table_entry(info: p4info_pb2.P4Info, table: str, match: Mapping[str, Match],
                action: str, params: Mapping[str, int] | None = None,
                priority: int = 0) -> p4runtime_pb2.Entity:
    """An Entity holding a table entry, addressed by names."""
    t = _by_name(info.tables, table)
    a = _by_name(info.actions, action)
    entity = p4runtime_pb2.Entity()
    te = entity.table_entry
    te.table_id = t.preamble.id
    te.priority = priority
    fields = {f.name: f for f in t.match_fields}
    for name, spec in match.items():
        f = fields[name]
        fm = te.match.add(field_id=f.id)
        kind = spec[0]
        if kind == "exact":
            fm.exact.value = encode(spec[1])
        elif kind == "lpm":
            value, plen = spec[1], spec[2]
            mask = ((1 << plen) - 1) << (f.bitwidth - plen)
            fm.lpm.value = encode(value & mask)
            fm.lpm.prefix_len = plen
        elif kind == "ternary":
            fm.ternary.value = encode(spec[1] & spec[2])
            fm.ternary.mask = encode(spec[2])
        else:
            raise ValueError(f"unsupported match kind {kind!r}")
    te.action.action.action_id = a.preamble.id
    pids = {p.name: p.id for p in a.params}
    for name, value in (params or {}).items():
        te.action.action.params.add(param_id=pids[name], value=encode(value))
    return entity


class P4RuntimeClient:
    """The primary controller of one device (election id ``(high, low)``)."""

    def __init__(self, address: str, device_id: int = 0,
                 election_id: tuple[int, int] = (0, 1), timeout: float = 10.0):
        self.device_id = device_id
        self.election_id = election_id
        self.timeout = timeout
        self.channel = grpc.insecure_channel(address)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.packet_ins: queue.Queue[p4runtime_pb2.PacketIn] = queue.Queue()
        self._arbitration: queue.Queue[Any] = queue.Queue()
        self._out: queue.Queue[p4runtime_pb2.StreamMessageRequest | None] = queue.Queue()
        self._stream = self.stub.StreamChannel(self._requests())
        self._reader = threading.Thread(target=self._read, daemon=True, name="p4rt-client")
        self._reader.start()
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = device_id
        req.arbitration.election_id.high, req.arbitration.election_id.low = election_id
        self._out.put(req)
        try:
            reply = self._arbitration.get(timeout=timeout)
        except queue.Empty:
            self.close()
            raise TimeoutError(f"no arbitration answer from {address}") from None
        if isinstance(reply, grpc.RpcError):
            self.close()
            raise reply

    def _requests(self) -> Iterator[p4runtime_pb2.StreamMessageRequest]:
        while True:
            msg = self._out.get()
            if msg is None:
                return
            yield msg

    def _read(self) -> None:
        try:
            for msg in self._stream:
                kind = msg.WhichOneof("update")
                if kind == "arbitration":
                    self._arbitration.put(msg)
                elif kind == "packet":
                    self.packet_ins.put(msg.packet)
        except grpc.RpcError as e:
            self._arbitration.put(e)

    def _election(self, msg: Any) -> None:
        msg.election_id.high, msg.election_id.low = self.election_id

    def get_p4info(self) -> p4info_pb2.P4Info:
        req = p4runtime_pb2.GetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            response_type=p4runtime_pb2.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE)
        return self.stub.GetForwardingPipelineConfig(req, timeout=self.timeout).config.p4info

    def set_pipeline(self, p4info: p4info_pb2.P4Info | None, device_config: bytes) -> None:
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
        self._election(req)
        if p4info is not None:
            req.config.p4info.CopyFrom(p4info)
        req.config.p4_device_config = device_config
        self.stub.SetForwardingPipelineConfig(req, timeout=60)

    def write(self, *entities: p4runtime_pb2.Entity,
              kind: int = p4runtime_pb2.Update.INSERT) -> None:
        req = p4runtime_pb2.WriteRequest(device_id=self.device_id)
        self._election(req)
        for e in entities:
            req.updates.add(type=kind, entity=e)
        self.stub.Write(req, timeout=self.timeout)

    def read(self, *entities: p4runtime_pb2.Entity) -> list[p4runtime_pb2.Entity]:
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id, entities=entities)
        return [e for resp in self.stub.Read(req, timeout=self.timeout) for e in resp.entities]

    def packet_out(self, payload: bytes, metadata: Mapping[int, int]) -> None:
        req = p4runtime_pb2.StreamMessageRequest()
        req.packet.payload = payload
        for mid, value in metadata.items():
            req.packet.metadata.add(metadata_id=mid, value=encode(value))
        self._out.put(req)

    def close(self) -> None:
        self._out.put(None)
        self.channel.close()

    def __enter__(self) -> P4RuntimeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
