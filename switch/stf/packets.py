"""Packet data of `packet` lines, expected-packet patterns of `expect` lines, and the nibble diff shown on a mismatch.

Comparison follows bmv2stf's `comparePacket`: both sides are upper-case hex nibbles; `*` in the expectation matches any
nibble; the received packet may be longer than the expectation unless the expectation ends in `$`, and never shorter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEX = re.compile(r"^[0-9a-fA-F]*$")
_PATTERN = re.compile(r"^[0-9a-fA-F*]*\$?$")
ROW_BYTES = 32  # bytes per line of a rendered packet


def parse_packet_data(text: str) -> bytes:
    """Bytes of a `packet` line's data: hex digits, whitespace anywhere, an even number of digits."""
    digits = "".join(text.split())
    if not digits:
        raise ValueError("packet data is empty")
    if not _HEX.match(digits):
        bad = next(c for c in digits if c not in "0123456789abcdefABCDEF")
        raise ValueError(f"packet data must be hex digits, found {bad!r}")
    if len(digits) % 2:
        raise ValueError(f"packet data has an odd number of hex digits ({len(digits)})")
    return bytes.fromhex(digits)


@dataclass(frozen=True)
class ExpectedPacket:
    """An `expect` line's data: hex nibbles with `*` wildcards; `exact` when it ended in `$` (length must match)."""

    nibbles: str
    exact: bool = False

    @classmethod
    def parse(cls, text: str) -> ExpectedPacket:
        digits = "".join(text.split())
        if not _PATTERN.match(digits):
            if "$" in digits[:-1]:
                raise ValueError("'$' may only end the expected data")
            bad = next(c for c in digits if c not in "0123456789abcdefABCDEF*$")
            raise ValueError(f"expected data must be hex digits or '*', found {bad!r}")
        exact = digits.endswith("$")
        nibbles = digits.rstrip("$").upper()
        if not nibbles:
            raise ValueError("expected data is empty")
        return cls(nibbles, exact)

    def __str__(self) -> str:
        return self.nibbles + ("$" if self.exact else "")

    def mismatches(self, data: bytes) -> list[int]:
        """Nibble positions where `data` differs; positions past either end count as differing."""
        got = data.hex().upper()
        bad = [i for i, (e, g) in enumerate(zip(self.nibbles, got)) if e != "*" and e != g]
        if len(got) < len(self.nibbles):
            bad.extend(range(len(got), len(self.nibbles)))
        elif self.exact and len(got) > len(self.nibbles):
            bad.extend(range(len(self.nibbles), len(got)))
        return bad

    def matches(self, data: bytes) -> bool:
        return not self.mismatches(data)


def _rows(nibbles: str) -> list[str]:
    """Hex split into rows of ROW_BYTES bytes, a space between bytes."""
    rows = []
    for start in range(0, len(nibbles), ROW_BYTES * 2):
        chunk = nibbles[start : start + ROW_BYTES * 2]
        rows.append(" ".join(chunk[i : i + 2] for i in range(0, len(chunk), 2)))
    return rows or [""]


def render_diff(expected: ExpectedPacket, data: bytes, indent: str = "    ") -> list[str]:
    """Expected and received hex one above the other, row by row, with `^` under every differing nibble."""
    exp = expected.nibbles
    got = data.hex().upper()
    bad = set(expected.mismatches(data))
    marks = "".join("^" if i in bad else " " for i in range(max(len(exp), len(got))))
    lines = []
    exp_rows, got_rows, mark_rows = _rows(exp), _rows(got), _rows(marks)
    for r in range(max(len(exp_rows), len(got_rows))):
        offset = f"{r * ROW_BYTES:04x}"
        e = exp_rows[r] if r < len(exp_rows) else ""
        g = got_rows[r] if r < len(got_rows) else ""
        m = mark_rows[r] if r < len(mark_rows) else ""
        if r == len(exp_rows) - 1 and expected.exact:
            e += " $"
        lines.append(f"{indent}{offset} expected {e}")
        lines.append(f"{indent}{offset} received {g}")
        if m.strip():
            lines.append(f"{indent}{offset}          {m.rstrip()}")
    return lines


def render_hex(data: bytes | str, indent: str = "    ") -> list[str]:
    """Bytes (or a nibble string) as rows of hex with byte offsets."""
    nibbles = data.hex().upper() if isinstance(data, bytes) else data
    return [f"{indent}{r * ROW_BYTES:04x} {row}" for r, row in enumerate(_rows(nibbles))]
