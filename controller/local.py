"""LocalClient: the controllers' P4Runtime path to an embedded switch in this process, without gRPC.

`SwitchMLController(client, P4RuntimeRegisters(client))` programs a switch the same way whether `client` is a
`P4RuntimeClient` (a switch process over gRPC) or a `LocalClient` (an engine in this process: the in-process network,
the soak, the fuzzing, the tests). The entities are the controllers' own finsy entities, encoded with the program's
P4Info into P4Runtime messages and applied by the embedded switch's P4Runtime device (`switch.runtime.device.Device`)
exactly as a Write over gRPC would be, refusals included: there is one control plane, not a second copy of it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import grpc
from controller.schema import P4Schema
from finsy.p4entity import decode_entity
from finsy.proto import p4i, p4r
from google.protobuf import text_format

from controller.client import ControllerError, EntityWriter, UpdateError
from switch.runtime.device import Device
from switch.runtime.status import Code, P4RuntimeError

__all__ = ["LocalClient", "load_p4info"]


def load_p4info(p4info: p4i.P4Info | Path | str) -> p4i.P4Info:
    """A P4Info message from a message or a text-format file (`--p4runtime-files x.p4info.txt`)."""
    if isinstance(p4info, p4i.P4Info):
        return p4info
    return text_format.Parse(Path(p4info).read_text(), p4i.P4Info())


def _status(code: int) -> grpc.StatusCode:
    name = Code.Name(code)
    return getattr(grpc.StatusCode, name, grpc.StatusCode.UNKNOWN)


class LocalClient(EntityWriter):
    """P4RuntimeClient's write and read surface over an engine (`switch.v1model.V1Switch`) in this process.

    `engine` must already run `program` (`engine.load(program)`): the client adopts it without reloading (code
    generation costs far more than a short run), so one engine can serve many networks one after another."""

    address = "in-process"

    def __init__(self, engine: Any, p4info: p4i.P4Info | Path | str, program: Mapping[str, Any] | bytes, *,
                 device_id: int = 0) -> None:
        blob = program if isinstance(program, bytes) else json.dumps(program).encode()
        info = load_p4info(p4info)
        self.schema = P4Schema(info, blob)
        self.device_id = device_id
        self.device = Device(engine, device_id)
        try:
            self.device.adopt(p4r.ForwardingPipelineConfig(p4info=info, p4_device_config=blob))
        except P4RuntimeError as exc:
            raise ControllerError(f"in-process pipeline: {exc.message}", _status(exc.code)) from None

    def write(self, updates: Iterable[tuple[str, Any]]) -> None:
        """Write (kind, entity) pairs, kind in INSERT/MODIFY/DELETE, in one request (ControllerError per refusal,
        with the per-update details a gRPC Write returns)."""
        msgs = [p4r.Update(type=p4r.Update.Type.Value(kind), entity=entity.encode(self.schema))
                for kind, entity in updates]
        if not msgs:
            return
        results = self.device.write(p4r.WriteRequest(device_id=self.device_id, updates=msgs))
        failed = [(i, r) for i, r in enumerate(results) if r is not None]
        if failed:
            details = tuple(UpdateError(i, Code.Name(r.code), r.message) for i, r in failed)
            first = failed[0][1]
            raise ControllerError(f"Write in-process: {Code.Name(first.code)}: {first.message}",
                                  _status(first.code), details)

    def read(self, *entities: Any) -> list[Any]:
        """Read entities (wildcards allowed); returns decoded finsy entities."""
        request = p4r.ReadRequest(device_id=self.device_id, entities=[e.encode(self.schema) for e in entities])
        try:
            return [decode_entity(ent, self.schema) for ent in self.device.read(request)]
        except P4RuntimeError as exc:
            raise ControllerError(f"Read in-process: {Code.Name(exc.code)}: {exc.message}", _status(exc.code)) from None

    def close(self) -> None:
        """Nothing to release (P4RuntimeClient's close, for code that closes whatever client it was given)."""
