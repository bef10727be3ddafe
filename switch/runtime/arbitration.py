"""Client arbitration: StreamChannel connections per (device id, role), primary = highest election id.

Behaves as PI's pi_server: a new or changed election id is answered on the stream with a MasterArbitrationUpdate
carrying the primary's election id and status OK ("Is primary") or ALREADY_EXISTS ("Is backup"); when the primary
changes every connection of that (device, role) is told; a duplicate election id is INVALID_ARGUMENT; at most 16
connections per device. Write / SetForwardingPipelineConfig must carry the primary's election id; with no stream
open, only requests without an election id are accepted.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from typing import Callable

from finsy.proto import p4r, rpc_code

from switch.runtime.status import Code, P4RuntimeError

MAX_CONNECTIONS = 16

_ids = itertools.count(1)


def election_id_value(uint128: p4r.Uint128) -> int:
    """A Uint128 message as an int."""
    return (uint128.high << 64) | uint128.low


def election_id_message(value: int) -> p4r.Uint128:
    return p4r.Uint128(high=value >> 64, low=value & 0xFFFF_FFFF_FFFF_FFFF)


@dataclass(eq=False)
class Connection:
    """One StreamChannel after its first arbitration: where to send responses, and its election id."""

    device_id: int
    role: str
    election_id: int
    send: Callable[[p4r.StreamMessageResponse], None]
    id: int = field(default_factory=lambda: next(_ids))


class Arbitration:
    """The set of live connections of every (device id, role), with primary election."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._groups: dict[tuple[int, str], list[Connection]] = {}

    # --- queries --------------------------------------------------------------------------------------------------

    def primary(self, device_id: int, role: str = "") -> Connection | None:
        with self._lock:
            return self._primary_locked(device_id, role)

    def _primary_locked(self, device_id: int, role: str) -> Connection | None:
        conns = self._groups.get((device_id, role))
        return max(conns, key=lambda c: c.election_id) if conns else None

    def connection_count(self, device_id: int) -> int:
        with self._lock:
            return self._count_locked(device_id)

    def check_writer(self, device_id: int, role: str, election_id: int | None) -> None:
        """PERMISSION_DENIED unless a request with this election id (None = unset) may write, as PI decides.

        No stream open for the device: only requests without an election id pass. Otherwise the id (unset = 0)
        must be the primary's of the request's role.
        """
        with self._lock:
            if self._count_locked(device_id) == 0:
                if election_id is not None:
                    raise P4RuntimeError(Code.PERMISSION_DENIED, "Not primary")
                return
            primary = self._primary_locked(device_id, role)
            if primary is None or primary.election_id != (election_id or 0):
                raise P4RuntimeError(Code.PERMISSION_DENIED, "Not primary")

    def _count_locked(self, device_id: int) -> int:
        return sum(len(c) for (dev, _), c in self._groups.items() if dev == device_id)

    # --- membership -----------------------------------------------------------------------------------------------

    def join(self, conn: Connection) -> None:
        """Add a connection; INVALID_ARGUMENT if its election id is taken, RESOURCE_EXHAUSTED past 16."""
        with self._lock:
            if self._count_locked(conn.device_id) >= MAX_CONNECTIONS:
                raise P4RuntimeError(Code.RESOURCE_EXHAUSTED, "Too many connections")
            conns = self._groups.get((conn.device_id, conn.role), [])
            if any(c.election_id == conn.election_id for c in conns):
                raise P4RuntimeError(Code.INVALID_ARGUMENT, "Election id already exists")
            self._groups[(conn.device_id, conn.role)] = conns + [conn]
            if self._primary_locked(conn.device_id, conn.role) is conn:
                self._notify_all(conn.device_id, conn.role)
            else:
                self._notify(conn)

    def update(self, conn: Connection, election_id: int) -> None:
        """Change a connection's election id (a later arbitration message on the same stream)."""
        with self._lock:
            if conn.election_id == election_id:
                return  # as PI: nothing changes, nothing is sent
            conns = self._groups[(conn.device_id, conn.role)]
            if any(c is not conn and c.election_id == election_id for c in conns):
                raise P4RuntimeError(Code.INVALID_ARGUMENT, "New election id already exists")
            was_primary = self._primary_locked(conn.device_id, conn.role) is conn
            conn.election_id = election_id
            is_primary = self._primary_locked(conn.device_id, conn.role) is conn
            if was_primary != is_primary:
                self._notify_all(conn.device_id, conn.role)
            else:
                self._notify(conn)

    def leave(self, conn: Connection) -> None:
        """Remove a connection (stream closed); if it was the primary, tell the others who is primary now."""
        with self._lock:
            key = (conn.device_id, conn.role)
            conns = self._groups.get(key, [])
            if conn not in conns:
                return
            was_primary = self._primary_locked(*key) is conn
            conns.remove(conn)
            if not conns:
                del self._groups[key]
            elif was_primary:
                self._notify_all(*key)

    # --- notifications --------------------------------------------------------------------------------------------

    def _notify(self, conn: Connection) -> None:
        primary = self._primary_locked(conn.device_id, conn.role)
        assert primary is not None
        update = p4r.MasterArbitrationUpdate(device_id=conn.device_id,
                                             election_id=election_id_message(primary.election_id))
        if conn.role:
            update.role.name = conn.role
        if primary is conn:
            update.status.code = rpc_code.Code.OK
            update.status.message = "Is primary"
        else:
            update.status.code = rpc_code.Code.ALREADY_EXISTS
            update.status.message = "Is backup"
        conn.send(p4r.StreamMessageResponse(arbitration=update))

    def _notify_all(self, device_id: int, role: str) -> None:
        for conn in self._groups.get((device_id, role), []):
            self._notify(conn)
