"""Helpers for the P4Runtime server tests: a test program, a small gRPC client that
speaks P4Runtime the way controllers do, and the batch error decoding clients use."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable

import grpc
from google.rpc import code_pb2, status_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

CPU_PORT = 255
DEVICE_ID = 1

# A v1model program with one of everything P4Runtime can control on the built-in switch.
PROGRAM = r"""
#include <core.p4>
#include <v1model.p4>

const bit<9> CPU_PORT = 255;

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> _pad;
}

@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    @padding bit<7> _pad;
}

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> etype;
}

struct learn_t {
    bit<48> src;
    bit<9>  port;
}

struct headers_t {
    packet_out_t packet_out;
    packet_in_t  packet_in;
    ethernet_t   ethernet;
}

struct meta_t {
    learn_t learn;
    bit<8>  color;
    bit<8>  special;
}

parser TestParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    value_set<bit<16>>(4) special_types;

    state start {
        transition select(sm.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        pkt.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etype) {
            special_types: mark_special;
            default: accept;
        }
    }
    state mark_special {
        meta.special = 1;
        transition accept;
    }
}

control TestVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control TestIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(16) reg32;
    register<int<16>>(4) sreg;
    counter(8, CounterType.packets_and_bytes) port_counter;
    meter(4, MeterType.bytes) port_meter;
    direct_counter(CounterType.packets_and_bytes) fwd_hits;
    direct_meter<bit<8>>(MeterType.packets) acl_meter;

    action drop() {
        mark_to_drop(sm);
    }
    action forward(bit<9> port) {
        sm.egress_spec = port;
    }
    action to_cpu() {
        sm.egress_spec = CPU_PORT;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = sm.ingress_port;
    }
    action set_mcast(bit<16> grp) {
        sm.mcast_grp = grp;
    }
    action learn() {
        meta.learn.src = hdr.ethernet.src;
        meta.learn.port = sm.ingress_port;
        digest<learn_t>(1, meta.learn);
    }
    action count_port() {
        port_counter.count((bit<32>)sm.ingress_port);
    }
    action acl_mark() {
        acl_meter.read(meta.color);
    }

    table fwd {
        key = {
            hdr.ethernet.dst: exact;
        }
        actions = {
            forward;
            to_cpu;
            set_mcast;
            drop;
            NoAction;
        }
        counters = fwd_hits;
        default_action = NoAction();
        size = 4;
    }
    table routes {
        key = {
            hdr.ethernet.dst: lpm;
        }
        actions = {
            forward;
            to_cpu;
            set_mcast;
            @defaultonly drop;
            NoAction;
        }
        default_action = NoAction();
    }
    table acl {
        key = {
            sm.ingress_port: ternary;
            hdr.ethernet.etype: range;
            hdr.ethernet.src: optional;
        }
        actions = {
            acl_mark;
            @tableonly drop;
            NoAction;
        }
        meters = acl_meter;
        const default_action = NoAction();
    }
    table smac {
        key = {
            hdr.ethernet.src: exact;
        }
        actions = {
            learn;
            NoAction;
        }
        default_action = learn();
        support_timeout = true;
    }
    table consts {
        key = {
            hdr.ethernet.etype: exact;
        }
        actions = {
            drop;
            NoAction;
        }
        const entries = {
            0x0806: drop();
        }
    }
    table stats {
        actions = {
            count_port;
            NoAction;
        }
        default_action = NoAction();
    }
    action_selector(HashAlgorithm.crc16, 32w16, 32w16) sel;
    table ecmp {
        key = { hdr.ethernet.dst: exact; hdr.ethernet.src: selector; }
        actions = { forward; NoAction; }
        implementation = sel;
    }

    apply {
        if (hdr.ethernet.etype == 0x9999) {
            ecmp.apply();
            exit;
        }
        if (hdr.packet_out.isValid()) {
            sm.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            exit;
        }
        stats.apply();
        smac.apply();
        if (!fwd.apply().hit) {
            routes.apply();
        }
        acl.apply();
        consts.apply();
        if (meta.special == 1) {
            reg32.write(0, 1);
        }
    }
}

control TestEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control TestCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control TestDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.packet_in);
        pkt.emit(hdr.ethernet);
    }
}

V1Switch(TestParser(), TestVerify(), TestIngress(), TestEgress(), TestCompute(),
         TestDeparser()) main;
"""


def eth(dst: int, src: int = 0x0000000000AA, etype: int = 0x1234, payload: bytes = b"hi"
        ) -> bytes:
    return dst.to_bytes(6, "big") + src.to_bytes(6, "big") + etype.to_bytes(2, "big") + payload


class P4Info:
    """Name-based lookups in a P4Info message."""

    def __init__(self, info: p4info_pb2.P4Info):
        self.info = info

    @staticmethod
    def _find(items: Iterable, name: str):  # type: ignore[no-untyped-def]
        for x in items:
            if x.preamble.name == name or x.preamble.name.endswith("." + name):
                return x
        raise KeyError(name)

    def table(self, name: str) -> p4info_pb2.Table:
        return self._find(self.info.tables, name)

    def table_id(self, name: str) -> int:
        return self.table(name).preamble.id

    def action_id(self, name: str) -> int:
        return self._find(self.info.actions, name).preamble.id

    def counter_id(self, name: str) -> int:
        return self._find(self.info.counters, name).preamble.id

    def meter_id(self, name: str) -> int:
        return self._find(self.info.meters, name).preamble.id

    def register_id(self, name: str) -> int:
        return self._find(self.info.registers, name).preamble.id

    def digest_id(self, name: str) -> int:
        return self._find(self.info.digests, name).preamble.id

    def value_set_id(self, name: str) -> int:
        return self._find(self.info.value_sets, name).preamble.id


def batch_errors(e: grpc.RpcError) -> list[tuple[int, str]]:
    """(canonical code, message) per update, decoded from the trailing status details as
    P4Runtime clients decode them."""
    assert e.code() == grpc.StatusCode.UNKNOWN, e
    for key, value in e.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status()
            status.ParseFromString(value)
            out = []
            for detail in status.details:
                err = p4runtime_pb2.Error()
                assert detail.Unpack(err)
                out.append((err.canonical_code, err.message))
            return out
    raise AssertionError("no grpc-status-details-bin in the trailing metadata")


OK = code_pb2.OK


class Client:
    """A P4Runtime client with one StreamChannel (arbitration, packets, digests)."""

    def __init__(self, address: str, election_id: tuple[int, int] | None = (0, 1),
                 device_id: int = DEVICE_ID, arbitrate: bool = True):
        self.device_id = device_id
        self.election_id = election_id
        self.channel = grpc.insecure_channel(address)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self._out: queue.Queue = queue.Queue()
        self.arbitration: queue.Queue = queue.Queue()
        self.packets: queue.Queue = queue.Queue()
        self.digests: queue.Queue = queue.Queue()
        self.errors: queue.Queue = queue.Queue()
        self.stream_status: grpc.RpcError | None = None
        self.stream_done = threading.Event()
        self._stream = self.stub.StreamChannel(self._requests())
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if arbitrate:
            self.arbitrate(election_id)

    def _requests(self):  # type: ignore[no-untyped-def]
        while True:
            msg = self._out.get()
            if msg is None:
                return
            yield msg

    def _read(self) -> None:
        try:
            for msg in self._stream:
                kind = msg.WhichOneof("update")
                {"arbitration": self.arbitration, "packet": self.packets,
                 "digest": self.digests, "error": self.errors}.get(
                    kind, self.errors).put(msg)
        except grpc.RpcError as e:
            self.stream_status = e
        finally:
            self.stream_done.set()

    def arbitrate(self, election_id: tuple[int, int] | None, device_id: int | None = None,
                  role: str = "") -> p4runtime_pb2.StreamMessageResponse:
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = self.device_id if device_id is None else device_id
        if election_id is not None:
            req.arbitration.election_id.high, req.arbitration.election_id.low = election_id
        if role:
            req.arbitration.role.name = role
        self.election_id = election_id
        self._out.put(req)
        return self.arbitration.get(timeout=5)

    def send(self, req: p4runtime_pb2.StreamMessageRequest) -> None:
        self._out.put(req)

    def packet_out(self, payload: bytes, **metadata: int) -> None:
        req = p4runtime_pb2.StreamMessageRequest()
        req.packet.payload = payload
        for mid, value in metadata.items():
            req.packet.metadata.add(metadata_id=int(mid.lstrip("m")),
                                    value=value.to_bytes(max(1, (value.bit_length() + 7) // 8),
                                                         "big"))
        self._out.put(req)

    def close(self) -> None:
        self._out.put(None)
        self.channel.close()

    # ------------------------------------------------------------------ unary RPCs

    def set_pipeline(self, p4info: p4info_pb2.P4Info | None, device_config: bytes,
                     action: int = p4runtime_pb2.SetForwardingPipelineConfigRequest
                     .VERIFY_AND_COMMIT, cookie: int | None = None) -> None:
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=self.device_id,
                                                               action=action)
        if self.election_id is not None:
            req.election_id.high, req.election_id.low = self.election_id
        if p4info is not None:
            req.config.p4info.CopyFrom(p4info)
        if device_config:
            req.config.p4_device_config = device_config
        if cookie is not None:
            req.config.cookie.cookie = cookie
        self.stub.SetForwardingPipelineConfig(req, timeout=30)

    def write(self, *updates: p4runtime_pb2.Update, atomicity: int = 0) -> None:
        req = p4runtime_pb2.WriteRequest(device_id=self.device_id, atomicity=atomicity)
        if self.election_id is not None:
            req.election_id.high, req.election_id.low = self.election_id
        req.updates.extend(updates)
        self.stub.Write(req, timeout=10)

    def read(self, *entities: p4runtime_pb2.Entity) -> list[p4runtime_pb2.Entity]:
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id, entities=entities)
        out = []
        for resp in self.stub.Read(req, timeout=10):
            out.extend(resp.entities)
        return out


def update(kind: str, entity: p4runtime_pb2.Entity) -> p4runtime_pb2.Update:
    return p4runtime_pb2.Update(type=p4runtime_pb2.Update.Type.Value(kind), entity=entity)


# ------------------------------------------------------------------- entity builders

FieldMatch = p4runtime_pb2.FieldMatch


def exact(fid: int, value: bytes) -> FieldMatch:
    return FieldMatch(field_id=fid, exact=FieldMatch.Exact(value=value))


def lpm(fid: int, value: bytes, prefix_len: int) -> FieldMatch:
    return FieldMatch(field_id=fid, lpm=FieldMatch.LPM(value=value, prefix_len=prefix_len))


def ternary(fid: int, value: bytes, mask: bytes) -> FieldMatch:
    return FieldMatch(field_id=fid, ternary=FieldMatch.Ternary(value=value, mask=mask))


def range_(fid: int, low: bytes, high: bytes) -> FieldMatch:
    return FieldMatch(field_id=fid, range=FieldMatch.Range(low=low, high=high))


def optional(fid: int, value: bytes) -> FieldMatch:
    return FieldMatch(field_id=fid, optional=FieldMatch.Optional(value=value))


def table_entry(table_id: int, match: Iterable[FieldMatch] = (), action_id: int | None = None,
                params: Iterable[bytes] = (), **fields: object) -> p4runtime_pb2.Entity:
    """A TableEntry entity; ``params`` are values for parameter ids 1, 2, ..."""
    ent = p4runtime_pb2.Entity()
    te = ent.table_entry
    te.table_id = table_id
    te.match.extend(match)
    if action_id is not None:
        te.action.action.action_id = action_id
        for i, value in enumerate(params, 1):
            te.action.action.params.add(param_id=i, value=value)
    for name, value in fields.items():
        if isinstance(value, p4runtime_pb2.CounterData | p4runtime_pb2.MeterConfig):
            getattr(te, name).CopyFrom(value)
        else:
            setattr(te, name, value)
    return ent


def expect_code(code: grpc.StatusCode, fn, *args, **kwargs) -> grpc.RpcError:  # type: ignore[no-untyped-def]
    """Call ``fn``; it must fail with ``code`` (a single-update batch failure counts: its
    per-update code is compared)."""
    try:
        fn(*args, **kwargs)
    except grpc.RpcError as e:
        if e.code() == grpc.StatusCode.UNKNOWN and code != grpc.StatusCode.UNKNOWN:
            errors = batch_errors(e)
            assert [c for c, _ in errors if c != OK] == [code.value[0]], errors
        else:
            assert e.code() == code, (e.code(), e.details())
        return e
    raise AssertionError(f"expected {code.name}, the call succeeded")


def drain(q: queue.Queue) -> list:  # type: ignore[type-arg]
    """Everything queued now, without waiting."""
    out = []
    while True:
        try:
            out.append(q.get_nowait())
        except queue.Empty:
            return out
