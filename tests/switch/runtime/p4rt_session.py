"""The machinery of the P4Runtime differential test against BMv2: a ``Session`` with one
switch, the registry of the script's steps, and the ``Answer`` each step gets.

A step sends requests through a session and returns an ``Answer``: the gRPC status
code, the per-update codes of a failed batch, and, where the answer carries data (reads,
PacketIns, digests, arbitration updates), that data in a form that does not depend on
the target (one line per item, sorted where the order is free). Requests are addressed
by P4 names resolved against the target's own P4Info, so a step sends the same request
to both switches.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import grpc
from google.protobuf import text_format
from google.protobuf.message import Message
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2
from p4rt_helpers import Client, P4Info, drain, update
from p4rt_targets import Target

Entity = p4runtime_pb2.Entity
SetAction = p4runtime_pb2.SetForwardingPipelineConfigRequest
GetType = p4runtime_pb2.GetForwardingPipelineConfigRequest
CPU_PORT = 255
PRIMARY_ELECTION_ID = (0, 10)
WAIT_S = 5.0  # for an answer that must come (an arbitration update, the marker packet)


@dataclass(frozen=True)
class Answer:
    """What a switch answered to one step."""

    code: str = "OK"
    updates: tuple[str, ...] = ()  # the per-update codes when a batch failed
    data: tuple[str, ...] = ()  # the answer's content, target-independent

    def __str__(self) -> str:
        text = self.code + (f" {list(self.updates)}" if self.updates else "")
        return text + "".join(f"\n      {line}" for line in self.data)

    def plus(self, *data: str) -> Answer:
        return Answer(self.code, self.updates, self.data + data)


def code_name(number: int) -> str:
    return str(code_pb2.Code.Name(number))


class Session:
    """One target's connection: the primary controller and the other clients."""

    def __init__(self, target: Target):
        self.target = target
        self.names = P4Info(target.p4info)
        self.clients: list[Client] = []
        self.primary = self.client(PRIMARY_ELECTION_ID)

    def client(self, election_id: tuple[int, int] | None, arbitrate: bool = True) -> Client:
        """A new client with its own stream; it arbitrates with ``election_id`` unless
        told not to (then ``election_id`` is only what its requests carry)."""
        c = Client(self.target.address, election_id=None, arbitrate=False,
                   device_id=self.target.device_id)
        self.clients.append(c)
        if arbitrate:
            c.arbitrate(election_id)
        c.election_id = election_id
        return c

    @property
    def backup(self) -> Client:
        """The first backup: the client that asked with election id 0,5."""
        return self.clients[1]

    def close(self) -> None:
        for c in self.clients:
            c.close()

    # ids from names, in the target's P4Info
    def table(self, name: str) -> int:
        return self.names.table_id(name)

    def action(self, name: str) -> int:
        return self.names.action_id(name)

    def field(self, table: str, name: str) -> int:
        for f in self.names.table(table).match_fields:
            if f.name == name:
                return int(f.id)
        raise KeyError(f"{table}.{name}")

    def metadata_id(self, header: str, name: str) -> int:
        for h in self.target.p4info.controller_packet_metadata:
            if h.preamble.name == header:
                for m in h.metadata:
                    if m.name == name:
                        return int(m.id)
        raise KeyError(f"{header}.{name}")

    def profile(self, name: str) -> int:
        return int(P4Info._find(self.target.p4info.action_profiles, name).preamble.id)


# ------------------------------------------------------------------ the step registry

Step = Callable[[Session], Answer]
Build = Callable[[Session], Entity | Sequence[Entity]]
STEPS: dict[str, Step] = {}


def register(name: str, fn: Step) -> None:
    assert name not in STEPS, name
    STEPS[name] = fn


def step(fn: Step) -> Step:
    """Register ``fn`` as the next step of the script, under its name."""
    register(fn.__name__, fn)
    return fn


def _entities(made: Entity | Sequence[Entity]) -> list[Entity]:
    return [made] if isinstance(made, Entity) else list(made)


def writes(kind: str, **builders: Build) -> None:
    """Steps that each write one batch: an update of ``kind`` for each entity built."""
    for name, build in builders.items():
        def run(s: Session, build: Build = build) -> Answer:
            return write(s, *(update(kind, e) for e in _entities(build(s))))
        register(name, run)


def refused_inserts(**builders: Build) -> None:
    """Steps that each INSERT an entity a correct switch refuses; one the switch takes
    anyway is deleted again, so that the later steps start from the same state."""
    for name, build in builders.items():
        def run(s: Session, build: Build = build) -> Answer:
            ents = _entities(build(s))
            answer = write(s, *(update("INSERT", e) for e in ents))
            if answer.code == "OK":
                write(s, *(update("DELETE", e) for e in ents))
            return answer
        register(name, run)


def reads(**builders: Build) -> None:
    """Steps that each send one Read of the entities built."""
    for name, build in builders.items():
        def run(s: Session, build: Build = build) -> Answer:
            return read(s, *_entities(build(s)))
        register(name, run)


def run_script(target: Target) -> dict[str, Answer]:
    """Every step's answer from ``target``, in order."""
    session = Session(target)
    try:
        return {name: fn(session) for name, fn in STEPS.items()}
    finally:
        session.close()


# ------------------------------------------------------------------ unary RPCs

def canonical(msg: Message) -> str:
    """One line of text; replicas sorted, as the spec compares repeated fields as sets."""
    if isinstance(msg, Entity) and msg.HasField("packet_replication_engine_entry"):
        msg = Entity.FromString(msg.SerializeToString())
        pre = msg.packet_replication_engine_entry
        entry = getattr(pre, str(pre.WhichOneof("type")))
        replicas = sorted(entry.replicas, key=lambda r: r.SerializeToString())
        del entry.replicas[:]
        entry.replicas.extend(replicas)
    return text_format.MessageToString(msg, as_one_line=True)


def batch_codes(e: grpc.RpcError) -> tuple[str, ...]:
    """The per-update (per-entity) codes in a failed batch's trailing status details."""
    for key, value in e.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status()
            status.ParseFromString(value)
            codes = []
            for detail in status.details:
                err = p4runtime_pb2.Error()
                detail.Unpack(err)
                codes.append(code_name(err.canonical_code))
            return tuple(codes)
    return ()


def answer_of(call: Callable[[], object]) -> Answer:
    """Run one RPC: its status code and per-update codes."""
    try:
        call()
    except grpc.RpcError as e:
        return Answer(e.code().name, batch_codes(e))
    return Answer()


def write(s: Session, *updates: p4runtime_pb2.Update, client: Client | None = None,
          device_id: int | None = None, **options: object) -> Answer:
    c = client or s.primary
    req = p4runtime_pb2.WriteRequest(device_id=c.device_id if device_id is None else device_id,
                                     updates=updates)
    if c.election_id is not None:
        req.election_id.high, req.election_id.low = c.election_id
    for name, value in options.items():
        setattr(req, name, value)
    return answer_of(lambda: c.stub.Write(req, timeout=10))


def read(s: Session, *entities: Entity, client: Client | None = None,
         device_id: int | None = None, keep: Callable[[Entity], bool] = lambda e: True
         ) -> Answer:
    """A Read; the data are the entities read (those ``keep`` accepts), sorted."""
    c = client or s.primary
    req = p4runtime_pb2.ReadRequest(device_id=c.device_id if device_id is None else device_id,
                                    entities=entities)
    got: list[Entity] = []
    try:
        for resp in c.stub.Read(req, timeout=10):
            got.extend(resp.entities)
    except grpc.RpcError as e:
        return Answer(e.code().name, batch_codes(e))
    return Answer(data=tuple(sorted(canonical(e) for e in got if keep(e))))


def set_pipeline(s: Session, action: int, *, client: Client | None = None,
                 p4info: bool = True, config: bytes | None = None, cookie: int | None = None,
                 device_id: int | None = None) -> Answer:
    """SetForwardingPipelineConfig with the target's own P4Info and device config (or
    ``config``; b"" for none)."""
    c = client or s.primary
    req = SetAction(device_id=c.device_id if device_id is None else device_id, action=action)
    if c.election_id is not None:
        req.election_id.high, req.election_id.low = c.election_id
    if p4info:
        req.config.p4info.CopyFrom(s.target.p4info)
    device_config = s.target.device_config if config is None else config
    if device_config:
        req.config.p4_device_config = device_config
    if cookie is not None:
        req.config.cookie.cookie = cookie
    return answer_of(lambda: c.stub.SetForwardingPipelineConfig(req, timeout=30))


def get_pipeline(s: Session, response_type: int, device_id: int | None = None) -> Answer:
    """The data say which parts came back: the P4Info and the device config (and whether
    each is the one sent), the cookie."""
    req = GetType(device_id=s.primary.device_id if device_id is None else device_id,
                  response_type=response_type)
    try:
        cfg = s.primary.stub.GetForwardingPipelineConfig(req, timeout=10).config
    except grpc.RpcError as e:
        return Answer(e.code().name)
    parts = []
    if cfg.HasField("p4info"):
        parts.append("p4info " + ("as sent" if cfg.p4info == s.target.p4info else "other"))
    if cfg.p4_device_config:
        parts.append("device config " + ("as sent" if cfg.p4_device_config ==
                                         s.target.device_config else "other"))
    if cfg.HasField("cookie"):
        parts.append(f"cookie {cfg.cookie.cookie}")
    return Answer(data=tuple(parts))


# ------------------------------------------------------------------ the stream

def arbitration_text(msg: p4runtime_pb2.StreamMessageResponse) -> str:
    a = msg.arbitration
    return (f"election_id {a.election_id.high},{a.election_id.low} "
            f"{code_name(a.status.code)}")


def arbitrate(c: Client, election_id: tuple[int, int] | None, device_id: int | None = None
              ) -> str:
    """Send a MasterArbitrationUpdate; the answer on the stream, or how the stream ended."""
    req = p4runtime_pb2.StreamMessageRequest()
    req.arbitration.device_id = c.device_id if device_id is None else device_id
    if election_id is not None:
        req.arbitration.election_id.high, req.arbitration.election_id.low = election_id
    c.send(req)
    c.election_id = election_id
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline and not c.stream_done.is_set():
        try:
            return arbitration_text(c.arbitration.get(timeout=0.05))
        except queue.Empty:
            pass
    c.stream_done.wait(1)
    if c.stream_status is not None:
        return f"stream ended {c.stream_status.code().name}"
    return "no answer"


def notifications(c: Client) -> str:
    """The arbitration updates ``c`` received (waiting for the first: every step that
    calls this expects one)."""
    out = []
    try:
        out.append(arbitration_text(c.arbitration.get(timeout=WAIT_S)))
    except queue.Empty:
        pass
    return " ".join(out + [arbitration_text(m) for m in drain(c.arbitration)])


def stream_errors(c: Client, wait_s: float = 0.0) -> list[str]:
    """The stream errors ``c`` received (waiting up to ``wait_s`` for the first)."""
    out = []
    try:
        out.append(c.errors.get(timeout=wait_s) if wait_s else c.errors.get_nowait())
    except queue.Empty:
        pass
    out += drain(c.errors)
    return [f"stream error {code_name(m.error.canonical_code)}" for m in out]


MARKER = bytes.fromhex("fefefefefefe0000000000fefefe") + b"marker"


def packet_out(s: Session, egress_port: int, frame: bytes, client: Client | None = None
               ) -> None:
    """A PacketOut with the program's packet_out header (egress_port; 0 sends the frame
    through the tables)."""
    req = p4runtime_pb2.StreamMessageRequest()
    req.packet.payload = frame
    req.packet.metadata.add(metadata_id=s.metadata_id("packet_out", "egress_port"),
                            value=egress_port.to_bytes(2, "big"))
    req.packet.metadata.add(metadata_id=s.metadata_id("packet_out", "_pad"), value=b"\x00")
    (client or s.primary).send(req)


def packet_in_text(msg: p4runtime_pb2.StreamMessageResponse) -> str:
    p = msg.packet
    meta = " ".join(f"{m.metadata_id}={int.from_bytes(m.value, 'big')}"
                    for m in sorted(p.metadata, key=lambda m: m.metadata_id))
    return f"packet_in [{meta}] {p.payload.hex()}"


def packets_in(s: Session, send: Callable[[], None]) -> Answer:
    """Call ``send`` (packet-outs), then send the marker straight back to the CPU; the
    data are the PacketIns that came before the marker, sorted. Both switches handle
    packets from the CPU port in order, so everything ``send`` caused is in by then."""
    drain(s.primary.packets)
    send()
    packet_out(s, CPU_PORT, MARKER)
    got: list[str] = []
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        try:
            msg = s.primary.packets.get(timeout=0.05)
        except queue.Empty:
            continue
        if msg.packet.payload == MARKER:
            return Answer(data=tuple(sorted(got)))
        got.append(packet_in_text(msg))
    return Answer("NO MARKER", data=tuple(sorted(got)))


def through(s: Session, frame: bytes, egress_port: int = 0, client: Client | None = None
            ) -> Answer:
    """The PacketIns one packet-out of ``frame`` causes."""
    return packets_in(s, lambda: packet_out(s, egress_port, frame, client))


def digests(s: Session, wait_s: float) -> Answer:
    """The digest lists the primary received (waiting ``wait_s`` for the first), without
    list ids and timestamps, which differ from target to target; each is acknowledged."""
    try:
        msgs = [s.primary.digests.get(timeout=wait_s)]
    except queue.Empty:
        return Answer(data=("no digest",))
    time.sleep(0.2)
    msgs += drain(s.primary.digests)
    out = []
    for m in msgs:
        d = m.digest
        out.append(f"digest {d.digest_id}: " + " | ".join(canonical(x) for x in d.data))
        ack = p4runtime_pb2.StreamMessageRequest()
        ack.digest_ack.digest_id, ack.digest_ack.list_id = d.digest_id, d.list_id
        s.primary.send(ack)
    return Answer(data=tuple(out))
