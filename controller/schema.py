"""`P4Schema`: finsy's, loading every P4Info that p4c writes.

finsy 0.30 indexes a table's match fields by their last name component (their alias) as well as by their name,
refuses a P4Info where two match fields of one table share it (`hdr.u.short.$valid$` and `hdr.u.byte.$valid$`, or
`hdr.inner.dstAddr` and `hdr.outer.dstAddr`: p4c's issue561 samples) with a message that does not even name it
("name already exists: {name!r}"), and keys a decoded entry's match by alias, where two such fields would be one.
Here a short name two entities share indexes neither of them, and match fields that share it take their full name as
alias (so a read entry's match is keyed by it); full names and ids stay unique.
"""

from __future__ import annotations

from typing import Any

from finsy import P4Schema
from finsy import p4schema

__all__ = ["P4Schema"]


def _add(self: Any, entity: Any, split_suffix: bool = False) -> None:
    ident, name = entity.id, entity.name
    if ident in self._by_id:
        raise ValueError(f"id already exists: {ident!r}")
    self._by_id[ident] = entity
    if name in self._by_name:
        raise ValueError(f"name already exists: {name!r}")
    self._by_name[name] = entity
    alias = getattr(entity, "alias", name)
    short = alias if alias != name else alias.rsplit(".", 1)[-1] if split_suffix and "." in alias else None
    if short is None:
        return
    shared = getattr(self, "_shared_aliases", None)
    if shared is None:
        shared = set()
        setattr(self, "_shared_aliases", shared)
    if short in shared:
        if isinstance(entity, p4schema.P4MatchField):
            entity._alias = entity.name
        return
    if short in self._by_name:
        clash = self._by_name[short]
        if clash.name != short:  # another entity's short name: ambiguous, index neither
            del self._by_name[short]
            shared.add(short)
            for e in (clash, entity):
                if isinstance(e, p4schema.P4MatchField):
                    e._alias = e.name
        return
    self._by_name[short] = entity


p4schema.P4EntityMap._add = _add  # type: ignore[method-assign]
