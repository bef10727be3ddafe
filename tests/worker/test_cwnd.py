"""The adaptive window (worker.cwnd.BdpWindow) against a simulated path: a FIFO bottleneck of a given rate
and a fixed base RTT."""

from __future__ import annotations

import heapq

import pytest

from worker.cwnd import BdpWindow


def simulate(rate: float, base_rtt: float, limit: int, results: int = 4000) -> tuple[BdpWindow, float, float]:
    """Send while the window allows; each packet leaves the bottleneck 1/rate after the one before it and is answered
    base_rtt later. Returns (the window, the delivery rate over the second half, the last RTT)."""
    w = BdpWindow(limit)
    now = free = 0.0
    flight: list[tuple[float, float]] = []
    delivered, half_t, rtt = 0, 0.0, 0.0
    while delivered < results:
        while len(flight) < w.window:
            free = max(now, free) + 1 / rate
            heapq.heappush(flight, (free + base_rtt, now))
        now, sent = heapq.heappop(flight)
        rtt = now - sent
        w.on_rtt(rtt)
        w.on_delivered(1, now)
        delivered += 1
        if delivered == results // 2:
            half_t = now
    return w, (results - results // 2) / (now - half_t), rtt


@pytest.mark.parametrize(("rate", "base_rtt"), [(806.0, 0.003), (806.0, 0.010), (4000.0, 0.002)])
def test_a_slow_path_keeps_its_rate_with_a_small_queue(rate: float, base_rtt: float) -> None:
    """2 Mbit/s of 310-byte packets (806/s) and faster: the full rate, and a queue of about the 5 ms target instead of
    the whole window (64 packets = 79 ms at 806/s)."""
    w, delivered, rtt = simulate(rate, base_rtt, limit=64)
    assert delivered >= 0.97 * rate
    assert rtt - base_rtt <= 0.005 + 3 / rate, (rtt, w.window)
    assert w.window <= rate * (base_rtt + 0.005) + 3


def test_a_fast_path_keeps_the_whole_window() -> None:
    """20,000 packets/s per worker (an unlimited link, a fast switch): 5 ms of queue is more than the slots."""
    w, delivered, _ = simulate(20000.0, 0.0005, limit=64)
    assert w.window == 64 and w.smallest == 64
    assert delivered >= 0.97 * 20000


def test_the_window_grows_back_when_the_path_speeds_up() -> None:
    w, _, _ = simulate(806.0, 0.003, limit=64)
    small = w.window
    assert small < 16
    now = 100.0
    for k in range(2000):  # results now arrive 10x faster, as a path that was shared becomes free
        now += 1 / 8060
        w.on_rtt(0.003)
        w.on_delivered(1, now)
    assert w.window > 4 * small
