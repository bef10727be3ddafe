"""The P4Runtime gRPC service (`p4.v1.P4Runtime`) in front of a V1Switch, behaving as simple_switch_grpc's PI server.

A grpcio synchronous server with a thread pool. Each StreamChannel gets a reader thread (arbitration, PacketOut)
and a queue the handler drains, so PacketIn and arbitration notices can be pushed from any thread.
"""

from __future__ import annotations

import logging
import queue
import threading
from concurrent import futures
from typing import Any, Callable, Iterator

import grpc
from finsy.proto import p4r, p4r_grpc

from switch.runtime.arbitration import MAX_CONNECTIONS, Arbitration, Connection, election_id_value
from switch.runtime.device import Device
from switch.runtime.status import (
    ERROR_SPACE, Code, P4RuntimeError, batch_status, simple_grpc_status, to_grpc_status,
)
from switch.runtime.tls import ServerTls

log = logging.getLogger(__name__)

# What PI's server (and so simple_switch_grpc) reports in CapabilitiesResponse.
P4RUNTIME_API_VERSION = "1.3.0"
READ_CHUNK = 1000  # entities per ReadResponse message
MAX_MESSAGE_BYTES = 256 * 1024 * 1024  # as PI's server

_END = object()


class _Abort:
    """Queue item: terminate the stream with this error."""

    def __init__(self, error: P4RuntimeError) -> None:
        self.error = error


class _Servicer(p4r_grpc.P4RuntimeServicer):
    """RPC handlers; all state lives in the owning P4RuntimeServer."""

    def __init__(self, owner: P4RuntimeServer) -> None:
        self.owner = owner

    # --- helpers --------------------------------------------------------------------------------------------------

    def _fail(self, context: grpc.ServicerContext, error: P4RuntimeError) -> None:
        context.abort_with_status(simple_grpc_status(error))

    def _check_device(self, device_id: int) -> None:
        if device_id != self.owner.device.device_id:
            raise P4RuntimeError(Code.NOT_FOUND, f"Unknown device id {device_id}")

    def _check_writer(self, request: Any) -> None:
        election = election_id_value(request.election_id) if request.HasField("election_id") else None
        # roles are not enforced (no role config), as in PI: every client competes for the one primary
        self.owner.arbitration.check_writer(request.device_id, "", election)

    # --- unary RPCs -----------------------------------------------------------------------------------------------

    def Capabilities(self, request: p4r.CapabilitiesRequest, context: grpc.ServicerContext) -> p4r.CapabilitiesResponse:
        return p4r.CapabilitiesResponse(p4runtime_api_version=P4RUNTIME_API_VERSION)

    def SetForwardingPipelineConfig(self, request: p4r.SetForwardingPipelineConfigRequest,
                                    context: grpc.ServicerContext) -> p4r.SetForwardingPipelineConfigResponse:
        try:
            self._check_device(request.device_id)
            self._check_writer(request)
            self.owner.device.set_pipeline(request.action, request.config)
        except P4RuntimeError as exc:
            self._fail(context, exc)
        return p4r.SetForwardingPipelineConfigResponse()

    def GetForwardingPipelineConfig(self, request: p4r.GetForwardingPipelineConfigRequest,
                                    context: grpc.ServicerContext) -> p4r.GetForwardingPipelineConfigResponse:
        try:
            self._check_device(request.device_id)
            config = self.owner.device.get_pipeline(request.response_type)
        except P4RuntimeError as exc:
            self._fail(context, exc)
        return p4r.GetForwardingPipelineConfigResponse(config=config)

    def Write(self, request: p4r.WriteRequest, context: grpc.ServicerContext) -> p4r.WriteResponse:
        try:
            self._check_device(request.device_id)
            self._check_writer(request)
            results = self.owner.device.write(request)
        except P4RuntimeError as exc:
            self._fail(context, exc)
        status = batch_status(results)
        if status is not None:
            context.abort_with_status(to_grpc_status(status))
        return p4r.WriteResponse()

    def Read(self, request: p4r.ReadRequest, context: grpc.ServicerContext) -> Iterator[p4r.ReadResponse]:
        try:
            self._check_device(request.device_id)
            entities = self.owner.device.read(request)
        except P4RuntimeError as exc:
            self._fail(context, exc)
        if not entities:
            yield p4r.ReadResponse()
        for start in range(0, len(entities), READ_CHUNK):
            yield p4r.ReadResponse(entities=entities[start:start + READ_CHUNK])

    # --- StreamChannel --------------------------------------------------------------------------------------------

    def StreamChannel(self, request_iterator: Iterator[p4r.StreamMessageRequest],
                      context: grpc.ServicerContext) -> Iterator[p4r.StreamMessageResponse]:
        outbox: queue.Queue = queue.Queue()
        state: dict[str, Connection | None] = {"conn": None}
        owner = self.owner
        owner._register_stream(outbox)
        context.add_callback(lambda: outbox.put(_END))

        def reader() -> None:
            try:
                for msg in request_iterator:
                    kind = msg.WhichOneof("update")
                    if kind == "arbitration":
                        error = self._arbitrate(msg.arbitration, state, outbox)
                        if error is not None:
                            outbox.put(_Abort(error))
                            return
                    elif kind == "packet":
                        conn = state["conn"]
                        if conn is not None:
                            owner._packet_out(conn, msg.packet)
                    elif kind == "digest_ack":
                        owner.device.digests.ack(msg.digest_ack)
                    # `other` is ignored, as PI does
            except grpc.RpcError:
                pass
            except Exception:  # a bug must not leave the stream hanging
                log.exception("StreamChannel reader failed")
                outbox.put(_Abort(P4RuntimeError(Code.INTERNAL, "internal error in StreamChannel")))
                return
            finally:
                outbox.put(_END)

        thread = threading.Thread(target=reader, name="p4rt-stream-reader", daemon=True)
        thread.start()
        try:
            while True:
                item = outbox.get()
                if item is _END:
                    return
                if isinstance(item, _Abort):
                    context.abort_with_status(simple_grpc_status(item.error))
                yield item
        finally:
            conn = state["conn"]
            if conn is not None:
                owner.arbitration.leave(conn)
            owner._unregister_stream(outbox)

    def _arbitrate(self, update: p4r.MasterArbitrationUpdate, state: dict[str, Connection | None],
                   outbox: queue.Queue) -> P4RuntimeError | None:
        owner = self.owner
        election_id = election_id_value(update.election_id)
        conn = state["conn"]
        try:
            if conn is not None:
                if update.device_id != conn.device_id:
                    return P4RuntimeError(Code.FAILED_PRECONDITION, "Invalid device id")
                owner.arbitration.update(conn, election_id)
                return None
            if update.device_id != owner.device.device_id:
                return P4RuntimeError(Code.NOT_FOUND, f"Unknown device id {update.device_id}")
            conn = Connection(update.device_id, "", election_id, outbox.put)
            owner.arbitration.join(conn)
            state["conn"] = conn
        except P4RuntimeError as exc:
            return exc
        return None


class P4RuntimeServer:
    """A P4Runtime server for one switch (one device id).

    `inject(port, frame)` receives PacketOut frames for the CPU port; when None, the frame is processed
    synchronously (`switch.process(cpu_port, frame)` under `switch.lock`), CPU-port outputs go to `packet_in` and
    the other outputs are dropped.
    """

    def __init__(self, switch: Any, device_id: int = 0, cpu_port: int | None = None, strict_bmv2: bool = False,
                 inject: Callable[[int, bytes], None] | None = None) -> None:
        self.switch = switch
        self.cpu_port = cpu_port
        self.device = Device(switch, device_id=device_id, strict_bmv2=strict_bmv2)
        self.arbitration = Arbitration()
        self.device.digests.send = self._to_primary
        self.inject = inject if inject is not None else self._process_locally
        self.packets_in = 0
        self.packets_out = 0
        self._server: grpc.Server | None = None
        self._streams: set[queue.Queue] = set()
        self._streams_lock = threading.Lock()

    # --- lifecycle ------------------------------------------------------------------------------------------------

    def start(self, address: str = "127.0.0.1:9559", tls: ServerTls | None = None) -> int:
        """Serve on `address` ("HOST:PORT"; port 0 picks a free one), over TLS when `tls` is given; returns the bound
        port. Raises if it cannot bind (ValueError for TLS options grpc refuses)."""
        if self._server is not None:
            raise RuntimeError("P4Runtime server already started")
        credentials = tls.credentials() if tls is not None else None
        server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=MAX_CONNECTIONS + 16, thread_name_prefix="p4rt"),
            options=[("grpc.so_reuseport", 0),
                     ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                     ("grpc.max_send_message_length", MAX_MESSAGE_BYTES)])
        p4r_grpc.add_P4RuntimeServicer_to_server(_Servicer(self), server)
        try:
            port = (server.add_secure_port(address, credentials) if credentials is not None
                    else server.add_insecure_port(address))
        except RuntimeError as exc:
            raise RuntimeError(f"P4Runtime server cannot bind {address}: {exc}") from None
        if not port:
            raise RuntimeError(f"P4Runtime server cannot bind {address} (address in use or invalid)")
        server.start()
        self._server = server
        return port

    def stop(self, grace: float | None = None) -> None:
        """Stop serving; open streams are ended."""
        server, self._server = self._server, None
        self.device.digests.close()
        with self._streams_lock:
            for outbox in self._streams:
                outbox.put(_END)
        if server is not None:
            server.stop(grace).wait()

    def _register_stream(self, outbox: queue.Queue) -> None:
        with self._streams_lock:
            self._streams.add(outbox)

    def _unregister_stream(self, outbox: queue.Queue) -> None:
        with self._streams_lock:
            self._streams.discard(outbox)

    # --- packet I/O -----------------------------------------------------------------------------------------------

    def packet_in(self, frame: bytes) -> None:
        """Send a frame the switch emitted on the CPU port to the primary controller as a PacketIn (non-blocking)."""
        current = self.device.pipeline
        if current is None:
            return
        msg = current.packet_io.packet_in_from_frame(bytes(frame))
        if msg is None:
            return
        primary = self.arbitration.primary(self.device.device_id, "")
        if primary is None:
            return
        primary.send(p4r.StreamMessageResponse(packet=msg))
        self.packets_in += 1

    def _to_primary(self, msg: p4r.StreamMessageResponse) -> None:
        """A DigestList (or any unsolicited message) to the primary controller of the device, if there is one."""
        primary = self.arbitration.primary(self.device.device_id, "")
        if primary is not None:
            primary.send(msg)

    def _packet_out(self, conn: Connection, packet: p4r.PacketOut) -> None:
        """A PacketOut from a stream: only the primary's are sent, and only once a pipeline is set (as PI)."""
        current = self.device.pipeline
        if current is None or self.arbitration.primary(conn.device_id, conn.role) is not conn:
            return
        try:
            frame = current.packet_io.frame_from_packet_out(packet)
        except P4RuntimeError as exc:
            error = p4r.StreamError(canonical_code=exc.code, message=exc.message, space=ERROR_SPACE)
            error.packet_out.packet_out.CopyFrom(packet)
            conn.send(p4r.StreamMessageResponse(error=error))
            return
        if self.cpu_port is None:
            log.warning("PacketOut dropped: the switch has no CPU port (--cpu-port)")
            return
        self.packets_out += 1
        self.inject(self.cpu_port, frame)

    def _process_locally(self, port: int, frame: bytes) -> None:
        with self.switch.lock:
            outputs = self.switch.process(port, frame)
        for out_port, out_frame in outputs:
            if out_port == self.cpu_port:
                self.packet_in(out_frame)
