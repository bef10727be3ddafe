"""Bytestring and match-key translation with PI's validation rules (no gRPC, no engine)."""

from __future__ import annotations

import pytest
from finsy.proto import p4r

from switch.runtime import codec
from switch.runtime.p4info import (
    MATCH_EXACT,
    MATCH_LPM,
    MATCH_OPTIONAL,
    MATCH_RANGE,
    MATCH_TERNARY,
    ActionInfo,
    MatchFieldInfo,
    TableInfo,
)
from switch.runtime.status import Code, P4RuntimeError


def table(*fields: tuple[int, int]) -> TableInfo:
    """A table whose key fields have (match_type, bitwidth), ids 1..n."""
    mfs = tuple(MatchFieldInfo(i + 1, f"f{i + 1}", w, mt) for i, (mt, w) in enumerate(fields))
    return TableInfo(id=0x02000001, name="t", match_fields=mfs, action_scopes={}, const_default_action_id=0,
                     implementation_id=0, direct_resource_ids=(), size=1024, is_const=False,
                     supports_idle_timeout=False)


def entry(*matches: p4r.FieldMatch, priority: int = 0) -> p4r.TableEntry:
    return p4r.TableEntry(table_id=0x02000001, match=list(matches), priority=priority)


def refused(fn, *args) -> P4RuntimeError:
    with pytest.raises(P4RuntimeError) as info:
        fn(*args)
    return info.value


def test_decode_accepts_canonical_and_padded_and_rejects_too_wide() -> None:
    assert codec.decode(b"\x0a\x00\x00\x01", 32) == 0x0A000001
    assert codec.decode(b"\x01", 9) == 1
    assert codec.decode(b"\x00\x00\x01\xff", 9) == 0x1FF  # padded beyond the field width is fine
    assert codec.decode(b"", 8) == 0
    err = refused(codec.decode, b"\x02\x00", 9)
    assert err.code == Code.INVALID_ARGUMENT and "does not fit within 9 bits" in err.message


def test_encode_is_canonical() -> None:
    assert codec.encode(0) == b"\x00"
    assert codec.encode(1) == b"\x01"
    assert codec.encode(0x0100) == b"\x01\x00"
    assert codec.encode_padded(1, 48) == b"\x00\x00\x00\x00\x00\x01"


def test_exact_and_lpm_key() -> None:
    t = table((MATCH_EXACT, 9), (MATCH_LPM, 32))
    key, prio = codec.match_key(t, entry(
        p4r.FieldMatch(field_id=1, exact=p4r.FieldMatch.Exact(value=b"\x01\x02")),
        p4r.FieldMatch(field_id=2, lpm=p4r.FieldMatch.LPM(value=b"\x0a\x00\x00\x00", prefix_len=8))))
    assert key == (0x102, (0x0A000000, 8)) and prio == 0


def test_missing_lpm_is_dont_care_but_missing_exact_is_refused() -> None:
    t = table((MATCH_EXACT, 8), (MATCH_LPM, 32))
    key, _ = codec.match_key(t, entry(p4r.FieldMatch(field_id=1, exact=p4r.FieldMatch.Exact(value=b"\x05"))))
    assert key == (5, (0, 0))
    err = refused(codec.match_key, t, entry(
        p4r.FieldMatch(field_id=2, lpm=p4r.FieldMatch.LPM(value=b"\x0a", prefix_len=8))))
    assert err.code == Code.INVALID_ARGUMENT and "Missing non-ternary field" in err.message


@pytest.mark.parametrize("value,plen,why", [
    (b"\x0a\x00\x00\x01", 8, "trailing zeros"),
    (b"\x0a\x00\x00\x00", 0, "prefix length of 0"),
    (b"\x0a\x00\x00\x00", 33, "> bitwidth"),
    (b"\x0a\x00\x00\x00", -1, "< 0"),
])
def test_lpm_refusals(value: bytes, plen: int, why: str) -> None:
    t = table((MATCH_LPM, 32))
    err = refused(codec.match_key, t, entry(p4r.FieldMatch(field_id=1, lpm=p4r.FieldMatch.LPM(value=value,
                                                                                             prefix_len=plen))))
    assert err.code == Code.INVALID_ARGUMENT and why in err.message


def test_ternary_rules_and_priority() -> None:
    t = table((MATCH_TERNARY, 16))
    ok = p4r.FieldMatch(field_id=1, ternary=p4r.FieldMatch.Ternary(value=b"\x12\x00", mask=b"\xff\x00"))
    assert codec.match_key(t, entry(ok, priority=10)) == (((0x1200, 0xFF00),), 10)
    assert "Zero priority" in refused(codec.match_key, t, entry(ok)).message
    bad_value = p4r.FieldMatch(field_id=1, ternary=p4r.FieldMatch.Ternary(value=b"\x12\x01", mask=b"\xff\x00"))
    assert "value & mask == value" in refused(codec.match_key, t, entry(bad_value, priority=1)).message
    zero_mask = p4r.FieldMatch(field_id=1, ternary=p4r.FieldMatch.Ternary(value=b"\x00", mask=b"\x00"))
    assert "0 mask" in refused(codec.match_key, t, entry(zero_mask, priority=1)).message
    # omitted ternary field: wildcard, still needs a priority
    assert codec.match_key(t, entry(priority=3)) == (((0, 0),), 3)


def test_priority_on_exact_table_refused() -> None:
    t = table((MATCH_EXACT, 8))
    fm = p4r.FieldMatch(field_id=1, exact=p4r.FieldMatch.Exact(value=b"\x01"))
    err = refused(codec.match_key, t, entry(fm, priority=5))
    assert err.code == Code.INVALID_ARGUMENT and "Non-zero priority" in err.message


def test_range_and_optional() -> None:
    t = table((MATCH_RANGE, 16), (MATCH_OPTIONAL, 8))
    fm_range = p4r.FieldMatch(field_id=1, range=p4r.FieldMatch.Range(low=b"\x10", high=b"\x20"))
    fm_opt = p4r.FieldMatch(field_id=2, optional=p4r.FieldMatch.Optional(value=b"\x07"))
    assert codec.match_key(t, entry(fm_range, fm_opt, priority=1))[0] == ((0x10, 0x20), (7, False))
    assert codec.match_key(t, entry(priority=1))[0] == ((0, 0xFFFF), (0, True))
    full = p4r.FieldMatch(field_id=1, range=p4r.FieldMatch.Range(low=b"\x00", high=b"\xff\xff"))
    assert "don't care" in refused(codec.match_key, t, entry(full, priority=1)).message
    inverted = p4r.FieldMatch(field_id=1, range=p4r.FieldMatch.Range(low=b"\x20", high=b"\x10"))
    assert "low <= high" in refused(codec.match_key, t, entry(inverted, priority=1)).message


def test_wrong_match_kind_unknown_and_duplicate_fields() -> None:
    t = table((MATCH_EXACT, 8))
    wrong = p4r.FieldMatch(field_id=1, lpm=p4r.FieldMatch.LPM(value=b"\x01", prefix_len=8))
    assert refused(codec.match_key, t, entry(wrong)).message == "Invalid match type"
    unknown = p4r.FieldMatch(field_id=9, exact=p4r.FieldMatch.Exact(value=b"\x01"))
    assert refused(codec.match_key, t, entry(unknown)).message == "Missing non-ternary field in match key"
    assert refused(codec.match_key, t, entry(wrong, unknown)).message == "Too many fields in match key"
    t2 = table((MATCH_EXACT, 8), (MATCH_LPM, 8))
    assert refused(codec.match_key, t2, entry(
        p4r.FieldMatch(field_id=1, exact=p4r.FieldMatch.Exact(value=b"\x01")), unknown)).message == \
        "Unknown field in match key"


def test_field_matches_round_trip_omits_dont_care() -> None:
    t = table((MATCH_EXACT, 48), (MATCH_LPM, 32), (MATCH_TERNARY, 8), (MATCH_RANGE, 8), (MATCH_OPTIONAL, 8))
    fms = codec.field_matches(t, (1, (0, 0), (0x10, 0xF0), (0, 0xFF), (3, False)))
    assert [fm.field_id for fm in fms] == [1, 3, 5]
    assert fms[0].exact.value == b"\x01"  # canonical, not 6 bytes
    assert (fms[1].ternary.value, fms[1].ternary.mask) == (b"\x10", b"\xf0")
    assert fms[2].optional.value == b"\x03"


def test_action_data_validation() -> None:
    act = ActionInfo(0x01000001, "fwd", ((1, "port", 9), (2, "mac", 48)))
    msg = p4r.Action(action_id=act.id, params=[p4r.Action.Param(param_id=2, value=b"\x00\x00\xaa\xbb\xcc\xdd\xee\xff"),
                                               p4r.Action.Param(param_id=1, value=b"\x01\x00")])
    assert codec.action_data(act, msg) == [0x100, 0xAABBCCDDEEFF]
    short = p4r.Action(action_id=act.id, params=[p4r.Action.Param(param_id=1, value=b"\x01")])
    assert refused(codec.action_data, act, short).message == "Unexpected number of action parameters"
    wide = p4r.Action(action_id=act.id, params=[p4r.Action.Param(param_id=1, value=b"\x02\x00"),
                                                p4r.Action.Param(param_id=2, value=b"\x01")])
    assert refused(codec.action_data, act, wide).code == Code.INVALID_ARGUMENT
    unknown = p4r.Action(action_id=act.id, params=[p4r.Action.Param(param_id=1, value=b"\x01"),
                                                   p4r.Action.Param(param_id=7, value=b"\x01")])
    assert refused(codec.action_data, act, unknown).message == "Unknown action parameter"
    assert codec.action_message(act, [5, 0]).params[1].value == b"\x00"


def test_replica_port_bytes() -> None:
    assert codec.port_from_bytes(b"\x01\x00") == 256
    assert refused(codec.port_from_bytes, b"").code == Code.INVALID_ARGUMENT
    assert refused(codec.port_from_bytes, b"\x00" * 5).code == Code.UNIMPLEMENTED
