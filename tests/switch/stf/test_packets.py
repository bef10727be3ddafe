"""Packet data, expected-packet patterns (`*`, `$`) and the nibble diff."""

from __future__ import annotations

import pytest

from switch.stf.packets import ExpectedPacket, parse_packet_data, render_diff


def test_packet_data_spaces_and_case() -> None:
    assert parse_packet_data("0102 03\t0a0B ") == bytes([1, 2, 3, 10, 11])


@pytest.mark.parametrize("text, msg", [("012", "odd number"), ("01 0x02", "hex digits"), ("", "empty"), ("01*2", "hex")])
def test_packet_data_rejects(text: str, msg: str) -> None:
    with pytest.raises(ValueError, match=msg):
        parse_packet_data(text)


def test_wildcards_and_prefix_match() -> None:
    pat = ExpectedPacket.parse("*1 02 ** 04")
    assert pat.nibbles == "*102**04" and not pat.exact
    assert pat.matches(bytes([0xF1, 0x02, 0x77, 0x04]))
    assert pat.matches(bytes([0x01, 0x02, 0x00, 0x04, 0xEE]))  # longer is fine without '$'
    assert not pat.matches(bytes([0x01, 0x02, 0x00]))  # shorter never matches
    assert pat.mismatches(bytes([0x02, 0x02, 0x00, 0x05])) == [1, 7]


def test_dollar_means_exact_length() -> None:
    pat = ExpectedPacket.parse("0102 $")
    assert pat.exact and str(pat) == "0102$"
    assert pat.matches(b"\x01\x02")
    assert pat.mismatches(b"\x01\x02\x03") == [4, 5]


@pytest.mark.parametrize("text", ["01$02", "0g", "$"])
def test_expect_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        ExpectedPacket.parse(text)


def test_render_diff_marks_differing_nibbles() -> None:
    lines = render_diff(ExpectedPacket.parse("0011 2233"), bytes([0x00, 0x11, 0x2A, 0x33]))
    assert lines[0].endswith("expected 00 11 22 33")
    assert lines[1].endswith("received 00 11 2A 33")
    marks = lines[2]
    assert marks.index("^") == lines[1].index("2A") + 1 and marks.count("^") == 1


def test_render_diff_wraps_long_packets() -> None:
    data = bytes(range(40))
    exp = ExpectedPacket.parse(data.hex()[:-2] + "ff")
    lines = render_diff(exp, data)
    assert [ln.split()[0] for ln in lines] == ["0000", "0000", "0020", "0020", "0020"]
    assert lines[-1].count("^") == 2
