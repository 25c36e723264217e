"""The P4Runtime server of the built-in switch: a gRPC front for ``V1Switch``.

Typical use by a switch process::

    server = P4RuntimeServer(device_id=1, address="0.0.0.0:9559", cpu_port=255)
    server.start()
    ...
    for port, frame in server.inject(in_port, frame):   # the data-plane loop
        transmit(port, frame)

``inject`` takes ``server.lock`` around the switch, so a Write batch (which holds the
same lock) is atomic with respect to packets; frames the switch sends to the CPU port
become PacketIns for the primary controller, and digests are collected after each call.
A data plane that drives ``server.switch`` itself must hold ``server.lock`` around
``switch.inject`` and hand CPU-port frames to ``server.packet_in``. PacketOuts go to the
``packet_out`` hook (the frame, controller header included, to be injected on the CPU
port); without a hook the server injects them itself and gives what comes out to
``on_output``.

The device config of SetForwardingPipelineConfig is the compiled-program artifact
(``ina p4c -o``), as it is or wrapped in a serialized ``p4.tmp.P4DeviceConfig`` as BMv2's
PI server takes it (``switch.runtime.device_config``); the P4Info sent with it must
describe the same program (same tables, actions, match fields and parameters, ids and
names), else INVALID_ARGUMENT. A config
without a P4Info gets the compiled program's. VERIFY_AND_COMMIT starts the new program
with a clear forwarding state. RECONCILE_AND_COMMIT keeps the forwarding state: with the
same P4Info and device config only the cookie changes; with the same P4Info and another
device config the state is copied into the new switch (``reconcile.carry_over``;
INVALID_ARGUMENT if that fails, and the running pipeline stays); with another P4Info it
is INVALID_ARGUMENT if the controller wrote any forwarding state (it cannot be
preserved), else it commits like VERIFY_AND_COMMIT.
Between VERIFY_AND_SAVE and COMMIT, Reads and Writes go to the saved pipeline while
packets still go through the running one; COMMIT then switches packets over.

Every open StreamChannel holds one of the gRPC server's ``max_workers`` threads, so at
most half of them (``max_streams``) may be open at once; one more is refused with
RESOURCE_EXHAUSTED, which keeps threads free for Write, Read and the other unary RPCs.

P4Runtime API version 1.4.1. UNIMPLEMENTED: roles other than the default one, the
ROLLBACK_ON_ERROR and DATAPLANE_ATOMIC write atomicity modes, one-shot action selector
programming, idle timeouts, per-color meter counters, direct resources of default
entries, ExternEntry writes and ``other`` stream messages.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from switch.runtime.arbitration import Arbiter, Controller, election_id
from switch.runtime.codec import P4DataCodec
from switch.runtime.device_config import program_bytes
from switch.runtime.digests import DigestBatcher, now_ns
from switch.runtime.entities import apply_update, read_entity
from switch.runtime.errors import (
    P4RuntimeError,
    as_p4runtime_error,
    failed_precondition,
    invalid_argument,
    not_found,
    permission_denied,
    set_batch_error,
    unimplemented,
)
from switch.runtime.reconcile import carry_over, written_state
from switch.runtime.schema import Schema, check_consistent
from switch.runtime.state import PipelineState, digest_ids
from switch.runtime.stream import StreamHandler, packet_in_message, packet_out_frame

log = logging.getLogger("switch.runtime")

API_VERSION = "1.4.1"
READ_CHUNK = 1000  # entities per ReadResponse
MAX_MESSAGE = 256 * 1024 * 1024

SetAction = p4runtime_pb2.SetForwardingPipelineConfigRequest
GetType = p4runtime_pb2.GetForwardingPipelineConfigRequest


def _default_loader(data: bytes) -> Any:
    from switch.frontend.artifact import load_artifact

    return load_artifact(data)


def _default_p4info(program: Any) -> p4info_pb2.P4Info:
    from switch.frontend.p4info import build_p4info

    return build_p4info(program)


class P4RuntimeServer:
    """A P4Runtime server for one device.

    ``on_pipeline(program)`` makes the switch for a newly committed program (default:
    ``V1Switch(program, cpu_port=cpu_port)``). ``load_config`` turns a device config into
    a program and ``build_p4info`` gives a program's P4Info (defaults: the front end's
    ``load_artifact`` and ``build_p4info``).
    """

    def __init__(self, device_id: int = 1, address: str = "0.0.0.0:9559",
                 cpu_port: int | None = None,
                 on_pipeline: Callable[[Any], Any] | None = None,
                 packet_out: Callable[[bytes], None] | None = None,
                 on_output: Callable[[int, bytes], None] | None = None,
                 load_config: Callable[[bytes], Any] = _default_loader,
                 build_p4info: Callable[[Any], p4info_pb2.P4Info] = _default_p4info,
                 max_workers: int = 32, digest_poll_s: float = 0.01):
        self.device_id = device_id
        self.address = address
        self.cpu_port = cpu_port
        self.lock = threading.RLock()
        self.arbiter = Arbiter(device_id)
        self.port: int | None = None
        self._on_pipeline = on_pipeline or self._make_switch
        self._packet_out_hook = packet_out
        self._on_output = on_output
        self._load_config = load_config
        self._build_p4info = build_p4info
        self._max_workers = max_workers
        self.max_streams = max(1, max_workers // 2)
        self._digest_poll_s = digest_poll_s
        self._active: PipelineState | None = None
        self._saved: PipelineState | None = None
        self._batcher = DigestBatcher()
        self._digest_wakeup = threading.Event()
        self._stopping = threading.Event()
        self._handlers: set[StreamHandler] = set()
        self._handlers_lock = threading.Lock()
        self._grpc: grpc.Server | None = None
        self._digest_thread: threading.Thread | None = None

    # ----------------------------------------------------------------- lifecycle

    def start(self) -> int:
        """Start serving; returns the bound TCP port (useful with port 0)."""
        server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=self._max_workers,
                                       thread_name_prefix="p4rt"),
            options=[("grpc.max_receive_message_length", MAX_MESSAGE),
                     ("grpc.max_send_message_length", MAX_MESSAGE),
                     # a second switch on a taken port must fail, not share it
                     ("grpc.so_reuseport", 0)])
        p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(_Servicer(self), server)
        try:
            port = server.add_insecure_port(self.address)
        except RuntimeError:  # grpcio reports a failed bind this way
            port = 0
        if not port:
            raise OSError(f"cannot listen on {self.address}: address in use or not local")
        server.start()
        self._grpc = server
        self.port = port
        self._stopping.clear()
        self._digest_thread = threading.Thread(target=self._digest_loop, daemon=True,
                                               name="p4rt-digests")
        self._digest_thread.start()
        log.info("P4Runtime server for device %d listening on port %d", self.device_id, port)
        return port

    def stop(self, grace: float | None = 0.5) -> None:
        self._stopping.set()
        self._digest_wakeup.set()
        with self._handlers_lock:
            handlers = list(self._handlers)
        for h in handlers:
            h.close()
        if self._grpc is not None:
            self._grpc.stop(grace).wait()
            self._grpc = None
        if self._digest_thread is not None:
            self._digest_thread.join(timeout=5)
            self._digest_thread = None

    def __enter__(self) -> P4RuntimeServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------- pipeline

    @property
    def switch(self) -> Any:
        """The switch packets go through (None before a pipeline is committed)."""
        state = self._active
        return None if state is None else state.switch

    @property
    def program(self) -> Any:
        state = self._active
        return None if state is None else state.program

    def _make_switch(self, program: Any) -> Any:
        from switch.v1model import V1Switch

        return V1Switch(program, cpu_port=self.cpu_port)

    def set_pipeline(self, program: Any, p4info: p4info_pb2.P4Info | None = None,
                     device_config: bytes = b"", cookie: int | None = None) -> None:
        """Commit a program without a controller (as if by VERIFY_AND_COMMIT); the device
        config GetForwardingPipelineConfig reports defaults to the program's artifact."""
        compiled = self._build_p4info(program)
        if not device_config:
            device_config = _artifact(program)
        if p4info is not None:
            check_consistent(p4info, compiled)
        state = self._new_state(program, p4info or compiled, compiled, device_config, cookie)
        with self.lock:
            self._commit(state)

    def _new_state(self, program: Any, p4info: p4info_pb2.P4Info,
                   compiled: p4info_pb2.P4Info, device_config: bytes,
                   cookie: int | None) -> PipelineState:
        try:
            sw = self._on_pipeline(program)
        except Exception as e:
            err = as_p4runtime_error(e, "pipeline set-up")
            raise invalid_argument(f"the switch cannot run this program: {err.message}") from e
        given = p4info_pb2.P4Info()
        given.CopyFrom(p4info)
        return PipelineState(program=program, switch=sw, schema=Schema.build(compiled),
                             p4info=given, device_config=device_config, cookie=cookie,
                             digest_ids=digest_ids(program, compiled))

    def _state_from_config(self, config: p4runtime_pb2.ForwardingPipelineConfig
                           ) -> PipelineState:
        if not config.p4_device_config:
            raise invalid_argument("the forwarding pipeline config has no device config")
        try:
            program = self._load_config(program_bytes(config.p4_device_config))
        except Exception as e:  # noqa: BLE001 - CompileError and anything a bad blob causes
            raise invalid_argument(f"the device config is not a program the built-in switch "
                                   f"can load: {e}") from e
        compiled = self._build_p4info(program)
        p4info = compiled
        if config.HasField("p4info") and config.p4info.ByteSize():
            check_consistent(config.p4info, compiled)
            p4info = config.p4info
        cookie = config.cookie.cookie if config.HasField("cookie") else None
        return self._new_state(program, p4info, compiled, config.p4_device_config, cookie)

    def _commit(self, state: PipelineState) -> None:
        self._active = state
        self._saved = None
        self._batcher.reset()
        log.info("forwarding pipeline committed: %s",
                 getattr(state.program, "filename", "<program>"))

    def _control_state(self) -> PipelineState:
        """The pipeline Reads and Writes address."""
        state = self._saved or self._active
        if state is None:
            raise failed_precondition("no forwarding pipeline config has been set")
        return state

    # ----------------------------------------------------------------- data plane

    def inject(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        """Run one packet through the switch; CPU-port frames become PacketIns and the
        other outputs are returned as (port, frame)."""
        with self.lock:
            state = self._active
            if state is None:
                return []
            outputs = state.switch.inject(port, data)
        rest = []
        for out_port, frame in outputs:
            if self.cpu_port is not None and out_port == self.cpu_port:
                self.packet_in(frame)
            else:
                rest.append((out_port, frame))
        self._digest_wakeup.set()
        return rest

    def packet_in(self, frame: bytes) -> None:
        """Send a frame the data plane emitted on the CPU port to the primary controller
        (dropped when there is none)."""
        state = self._active
        primary = self.arbiter.primary()
        if state is None or primary is None:
            return
        msg = p4runtime_pb2.StreamMessageResponse()
        msg.packet.CopyFrom(packet_in_message(state.schema.packet_in, frame))
        (primary.send_data or primary.send)(msg)

    def poll_digests(self) -> None:
        """Ask for the switch's pending digests to be collected now."""
        self._digest_wakeup.set()

    def _packet_out(self, po: p4runtime_pb2.PacketOut) -> None:
        state = self._active
        if state is None:
            raise failed_precondition("no forwarding pipeline config has been set")
        frame = packet_out_frame(state.schema.packet_out, po)
        if self._packet_out_hook is not None:
            self._packet_out_hook(frame)
            return
        if self.cpu_port is None:
            raise failed_precondition("the switch has no CPU port: packet-out is not possible")
        for port, out in self.inject(self.cpu_port, frame):
            if self._on_output is not None:
                self._on_output(port, out)

    # -------------------------------------------------------------------- digests

    def _digest_loop(self) -> None:
        while not self._stopping.is_set():
            self._digest_wakeup.wait(self._digest_poll_s)
            self._digest_wakeup.clear()
            try:
                self.flush_digests()
            except Exception:  # noqa: BLE001 - keep the loop alive, but say why
                log.exception("digest processing failed")

    def flush_digests(self) -> None:
        """Collect the switch's digests and send the lists that are due."""
        primary = self.arbiter.primary()
        with self.lock:
            state = self._active
            if state is None:
                return
            raw = _drain(state.switch)
            if primary is None:
                self._batcher.reset()
                return
            now = now_ns()
            for name, values in raw:
                did = state.digest_ids.get(name)
                if did is not None and did in state.digest_configs:
                    self._batcher.offer(did, tuple(values), now)
            ready = self._batcher.due(state.digest_configs, now)
        if not ready:
            return
        codec = P4DataCodec(state.schema.p4info.type_info)
        for did, lid, items in ready:
            digest = state.schema.digests[did]
            msg = p4runtime_pb2.StreamMessageResponse()
            dl = msg.digest
            dl.digest_id = did
            dl.list_id = lid
            dl.timestamp = time.time_ns()
            try:
                for values in items:
                    dl.data.append(codec.encode_leaves(digest.type_spec, iter(values)))
            except (StopIteration, P4RuntimeError) as e:
                log.warning("digest %s: cannot encode %r: %s", digest.preamble.name, items, e)
                continue
            (primary.send_data or primary.send)(msg)

    # ------------------------------------------------------------ RPC plumbing

    def _check_device(self, device_id: int) -> None:
        if device_id != self.device_id:
            raise not_found(f"unknown device id {device_id} (this server is device "
                            f"{self.device_id})")

    @staticmethod
    def _check_role(role: str) -> None:
        if role:
            raise not_found(f"unknown role {role!r}: only the default role exists")

    def _on_stream_request(self, controller: Controller,
                           request: p4runtime_pb2.StreamMessageRequest) -> None:
        kind = request.WhichOneof("update")
        if kind == "other":
            raise unimplemented("architecture-specific stream messages are not supported")
        if not self.arbiter.is_primary(controller):
            raise permission_denied(f"only the primary controller may send {kind} messages")
        if kind == "packet":
            self._packet_out(request.packet)
        elif kind == "digest_ack":
            ack = request.digest_ack
            state = self._active
            if state is None:
                raise failed_precondition("no forwarding pipeline config has been set")
            if ack.digest_id not in state.schema.digests:
                raise invalid_argument(f"no digest with id {ack.digest_id} in the P4Info")
            with self.lock:
                self._batcher.ack(ack.digest_id, ack.list_id)


def _artifact(program: Any) -> bytes:
    try:
        from switch.frontend.artifact import dump_artifact

        return dump_artifact(program).encode()
    except Exception:  # noqa: BLE001 - a program without stored source (tests' fakes)
        return b""


def _same_p4info(a: p4info_pb2.P4Info, b: p4info_pb2.P4Info) -> bool:
    return a.SerializeToString(deterministic=True) == b.SerializeToString(deterministic=True)


def _drain(sw: Any) -> list[tuple[str, tuple[int, ...]]]:
    pending = getattr(sw, "digests", None)
    if not pending:
        return []
    out = []
    if hasattr(pending, "popleft"):
        while True:
            try:
                out.append(pending.popleft())
            except IndexError:
                break
    else:
        out = list(pending)
        pending.clear()
    return out


class _Servicer(p4runtime_pb2_grpc.P4RuntimeServicer):
    """The gRPC service; every handler turns failures into the right status code."""

    def __init__(self, server: P4RuntimeServer):
        self.s = server

    @staticmethod
    def _abort(context: grpc.ServicerContext, e: Exception, what: str) -> None:
        err = as_p4runtime_error(e, what)
        context.abort(err.code, err.message)

    def Capabilities(self, request: Any, context: grpc.ServicerContext) -> Any:
        return p4runtime_pb2.CapabilitiesResponse(p4runtime_api_version=API_VERSION)

    def Write(self, request: p4runtime_pb2.WriteRequest, context: grpc.ServicerContext
              ) -> p4runtime_pb2.WriteResponse:
        s = self.s
        errors: list[P4RuntimeError | None] = []
        try:
            s._check_device(request.device_id)
            s._check_role(request.role)
            s.arbiter.check_writer(election_id(request.election_id,
                                               request.HasField("election_id")))
            with s.lock:
                state = s._control_state()
                if request.atomicity != p4runtime_pb2.WriteRequest.CONTINUE_ON_ERROR:
                    raise unimplemented("only the CONTINUE_ON_ERROR atomicity is supported "
                                        "(ROLLBACK_ON_ERROR and DATAPLANE_ATOMIC are not)")
                for update in request.updates:
                    try:
                        apply_update(state, update, s.cpu_port)
                        errors.append(None)
                    except Exception as e:  # noqa: BLE001 - one failed update of the batch
                        errors.append(as_p4runtime_error(e, "Write update"))
        except Exception as e:  # noqa: BLE001
            self._abort(context, e, "Write")
        if any(e is not None for e in errors):
            set_batch_error(context, errors, "Write")
        return p4runtime_pb2.WriteResponse()

    def Read(self, request: p4runtime_pb2.ReadRequest, context: grpc.ServicerContext
             ) -> Iterator[p4runtime_pb2.ReadResponse]:
        s = self.s
        entities: list[p4runtime_pb2.Entity] = []
        errors: list[P4RuntimeError | None] = []
        try:
            s._check_device(request.device_id)
            s._check_role(request.role)
            with s.lock:
                state = s._control_state()
                for entity in request.entities:
                    try:
                        found = list(read_entity(state, entity))  # all or nothing
                        entities.extend(found)
                        errors.append(None)
                    except Exception as e:  # noqa: BLE001 - one failed request of the batch
                        errors.append(as_p4runtime_error(e, "Read request"))
        except Exception as e:  # noqa: BLE001
            self._abort(context, e, "Read")
        for i in range(0, len(entities), READ_CHUNK):
            yield p4runtime_pb2.ReadResponse(entities=entities[i:i + READ_CHUNK])
        if any(e is not None for e in errors):
            set_batch_error(context, errors, "Read")

    def SetForwardingPipelineConfig(
            self, request: p4runtime_pb2.SetForwardingPipelineConfigRequest,
            context: grpc.ServicerContext) -> p4runtime_pb2.SetForwardingPipelineConfigResponse:
        s = self.s
        try:
            s._check_device(request.device_id)
            s._check_role(request.role)
            s.arbiter.check_writer(election_id(request.election_id,
                                               request.HasField("election_id")),
                                   "SetForwardingPipelineConfig")
            self._set_pipeline(request)
        except Exception as e:  # noqa: BLE001
            self._abort(context, e, "SetForwardingPipelineConfig")
        return p4runtime_pb2.SetForwardingPipelineConfigResponse()

    def _set_pipeline(self, request: p4runtime_pb2.SetForwardingPipelineConfigRequest
                      ) -> None:
        s = self.s
        action = request.action
        has_config = request.HasField("config") and bool(request.config.ByteSize())
        if action == SetAction.COMMIT:
            if has_config:
                raise invalid_argument("COMMIT takes no config: it commits the saved one")
            with s.lock:
                if s._saved is None:
                    raise not_found("no saved config to commit (use VERIFY_AND_SAVE first)")
                s._commit(s._saved)
            return
        if action not in (SetAction.VERIFY, SetAction.VERIFY_AND_SAVE,
                          SetAction.VERIFY_AND_COMMIT, SetAction.RECONCILE_AND_COMMIT):
            raise invalid_argument("the action must be VERIFY, VERIFY_AND_SAVE, "
                                   "VERIFY_AND_COMMIT, COMMIT or RECONCILE_AND_COMMIT")
        if not has_config:
            raise invalid_argument(f"{SetAction.Action.Name(action)} needs a config")
        config = request.config
        if action == SetAction.RECONCILE_AND_COMMIT and self._unchanged(config):
            with s.lock:
                assert s._active is not None
                s._active.cookie = config.cookie.cookie if config.HasField("cookie") else None
            return
        state = s._state_from_config(config)
        if action == SetAction.VERIFY:
            return
        with s.lock:
            if action == SetAction.VERIFY_AND_SAVE:
                s._saved = state
                return
            active = s._active
            if (action == SetAction.RECONCILE_AND_COMMIT and active is not None
                    and _same_p4info(active.schema.p4info, state.schema.p4info)):
                try:
                    carry_over(active, state, s.cpu_port)
                except Exception as e:  # noqa: BLE001 - the running pipeline stays
                    err = as_p4runtime_error(e, "RECONCILE_AND_COMMIT")
                    raise invalid_argument("the forwarding state cannot be preserved: "
                                           f"{err.message}") from e
            elif action == SetAction.RECONCILE_AND_COMMIT and active is not None:
                written = written_state(active)
                if written:
                    more = f" (and {len(written) - 1} more)" if len(written) > 1 else ""
                    raise invalid_argument(
                        "RECONCILE_AND_COMMIT with another P4Info cannot preserve the "
                        f"forwarding state: {written[0]}{more}; use VERIFY_AND_COMMIT to "
                        "start from a clear state")
            s._commit(state)

    def _unchanged(self, config: p4runtime_pb2.ForwardingPipelineConfig) -> bool:
        active = self.s._active
        if active is None or self.s._saved is not None:
            return False
        if config.p4_device_config != active.device_config:
            return False
        given = config.p4info if config.HasField("p4info") else None
        if given is None or not given.ByteSize():
            return True
        return _same_p4info(given, active.p4info)

    def GetForwardingPipelineConfig(
            self, request: p4runtime_pb2.GetForwardingPipelineConfigRequest,
            context: grpc.ServicerContext) -> p4runtime_pb2.GetForwardingPipelineConfigResponse:
        s = self.s
        resp = p4runtime_pb2.GetForwardingPipelineConfigResponse()
        try:
            s._check_device(request.device_id)
            rtype = request.response_type
            if rtype not in GetType.ResponseType.values():
                raise invalid_argument(f"unknown response_type {rtype} (ALL, COOKIE_ONLY, "
                                       "P4INFO_AND_COOKIE or DEVICE_CONFIG_AND_COOKIE)")
            state = s._saved or s._active
            if state is None:
                return resp
            config = resp.config
            if rtype in (GetType.ALL, GetType.P4INFO_AND_COOKIE):
                config.p4info.CopyFrom(state.p4info)
            if rtype in (GetType.ALL, GetType.DEVICE_CONFIG_AND_COOKIE):
                config.p4_device_config = state.device_config
            if state.cookie is not None:
                config.cookie.cookie = state.cookie
            if rtype == GetType.COOKIE_ONLY and state.cookie is None:
                config.SetInParent()
        except Exception as e:  # noqa: BLE001
            self._abort(context, e, "GetForwardingPipelineConfig")
        return resp

    def StreamChannel(self, request_iterator: Iterator[p4runtime_pb2.StreamMessageRequest],
                      context: grpc.ServicerContext
                      ) -> Iterator[p4runtime_pb2.StreamMessageResponse]:
        s = self.s
        handler = StreamHandler(s.arbiter, s._on_stream_request, request_iterator, context)
        with s._handlers_lock:
            full = len(s._handlers) >= s.max_streams
            if not full:
                s._handlers.add(handler)
        if full:
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                          f"too many open StreamChannels: this server serves at most "
                          f"{s.max_streams} at once")
        try:
            yield from handler.run()
        finally:
            with s._handlers_lock:
                s._handlers.discard(handler)
