"""The client's end of one StreamChannel: a writer queue and a reader thread.

The reader sorts what the switch sends into queues: arbitration updates, PacketIns,
digest lists and stream errors. ``primary`` follows the arbitration updates, so a client
that loses the primary role to a controller with a higher election id notices.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator

import grpc
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

MAX_QUEUED = 100_000


class StreamChannel:
    def __init__(self, stub: p4runtime_pb2_grpc.P4RuntimeStub):
        self._out: queue.Queue[p4runtime_pb2.StreamMessageRequest | None] = queue.Queue()
        self.arbitration: queue.Queue[p4runtime_pb2.MasterArbitrationUpdate] = queue.Queue()
        self.packets: queue.Queue[p4runtime_pb2.PacketIn] = queue.Queue(MAX_QUEUED)
        self.digests: queue.Queue[p4runtime_pb2.DigestList] = queue.Queue(MAX_QUEUED)
        self.errors: queue.Queue[p4runtime_pb2.StreamError] = queue.Queue(MAX_QUEUED)
        self.primary = False
        self.ended: grpc.RpcError | None = None
        self.done = threading.Event()
        self._call = stub.StreamChannel(self._requests())
        self._reader = threading.Thread(target=self._read, daemon=True,
                                        name="p4rt-client-stream")
        self._reader.start()

    def _requests(self) -> Iterator[p4runtime_pb2.StreamMessageRequest]:
        while True:
            msg = self._out.get()
            if msg is None:
                return
            yield msg

    def _read(self) -> None:
        try:
            for msg in self._call:
                self._dispatch(msg)
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.CANCELLED:
                self.ended = e
        finally:
            self.primary = False
            self.done.set()

    def _dispatch(self, msg: p4runtime_pb2.StreamMessageResponse) -> None:
        kind = msg.WhichOneof("update")
        if kind == "arbitration":
            self.primary = msg.arbitration.status.code == code_pb2.OK
            self.arbitration.put(msg.arbitration)
            return
        target: queue.Queue | None = {"packet": self.packets, "digest": self.digests,
                                      "error": self.errors}.get(kind or "")
        if target is None:
            return
        try:
            target.put_nowait(getattr(msg, kind))  # type: ignore[arg-type]
        except queue.Full:
            pass  # nobody reads them: keep the oldest, as a switch's CPU queue would

    def send(self, msg: p4runtime_pb2.StreamMessageRequest) -> None:
        if self.done.is_set():
            raise BrokenPipeError("the StreamChannel has ended")
        self._out.put(msg)

    def close(self) -> None:
        self._out.put(None)
        self._call.cancel()
        self._reader.join(timeout=5)
