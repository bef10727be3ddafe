"""The packet replication engine (multicast groups of (port, rid) replicas) and clone (mirror) sessions."""

from __future__ import annotations

from dataclasses import dataclass

from switch.errors import MatchError, MatchErrorCode

MAX_MIRROR_SESSION_ID = 32767  # BMv2 RegisterAccess::MAX_MIRROR_SESSION_ID (15 bits)


def _check_port(port: object, what: str) -> int:
    if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port < 1 << 16:
        raise MatchError(MatchErrorCode.INVALID_VALUE, f"{what}: bad port {port!r}")
    return port


class Pre:
    """Multicast groups: mgid → ordered list of (egress port, replication id)."""

    def __init__(self) -> None:
        self.groups: dict[int, list[tuple[int, int]]] = {}

    def set_group(self, mgid: int, replicas: list[tuple[int, int]]) -> None:
        """Create or replace group `mgid` (1..65535). Like BMv2's PRE, a (port, rid) pair may repeat (one copy each);
        P4Runtime's uniqueness rule is the server's to check."""
        if not isinstance(mgid, int) or not 0 < mgid < 1 << 16:
            raise MatchError(MatchErrorCode.INVALID_VALUE, f"multicast group id {mgid!r} (1..65535)")
        reps: list[tuple[int, int]] = []
        for r in replicas:
            try:
                port, rid = r
            except (TypeError, ValueError):
                raise MatchError(MatchErrorCode.INVALID_VALUE, f"group {mgid}: replica {r!r} is not (port, rid)") from None
            _check_port(port, f"group {mgid}")
            if not isinstance(rid, int) or not 0 <= rid < 1 << 16:
                raise MatchError(MatchErrorCode.INVALID_VALUE, f"group {mgid}: bad rid {rid!r}")
            reps.append((port, rid))
        self.groups[mgid] = reps

    def delete_group(self, mgid: int) -> None:
        """Remove group `mgid`; GROUP_NOT_FOUND if absent."""
        if mgid not in self.groups:
            raise MatchError(MatchErrorCode.GROUP_NOT_FOUND, f"multicast group {mgid!r}")
        del self.groups[mgid]

    def reset(self) -> None:
        self.groups.clear()


@dataclass(frozen=True)
class MirrorSession:
    """Where clones of a session go: a port and/or a multicast group; `truncate` > 0 cuts copies to that many bytes."""

    egress_port: int | None
    mgid: int | None
    truncate: int = 0


class Mirror:
    """Clone sessions: session id → MirrorSession."""

    def __init__(self) -> None:
        self.sessions: dict[int, MirrorSession] = {}

    def set_session(self, sid: int, egress_port: int | None = None, mgid: int | None = None, truncate: int = 0) -> None:
        """Create or replace a session (0..32767) sending clones to `egress_port` and/or group `mgid`."""
        if not isinstance(sid, int) or not 0 <= sid <= MAX_MIRROR_SESSION_ID:
            raise MatchError(MatchErrorCode.INVALID_VALUE, f"mirror session id {sid!r} (0..{MAX_MIRROR_SESSION_ID})")
        if egress_port is None and mgid is None:
            raise MatchError(MatchErrorCode.INVALID_VALUE, f"mirror session {sid}: needs an egress port or a group")
        if egress_port is not None:
            _check_port(egress_port, f"mirror session {sid}")
        if mgid is not None and (not isinstance(mgid, int) or not 0 < mgid < 1 << 16):
            raise MatchError(MatchErrorCode.INVALID_VALUE, f"mirror session {sid}: bad group {mgid!r}")
        if not isinstance(truncate, int) or truncate < 0:
            raise MatchError(MatchErrorCode.INVALID_VALUE, f"mirror session {sid}: bad truncate length {truncate!r}")
        self.sessions[sid] = MirrorSession(egress_port, mgid, truncate)

    def delete_session(self, sid: int) -> None:
        """Remove a session; SESSION_NOT_FOUND if absent."""
        if sid not in self.sessions:
            raise MatchError(MatchErrorCode.SESSION_NOT_FOUND, f"mirror session {sid!r}")
        del self.sessions[sid]

    def reset(self) -> None:
        self.sessions.clear()
