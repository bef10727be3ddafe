"""perf.ratesearch with fake switches: deterministic, no network."""

from __future__ import annotations

import pytest

from perf.ratesearch import MAX_LOSS, Probe, find_max_rate


def fake_switch(capacity: float, seconds: float = 1.0, sender_max: float = float("inf")):
    """A switch that delivers everything up to `capacity` frames/s and drops the excess; the sender offers at most
    `sender_max` frames/s."""
    calls: list[float] = []

    def probe(rate: float) -> Probe:
        calls.append(rate)
        offered = round(min(rate, sender_max) * seconds)
        received = min(offered, round(capacity * seconds))
        return Probe(rate, offered, received, seconds)

    return probe, calls


def test_finds_the_capacity_within_tolerance() -> None:
    probe, calls = fake_switch(37_000)
    r = find_max_rate(probe, start=10_000, tolerance=0.05)
    assert r.best is not None and not r.sender_limited
    assert 37_000 / 1.05 <= r.best.rate <= 37_000
    assert r.delivered_pps == pytest.approx(r.best.rate, rel=1e-3)
    assert r.best.loss < MAX_LOSS
    assert calls[:3] == [10_000, 20_000, 40_000]  # ramp ×2 until a probe fails
    failing = [p.rate for p in r.probes if not p.passes()]
    assert min(failing) / r.best.rate - 1 <= 0.05  # bracketed within the tolerance
    assert len(r.probes) <= 12


def test_tighter_tolerance_gets_closer() -> None:
    probe, _ = fake_switch(37_000)
    r = find_max_rate(probe, start=10_000, tolerance=0.005, max_probes=30)
    assert r.best is not None and 37_000 / 1.005 <= r.best.rate <= 37_000 / (1 - MAX_LOSS)  # < 0.1 % loss passes
    assert r.delivered_pps <= 37_000


def test_loss_just_above_the_bound_fails() -> None:
    def probe(rate: float) -> Probe:  # 0.1 % loss everywhere: never below the criterion
        return Probe(rate, 100_000, 99_900, 1.0)

    r = find_max_rate(probe, start=8_000, min_rate=1_000, max_probes=20)
    assert r.best is None and r.delivered_pps == 0.0
    assert [p.rate for p in r.probes] == [8_000, 4_000, 2_000, 1_000]


def test_first_probe_fails_ramps_down() -> None:
    probe, _ = fake_switch(3_000)
    r = find_max_rate(probe, start=10_000, min_rate=500)
    assert r.best is not None and 3_000 / 1.05 <= r.best.rate <= 3_000


def test_sender_limit_ends_the_search_with_a_lower_bound() -> None:
    probe, calls = fake_switch(1e9, sender_max=50_000)
    r = find_max_rate(probe, start=10_000)
    assert r.sender_limited and r.best is not None and r.best.rate == 80_000
    assert r.best.delivered_pps == pytest.approx(50_000)
    assert calls == [10_000, 20_000, 40_000, 80_000]


def test_bounded_by_max_rate_and_max_probes() -> None:
    probe, calls = fake_switch(1e12)
    r = find_max_rate(probe, start=10_000, max_rate=100_000)
    assert calls == [10_000, 20_000, 40_000, 80_000, 100_000] and r.best is not None and r.best.rate == 100_000
    probe, calls = fake_switch(37_000)
    assert len(find_max_rate(probe, start=10_000, max_probes=4).probes) == 4


def test_rejects_nonsense_parameters() -> None:
    probe, _ = fake_switch(1)
    with pytest.raises(ValueError):
        find_max_rate(probe, factor=1.0)
    with pytest.raises(ValueError):
        find_max_rate(probe, start=100, min_rate=1000)


def test_a_backlog_fails_the_probe_even_without_loss() -> None:
    """Buffers that absorb an overload for the length of a probe deliver everything, late: not a sustained rate."""
    def probe(rate: float) -> Probe:  # 1 s probes; above 50 kpps the excess queues and drains after the sender stops
        backlog = max(0.0, rate / 50_000 - 1)
        return Probe(rate, round(rate), round(rate), 1.0, backlog_s=backlog)

    r = find_max_rate(probe, start=10_000)
    assert r.best is not None and 50_000 <= r.best.rate <= 55_000  # ≤ 0.1 s of backlog allowed on a 1 s probe
    assert all(p.loss == 0 for p in r.probes)
    assert r.best.delivered_pps == pytest.approx(r.best.rate / (1 + r.best.backlog_s))


def test_more_results_than_frames_fails_the_probe() -> None:
    """A probe that counts more results than it offered frames (an earlier probe's stragglers) is no clean pass: the
    search goes on below it instead of reporting it."""
    def probe(rate: float) -> Probe:  # 1 s probes; capacity 80 kpps; the probe at 60-80 kpps also catches 3 % strays
        offered = round(rate)
        received = min(offered, 80_000)
        if 60_000 <= rate <= 80_000:
            received = round(offered * 1.03)
        return Probe(rate, offered, received, 1.0)

    r = find_max_rate(probe, start=10_000)
    assert r.best is not None and r.best.rate < 60_000 and r.best.received <= r.best.offered
    assert not Probe(70_000, 1000, 1001, 1.0).passes() and Probe(70_000, 1000, 1000, 1.0).passes()
