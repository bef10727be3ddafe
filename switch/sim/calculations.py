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


ALGORITHMS: dict[str, Callable[[bytes], int]] = {
    "crc16": crc16,
    "crc32": crc32,
    "csum16": csum16,
    "cksum16": csum16,
    "xor16": xor16,
    "identity": identity,
}
