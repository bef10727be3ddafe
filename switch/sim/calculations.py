"""Hash / checksum algorithms of BMv2's calculations (bm_sim/calculations.cpp), over a byte string.

Each algorithm maps bytes → int; BMv2 feeds them the bit-packed calculation inputs (see codegen).
"""

from __future__ import annotations

import zlib
from typing import Callable


def _crc16_table() -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0xA001 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC16 = _crc16_table()


def crc16(data: bytes) -> int:
    """CRC-16/ARC (poly 0x8005 reflected, init 0, no final xor) — BMv2's `crc16`."""
    c = 0
    t = _CRC16
    for b in data:
        c = (c >> 8) ^ t[(c ^ b) & 0xFF]
    return c


def crc32(data: bytes) -> int:
    """Standard reflected CRC-32 (== zlib.crc32) — BMv2's `crc32`."""
    return zlib.crc32(data)


def csum16(data: bytes) -> int:
    """Internet checksum (ones-complement of the ones-complement sum of 16-bit words, odd byte zero-padded)."""
    return csum16_int(int.from_bytes(data, "big"), len(data))


def csum16_int(x: int, nbytes: int) -> int:
    """csum16 of the `nbytes` big-endian bytes of `x`, without making the bytes.

    Since 2**16 ≡ 1 (mod 0xFFFF), the sum of the 16-bit words of x is ≡ x (mod 0xFFFF); the ones'-complement sum
    (end-around carry) is that residue, except that a non-zero sum never folds to 0 but to 0xFFFF."""
    if nbytes & 1:
        x <<= 8
    s = x % 0xFFFF
    if s == 0 and x:
        s = 0xFFFF
    return 0xFFFF - s


def csum16_folded(s: int, nbytes: int, pad: int) -> int:
    """csum16 of the `nbytes`-byte string whose bits are some integer x followed by `pad` zero bits, given only
    s ≡ x (mod 0xFFFF) with s == 0 exactly when x == 0 (a sum of non-negative terms, each ≡ to a part of x)."""
    s <<= pad + (8 if nbytes & 1 else 0)
    r = s % 0xFFFF
    if r == 0 and s:
        r = 0xFFFF
    return 0xFFFF - r


def xor16(data: bytes) -> int:
    """XOR of the big-endian 16-bit words (odd byte padded) — BMv2's `xor16`."""
    if len(data) & 1:
        data += b"\x00"
    r = 0
    for i in range(0, len(data), 2):
        r ^= (data[i] << 8) | data[i + 1]
    return r


def identity(data: bytes) -> int:
    """The first 8 bytes as a big-endian integer — BMv2's `identity`."""
    return int.from_bytes(data[:8], "big")


def _reflect(x: int, bits: int) -> int:
    return int(format(x, f"0{bits}b")[::-1], 2)


class CustomCrc:
    """BMv2's `crcN_custom` (calculations.cpp crc_custom): one instance per calculation, whose parameters the
    control plane may change (simple_switch_CLI `set_crc16_parameters` / `set_crc32_parameters`); until then the
    defaults are those of crc16 and crc32."""

    DEFAULTS = {16: (0x8005, 0x0000, 0x0000, True, True), 32: (0x04C11DB7, 0xFFFFFFFF, 0xFFFFFFFF, True, True)}

    def __init__(self, width: int) -> None:
        self.width = width
        self.configure(*self.DEFAULTS[width])

    def configure(self, polynomial: int, initial: int, final_xor: int, reflect_data: bool,
                  reflect_remainder: bool) -> None:
        w, mask = self.width, (1 << self.width) - 1
        for v in (polynomial, initial, final_xor):
            if not 0 <= v <= mask:
                raise ValueError(f"crc{w}_custom parameter {v:#x} does not fit {w} bits")
        self.config = (polynomial, initial, final_xor, reflect_data, reflect_remainder)
        table = []
        for dividend in range(256):
            r = dividend << (w - 8)
            for _ in range(8):
                r = ((r << 1) ^ polynomial) if r & (1 << (w - 1)) else r << 1
            table.append(r & mask)
        self._table = table
        self._in = [_reflect(b, 8) if reflect_data else b for b in range(256)]

    def __call__(self, data: bytes) -> int:
        w, mask, table, inp = self.width, (1 << self.width) - 1, self._table, self._in
        _poly, r, final_xor, _rd, reflect_remainder = self.config
        for b in data:
            r = table[inp[b] ^ (r >> (w - 8))] ^ ((r << 8) & mask)
        return (_reflect(r, w) if reflect_remainder else r) ^ final_xor


CUSTOM_WIDTHS = {"crc16_custom": 16, "crc32_custom": 32}

ALGORITHMS: dict[str, Callable[[bytes], int]] = {
    "crc16": crc16,
    "crc32": crc32,
    "csum16": csum16,
    "cksum16": csum16,
    "xor16": xor16,
    "identity": identity,
}
