"""Match tables: exact (dict), LPM (dict per prefix length), ternary/range/optional (priority-sorted list).

A `MatchTable` is the control-plane and data-plane view of one JSON table. Generated pipeline code calls
`lookup(key)` (or, for exact tables, the bound `dict.get` of `exact_index`) with a tuple of key-field values and
gets an `Entry` or None (miss). Priorities follow P4Runtime: a higher number wins.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple

from switch.errors import MatchError, MatchErrorCode

ActionFn = Callable[[list, tuple], None]


class KeyField(NamedTuple):
    """One field of a table key: its JSON `name`, match kind and width in bits."""

    name: str
    match_type: str
    bitwidth: int


class ActionInfo(NamedTuple):
    """An action as the control plane sees it: name, JSON id and (name, bitwidth) parameters."""

    name: str
    id: int
    params: list[tuple[str, int]]


@dataclass(eq=False)
class Entry:
    """A table entry (or a default entry, whose key is None): action, data and direct-counter values."""

    key: tuple | None
    priority: int
    action: str
    data: tuple[int, ...]
    fn: ActionFn = field(repr=False)
    aid: int = field(repr=False)
    packets: int = 0
    bytes: int = 0
    meter: Any = field(default=None, repr=False)  # the entry's direct meter cell once configured (sim/meters.py)
    group: Any = field(default=None, repr=False)  # the selector group it runs (sim/action_profiles.py), if any
    is_const: bool = False
    handle: int = -1   # per-table entry handle, as BMv2 numbers entries (for traces and STF `= handle`)
    # internal match representation (lpm: masked tuple; ternary: per-field tests)
    match: Any = field(default=None, repr=False)


class MatchTable:
    """One match-action table of a loaded program; `actions` maps action name → (ActionInfo, compiled function)."""

    def __init__(self, name: str, tid: int, match_type: str, key: list[KeyField], actions: dict[str, tuple[ActionInfo, ActionFn]],
                 max_size: int, with_counters: bool, default: tuple[str, tuple[int, ...]], default_is_const: bool) -> None:
        self.name = name
        self.id = tid
        self.match_type = match_type
        self.key = key
        self.action_names = list(actions)
        self._actions = actions
        self.max_size = max_size
        self.with_counters = with_counters
        self.is_const = False
        self.default_is_const = default_is_const
        self._initial_default = default
        self.needs_priority = any(k.match_type in ("ternary", "range", "optional") for k in key)
        self._lpm_pos = next((i for i, k in enumerate(key) if k.match_type == "lpm"), None)
        self._masks = [(1 << k.bitwidth) - 1 for k in key]
        self.exact_index: dict[Any, Entry] = {}   # exact tables: single value or tuple → Entry
        self._lpm: dict[int, dict[tuple, Entry]] = {}
        self._lpm_lens: list[int] = []
        self._prio: list[Entry] = []             # ternary/range tables: sorted by priority, highest first
        self._by_id: dict[Any, Entry] = {}       # canonical key (+priority) → Entry, for all kinds
        self._next_handle = 0
        self.default: Entry = self._make_default(*default)
        self.kind = "keyless" if not key else ("exact" if all(k.match_type == "exact" for k in key) else
                                                "lpm" if self._lpm_pos is not None and not self.needs_priority else "prio")
        if self.kind == "lpm" and len(key) == 1:
            self.kind = "lpm1"  # single-field LPM: dicts keyed by the masked value, probed longest prefix first
        self._lpm_probe: list[tuple[int, dict]] = []

    # --- data plane ------------------------------------------------------------------------------------------
    def lookup(self, values: tuple) -> Entry | None:
        """The entry matching key-field values `values` (one int per key field), or None on a miss."""
        kind = self.kind
        if kind == "exact":
            return self.exact_index.get(values[0] if len(values) == 1 else values)
        if kind == "lpm1":
            v = values[0]
            for mask, d in self._lpm_probe:
                e = d.get(v & mask)
                if e is not None:
                    return e
            return None
        if kind == "lpm":
            pos = self._lpm_pos
            bw = self.key[pos].bitwidth
            lst = list(values)
            v = values[pos]
            for plen in self._lpm_lens:
                lst[pos] = v >> (bw - plen) << (bw - plen) if plen else 0
                e = self._lpm[plen].get(tuple(lst))
                if e is not None:
                    return e
            return None
        if kind == "prio":
            for e in self._prio:
                for v, (lo, hi, is_mask) in zip(values, e.match):
                    if is_mask:
                        if v & hi != lo:
                            break
                    elif not lo <= v <= hi:
                        break
                else:
                    return e
            return None
        return None

    # --- control plane ---------------------------------------------------------------------------------------
    @property
    def entries(self) -> list[Entry]:
        """All entries (const and runtime), in insertion order."""
        return list(self._by_id.values())

    def action_info(self, action: str) -> ActionInfo | None:
        """The action `action` as this table knows it (by the table's action ids: p4c's JSON may hold several
        actions of one name, e.g. a table's `fwd(port)` and the copy a direct call `fwd(4)` specialises)."""
        found = self._actions.get(action)
        return found[0] if found is not None else None

    def _resolve_action(self, action: str, data: tuple | list) -> tuple[ActionInfo, ActionFn, tuple[int, ...]]:
        if action not in self._actions:
            raise MatchError(MatchErrorCode.ACTION_NOT_IN_TABLE, f"action {action!r} not in table {self.name!r}")
        info, fn = self._actions[action]
        if len(data) != len(info.params):
            raise MatchError(MatchErrorCode.BAD_ACTION_DATA,
                             f"action {action!r} takes {len(info.params)} parameters, got {len(data)}")
        out = []
        for v, (pname, bw) in zip(data, info.params):
            if not isinstance(v, int) or isinstance(v, bool):
                raise MatchError(MatchErrorCode.BAD_ACTION_DATA, f"parameter {pname!r} must be an int")
            out.append(v & ((1 << bw) - 1))
        return info, fn, tuple(out)

    def _canon(self, key: tuple | list, priority: int) -> tuple[tuple, Any, int]:
        """Validate a control-plane key; return (canonical key, internal match, priority)."""
        if not isinstance(key, (tuple, list)) or len(key) != len(self.key):
            raise MatchError(MatchErrorCode.BAD_MATCH_KEY, f"table {self.name!r} needs {len(self.key)} key fields")
        if self.needs_priority:
            if not isinstance(priority, int) or priority <= 0:
                raise MatchError(MatchErrorCode.MISSING_PRIORITY, f"table {self.name!r} needs a priority > 0")
        elif priority:
            raise MatchError(MatchErrorCode.UNEXPECTED_PRIORITY, f"table {self.name!r} takes no priority")
            # (priority 0 is the only accepted value for exact/lpm tables)
        canon: list = []
        tests: list = []
        for item, kf, m in zip(key, self.key, self._masks):
            try:
                if kf.match_type == "exact" or kf.match_type == "valid":
                    v = int(item) & m
                    canon.append(v)
                    tests.append((v, m, True))
                elif kf.match_type == "lpm":
                    v, plen = item
                    v, plen = int(v), int(plen)
                    if not 0 <= plen <= kf.bitwidth:
                        raise MatchError(MatchErrorCode.BAD_MATCH_KEY, f"prefix length {plen} out of range for {kf.name!r}")
                    pm = (m >> (kf.bitwidth - plen) << (kf.bitwidth - plen)) if plen else 0
                    canon.append((v & pm, plen))
                    tests.append((v & pm, pm, True))
                elif kf.match_type == "ternary":
                    v, mask = item
                    mask = int(mask) & m
                    canon.append((int(v) & mask, mask))
                    tests.append((int(v) & mask, mask, True))
                elif kf.match_type == "optional":
                    v, wild = item
                    mask = 0 if wild else m
                    canon.append((int(v) & mask, bool(wild)))
                    tests.append((int(v) & mask, mask, True))
                elif kf.match_type == "range":
                    lo, hi = item
                    lo, hi = int(lo) & m, int(hi) & m
                    canon.append((lo, hi))
                    tests.append((lo, hi, False))
                else:  # pragma: no cover - refused at load
                    raise MatchError(MatchErrorCode.BAD_MATCH_KEY, f"unsupported match type {kf.match_type!r}")
            except (TypeError, ValueError) as exc:
                raise MatchError(MatchErrorCode.BAD_MATCH_KEY, f"bad value for {kf.match_type} field {kf.name!r}: {item!r}") from exc
        return tuple(canon), tests, (priority if self.needs_priority else 0)

    def _ident(self, canon: tuple, priority: int) -> Any:
        return (canon, priority) if self.needs_priority else canon

    def insert(self, key: tuple, action: str, data: tuple | list = (), priority: int = 0, *, _const: bool = False) -> Entry:
        """Add an entry; DUPLICATE_ENTRY if the same key (and priority) exists, TABLE_FULL past max_size."""
        if self.is_const and not _const:
            raise MatchError(MatchErrorCode.TABLE_IS_CONST, f"table {self.name!r} has const entries")
        if not self.key:
            raise MatchError(MatchErrorCode.BAD_MATCH_KEY, f"table {self.name!r} has no key; only its default can be set")
        canon, tests, priority = self._canon(key, priority)
        ident = self._ident(canon, priority)
        if ident in self._by_id:
            raise MatchError(MatchErrorCode.DUPLICATE_ENTRY, f"in table {self.name!r}: {canon!r}")
        if len(self._by_id) >= self.max_size and not _const:
            raise MatchError(MatchErrorCode.TABLE_FULL, f"table {self.name!r} holds {self.max_size} entries")
        info, fn, d = self._resolve_action(action, data)
        e = Entry(canon, priority, action, d, fn, info.id, is_const=_const, handle=self._next_handle)
        self._next_handle += 1
        self._add_index(e, tests)
        self._by_id[ident] = e
        return e

    def _add_index(self, e: Entry, tests: list) -> None:
        if self.kind == "exact":
            k = e.key[0] if len(e.key) == 1 else e.key
            self.exact_index[k] = e
        elif self.kind in ("lpm", "lpm1"):
            pos = self._lpm_pos
            plen = e.key[pos][1]
            if self.kind == "lpm1":
                k: Any = e.key[0][0]
            else:
                k = tuple(c[0] if i == pos else c for i, c in enumerate(e.key))
            e.match = (plen, k)
            if plen not in self._lpm:
                self._lpm[plen] = {}
                self._lpm_reindex()
            self._lpm[plen][k] = e
        else:
            e.match = tests
            # stable: among equal priorities the earlier entry stays first
            idx = len(self._prio)
            for i, other in enumerate(self._prio):
                if other.priority < e.priority:
                    idx = i
                    break
            self._prio.insert(idx, e)

    def _remove_index(self, e: Entry) -> None:
        if self.kind == "exact":
            del self.exact_index[e.key[0] if len(e.key) == 1 else e.key]
        elif self.kind in ("lpm", "lpm1"):
            plen, k = e.match
            d = self._lpm[plen]
            del d[k]
            if not d:
                del self._lpm[plen]
                self._lpm_reindex()
        else:
            self._prio.remove(e)

    def _lpm_reindex(self) -> None:
        self._lpm_lens = sorted(self._lpm, reverse=True)
        bw = self.key[self._lpm_pos].bitwidth
        full = (1 << bw) - 1
        self._lpm_probe = [(full >> (bw - p) << (bw - p) if p else 0, self._lpm[p]) for p in self._lpm_lens]

    def _find(self, key: tuple, priority: int) -> Entry:
        canon, _tests, priority = self._canon(key, priority)
        e = self._by_id.get(self._ident(canon, priority))
        if e is None:
            raise MatchError(MatchErrorCode.ENTRY_NOT_FOUND, f"in table {self.name!r}: {canon!r}")
        return e

    def lookup_entry(self, key: tuple, priority: int = 0) -> Entry | None:
        """The entry with exactly this key (and priority), or None."""
        try:
            return self._find(key, priority)
        except MatchError as exc:
            if exc.code is MatchErrorCode.ENTRY_NOT_FOUND:
                return None
            raise

    def modify(self, key: tuple, action: str, data: tuple | list = (), priority: int = 0) -> Entry:
        """Change the action/data of an existing entry (its counters are kept)."""
        if self.is_const:
            raise MatchError(MatchErrorCode.TABLE_IS_CONST, f"table {self.name!r} has const entries")
        e = self._find(key, priority)
        info, fn, d = self._resolve_action(action, data)
        e.action, e.data, e.fn, e.aid = action, d, fn, info.id
        return e

    def delete(self, key: tuple, priority: int = 0) -> None:
        """Remove an entry."""
        if self.is_const:
            raise MatchError(MatchErrorCode.TABLE_IS_CONST, f"table {self.name!r} has const entries")
        e = self._find(key, priority)
        canon, _t, priority = self._canon(key, priority)
        del self._by_id[self._ident(canon, priority)]
        self._remove_index(e)

    def _make_default(self, action: str, data: tuple | list) -> Entry:
        info, fn, d = self._resolve_action(action, data)
        return Entry(None, 0, action, d, fn, info.id)

    def set_default(self, action: str, data: tuple | list = ()) -> None:
        """Set the default (miss) action; DEFAULT_ACTION_IS_CONST when the program fixed it."""
        if self.default_is_const:
            raise MatchError(MatchErrorCode.DEFAULT_ACTION_IS_CONST, f"table {self.name!r}")
        self.default = self._make_default(action, data)

    def reset_default(self) -> None:
        """Restore the default action the program declared."""
        self.default = self._make_default(*self._initial_default)

    def clear(self) -> None:
        """Remove all non-const entries and restore the program's default action."""
        for ident, e in list(self._by_id.items()):
            if not e.is_const:
                del self._by_id[ident]
                self._remove_index(e)
        self.default = self._make_default(*self._initial_default)

    def __repr__(self) -> str:
        return f"MatchTable({self.name!r}, {self.match_type}, {len(self._by_id)} entries)"
