"""Numbers and match values as STF writes them, converted the way p4c's bmv2stf.py hands them to simple_switch_CLI.

STF numbers are decimal, `0x` hex, `0b` binary or `0o` octal; hex/binary/octal digits may be `*` (don't care) in
ternary and LPM keys. As extensions (simple_switch_CLI accepts them, the STF lexer does not) dotted IPv4 addresses,
colon-separated MAC addresses, `value&&&mask` ternaries and `lo->hi` ranges are accepted too.

bmv2stf's conversions, reproduced on purpose:
- ternary `0x12**`: value = the digits with `*` as 0, mask = F per written digit and 0 per `*` — the mask covers only
  the digits written, not the field width (bmv2stf has no field widths);
- LPM without `/len`: prefix length = number of non-`*` digits × bits per digit (4 hex, 1 binary, 3 octal);
- a decimal ternary value (an exception in bmv2stf) is taken here as an exact match on the whole field;
- a decimal LPM value without `/len` (garbled by bmv2stf) is taken as a full-width prefix.
"""

from __future__ import annotations

import re

_BASES = {"0x": (16, 4), "0b": (2, 1), "0o": (8, 3)}
_IPV4 = re.compile(r"^\d{1,3}(\.\d{1,3}){3}$")
_MAC = re.compile(r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$")


class BadValue(ValueError):
    """A value that is not a valid STF number or match value (message says why)."""


def _mask(width: int) -> int:
    return (1 << width) - 1


def _split_base(text: str) -> tuple[str, str]:
    """`("0x", "12ab")` for a prefixed literal, `("", "123")` for decimal."""
    prefix = text[:2].lower()
    if prefix in _BASES:
        return prefix, text[2:]
    return "", text


def parse_int(text: str) -> int:
    """An STF/CLI integer: decimal, 0x/0b/0o, dotted IPv4 or colon MAC; a leading `-` is allowed."""
    t = text.strip().replace("_", "")
    if not t:
        raise BadValue("empty number")
    if _IPV4.match(t):
        parts = [int(p) for p in t.split(".")]
        if any(p > 255 for p in parts):
            raise BadValue(f"bad IPv4 address {text!r}")
        return int.from_bytes(bytes(parts), "big")
    if _MAC.match(t):
        return int(t.replace(":", ""), 16)
    neg = t.startswith("-")
    if neg:
        t = t[1:]
    prefix, digits = _split_base(t)
    if "*" in digits:
        raise BadValue(f"don't-care digits '*' are only allowed in ternary or LPM keys: {text!r}")
    try:
        value = int(digits, _BASES[prefix][0]) if prefix else int(digits, 10)
    except ValueError:
        raise BadValue(f"not a number: {text!r}") from None
    return -value if neg else value


def _wildcard_digits(text: str) -> tuple[int, int, int, int]:
    """(value, mask, written digits, '*' digits) of a prefixed literal that may contain `*` digits."""
    prefix, digits = _split_base(text)
    base, bits = _BASES[prefix]
    if not digits:
        raise BadValue(f"no digits in {text!r}")
    value = mask = 0
    full = base - 1
    for ch in digits:
        value <<= bits
        mask <<= bits
        if ch == "*":
            continue
        try:
            d = int(ch, base)
        except ValueError:
            raise BadValue(f"bad digit {ch!r} in {text!r}") from None
        value |= d
        mask |= full
    return value, mask, len(digits), digits.count("*")


def parse_exact(text: str, width: int) -> int:
    """An exact (or `valid`) key value, masked to the field width as BMv2 does."""
    return parse_int(text) & _mask(width)


def parse_ternary(text: str, width: int) -> tuple[int, int]:
    """(value, mask) of a ternary key: `0x**12`, `0b1*0*`, `value&&&mask`, or decimal (exact match)."""
    t = text.strip()
    if "&&&" in t:
        v, m = t.split("&&&", 1)
        mask = parse_int(m) & _mask(width)
        return parse_int(v) & mask, mask
    prefix, _ = _split_base(t)
    if not prefix:
        return parse_int(t) & _mask(width), _mask(width)
    value, mask, _, _ = _wildcard_digits(t)
    mask &= _mask(width)
    return value & mask, mask


def parse_lpm(text: str, width: int) -> tuple[int, int]:
    """(value, prefix_len) of an LPM key: `value/len`, or a prefixed literal whose non-`*` digits make the prefix."""
    t = text.strip()
    if "/" in t:
        v, plen_text = t.split("/", 1)
        plen = parse_int(plen_text)
        value = parse_int(v)
    else:
        prefix, _ = _split_base(t)
        if prefix and not _IPV4.match(t):
            value, _, ndigits, nstars = _wildcard_digits(t)
            plen = (ndigits - nstars) * _BASES[prefix][1]
        else:
            value, plen = parse_int(t), width
    if not 0 <= plen <= width:
        raise BadValue(f"prefix length {plen} out of range for a {width}-bit field: {text!r}")
    host = _mask(width - plen)
    return value & _mask(width) & ~host, plen


def parse_range(text: str, width: int) -> tuple[int, int]:
    """(lo, hi) of a range key: `lo->hi` (simple_switch_CLI syntax) or a single value."""
    t = text.strip()
    if "->" in t:
        lo, hi = (parse_int(x) for x in t.split("->", 1))
    else:
        lo = hi = parse_int(t)
    if lo > hi:
        raise BadValue(f"empty range {text!r}")
    return lo & _mask(width), hi & _mask(width)


def parse_optional(text: str, width: int) -> tuple[int, bool]:
    """(value, is_wildcard) of an optional key; `*` alone is the wildcard."""
    t = text.strip()
    if t == "*":
        return 0, True
    return parse_int(t) & _mask(width), False


def parse_key(match_type: str, text: str, width: int) -> object:
    """The engine's key item for one field (see switch/__init__.py: MatchTable.insert)."""
    if match_type in ("exact", "valid"):
        return parse_exact(text, width)
    if match_type == "lpm":
        return parse_lpm(text, width)
    if match_type == "ternary":
        return parse_ternary(text, width)
    if match_type == "range":
        return parse_range(text, width)
    if match_type == "optional":
        return parse_optional(text, width)
    raise BadValue(f"unsupported match type {match_type!r}")


def wildcard_key(match_type: str, width: int) -> object:
    """The key item bmv2stf uses for a field the `add` line leaves out (0, 0/0, 0&&&0; full range; wildcard)."""
    if match_type in ("exact", "valid"):
        return 0
    if match_type == "lpm":
        return (0, 0)
    if match_type == "ternary":
        return (0, 0)
    if match_type == "range":
        return (0, _mask(width))
    if match_type == "optional":
        return (0, True)
    raise BadValue(f"unsupported match type {match_type!r}")
