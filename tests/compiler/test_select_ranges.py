"""Select-case ranges become value/mask pairs as p4c's ReplaceSelectRange makes them: exactly the range's values."""

from __future__ import annotations

import pytest

from compiler.lower_parser import range_masks


def covered(pairs: list[tuple[int, int]], width: int) -> set[int]:
    return {x for x in range(1 << width) if any(x & m == v for v, m in pairs)}


@pytest.mark.parametrize("width", [1, 2, 3, 5, 6])
def test_every_unsigned_range_masks_cover_exactly_the_range(width: int) -> None:
    for lo in range(1 << width):
        for hi in range(lo, 1 << width):
            pairs = range_masks(lo, hi, width)
            assert covered(pairs, width) == set(range(lo, hi + 1)), (lo, hi)
            assert all(v & m == v for v, m in pairs)  # aligned blocks
            assert sum(1 << (width - bin(m).count("1")) for _, m in pairs) == hi - lo + 1  # disjoint


def test_negative_range_uses_twos_complement_patterns() -> None:
    assert range_masks(-3, -1, 8) == [(0xFD, 0xFF), (0xFE, 0xFE)]
    assert range_masks(0, 7, 8) == [(0, 0xF8)]
    assert range_masks(3, 17, 8) == [(3, 0xFF), (4, 0xFC), (8, 0xF8), (16, 0xFE)]
