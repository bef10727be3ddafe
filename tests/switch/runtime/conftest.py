"""Fixtures for P4Runtime tests: a server on a free loopback port in front of a fresh V1Switch, and a gRPC client
built on finsy's stubs (the same wire format any P4Runtime controller uses)."""

from __future__ import annotations

import queue
import threading
from pathlib import Path
from typing import Any, Iterator

import grpc
import pytest
from finsy.proto import p4i, p4r, p4r_grpc, rpc_status
from google.protobuf import text_format

from switch.runtime import P4RuntimeServer
from switch.v1model import V1Switch

FIXTURES = Path(__file__).parent / "fixtures"
RUNTIME_IO_JSON = FIXTURES / "runtime_io.json"
RUNTIME_IO_P4INFO = FIXTURES / "runtime_io.p4info.txt"
CPU_PORT = 255


def load_p4info(path: Path) -> p4i.P4Info:
    return text_format.Parse(path.read_text(), p4i.P4Info())


class Stream:
    """A client StreamChannel: `send` requests, `recv` responses (None on timeout), `error` once it ends badly."""

    def __init__(self, stub: p4r_grpc.P4RuntimeStub) -> None:
        self._requests: queue.Queue = queue.Queue()
        self.responses: queue.Queue = queue.Queue()
        self.error: grpc.RpcError | None = None
        self.ended = threading.Event()
        self.call = stub.StreamChannel(iter(self._requests.get, None))
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            for msg in self.call:
                self.responses.put(msg)
        except grpc.RpcError as exc:
            self.error = exc
        finally:
            self.ended.set()

    def send(self, msg: p4r.StreamMessageRequest) -> None:
        self._requests.put(msg)

    def arbitrate(self, election_id: int, device_id: int = 0, role: str = "") -> None:
        upd = p4r.MasterArbitrationUpdate(device_id=device_id, election_id=p4r.Uint128(high=election_id >> 64,
                                                                                        low=election_id & (2**64 - 1)))
        if role:
            upd.role.name = role
        self.send(p4r.StreamMessageRequest(arbitration=upd))

    def recv(self, timeout: float = 2.0) -> p4r.StreamMessageResponse | None:
        try:
            return self.responses.get(timeout=timeout)
        except queue.Empty:
            return None

    def recv_arbitration(self, timeout: float = 2.0) -> tuple[int, int]:
        """(status code, primary election id) of the next arbitration message."""
        msg = self.recv(timeout)
        assert msg is not None and msg.HasField("arbitration"), msg
        upd = msg.arbitration
        return upd.status.code, (upd.election_id.high << 64) | upd.election_id.low

    def close(self) -> None:
        self._requests.put(None)
        self.ended.wait(2)


class Client:
    """A P4Runtime client for device 0 plus helpers to name P4Info objects."""

    def __init__(self, port: int, p4info: p4i.P4Info) -> None:
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        self.stub = p4r_grpc.P4RuntimeStub(self.channel)
        self.p4info = p4info
        self.election_id: int | None = None
        self.streams: list[Stream] = []

    # --- ids ------------------------------------------------------------------------------------------------------
    def _find(self, items: Any, name: str) -> Any:
        for item in items:
            if item.preamble.name == name or item.preamble.alias == name:
                return item
        raise KeyError(name)

    def table_id(self, name: str) -> int:
        return self._find(self.p4info.tables, name).preamble.id

    def action_id(self, name: str) -> int:
        return self._find(self.p4info.actions, name).preamble.id

    def counter_id(self, name: str) -> int:
        return self._find(self.p4info.counters, name).preamble.id

    def register_id(self, name: str) -> int:
        return self._find(self.p4info.registers, name).preamble.id

    # --- RPCs -----------------------------------------------------------------------------------------------------
    def stream(self) -> Stream:
        s = Stream(self.stub)
        self.streams.append(s)
        return s

    def set_pipeline(self, json_bytes: bytes, action: int = p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
                     p4info: p4i.P4Info | None = None, cookie: int | None = None) -> None:
        req = p4r.SetForwardingPipelineConfigRequest(device_id=0, action=action)
        req.config.p4info.CopyFrom(p4info if p4info is not None else self.p4info)
        req.config.p4_device_config = json_bytes
        if cookie is not None:
            req.config.cookie.cookie = cookie
        self._elect(req)
        self.stub.SetForwardingPipelineConfig(req, timeout=10)

    def _elect(self, req: Any) -> None:
        if self.election_id is not None:
            req.election_id.high = self.election_id >> 64
            req.election_id.low = self.election_id & (2**64 - 1)

    def write(self, *updates: p4r.Update, atomicity: int = 0, device_id: int = 0) -> None:
        req = p4r.WriteRequest(device_id=device_id, updates=list(updates), atomicity=atomicity)
        self._elect(req)
        self.stub.Write(req, timeout=5)

    def read(self, *entities: p4r.Entity, device_id: int = 0) -> list[p4r.Entity]:
        out: list[p4r.Entity] = []
        for resp in self.stub.Read(p4r.ReadRequest(device_id=device_id, entities=list(entities)), timeout=5):
            out.extend(resp.entities)
        return out

    def close(self) -> None:
        for s in self.streams:
            s.close()
        self.channel.close()


def update(kind: int, **entity: Any) -> p4r.Update:
    return p4r.Update(type=kind, entity=p4r.Entity(**entity))


def write_errors(exc: grpc.RpcError) -> list[tuple[int, str]]:
    """The per-update (canonical_code, message) list of a failed Write (google.rpc.Status details)."""
    assert exc.code() == grpc.StatusCode.UNKNOWN, exc
    raw = dict(exc.trailing_metadata())["grpc-status-details-bin"]
    status = rpc_status.Status.FromString(raw)
    out = []
    for detail in status.details:
        err = p4r.Error()
        assert detail.Unpack(err)
        out.append((err.canonical_code, err.message))
    return out


def rpc_error(fn: Any, *args: Any, **kwargs: Any) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        fn(*args, **kwargs)
    return info.value


@pytest.fixture
def switch() -> V1Switch:
    return V1Switch(drop_port=511, cpu_port=CPU_PORT, device_id=0)


@pytest.fixture
def server(switch: V1Switch) -> Iterator[P4RuntimeServer]:
    srv = P4RuntimeServer(switch, device_id=0, cpu_port=CPU_PORT)
    srv.port = srv.start("127.0.0.1:0")
    yield srv
    srv.stop(0)


@pytest.fixture
def client(server: P4RuntimeServer) -> Iterator[Client]:
    c = Client(server.port, load_p4info(RUNTIME_IO_P4INFO))
    yield c
    c.close()


@pytest.fixture
def loaded(client: Client) -> Client:
    """A client whose pipeline (runtime_io) is set, without arbitration (PI accepts writes with no election id)."""
    client.set_pipeline(RUNTIME_IO_JSON.read_bytes())
    return client
