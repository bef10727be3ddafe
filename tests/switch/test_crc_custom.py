"""crc16_custom / crc32_custom with parameters of their own per calculation (tests/compiler/p4/crc_custom.p4)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from compiler import compile_file
from switch.sim.calculations import CustomCrc, crc16, crc32
from switch.v1model.switch import V1Switch

PROGRAM = Path(__file__).parents[1] / "compiler" / "p4" / "crc_custom.p4"
FRAMES = [bytes(6) + bytes.fromhex(s) for s in ("0a0b0c0d0e0f0800", "00000000000186dd")]


def test_defaults_are_crc16_and_crc32() -> None:
    for n in range(40):
        data = os.urandom(n)
        assert CustomCrc(16)(data) == crc16(data) and CustomCrc(32)(data) == crc32(data)


@pytest.mark.parametrize("width,params,check", [
    (16, (0x1021, 0xFFFF, 0x0000, False, False), 0x29B1),   # CRC-16/CCITT-FALSE
    (16, (0x8005, 0x0000, 0x0000, True, True), 0xBB3D),     # CRC-16/ARC (= crc16)
    (32, (0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, True, True), 0xE3069283),  # CRC-32C
    (32, (0x04C11DB7, 0xFFFFFFFF, 0xFFFFFFFF, False, False), 0xFC891918),  # CRC-32/BZIP2
])
def test_catalogue_check_values(width: int, params: tuple, check: int) -> None:
    c = CustomCrc(width)
    c.configure(*params)
    assert c(b"123456789") == check


def test_configured_per_calculation_as_simple_switch() -> None:
    """The outputs real simple_switch 1.15.5 gives after simple_switch_CLI `set_crc16_parameters calc 0x1021 0xffff
    0x0000 false false` and `set_crc32_parameters calc_0 0x1EDC6F41 0xffffffff 0xffffffff true true` (p4c's JSON;
    ours names the calculations alike); the plain crc16/crc32 calculations do not change."""
    sw = V1Switch()
    sw.load(compile_file(PROGRAM).json)
    sw.crc_custom("calc").configure(0x1021, 0xFFFF, 0x0000, False, False)
    sw.crc_custom("calc_0").configure(0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, True, True)
    assert [sw.process(1, f)[0][1].hex() for f in FRAMES] == [
        "8637d970c6365aed299799220800", "d79e2647ade0f15b24faf9f386dd"]
    sw.trace = lambda pid, msg: None  # regenerated code keeps the parameters
    assert sw.process(1, FRAMES[0])[0][1].hex() == "8637d970c6365aed299799220800"
    with pytest.raises(KeyError, match="calc_1"):
        sw.crc_custom("calc_1")  # a plain crc16
    with pytest.raises(ValueError):
        sw.crc_custom("calc").configure(1 << 16, 0, 0, True, True)
