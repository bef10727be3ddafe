"""Stateful arrays: registers (cells modulo their width) and counters (packets and bytes), as BMv2 keeps them."""

from __future__ import annotations

import numpy as np

from switch.errors import MatchError, MatchErrorCode


def check_cell(what: str, name: str, index: object, size: int, direct_table: str | None = None) -> None:
    """MatchError INVALID_INDEX unless `index` is a cell of an indexed array of `size` (a direct one, of table
    `direct_table`, has none: its cells are the table's entries)."""
    if direct_table is not None:
        raise MatchError(MatchErrorCode.INVALID_INDEX,
                         f"{what} {name!r} is direct: reach it through the entries of table {direct_table!r}")
    if not isinstance(index, int) or not 0 <= index < size:
        raise MatchError(MatchErrorCode.INVALID_INDEX, f"{what} {name!r} index {index!r} (size {size})")


class RegisterArray:
    """`register<bit<W>>(size)`: `values` is what generated code indexes directly: a plain list, or a uint32 numpy
    array once a vector window uses the register (`vectorize`, see vectors.py). `read` and `cells` give ints."""

    def __init__(self, name: str, rid: int, size: int, bitwidth: int) -> None:
        self.name = name
        self.id = rid
        self.size = size
        self.bitwidth = bitwidth
        self.mask = (1 << bitwidth) - 1
        self.values: list[int] | np.ndarray = [0] * size
        self.columns: np.ndarray | None = None
        """The 2-D array whose column `values` is, when the register is one of a column window's (vectors.py)."""

    @property
    def is_vector(self) -> bool:
        return isinstance(self.values, np.ndarray)

    def vectorize(self) -> None:
        """Keep the cells in a uint32 array (bit<32> registers only); the values are kept."""
        if self.bitwidth != 32:
            raise ValueError(f"register {self.name!r} is bit<{self.bitwidth}>, only bit<32> registers are arrays")
        if not self.is_vector:
            self.values = np.array(self.values, dtype=np.uint32)

    def _check(self, index: int) -> None:
        if not isinstance(index, int) or not 0 <= index < self.size:
            raise MatchError(MatchErrorCode.INVALID_INDEX, f"register {self.name!r} index {index!r} (size {self.size})")

    def read(self, index: int) -> int:
        """Cell value (unsigned)."""
        self._check(index)
        return int(self.values[index])

    def cells(self, start: int = 0, stop: int | None = None) -> list[int]:
        """Cell values [start, stop) (all by default) as ints."""
        v = self.values[start:stop]
        return v.tolist() if isinstance(v, np.ndarray) else list(v)

    def write(self, index: int, value: int) -> None:
        """Store `value` modulo 2**bitwidth."""
        self._check(index)
        if not isinstance(value, int):
            raise MatchError(MatchErrorCode.INVALID_VALUE, f"register {self.name!r} value {value!r}")
        self.values[index] = value & self.mask

    def reset(self) -> None:
        """All cells to zero (in place: generated code holds a reference to `values`)."""
        if isinstance(self.values, np.ndarray):
            self.values[:] = 0
        else:
            self.values[:] = [0] * self.size


class CounterArray:
    """`counter(size, packets_and_bytes)` or a direct counter; `packets`/`bytes` are plain lists (indirect ones)."""

    def __init__(self, name: str, cid: int, size: int, is_direct: bool, table: str | None) -> None:
        self.name = name
        self.id = cid
        self.size = size
        self.is_direct = is_direct
        self.table = table
        self.packets: list[int] = [0] * size
        self.bytes: list[int] = [0] * size
        self._table_obj = None  # set for direct counters: the MatchTable whose entries hold the values

    def _check(self, index: int) -> None:
        check_cell("counter", self.name, index, self.size, self.table if self.is_direct else None)

    def read(self, index: int) -> tuple[int, int]:
        """(packets, bytes) of cell `index`."""
        self._check(index)
        return self.packets[index], self.bytes[index]

    def write(self, index: int, packets: int, nbytes: int) -> None:
        """Set cell `index` (values modulo 2**64 as BMv2's counters)."""
        self._check(index)
        self.packets[index] = packets & 0xFFFFFFFFFFFFFFFF
        self.bytes[index] = nbytes & 0xFFFFFFFFFFFFFFFF

    def reset(self) -> None:
        """Zero all cells (for a direct counter: the counters of all entries of its table)."""
        if self.is_direct and self._table_obj is not None:
            for e in self._table_obj.entries + [self._table_obj.default]:
                e.packets = e.bytes = 0
            return
        self.packets[:] = [0] * self.size
        self.bytes[:] = [0] * self.size


class ValueSet:
    """A parser value set (`value_set<T>(size)`, JSON `parse_vsets`). A member is a value of T in BMv2's compressed
    form (T's fields concatenated at their widths); `members` is the set the generated parser tests a key against."""

    def __init__(self, name: str, vid: int, bitwidth: int, max_size: int | None) -> None:
        self.name = name
        self.id = vid
        self.bitwidth = bitwidth
        self.max_size = max_size
        self.members: set[int] = set()

    def set_members(self, values: list[int]) -> None:
        """Replace the members (P4Runtime writes a value set whole); ValueError if one does not fit or too many."""
        new = set(values)
        for v in new:
            if not isinstance(v, int) or v < 0 or v.bit_length() > self.bitwidth:
                raise ValueError(f"value {v!r} does not fit value set {self.name!r} ({self.bitwidth} bits)")
        if self.max_size is not None and len(new) > self.max_size:
            raise ValueError(f"value set {self.name!r} holds at most {self.max_size} members, got {len(new)}")
        self.members.clear()
        self.members.update(new)  # in place: the generated parser holds this set
