"""The StreamChannel: one bidirectional stream per controller, and controller packets.

Each StreamChannel RPC gets a reader thread for the client's messages (arbitration,
PacketOut, DigestListAck) while the RPC's own thread writes the server's messages from a
queue. A client that stops reading fills the queue: beyond ``MAX_QUEUED`` messages,
packet-ins, digest lists and stream errors are dropped (the spec lets a server drop
these first), and beyond twice that arbitration updates too, so a client that floods
the server with requests and never reads the answers cannot grow its memory.
Packet I/O and digests are for the primary only: a PacketOut from a backup is dropped
and answered with a StreamError (PERMISSION_DENIED).

Controller headers: a PacketOut's metadata are packed, in P4Info order and bit width,
into the ``@controller_header("packet_out")`` header, which is put in front of the
payload (zero bits pad it to whole bytes); ``@padding`` fields may be left out. A frame
the data plane sends to the CPU port starts with the ``packet_in`` header, which is cut
off and turned into the PacketIn's metadata.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from switch.runtime.arbitration import Arbiter, Controller
from switch.runtime.codec import decode_uint, encode_uint
from switch.runtime.errors import P4RuntimeError, as_p4runtime_error, code_number, invalid_argument

log = logging.getLogger("switch.runtime")

MAX_QUEUED = 10000  # packet-ins and digest lists waiting for a slow client before drops


# ------------------------------------------------------------------ controller headers


def _header_bits(cpm: p4info_pb2.ControllerPacketMetadata) -> int:
    return sum(m.bitwidth for m in cpm.metadata)


def packet_out_frame(cpm: p4info_pb2.ControllerPacketMetadata | None,
                     po: p4runtime_pb2.PacketOut) -> bytes:
    """The frame to inject on the CPU port for a PacketOut."""
    if cpm is None:
        if len(po.metadata):
            raise invalid_argument("the program has no @controller_header(\"packet_out\") "
                                   "header, but the PacketOut has metadata")
        return po.payload
    infos = {m.id: m for m in cpm.metadata}
    values: dict[int, int] = {}
    for md in po.metadata:
        info = infos.get(md.metadata_id)
        if info is None:
            raise invalid_argument(f"unknown packet_out metadata id {md.metadata_id}")
        if md.metadata_id in values:
            raise invalid_argument(f"packet_out metadata {info.name} given twice")
        values[md.metadata_id] = decode_uint(md.value, info.bitwidth,
                                             f"packet_out metadata {info.name}")
    header = 0
    for info in cpm.metadata:
        value = values.get(info.id)
        if value is None:
            if not any(a.startswith("@padding") for a in info.annotations):
                raise invalid_argument(f"packet_out metadata {info.name} is missing")
            value = 0
        header = (header << info.bitwidth) | value
    nbits = _header_bits(cpm)
    pad = -nbits % 8
    return (header << pad).to_bytes((nbits + pad) // 8, "big") + po.payload


def packet_in_message(cpm: p4info_pb2.ControllerPacketMetadata | None,
                      frame: bytes) -> p4runtime_pb2.PacketIn:
    """The PacketIn for a frame the data plane sent to the CPU port."""
    msg = p4runtime_pb2.PacketIn()
    if cpm is None:
        msg.payload = frame
        return msg
    nbits = _header_bits(cpm)
    nbytes = (nbits + 7) // 8
    if len(frame) < nbytes:
        log.warning("CPU-port frame of %d bytes is shorter than the packet_in header (%d)",
                    len(frame), nbytes)
        msg.payload = frame
        return msg
    header = int.from_bytes(frame[:nbytes], "big")
    shift = nbytes * 8
    for info in cpm.metadata:
        shift -= info.bitwidth
        value = (header >> shift) & ((1 << info.bitwidth) - 1)
        msg.metadata.add(metadata_id=info.id, value=encode_uint(value))
    msg.payload = frame[nbytes:]
    return msg


def stream_error(err: P4RuntimeError, request: p4runtime_pb2.StreamMessageRequest
                 ) -> p4runtime_pb2.StreamMessageResponse:
    msg = p4runtime_pb2.StreamMessageResponse()
    e = msg.error
    e.canonical_code = code_number(err.code)
    e.message = err.message
    kind = request.WhichOneof("update")
    if kind == "packet":
        e.packet_out.packet_out.CopyFrom(request.packet)
    elif kind == "digest_ack":
        e.digest_list_ack.digest_list_ack.CopyFrom(request.digest_ack)
    elif kind == "other":
        e.other.other.CopyFrom(request.other)
    return msg


# ------------------------------------------------------------------------- the stream


_CLOSE = object()


@dataclass
class _Abort:
    code: grpc.StatusCode
    message: str


class StreamHandler:
    """Runs one StreamChannel RPC.

    ``on_request(controller, request)`` handles PacketOut and DigestListAck messages (it
    raises P4RuntimeError to answer with a StreamError); arbitration is handled here.
    """

    def __init__(self, arbiter: Arbiter, on_request: Callable[[Controller, Any], None],
                 requests: Iterator[p4runtime_pb2.StreamMessageRequest],
                 context: grpc.ServicerContext):
        self.arbiter = arbiter
        self.on_request = on_request
        self.requests = requests
        self.context = context
        self.out: queue.Queue[Any] = queue.Queue()
        self.controller = Controller(send=self.send_control, send_data=self.send_data,
                                     peer=context.peer())
        self.dropped = 0

    def send_control(self, msg: p4runtime_pb2.StreamMessageResponse) -> None:
        """Queue an arbitration update; only a client that let twice ``MAX_QUEUED``
        messages pile up (one that sends updates and never reads) loses some."""
        if self.out.qsize() >= 2 * MAX_QUEUED:
            self._drop()
            return
        self.out.put(msg)

    def send_data(self, msg: p4runtime_pb2.StreamMessageResponse) -> None:
        """Queue a packet-in, digest list or stream error; dropped when the client lags
        far behind."""
        if self.out.qsize() >= MAX_QUEUED:
            self._drop()
            return
        self.out.put(msg)

    def _drop(self) -> None:
        if self.dropped % 1000 == 0:
            log.warning("stream to %s is congested: %d message(s) dropped so far",
                        self.controller.peer, self.dropped + 1)
        self.dropped += 1

    def close(self) -> None:
        self.out.put(_CLOSE)

    def run(self) -> Iterator[p4runtime_pb2.StreamMessageResponse]:
        reader = threading.Thread(target=self._read, name="p4rt-stream-reader", daemon=True)
        reader.start()
        self.context.add_callback(self.close)
        try:
            while True:
                item = self.out.get()
                if item is _CLOSE:
                    return
                if isinstance(item, _Abort):
                    self.context.abort(item.code, item.message)
                yield item
        finally:
            self.arbiter.leave(self.controller)

    def _read(self) -> None:
        try:
            for request in self.requests:
                if not self._handle(request):
                    return
        except Exception as e:  # noqa: BLE001 - the client went away (cancelled stream)
            log.debug("stream from %s ended: %s", self.controller.peer, e)
        finally:
            self.close()

    def _handle(self, request: p4runtime_pb2.StreamMessageRequest) -> bool:
        """Handle one client message; False when the stream must end."""
        kind = request.WhichOneof("update")
        if kind == "arbitration":
            try:
                self.arbiter.update(self.controller, request.arbitration)
            except Exception as e:  # noqa: BLE001 - every failure ends the stream
                err = as_p4runtime_error(e, "MasterArbitrationUpdate")
                self.out.put(_Abort(err.code, err.message))
                return False
            return True
        try:
            if kind is None:
                raise invalid_argument("empty stream message")
            self.on_request(self.controller, request)
        except Exception as e:  # noqa: BLE001 - reported to the client, never fatal
            self.send_data(stream_error(as_p4runtime_error(e, "stream message"), request))
        return True
