"""STF numbers and match values, converted as bmv2stf.py converts them for simple_switch_CLI."""

from __future__ import annotations

import pytest

from switch.stf.values import (
    BadValue,
    parse_int,
    parse_key,
    parse_lpm,
    parse_optional,
    parse_range,
    parse_ternary,
    wildcard_key,
)


@pytest.mark.parametrize(
    "text, value",
    [("17", 17), ("0x11", 17), ("0X1f", 31), ("0b101", 5), ("0o17", 15), ("10.0.1.2", 0x0A000102),
     ("00:11:22:33:44:55", 0x001122334455), ("-3", -3), ("0xdead_beef", 0xDEADBEEF)],
)
def test_parse_int(text: str, value: int) -> None:
    assert parse_int(text) == value


@pytest.mark.parametrize("text", ["", "0x", "12a", "0x12*4", "1.2.3.400", "zz"])
def test_parse_int_rejects(text: str) -> None:
    with pytest.raises(BadValue):
        parse_int(text)


@pytest.mark.parametrize(
    "text, width, expected",
    [
        ("0x****0101", 32, (0x00000101, 0x0000FFFF)),  # p4c ternary2-bmv2.stf
        ("0x25**", 16, (0x2500, 0xFF00)),
        ("0x2525", 16, (0x2525, 0xFFFF)),
        ("0x1", 16, (0x1, 0xF)),  # bmv2stf: the mask covers only the digits written
        ("0b1*0*", 4, (0b1000, 0b1010)),  # P4Testgen writes binary with '*'
        ("0o7*", 6, (0o70, 0o70)),
        ("0x0a&&&0x0f", 8, (0x0A, 0x0F)),
        ("0xff&&&0x0f", 8, (0x0F, 0x0F)),  # value bits outside the mask are cleared
        ("7", 8, (7, 0xFF)),  # decimal: exact match on the whole field
        ("0xffff", 8, (0xFF, 0xFF)),  # masked to the field width
    ],
)
def test_ternary(text: str, width: int, expected: tuple[int, int]) -> None:
    assert parse_ternary(text, width) == expected


@pytest.mark.parametrize(
    "text, width, expected",
    [
        ("0x0a000000/8", 32, (0x0A000000, 8)),
        ("10.1.0.0/16", 32, (0x0A010000, 16)),
        ("0x0a010065", 32, (0x0A010065, 32)),  # no '/': 8 hex digits = /32 (v1model-special-ops-bmv2.stf)
        ("0x0a01****", 32, (0x0A010000, 16)),
        ("0b101*****", 8, (0b10100000, 3)),  # P4Testgen-style binary LPM
        ("0x0a0000ff/24", 32, (0x0A000000, 24)),  # host bits cleared as BMv2 does
        ("167772160", 32, (0x0A000000, 32)),  # decimal without '/': full width
        ("0/0", 32, (0, 0)),
    ],
)
def test_lpm(text: str, width: int, expected: tuple[int, int]) -> None:
    assert parse_lpm(text, width) == expected


def test_lpm_prefix_longer_than_field() -> None:
    with pytest.raises(BadValue, match="prefix length 40"):
        parse_lpm("0x1/40", 32)
    with pytest.raises(BadValue):
        parse_lpm("0x0a0000001", 32)  # 9 hex digits = /36 for a 32-bit field


def test_range_optional_and_dispatch() -> None:
    assert parse_range("1->5", 16) == (1, 5)
    assert parse_range("0x10", 16) == (16, 16)
    with pytest.raises(BadValue, match="empty range"):
        parse_range("5->1", 16)
    assert parse_optional("3", 8) == (3, False)
    assert parse_optional("*", 8) == (0, True)
    assert parse_key("exact", "0x1ff", 8) == 0xFF
    assert parse_key("valid", "1", 1) == 1
    assert wildcard_key("ternary", 16) == (0, 0)
    assert wildcard_key("lpm", 32) == (0, 0)
    assert wildcard_key("range", 4) == (0, 15)
    assert wildcard_key("optional", 4) == (0, True)
    with pytest.raises(BadValue, match="only allowed in ternary or LPM"):
        parse_key("exact", "0x1*", 8)
