"""P4RuntimeClient: a small synchronous P4Runtime client (one device, one primary connection).

Transport only: arbitration on the StreamChannel, SetForwardingPipelineConfig, Write and Read. Entities are finsy's
(`finsy.P4TableEntry`, `P4MulticastGroupEntry`, ...), encoded and decoded against a `finsy.P4Schema`, so names, not
ids, are what callers write. Every call is bounded by `timeout`; failures raise `ControllerError` carrying the gRPC
code and, for Write, the per-update `p4.v1.Error` details. With `tls` (controller.tls.ClientTls) the channel is TLS;
a refused handshake fails at once, in words that say so.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import finsy
import grpc
from controller.schema import P4Schema
from finsy.p4entity import decode_entity
from finsy.proto import p4r, p4r_grpc, rpc_status
from google.protobuf import any_pb2

from controller.tls import ClientTls, explain_unavailable

__all__ = ["ControllerError", "EntityWriter", "UpdateError", "P4RuntimeClient"]


@dataclass(frozen=True)
class UpdateError:
    """Why one update of a Write failed: its index in the request, gRPC code name and message."""

    index: int
    code: str
    message: str


class ControllerError(Exception):
    """A P4Runtime call failed; `code` is the grpc.StatusCode (or None), `updates` the per-update errors."""

    def __init__(self, message: str, code: grpc.StatusCode | None = None,
                 updates: tuple[UpdateError, ...] = ()) -> None:
        detail = "".join(f"\n  update {u.index}: {u.code}: {u.message}" for u in updates)
        super().__init__(message + detail)
        self.code = code
        self.updates = updates


def _update_errors(err: grpc.RpcError) -> tuple[UpdateError, ...]:
    """The per-update p4.v1.Error details of a failed Write (empty if the status carries none)."""
    for key, value in (err.trailing_metadata() or ()):  # type: ignore[attr-defined]
        if key != "grpc-status-details-bin":
            continue
        status = rpc_status.Status.FromString(value)
        out = []
        for i, detail in enumerate(status.details):
            error = p4r.Error()
            if isinstance(detail, any_pb2.Any) and detail.Unpack(error) and error.canonical_code != 0:
                out.append(UpdateError(i, grpc.StatusCode(_code_tuple(error.canonical_code)).name, error.message))
        return tuple(out)
    return ()


def _code_tuple(number: int) -> tuple[int, str]:
    for code in grpc.StatusCode:
        if code.value[0] == number:
            return code.value
    return grpc.StatusCode.UNKNOWN.value


class EntityWriter:
    """insert/modify/delete of finsy entities over a `write` of (kind, entity) pairs: what every P4Runtime client of
    the controllers offers (`P4RuntimeClient` over gRPC, `controller.local.LocalClient` in process)."""

    def write(self, updates: Iterable[tuple[str, Any]]) -> None:
        raise NotImplementedError

    def insert(self, *entities: Any) -> None:
        """Insert entities."""
        self.write(("INSERT", e) for e in entities)

    def modify(self, *entities: Any) -> None:
        """Modify entities."""
        self.write(("MODIFY", e) for e in entities)

    def delete(self, *entities: Any) -> None:
        """Delete entities."""
        self.write(("DELETE", e) for e in entities)


class P4RuntimeClient(EntityWriter):
    """A primary P4Runtime connection to one device."""

    def __init__(self, address: str, *, device_id: int = 0, election_id: int = 1, timeout: float = 5.0,
                 tls: ClientTls | None = None) -> None:
        self.address = address
        self.tls = tls
        self.device_id = device_id
        self.election_id = election_id
        self.timeout = timeout
        self.schema: P4Schema | None = None
        self._channel: grpc.Channel | None = None
        self._stub: p4r_grpc.P4RuntimeStub | None = None
        self._requests: queue.Queue[p4r.StreamMessageRequest | None] = queue.Queue()
        self._arbitration: queue.Queue[p4r.StreamMessageResponse | Exception] = queue.Queue()
        self._packet_ins: queue.Queue[p4r.StreamMessageResponse] = queue.Queue()
        self._digests: queue.Queue[p4r.StreamMessageResponse] = queue.Queue()
        self.is_primary = False
        self._reader: threading.Thread | None = None
        self._stream_lost = False
        """The arbitration stream ended while connected (the server or the network dropped it)."""
        self._closing = False

    # --- connection ---------------------------------------------------------------------------------------

    def connect(self, *, arbitrate: bool = True, require_primary: bool = True) -> P4RuntimeClient:
        """Open the channel and (unless `arbitrate` is False: read-only use) join arbitration; ControllerError if
        the switch is unreachable, or if another client is primary and `require_primary` is set."""
        self._closing = False
        self._stream_lost = False
        self._requests = queue.Queue()
        self._arbitration = queue.Queue()
        if self.tls is None:
            self._channel = grpc.insecure_channel(self.address)
        else:
            try:
                self._channel = grpc.secure_channel(self.address, self.tls.credentials())
            except ValueError as err:
                raise ControllerError(str(err)) from None
        self._stub = p4r_grpc.P4RuntimeStub(self._channel)
        try:
            self._wait_ready()
        except ControllerError:
            self.close()
            raise
        if not arbitrate:
            return self
        responses = self._stub.StreamChannel(self._request_iter())
        self._reader = threading.Thread(target=self._read_stream, args=(responses,), daemon=True,
                                        name=f"p4rt-stream-{self.address}")
        self._reader.start()
        self._requests.put(p4r.StreamMessageRequest(arbitration=p4r.MasterArbitrationUpdate(
            device_id=self.device_id, election_id=p4r.Uint128(high=0, low=self.election_id))))
        try:
            reply = self._arbitration.get(timeout=self.timeout)
        except queue.Empty:
            self.close()
            raise ControllerError(f"no arbitration answer from {self.address} within {self.timeout:g}s") from None
        if isinstance(reply, Exception):
            self.close()
            raise reply
        status = reply.arbitration.status
        self.is_primary = status.code == 0
        if not self.is_primary and require_primary:
            self.close()
            raise ControllerError(f"not primary on {self.address} (device {self.device_id}, election id "
                                  f"{self.election_id}): {status.message or grpc.StatusCode(_code_tuple(status.code)).name}")
        return self

    def _wait_ready(self) -> None:
        """Return once the server answers; ControllerError after `timeout`, or at once when the server accepts the
        connection but the TLS handshake fails (grpc's UNAVAILABLE details say why)."""
        deadline = time.monotonic() + self.timeout
        while True:
            try:  # fail-fast: in TRANSIENT_FAILURE it reports the last connection error instead of waiting
                self.stub.Capabilities(p4r.CapabilitiesRequest(), wait_for_ready=False,
                                       timeout=max(0.05, min(1.0, deadline - time.monotonic())))
                return
            except grpc.RpcError as err:
                if err.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                    return  # the server answered (one without Capabilities, say)
                why = explain_unavailable(err.details() or "", self.tls)
                if err.code() is grpc.StatusCode.UNAVAILABLE and why is not None:
                    raise ControllerError(f"cannot connect to the switch's P4Runtime server at {self.address}: {why}",
                                          err.code()) from None
            if time.monotonic() >= deadline:
                raise ControllerError(f"cannot reach the switch's P4Runtime server at {self.address} "
                                      f"within {self.timeout:g}s")
            time.sleep(0.05)

    def _request_iter(self) -> Iterator[p4r.StreamMessageRequest]:
        while (msg := self._requests.get()) is not None:
            yield msg

    def _read_stream(self, responses: Iterable[p4r.StreamMessageResponse]) -> None:
        try:
            for msg in responses:
                kind = msg.WhichOneof("update")
                if kind == "arbitration":
                    self._arbitration.put(msg)
                elif kind == "packet":
                    self._packet_ins.put(msg)
                elif kind == "digest":
                    self._digests.put(msg)
        except grpc.RpcError as err:
            self._arbitration.put(ControllerError(f"stream to {self.address} closed: {err.details()}", err.code()))
        if not self._closing:
            self._stream_lost = True

    def reconnect(self) -> P4RuntimeClient:
        """Open a new stream and take mastership again with the same election id (after the stream was lost);
        ControllerError if the switch is gone or another controller became primary meanwhile."""
        self.close()
        return self.connect()

    def close(self) -> None:
        """End the stream and close the channel."""
        self._closing = True
        self._requests.put(None)
        if self._channel is not None:
            self._channel.close()
            self._channel = None

    def __enter__(self) -> P4RuntimeClient:
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- packet I/O -----------------------------------------------------------------------------------------

    def packet_out(self, payload: bytes, **metadata: Any) -> None:
        """Send a PacketOut on the stream; `metadata` by the P4Info packet_out field names."""
        schema = self._schema()
        if not metadata and not self._has_packet_metadata(schema, "packet_out"):
            self._requests.put(p4r.StreamMessageRequest(packet=p4r.PacketOut(payload=payload)))
            return
        self._requests.put(finsy.P4PacketOut(payload, **metadata).encode_update(schema))

    @staticmethod
    def _has_packet_metadata(schema: P4Schema, name: str) -> bool:
        return any(m.preamble.name == name for m in schema.p4info.controller_packet_metadata)

    def packet_in(self, timeout: float | None = None) -> finsy.P4PacketIn:
        """The next PacketIn (metadata decoded by name); ControllerError if none arrives within `timeout`."""
        try:
            msg = self._packet_ins.get(timeout=self.timeout if timeout is None else timeout)
        except queue.Empty:
            raise ControllerError(f"no PacketIn from {self.address} within {timeout}s") from None
        schema = self._schema()
        if not self._has_packet_metadata(schema, "packet_in"):
            return finsy.P4PacketIn(msg.packet.payload, metadata={})  # a program without a packet_in header: payload only
        return finsy.P4PacketIn.decode(msg, schema)

    def digest(self, timeout: float | None = None) -> finsy.P4DigestList:
        """The next DigestList (members decoded by name); ControllerError if none arrives within `timeout`. A digest
        is sent once configured: `insert(finsy.P4DigestEntry(name, max_list_size=1))`."""
        try:
            msg = self._digests.get(timeout=self.timeout if timeout is None else timeout)
        except queue.Empty:
            raise ControllerError(f"no DigestList from {self.address} within {timeout}s") from None
        return finsy.P4DigestList.decode(msg, self._schema())

    def ack_digest(self, digest_list: finsy.P4DigestList) -> None:
        """Acknowledge a DigestList (its samples may be sent again, when the digest has an ack_timeout_ns)."""
        self._requests.put(digest_list.ack().encode_update(self._schema()))

    # --- RPCs ------------------------------------------------------------------------------------------------

    @property
    def stub(self) -> p4r_grpc.P4RuntimeStub:
        if self._stub is None:
            raise ControllerError("not connected")
        return self._stub

    def _call(self, what: str, method: Any, request: Any) -> Any:
        try:
            return method(request, timeout=self.timeout)
        except grpc.RpcError as err:
            if self._stream_lost and self.is_primary and err.code() in (grpc.StatusCode.PERMISSION_DENIED,
                                                                        grpc.StatusCode.UNAVAILABLE):
                # our stream was dropped, and with it mastership: take it again once, then retry on the new stub
                self.reconnect()
                return self._call(what, getattr(self.stub, what), request)  # `what` is the RPC's name
            raise ControllerError(f"{what} on {self.address}: {err.code().name}: {err.details()}", err.code(),
                                  _update_errors(err)) from None

    def set_pipeline(self, p4info: Path | str, device_json: Path | str) -> None:
        """Push a compiled program (P4Info text + BMv2 JSON) with VERIFY_AND_COMMIT."""
        self.schema = P4Schema(Path(p4info), Path(device_json).read_bytes())
        request = p4r.SetForwardingPipelineConfigRequest(
            device_id=self.device_id, election_id=p4r.Uint128(high=0, low=self.election_id),
            action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
            config=p4r.ForwardingPipelineConfig(p4info=self.schema.p4info, p4_device_config=self.schema.p4blob))
        self._call("SetForwardingPipelineConfig", self.stub.SetForwardingPipelineConfig, request)

    def fetch_pipeline(self) -> P4Schema:
        """Adopt the P4Info the switch runs now (for a controller attaching to a running switch)."""
        request = p4r.GetForwardingPipelineConfigRequest(
            device_id=self.device_id, response_type=p4r.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE)
        reply = self._call("GetForwardingPipelineConfig", self.stub.GetForwardingPipelineConfig, request)
        if not reply.config.HasField("p4info"):
            raise ControllerError(f"no pipeline is set on {self.address}", grpc.StatusCode.FAILED_PRECONDITION)
        self.schema = P4Schema(reply.config.p4info)
        return self.schema

    def _schema(self) -> P4Schema:
        if self.schema is None:
            raise ControllerError("no P4Info: call set_pipeline() or fetch_pipeline() first")
        return self.schema

    def write(self, updates: Iterable[tuple[str, Any]]) -> None:
        """Write (kind, entity) pairs, kind in INSERT/MODIFY/DELETE, in one request."""
        schema = self._schema()
        msgs = [p4r.Update(type=p4r.Update.Type.Value(kind), entity=entity.encode(schema)) for kind, entity in updates]
        if not msgs:
            return
        request = p4r.WriteRequest(device_id=self.device_id, election_id=p4r.Uint128(high=0, low=self.election_id),
                                   updates=msgs)
        self._call("Write", self.stub.Write, request)

    def read(self, *entities: Any) -> list[Any]:
        """Read entities (wildcards allowed); returns decoded finsy entities."""
        schema = self._schema()
        request = p4r.ReadRequest(device_id=self.device_id, entities=[e.encode(schema) for e in entities])
        try:
            replies = self.stub.Read(request, timeout=self.timeout)
            return [decode_entity(ent, schema) for reply in replies for ent in reply.entities]
        except grpc.RpcError as err:
            raise ControllerError(f"Read on {self.address}: {err.code().name}: {err.details()}", err.code()) from None
