"""The P4Runtime view of one switch: pipeline config, per-entry P4Runtime state, and entity dispatch.

Holds what PI's DeviceMgr holds (P4Info, saved device config and cookie, entry metadata, multicast groups and clone
sessions as written) and translates every Write update / Read entity to engine calls under `switch.lock`.
Arbitration and gRPC live in switch.runtime.server; this module knows nothing of streams.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from finsy.proto import p4r

from switch.errors import LoadError
from switch.runtime import action_profiles, externs, meters, pipeline, pre, tables, valuesets
from switch.runtime.digests import DigestManager
from switch.runtime.p4info import P4InfoIndex
from switch.runtime.status import Code, P4RuntimeError, invalid

_Action = p4r.SetForwardingPipelineConfigRequest
_Response = p4r.GetForwardingPipelineConfigRequest


_WRITERS: dict[str, Callable[[Device, int, Any], None]] = {
    "table_entry": tables.write,
    "packet_replication_engine_entry": pre.write,
    "counter_entry": externs.counter_write,
    "direct_counter_entry": tables.direct_counter_write,
    "register_entry": externs.register_write,
    "action_profile_member": action_profiles.member_write,
    "action_profile_group": action_profiles.group_write,
    "meter_entry": meters.meter_write,
    "direct_meter_entry": tables.direct_meter_write,
    "value_set_entry": valuesets.write,
    "digest_entry": lambda device, kind, msg: device.digests.write(kind, msg),
}
"""Per Entity kind (the `entity` oneof's field name): its write, (device, update type, message)."""

_READERS: dict[str, Callable[[Device, Any, list[p4r.Entity]], None]] = {
    "table_entry": tables.read,
    "packet_replication_engine_entry": pre.read,
    "counter_entry": externs.counter_read,
    "direct_counter_entry": tables.direct_counter_read,
    "register_entry": externs.register_read,
    "meter_entry": meters.meter_read,
    "direct_meter_entry": tables.direct_meter_read,
    "action_profile_member": action_profiles.member_read,
    "action_profile_group": action_profiles.group_read,
    "value_set_entry": valuesets.read,
    "digest_entry": lambda device, msg, out: device.digests.read(msg, out),
}
"""Per Entity kind: its read, (device, message, the list it appends the entities it finds to)."""


class Device:
    """P4Runtime state of a V1Switch (see switch/__init__.py for the engine contract)."""

    def __init__(self, switch: Any, device_id: int = 0, strict_bmv2: bool = False) -> None:
        self.switch = switch
        self.device_id = device_id
        self.strict_bmv2 = strict_bmv2
        self.pipeline: pipeline.Pipeline | None = None
        self.saved: pipeline.Pipeline | None = None  # VERIFY_AND_SAVE'd, waiting for COMMIT
        self.entry_meta: dict[Any, tables.EntryMeta] = {}
        self.default_meta: dict[int, tables.EntryMeta] = {}
        self.mc_groups: dict[int, list[pre.ReplicaSpec]] = {}
        self.clone_sessions: dict[int, pre.CloneSession] = {}
        self.digests = DigestManager()
        self.action_profiles: dict[int, action_profiles.ProfileState] = {}

    @property
    def index(self) -> P4InfoIndex:
        assert self.pipeline is not None
        return self.pipeline.index

    def require_pipeline(self) -> pipeline.Pipeline:
        if self.pipeline is None:
            raise P4RuntimeError(Code.FAILED_PRECONDITION, "No forwarding pipeline config set for this device")
        return self.pipeline

    # --- SetForwardingPipelineConfig / GetForwardingPipelineConfig ---------------------------------------------

    def set_pipeline(self, action: int, config: p4r.ForwardingPipelineConfig) -> None:
        """Apply one SetForwardingPipelineConfig action."""
        if action == _Action.UNSPECIFIED:
            raise invalid("Invalid SetForwardingPipeline action")
        if action == _Action.RECONCILE_AND_COMMIT:
            raise P4RuntimeError(Code.UNIMPLEMENTED, "RECONCILE_AND_COMMIT is not supported")
        if action == _Action.COMMIT:
            if self.saved is None:
                raise P4RuntimeError(Code.FAILED_PRECONDITION,
                                     "COMMIT without a config saved by VERIFY_AND_SAVE")
            self._commit(self.saved)
            self.saved = None
            return
        if action not in (_Action.VERIFY, _Action.VERIFY_AND_SAVE, _Action.VERIFY_AND_COMMIT):
            raise invalid("Invalid SetForwardingPipeline action")
        verified = pipeline.verify(config)
        if action == _Action.VERIFY:
            return
        if action == _Action.VERIFY_AND_SAVE:
            self.saved = verified
            return
        self._commit(verified)
        self.saved = None

    def _commit(self, new: pipeline.Pipeline) -> None:
        sw = self.switch
        with sw.lock:
            try:
                sw.load(new.program)
            except LoadError as exc:
                raise invalid(f"Error in first phase of device update: {exc}") from None
            # a new program starts with empty P4Runtime state, as PI's DeviceMgr::p4_change
            for mgid in list(sw.pre.groups):
                sw.pre.delete_group(mgid)
            for sid in list(sw.mirror.sessions):
                sw.mirror.delete_session(sid)
            self._take(new, "the loaded program")

    def _take(self, new: pipeline.Pipeline, engine: str) -> None:
        """Make `new` the device's pipeline, with empty P4Runtime state, once every P4Info object is in the engine."""
        sw = self.switch
        missing = [t.name for t in new.index.tables.values() if t.name not in sw.tables]
        missing += [c.name for c in new.index.counters.values() if c.name not in sw.counters]
        missing += [r.name for r in new.index.registers.values() if r.name not in sw.registers]
        if missing:
            raise invalid(f"P4Info objects missing from {engine}: {', '.join(missing)}")
        self.pipeline = new
        self.digests.set_p4info(new.config.p4info, {ll["id"]: ll.get("name", "") for ll in
                                                     new.program.get("learn_lists") or [] if isinstance(ll, dict)})
        self.switch.digest_sink = self.digests.sample
        self.action_profiles = action_profiles.states(self, new.config.p4info)
        self.entry_meta.clear()
        self.default_meta.clear()
        self.mc_groups.clear()
        self.clone_sessions.clear()

    def adopt(self, config: p4r.ForwardingPipelineConfig) -> None:
        """Take over an engine already running config's program (loaded at start or by an earlier device) without
        reloading it: verify the config, check every P4Info object against the engine, start with empty P4Runtime
        state. What an in-process controller uses to program a reused engine."""
        self._take(pipeline.verify(config), "the engine's program")
        self.saved = None

    def get_pipeline(self, response_type: int) -> p4r.ForwardingPipelineConfig:
        """The config as stored, restricted to `response_type` (the cookie always comes along)."""
        current = self.require_pipeline()
        out = p4r.ForwardingPipelineConfig()
        if response_type not in (_Response.ALL, _Response.COOKIE_ONLY, _Response.P4INFO_AND_COOKIE,
                                 _Response.DEVICE_CONFIG_AND_COOKIE):
            raise invalid("Invalid response_type in GetForwardingPipelineConfigRequest")
        if response_type in (_Response.ALL, _Response.P4INFO_AND_COOKIE):
            out.p4info.CopyFrom(current.config.p4info)
        if response_type in (_Response.ALL, _Response.DEVICE_CONFIG_AND_COOKIE):
            out.p4_device_config = current.config.p4_device_config
        if current.config.HasField("cookie"):
            out.cookie.CopyFrom(current.config.cookie)
        return out

    # --- Write / Read ------------------------------------------------------------------------------------------

    def write_update(self, update: p4r.Update) -> None:
        """Apply one update; raises P4RuntimeError on refusal."""
        self.require_pipeline()
        entity = update.entity
        kind = entity.WhichOneof("entity")
        with self.switch.lock:
            if kind == "extern_entry":
                raise P4RuntimeError(Code.UNIMPLEMENTED, "No extern support yet")
            writer = _WRITERS.get(kind)  # type: ignore[arg-type]
            if writer is None:
                raise P4RuntimeError(Code.UNKNOWN, "Incorrect entity type")
            writer(self, update.type, getattr(entity, kind))

    def write(self, request: p4r.WriteRequest) -> list[P4RuntimeError | None]:
        """Apply a WriteRequest's updates in order (CONTINUE_ON_ERROR); one result per update."""
        self.require_pipeline()
        if request.atomicity != p4r.WriteRequest.CONTINUE_ON_ERROR:
            raise P4RuntimeError(Code.UNIMPLEMENTED, "Support for atomic write modes has not been implemented yet")
        results: list[P4RuntimeError | None] = []
        with self.switch.lock:  # packets see the batch applied as a whole
            for update in request.updates:
                try:
                    self.write_update(update)
                    results.append(None)
                except P4RuntimeError as exc:
                    results.append(exc)
        return results

    def read(self, request: p4r.ReadRequest) -> list[p4r.Entity]:
        """Every entity a ReadRequest asks for; the first refusal aborts the read."""
        self.require_pipeline()
        out: list[p4r.Entity] = []
        with self.switch.lock:
            for entity in request.entities:
                kind = entity.WhichOneof("entity")
                reader = _READERS.get(kind)  # type: ignore[arg-type]
                if reader is None:
                    raise P4RuntimeError(Code.UNKNOWN, "Incorrect entity type")
                reader(self, getattr(entity, kind), out)
        return out
