"""switch.faults: which frames a plan picks (direction, port, bytes, nth, probability) and what it does to them."""

from __future__ import annotations

import json

import pytest

from switch.faults import FaultPlan, FaultPlanError


def frames(n: int, port: int = 1, tag: int = 0xAA) -> list[tuple[int, bytes]]:
    return [(port, bytes([tag, i]) + b"\x00" * 8) for i in range(n)]


def test_nth_matching_frame_is_dropped_and_counted() -> None:
    plan = FaultPlan.from_json({"rules": [{"action": "drop", "direction": "in", "ports": [1], "nth": [2, 4],
                                           "match": [{"offset": 0, "value": "aa"}]}]})
    batch = frames(3, port=2) + frames(5, port=1) + frames(2, port=1, tag=0xBB)
    out = plan.ingress(batch, 0.0)
    assert [f[1] for p, f in out if p == 1 and f[0] == 0xAA] == [0, 2, 4]  # the 2nd and 4th of port 1's AA frames
    assert len(out) == len(batch) - 2 and plan.stats["drop"] == 2
    assert plan.egress(frames(5, port=1), 0.0) == frames(5, port=1)  # direction "in" only


def test_duplicate_corrupt_and_first_firing_rule_wins() -> None:
    plan = FaultPlan.from_json({"rules": [
        {"action": "duplicate", "nth": 1},
        {"action": "corrupt", "corrupt": {"offset": 1, "xor": "0f"}},
    ]})
    out = plan.egress(frames(2), 0.0)
    assert out == [frames(2)[0], frames(2)[0], (1, bytes([0xAA, 0x01 ^ 0x0F]) + b"\x00" * 8)]
    assert plan.stats == {"duplicate": 1, "corrupt": 1}


def test_delay_reorders_behind_later_frames_and_releases_after_the_hold_time() -> None:
    plan = FaultPlan.from_json({"rules": [{"action": "delay", "nth": 1, "delay": 2}], "max_hold_s": 0.5})
    out = plan.ingress(frames(4), 0.0)
    assert [f[1] for _, f in out] == [1, 2, 0, 3]  # frame 0 held behind two later frames on its port
    plan = FaultPlan.from_json({"rules": [{"action": "delay", "nth": 1, "delay": 5}], "max_hold_s": 0.5})
    assert [f[1] for _, f in plan.ingress(frames(2), 0.0)] == [1]
    assert plan.held == 1 and plan.next_release() == 0.5
    assert plan.release_expired(0.4) == ([], [])
    arriving, leaving = plan.release_expired(0.5)
    assert [f[1] for _, f in arriving] == [0] and leaving == [] and plan.held == 0


def test_probability_is_repeatable_from_the_seed() -> None:
    def picks(seed: int) -> list[int]:
        plan = FaultPlan.from_json({"rules": [{"action": "drop", "probability": 0.3}]}, default_seed=seed)
        return [f[1] for _, f in plan.ingress(frames(200), 0.0)]

    assert picks(7) == picks(7) != picks(8)
    assert 100 < len(picks(7)) < 180


def test_events_reset_registers_before_their_frame() -> None:
    resets = []
    plan = FaultPlan.from_json({"events": [{"at_frame": 3, "reset_register": "I.r", "first": 2, "count": 4}]})
    for k, f in enumerate(frames(5)):
        plan.ingress([f], 0.0, lambda *a: resets.append((k, a)))
    assert resets == [(2, ("I.r", 2, 4))]


@pytest.mark.parametrize("bad, message", [
    ({"rules": [{"action": "explode"}]}, "action must be one of"),
    ({"rules": [{"action": "drop", "direction": "sideways"}]}, "direction must be one of"),
    ({"rules": [{"action": "drop", "nth": 1, "probability": 0.5}]}, "nth or probability"),
    ({"rules": [{"action": "drop", "probability": 2}]}, "not in [0, 1]"),
    ({"rules": [{"action": "drop", "match": [{"offset": 0, "value": "zz"}]}]}, "not hex"),
    ({"rules": [{"action": "drop", "color": "red"}]}, "unknown keys color"),
    ({"events": [{"at_frame": 0, "reset_register": "x"}]}, "at_frame >= 1"),
    ({"rulez": []}, "unknown keys rulez"),
])
def test_bad_plans_are_refused_with_the_rule_named(bad: dict, message: str) -> None:
    with pytest.raises(FaultPlanError, match=message.replace("[", r"\[").replace("]", r"\]")):
        FaultPlan.from_json(bad)


def test_plan_round_trips_through_json(tmp_path) -> None:
    plan = FaultPlan.from_json({"seed": 3, "rules": [
        {"name": "x", "action": "corrupt", "direction": "out", "ports": [2, 1], "nth": [1],
         "match": [{"offset": 42, "value": "01", "mask": "0f"}], "corrupt": {"offset": 50, "xor": "ff00"}},
        {"action": "delay", "probability": 0.25, "delay": 3}],
        "events": [{"at_frame": 9, "reset_register": "I.r"}]})
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan.to_json()))
    again = FaultPlan.from_json(path)
    assert again.to_json() == plan.to_json() and "rule 0" in again.describe()
