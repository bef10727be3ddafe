"""Deterministic discrete-event simulation: N window cores, the reference switch model and a lossy network.

Time is simulated (no sleeping). Each datagram in either direction is dropped with probability `loss`, duplicated
with probability `dup`, and delayed by `latency` plus a uniform jitter, all drawn from one seeded RNG, so every run
with the same seed is identical. Jitter reorders results on the way down and interleaves different workers' packets
arbitrarily, but each worker's uplink stays FIFO (as a real link and the kernel's send path do): the SwitchML
protocol, like the original, assumes that a stale retransmission cannot overtake the next use of the same slot by
the same worker, otherwise the lazily cleared bit would let it count twice.
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from tests.worker.ina_refswitch import SwitchModel
from worker.driver import WindowOptions
from worker.job import JobConfig
from worker.switchml.blocks import Float32Plan, Int32Plan
from worker.switchml.header import Codec
from worker.switchml.window import Window


@dataclass
class Link:
    """Impairments applied to every datagram."""

    loss: float = 0.0
    dup: float = 0.0
    latency: float = 0.001
    jitter: float = 0.0
    drop_if: Callable[[str, int, bytes], bool] | None = None
    """Extra deterministic drop rule: (direction "up"/"down", rank, payload) -> drop?"""


@dataclass
class SimResult:
    outputs: list[np.ndarray]
    windows: list[Window]
    plans: list[Float32Plan | Int32Plan]
    time: float
    events: int
    switch: SwitchModel = field(repr=False)


def run_allreduce(
    job: JobConfig,
    codec: Codec,
    inputs: list[np.ndarray],
    *,
    mode: str,
    options: WindowOptions,
    link: Link | None = None,
    seed: int = 0,
    switch: SwitchModel | None = None,
    first_sets: list[list[int]] | None = None,
    switch_dies_at: float | None = None,
    silent_ranks: frozenset[int] = frozenset(),
    windows: list[int] | None = None,
    max_events: int = 2_000_000,
) -> SimResult:
    """All-reduce inputs[r] for every rank r of job; raises whatever a window core raises (e.g. SwitchUnreachable)."""
    link = link or Link()
    rng = random.Random(seed)
    sw = switch or SwitchModel(codec, [job])
    n = job.num_workers
    num_blocks = -(-inputs[0].size // job.num_elems)
    ws = windows or [max(1, min(options.window, job.pool.size, num_blocks))] * n  # per-rank override: misuse tests
    plans: list[Float32Plan | Int32Plan] = [
        Float32Plan(x, job.num_elems, n, w) if mode == "float32" else Int32Plan(x, job.num_elems)
        for x, w in zip(inputs, ws)
    ]
    cores = [
        Window(plan=plans[r], job_id=job.job_id, rank=r, slots=[job.pool.base + i for i in range(ws[r])],
               first_set=(first_sets[r] if first_sets else [0] * ws[r]), options=options)
        for r in range(n)
    ]
    endpoints = {(wk.ip, wk.udp_port): wk.rank for wk in job.workers}
    events: list[tuple[float, int, str, int, bytes]] = []
    seq = 0
    uplink_free = [0.0] * n  # FIFO per worker uplink

    def transmit(now: float, direction: str, rank: int, data: bytes) -> None:
        nonlocal seq
        if link.drop_if is not None and link.drop_if(direction, rank, data):
            return
        if rng.random() < link.loss:
            return
        copies = 2 if rng.random() < link.dup else 1
        for _ in range(copies):
            seq += 1
            at = now + link.latency + rng.uniform(0, link.jitter)
            if direction == "up":
                at = uplink_free[rank] = max(at, uplink_free[rank])
            heapq.heappush(events, (at, seq, direction, rank, data))

    def send_all(now: float, rank: int, outs: list) -> None:
        if rank in silent_ranks:
            return
        for o in outs:
            transmit(now, "up", rank, codec.encode(o.header, o.values))

    now = 0.0
    for r, win in enumerate(cores):
        send_all(now, r, win.start(now))
    count = 0
    live = [r for r in range(n) if r not in silent_ranks]
    while not all(cores[r].done for r in live):
        count += 1
        if count > max_events:
            raise AssertionError(f"simulation did not finish within {max_events} events")
        deadlines = [(d, r) for r in live if (d := cores[r].next_deadline()) is not None]
        next_timer = min(deadlines) if deadlines else (float("inf"), -1)
        if events and events[0][0] <= next_timer[0]:
            now, _, direction, rank, data = heapq.heappop(events)
            if direction == "up":
                if switch_dies_at is not None and now >= switch_dies_at:
                    sw.alive = False
                wk = job.workers[rank]
                for dst, payload in sw.receive((wk.ip, wk.udp_port), data):
                    transmit(now, "down", endpoints[dst], payload)
            elif rank not in silent_ranks:
                hdr, values = codec.decode(data)
                send_all(now, rank, cores[rank].on_result(hdr, values, now))
        elif next_timer[1] >= 0:
            now = next_timer[0]
            r = next_timer[1]
            send_all(now, r, cores[r].on_timer(now))
        else:
            raise AssertionError("deadlock: nothing in flight and no timer armed")
    return SimResult([p.output() for p in plans], cores, plans, now, count, sw)
