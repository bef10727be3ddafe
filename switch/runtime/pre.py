"""PacketReplicationEngineEntry: multicast groups and clone sessions, as PI's pre_mc_mgr / pre_clone_mgr.

Multicast group ids are 1..32767 (ids from 32768 are reserved: clone session S uses multicast group 32768 + S, as in
PI). A replica is (port, instance = egress_rid); the port is the deprecated `egress_port` or the newer bytes `port`,
and reads return the form that was written. Clone sessions: class_of_service ≠ 0 is UNIMPLEMENTED,
packet_length_bytes truncates the clone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from finsy.proto import p4r

from switch.errors import MatchError
from switch.runtime.codec import port_from_bytes
from switch.runtime.status import Code, P4RuntimeError, from_match_error, invalid

if TYPE_CHECKING:
    from switch.runtime.device import Device

FIRST_RESERVED_GROUP_ID = 1 << 15
MAX_CLONE_SESSION_ID = 32768  # exclusive


@dataclass(frozen=True, order=True)
class ReplicaSpec:
    """A replica as written: rid, port number, and how the port was given (egress_port, or bytes of this length)."""

    instance: int
    port: int
    port_bytes: int  # 0: `egress_port` field; n > 0: `port` bytes of length n

    def message(self) -> p4r.Replica:
        replica = p4r.Replica(instance=self.instance)
        if self.port_bytes:
            replica.port = self.port.to_bytes(self.port_bytes, "big")
        else:
            replica.egress_port = self.port
        return replica


def _replicas(replicas: list[p4r.Replica]) -> list[ReplicaSpec]:
    out: list[ReplicaSpec] = []
    seen: set[tuple[int, int]] = set()
    for replica in replicas:
        if len(replica.backup_replicas):
            raise P4RuntimeError(Code.UNIMPLEMENTED, "Backup replicas are not supported")
        kind = replica.WhichOneof("port_kind")
        if kind == "egress_port":
            spec = ReplicaSpec(replica.instance, replica.egress_port, 0)
        elif kind == "port":
            spec = ReplicaSpec(replica.instance, port_from_bytes(replica.port), len(replica.port))
        else:
            raise invalid("Missing port in multicast group replica")
        if (spec.instance, spec.port) in seen:
            raise invalid("Duplicate replica in multicast group")
        seen.add((spec.instance, spec.port))
        out.append(spec)
    return sorted(out)


def _engine_replicas(specs: list[ReplicaSpec]) -> list[tuple[int, int]]:
    return [(s.port, s.instance) for s in specs]


@dataclass
class CloneSession:
    """A clone session as written."""

    replicas: list[ReplicaSpec]
    class_of_service: int
    packet_length_bytes: int


def write(device: Device, update_type: int, pre: p4r.PacketReplicationEngineEntry) -> None:
    kind = pre.WhichOneof("type")
    try:
        if kind == "multicast_group_entry":
            _mc_write(device, update_type, pre.multicast_group_entry)
        elif kind == "clone_session_entry":
            _clone_write(device, update_type, pre.clone_session_entry)
        else:
            raise invalid("Invalid PRE operation")
    except MatchError as exc:
        raise from_match_error(exc) from None


def _mc_write(device: Device, update_type: int, entry: p4r.MulticastGroupEntry) -> None:
    gid = entry.multicast_group_id
    if gid == 0:
        raise invalid("0 is not a valid group id")
    if gid >= FIRST_RESERVED_GROUP_ID:
        raise P4RuntimeError(Code.OUT_OF_RANGE, "Group id value is too high")
    groups = device.mc_groups
    pre = device.switch.pre
    if update_type == p4r.Update.INSERT:
        if gid in groups:
            raise P4RuntimeError(Code.ALREADY_EXISTS, "Multicast group already exists")
        specs = _replicas(list(entry.replicas))
        pre.set_group(gid, _engine_replicas(specs))
        groups[gid] = specs
    elif update_type == p4r.Update.MODIFY:
        if gid not in groups:
            raise P4RuntimeError(Code.NOT_FOUND, "Multicast group does not exist")
        specs = _replicas(list(entry.replicas))
        pre.set_group(gid, _engine_replicas(specs))
        groups[gid] = specs
    elif update_type == p4r.Update.DELETE:
        if gid not in groups:
            raise P4RuntimeError(Code.NOT_FOUND, "Multicast group does not exist")
        pre.delete_group(gid)
        del groups[gid]
    elif update_type == p4r.Update.UNSPECIFIED:
        raise invalid("Update type is not set")
    else:
        raise invalid("Invalid update type")


def _clone_write(device: Device, update_type: int, entry: p4r.CloneSessionEntry) -> None:
    sid = entry.session_id
    if sid == 0:
        raise invalid("0 is not a valid session id")
    if update_type == p4r.Update.UNSPECIFIED:
        raise invalid("Update type is not set")
    if update_type not in (p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE):
        raise invalid("Invalid update type")
    if sid >= MAX_CLONE_SESSION_ID:
        raise invalid("Clone session id out-of-range")
    sessions = device.clone_sessions
    gid = FIRST_RESERVED_GROUP_ID + sid
    if update_type == p4r.Update.DELETE:
        if sid not in sessions:
            raise P4RuntimeError(Code.NOT_FOUND, "Clone session id does not exist")
        device.switch.mirror.delete_session(sid)
        device.switch.pre.delete_group(gid)
        del sessions[sid]
        return
    if update_type == p4r.Update.INSERT and sid in sessions:
        raise P4RuntimeError(Code.ALREADY_EXISTS, "Clone session id already exists")
    if update_type == p4r.Update.MODIFY and sid not in sessions:
        raise P4RuntimeError(Code.NOT_FOUND, "Clone session id does not exist")
    specs = _replicas(list(entry.replicas))
    if entry.class_of_service != 0:
        raise P4RuntimeError(Code.UNIMPLEMENTED, "COS for clone sessions not supported yet")
    if entry.packet_length_bytes < 0:
        raise invalid("packet_length_bytes cannot be negative")
    device.switch.pre.set_group(gid, _engine_replicas(specs))
    device.switch.mirror.set_session(sid, mgid=gid, truncate=entry.packet_length_bytes)
    sessions[sid] = CloneSession(specs, entry.class_of_service, entry.packet_length_bytes)


def read(device: Device, pre: p4r.PacketReplicationEngineEntry, out: list[p4r.Entity]) -> None:
    kind = pre.WhichOneof("type")
    if kind == "multicast_group_entry":
        gid = pre.multicast_group_entry.multicast_group_id
        if gid >= FIRST_RESERVED_GROUP_ID:
            raise P4RuntimeError(Code.OUT_OF_RANGE, "Group id value is too high")
        if gid and gid not in device.mc_groups:
            raise P4RuntimeError(Code.NOT_FOUND, "Multicast group does not exist")
        for group_id in ([gid] if gid else sorted(device.mc_groups)):
            msg = p4r.MulticastGroupEntry(multicast_group_id=group_id)
            msg.replicas.extend(s.message() for s in device.mc_groups[group_id])
            out.append(p4r.Entity(packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
                multicast_group_entry=msg)))
    elif kind == "clone_session_entry":
        sid = pre.clone_session_entry.session_id
        if sid and sid not in device.clone_sessions:
            raise P4RuntimeError(Code.NOT_FOUND, "Clone session id does not exist")
        for session_id in ([sid] if sid else sorted(device.clone_sessions)):
            session = device.clone_sessions[session_id]
            msg = p4r.CloneSessionEntry(session_id=session_id, class_of_service=session.class_of_service,
                                        packet_length_bytes=session.packet_length_bytes)
            msg.replicas.extend(s.message() for s in session.replicas)
            out.append(p4r.Entity(packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
                clone_session_entry=msg)))
    else:
        raise invalid("Invalid PRE operation")
