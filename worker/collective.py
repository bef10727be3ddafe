"""One interface for every way of summing a tensor across a job's workers, and its implementations.

    with open_collective("ring", job, rank) as c:     # worker.protocols.open_collective
        result = c.run(array)          # RunResult(array, stats, exponents)
        verdict = c.verify(result, inputs, "float32")

`Collective` is what every protocol's rank offers; each protocol's folder implements it (`worker.switchml.collective`,
`worker.atp.collective`, `worker.host.collective`). Which name means which is `worker.protocols`' registry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from switch.timeline import Timeline
from worker.atp.worker import AtpOptions
from worker.driver import WindowOptions
from worker.stats import RunResult
from worker.switchml.header import INA_UDP_PORT
from worker.verify import Verdict

__all__ = ["Collective", "CollectiveOptions", "UdpCollective"]


class Collective(Protocol):
    """One rank's end of an all-reduce algorithm."""

    world_size: int
    """Ranks taking part (the job's workers)."""

    def run(self, array: np.ndarray, dtype: str | None = None) -> RunResult:
        """The element-wise sum of array over all ranks, with the run's statistics."""
        ...

    def allreduce(self, array: np.ndarray) -> np.ndarray: ...

    def verify(self, run: RunResult, inputs: list[np.ndarray], dtype: str) -> Verdict:
        """Check run against every rank's input, with this algorithm's error model."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> Collective: ...

    def __exit__(self, *exc: object) -> None: ...


@dataclass(frozen=True)
class CollectiveOptions:
    """Knobs of opening one rank; each collective reads the ones it needs."""

    window: WindowOptions = field(default_factory=WindowOptions)
    """INA protocols: window, timeouts, retries."""
    program_json: Path | None = None
    """INA protocols: the compiled switch program the packet layout comes from (default: find_program_json())."""
    bind_ip: str | None = None
    """Local address to bind instead of the job's worker address."""
    switch_port: int = INA_UDP_PORT
    connect_timeout: float = 30.0
    """Host baselines: how long to wait for the peers' TCP connections."""
    io_timeout: float = 30.0
    """Host baselines: how long a send or receive may stall before the peer is declared gone."""
    atp: AtpOptions = field(default_factory=AtpOptions)
    """ATP: fixed-point scaling and initial congestion window."""
    timeline: Timeline | None = None
    """INA protocols: where the window records its events (`switch.timeline`; None: nowhere)."""


class UdpCollective:
    """What an in-network protocol's Collective shares: one rank's worker over its own UDP socket (`transport`),
    closed with it."""

    transport: Any
    worker: Any

    def run(self, array: np.ndarray, dtype: str | None = None) -> RunResult:
        return self.worker.run(array, dtype)

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> UdpCollective:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
