"""What a packet finds in the fields of headers it does not carry, and how many passes a packet may loop: BMv2's
behaviour (checked on real simple_switch 1.15.5, see the STF files named below), on every path of the switch.

tests/compiler/p4/invalid_header_fields.stf and recirculate_count.stf run on the fast path (and, in the parity test,
on p4c's JSON); here the same programs go through the traced path, the queued receive()/drain() path and the loop
bound."""

from __future__ import annotations

import logging

import pytest

from compiler import compile_file
from switch.__main__ import DEFAULT_MAX_LOOP, parse_args
from switch.stf.testing import assert_stf
from switch.v1model import V1Switch
from switch.v1model.switch import MAX_LOOP
from tests.paths import TESTS

P4 = TESTS / "compiler" / "p4"
ETH = bytes.fromhex("000000000001" "000000000002")
TCP = ETH + bytes.fromhex("0800" "45010000" "00000000" "40060000" "0a000001" "0a000002" "1234" "5678")


def switch(name: str, **kw) -> V1Switch:
    sw = V1Switch(**kw)
    sw.load(compile_file(P4 / f"{name}.p4").json)
    return sw


def src(frame: bytes) -> bytes:
    """eth.src of invalid_header_fields.p4's output: ipv4.src ++ tcp.sport as the packet found them."""
    return frame[6:12]


def test_traced_path_reuses_like_the_fast_path() -> None:
    lines: list[str] = []
    sw = switch("invalid_header_fields", trace=lambda pid, msg: lines.append(msg))
    assert_stf(sw, P4 / "invalid_header_fields.stf")
    assert any(m.startswith("Transmitting") for m in lines)


def test_packets_in_flight_together_get_their_own_storage() -> None:
    """BMv2 hands a packet the PHV the last ended packet released; while the TCP packet still waits in its queue the
    next one gets new (zero) storage, and a packet after both finds the one that ended last."""
    sw = switch("invalid_header_fields")
    sw.receive(0, TCP)
    sw.receive(0, ETH + bytes.fromhex("9000" "bb"))   # TCP packet still queued: fresh storage
    out = sw.drain()
    assert [src(f) for _, f in out] == [bytes.fromhex("0a0000011234"), bytes(6)]
    (_, f), = sw.process(0, ETH + bytes.fromhex("9000" "cc"))  # takes the non-IP packet's storage: it ended last
    assert src(f) == bytes(6)
    (_, f), = sw.process(0, TCP)
    (_, f), = sw.process(0, ETH + bytes.fromhex("9000" "dd"))
    assert src(f) == bytes.fromhex("0a0000011234")


def test_a_new_program_starts_from_zero() -> None:
    sw = switch("invalid_header_fields")
    sw.process(0, TCP)
    sw.load(compile_file(P4 / "invalid_header_fields.p4").json)
    (_, f), = sw.process(0, ETH + bytes.fromhex("9000" "aa"))
    assert src(f) == bytes(6)


def test_metadata_and_validity_are_reset() -> None:
    """Only packet headers keep old values: a non-IP packet after the TCP one is still emitted without ipv4/tcp."""
    sw = switch("invalid_header_fields")
    sw.process(0, TCP)
    (_, f), = sw.process(0, ETH + bytes.fromhex("9000" "bb"))
    assert f[12:] == bytes.fromhex("9000" "bb")


@pytest.mark.parametrize("passes", [100, 10_000])
def test_recirculated_many_times_is_forwarded(passes: int) -> None:
    """BMv2 forwards a packet after any number of recirculations (10,000 on simple_switch 1.15.5)."""
    sw = switch("recirculate_count")
    frame = ETH + bytes.fromhex("9000") + (0).to_bytes(2, "big") + passes.to_bytes(2, "big")
    (port, f), = sw.process(0, frame)
    assert port == 1 and int.from_bytes(f[14:16], "big") == passes
    assert sw.stats["recirculated"] == passes and sw.stats["dropped"] == 0


def test_an_endless_loop_is_dropped_counted_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    sw = switch("recirculate_count", max_loop=500)
    frame = ETH + bytes.fromhex("9000" "0000" "ffff")  # 65535 passes: beyond this switch's bound
    with caplog.at_level(logging.WARNING):
        assert sw.process(0, frame) == []
    assert sw.stats["dropped_loop_limit"] == 1 and sw.stats["recirculated"] == 500
    assert "more than 500 resubmit/recirculate passes" in caplog.text
    assert sw.process(0, ETH + bytes.fromhex("9000" "0000" "0002"))[0][0] == 1  # the switch goes on


def test_loop_bound_on_the_command_line() -> None:
    assert DEFAULT_MAX_LOOP == MAX_LOOP
    assert parse_args(["--no-p4", "--", "--max-loop", "7"]).max_loop == 7
    assert parse_args(["--no-p4"]).max_loop == MAX_LOOP
    with pytest.raises(SystemExit):
        parse_args(["--no-p4", "--", "--max-loop", "0"])



def test_a_lookahead_select_key_past_the_end_is_no_parser_error() -> None:
    """A select keyed directly on lookahead bits (older p4c, hand-written JSON): BMv2 peeks without checking the
    packet's length (ParseSwitchKeyBuilder), so past the end there is no PacketTooShort; simple_switch 1.15.5 gave
    `... 00 ff` for this frame of header_union_stacks.p4 with the key written so (perf.difftest), `... 00 00` with
    the set-then-key form p4c and our compiler write."""
    program = compile_file(P4 / "header_union_stacks.p4").json
    elem = next(s for p in program["parsers"] for s in p["parse_states"] if s["name"] == "elem")
    assert elem["parser_ops"][0]["op"] == "set" and elem["parser_ops"][0]["parameters"][1]["type"] == "lookahead"
    frame = bytes.fromhex("000000000000" "ffffffffffff" "78e5" "0000")
    sw = V1Switch()
    sw.load(program)
    assert sw.process(0, frame) == [(1, frame)]  # PacketTooShort: `done` never runs
    elem["transition_key"] = [elem["parser_ops"][0]["parameters"][1]]
    elem["parser_ops"] = []
    sw = V1Switch()
    sw.load(program)
    assert sw.process(0, frame) == [(1, frame[:-1] + b"\xff")]  # lastIndex of the empty stack
