"""One interface for every way of summing a tensor across a job's workers, and the sans-IO rank of an in-network
protocol that every tool runs.

    with open_collective("ring", job, rank) as c:     # worker.protocols.open_collective
        result = c.run(array)          # RunResult(array, stats, exponents)
        verdict = c.verify(result, inputs, "float32")

`Collective` is what every protocol's rank offers. An in-network protocol implements `Rank` in its own folder
(`worker.switchml.worker.Worker`, `worker.atp.worker.AtpWorker`): each all-reduce is a window core (`begin`) that
runs to completion and gives the run's result (`end`). `InaCollective` runs a Rank's cores over a UDP socket
(`worker.driver.drive`); the in-process network (`topo.inprocess`) runs the same cores in fake time. The host
baselines implement `Collective` directly (`worker.host`). Which name means which is `worker.protocols`' registry.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from switch.timeline import Timeline
from worker.driver import DecodeBatch, WindowCore, WindowOptions, drive
from worker.job import JobConfig
from worker.stats import RunResult
from worker.transport import Transport, UdpTransport
from worker.verify import Verdict

__all__ = ["Collective", "CollectiveOptions", "InaCollective", "Rank", "run_rank"]


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


class Rank(Protocol):
    """One rank of an in-network protocol, without sockets: its all-reduces in order (state such as SwitchML's sets
    or ATP's sequence numbers carries from one to the next)."""

    job: JobConfig
    rank: int
    accept_any_source: bool
    """Answers come from another address than the one the packets go to (ATP: ACKs from the switch, data to the
    PS)."""
    decode_batch: DecodeBatch | None
    """Datagrams -> (headers, payloads, malformed count), for a core with `on_packets`; None: `decode` each."""

    def destination(self) -> tuple[str, str, int]:
        """(MAC, IP, UDP port) its packets are addressed to."""
        ...

    def encode(self, out: Any) -> bytes:
        """The UDP payload of a packet its core sends."""
        ...

    def decode(self, data: bytes) -> tuple[Any, np.ndarray]:
        """(header, values) of a received UDP payload (`worker.codec.MalformedPacket` if it is none)."""
        ...

    def begin(self, array: np.ndarray, dtype: str | None = None) -> WindowCore:
        """The window core of the next all-reduce of array."""
        ...

    def end(self, core: WindowCore) -> RunResult:
        """The outcome of a finished core."""
        ...

    def verify(self, run: RunResult, inputs: list[np.ndarray], dtype: str) -> Verdict:
        """Check run against every rank's input, with the protocol's error model."""
        ...


def run_rank(rank: Rank, transport: Transport, array: np.ndarray, dtype: str | None = None,
             clock: Callable[[], float] = time.monotonic) -> RunResult:
    """One all-reduce of a rank over a transport: its core from `begin`, driven to the end (`worker.driver.drive`)."""
    core = rank.begin(array, dtype)
    drive(core, transport, rank.encode, rank.decode, clock, rank.decode_batch)
    return rank.end(core)


@dataclass(frozen=True)
class CollectiveOptions:
    """Knobs of opening one rank; each collective reads the ones it needs."""

    window: WindowOptions = field(default_factory=WindowOptions)
    """INA protocols: window, timeouts, retries."""
    program_json: Path | None = None
    """INA protocols: the compiled switch program the packet layout comes from (default: the protocol's, found by
    `worker.codec.find_program_json`)."""
    bind_ip: str | None = None
    """Local address to bind instead of the job's worker address."""
    udp_port: int | None = None
    """INA protocols: the UDP port the packets are addressed to (None: the protocol's)."""
    connect_timeout: float = 30.0
    """Host baselines: how long to wait for the peers' TCP connections."""
    io_timeout: float = 30.0
    """Host baselines: how long a send or receive may stall before the peer is declared gone."""
    protocol: Any = None
    """The protocol's own options (`ProtocolSpec.options`, e.g. ATP's fixed-point scaling); None: its defaults."""
    timeline: Timeline | None = None
    """INA protocols: where the window records its events (`switch.timeline`; None: nowhere)."""


class InaCollective:
    """A Rank's all-reduces over its own UDP socket (bound to the job's worker address), as a Collective."""

    def __init__(self, rank: Rank, options: CollectiveOptions) -> None:
        me = rank.job.worker(rank.rank)
        _, ip, port = rank.destination()
        self.rank = rank
        self.world_size = rank.job.num_workers
        self.transport = UdpTransport((options.bind_ip or me.ip, me.udp_port), (ip, options.udp_port or port),
                                      accept_any_source=rank.accept_any_source)

    def run(self, array: np.ndarray, dtype: str | None = None) -> RunResult:
        return run_rank(self.rank, self.transport, array, dtype)

    def allreduce(self, array: np.ndarray) -> np.ndarray:
        return self.run(array).array

    def verify(self, run: RunResult, inputs: list[np.ndarray], dtype: str) -> Verdict:
        return self.rank.verify(run, inputs, dtype)

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> InaCollective:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
