"""Meters as BMv2 keeps them (bm_sim/meters.cpp): a two-rate three-colour marker per cell, tokens counted against
one time origin (the program's load), colours 0 green, 1 yellow, 2 red.

A cell holds `rate_count` token buckets, given committed first ([(CIR, CBS), (PIR, PBS)], rates in units per
microsecond, units packets or bytes as the meter's type). A packet is checked against the peak bucket first: too few
tokens there makes it red; else it takes them and is checked against the committed bucket: too few there makes it
yellow. A cell that was never configured (or was reset) marks every packet green. Buckets start full.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from switch.errors import MatchError, MatchErrorCode
from switch.sim.externs import check_cell


def _micros() -> int:
    return time.monotonic_ns() // 1000


class Meter:
    """One meter cell. `rates` lists [info_rate, burst, tokens, tokens_last, colour] per bucket, peak bucket first."""

    __slots__ = ("array", "rates", "config")

    def __init__(self, array: MeterArray) -> None:
        self.array = array
        self.rates: list[list] = []
        self.config: list[tuple[float, int]] = []

    def set_rates(self, config: list[tuple[float, int]]) -> None:
        """Configure from [(rate per µs, burst)], committed rate first; BMv2's errors: wrong count, CIR > PIR."""
        if len(config) != self.array.rate_count:
            raise MatchError(MatchErrorCode.INVALID_VALUE, f"meter {self.array.name!r} takes {self.array.rate_count} rates, "
                                                   f"got {len(config)}")
        for prev, cur in zip(config, config[1:]):
            if prev[0] > cur[0]:
                self.reset()
                raise MatchError(MatchErrorCode.INVALID_VALUE, f"meter {self.array.name!r}: a committed rate above the "
                                                       "peak rate")
        self.config = [(float(r), int(b)) for r, b in config]
        self.rates = [[r, b, b, 0, colour] for colour, (r, b) in enumerate(self.config, 1)][::-1]

    def reset(self) -> None:
        self.rates = []
        self.config = []

    def execute(self, length: int) -> int:
        """The colour of a packet of `length` bytes (its ingress length), taking its tokens."""
        if not self.rates:
            return 0
        now = self.array.clock() - self.array.origin
        need = 1 if self.array.packets else length
        for rate in self.rates:
            since = int(now * rate[0])
            rate[2] = min(rate[2] + since - rate[3], rate[1])
            rate[3] = since
            if rate[2] < need:
                return rate[4]
            rate[2] -= need
        return 0


class MeterArray:
    """`meter(size, type)` (indexed cells) or a `direct_meter` of table `table` (a cell per entry: `Entry.meter`)."""

    def __init__(self, name: str, mid: int, size: int, packets: bool, rate_count: int = 2,
                 table: str | None = None, target: tuple[str, str] | None = None,
                 clock: Callable[[], int] = _micros) -> None:
        self.name = name
        self.id = mid
        self.size = size
        self.packets = packets
        self.rate_count = rate_count
        self.table = table
        self.target = target
        self.clock = clock
        """Microseconds of a monotonic clock (tests substitute one)."""
        self.origin = clock()
        self.cells = [Meter(self) for _ in range(0 if table else size)]

    @property
    def is_direct(self) -> bool:
        return self.table is not None

    def cell(self, index: int) -> Meter:
        check_cell("meter", self.name, index, self.size, self.table)
        return self.cells[index]

    def set_rates(self, index: int, config: list[tuple[float, int]]) -> None:
        self.cell(index).set_rates(config)

    def entry_cell(self, entry: Any) -> Meter:
        """The direct meter cell of a table entry (`Entry.meter`), made on first use."""
        if entry.meter is None:
            entry.meter = Meter(self)
        return entry.meter

    @staticmethod
    def entry_config(entry: Any) -> list[tuple[float, int]]:
        """A table entry's direct meter configuration ([] while unconfigured)."""
        return entry.meter.config if entry.meter is not None else []

    def reset(self) -> None:
        for c in self.cells:
            c.reset()
